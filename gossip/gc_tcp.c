#include "gc_tcp.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

int
gc_tcp_bytes_read (int fd, uint64_t *read)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    memset (&info, 0, sizeof info);
    if (getsockopt (fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0
    ||  len < offsetof (struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received)
        return -1;
    int queued = 0;
    if (ioctl (fd, FIONREAD, &queued) != 0 || queued < 0)
        queued = 0;
    *read = info.tcpi_bytes_received > (uint64_t) queued ? info.tcpi_bytes_received - (uint64_t) queued : 0;
    return 0;
}
