/*  gc_tcp — what the kernel knows about one TCP connection, for the
    transport's memory guard (gc_zmq.h).

    Its own file because the kernel's struct tcp_info (linux/tcp.h, with
    tcpi_bytes_received) cannot be included next to glibc's netinet/tcp.h,
    which czmq.h pulls in. */
#ifndef GC_TCP_H
#define GC_TCP_H

#include <stdint.h>

/*  *read = bytes the connection's owner has read from the socket so far:
    bytes received in order (TCP_INFO, Linux >= 4.1) minus those still in
    the kernel's receive queue. -1 if fd is not a TCP socket or the kernel
    does not say. */
int gc_tcp_bytes_read (int fd, uint64_t *read);

#endif
