/*  gc_ports — loopback TCP ports for a local network of peers. */
#include "gc_ports.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gc_time.h"

//  The kernel's ephemeral range (outgoing connections take their local port from
//  it): 32768-60999 unless configured otherwise.
static void
s_ephemeral_range (int *lo, int *hi)
{
    *lo = 32768;
    *hi = 60999;
    FILE *f = fopen ("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        int a, b;
        if (fscanf (f, "%d %d", &a, &b) == 2 && a > 0 && b >= a && b < 65536) {
            *lo = a;
            *hi = b;
        }
        fclose (f);
    }
}

int
gc_ports_free (uint32_t n, int *base, gc_err_t *err)
{
    int eph_lo, eph_hi;
    s_ephemeral_range (&eph_lo, &eph_hi);
    //  candidates: [10000, eph_lo) and (eph_hi, 65535], in one numbering
    int below = eph_lo - 10000 - (int) n, above = 65535 - eph_hi - (int) n;
    below = below > 0 ? below : 0;
    above = above > 0 ? above : 0;
    if (below + above == 0)
        return gc_err_set (err, GC_E_SYS, "no room for %u TCP ports outside the ephemeral range %d-%d "
                           "(set scenario/base_port)", n, eph_lo, eph_hi);
    uint64_t seed = (uint64_t) getpid () * 2654435761u ^ (uint64_t) gc_now_ns ();
    for (int attempt = 0; attempt < 64; attempt++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int pick = (int) ((seed >> 33) % (uint64_t) (below + above));
        int start = pick < below ? 10000 + pick : eph_hi + 1 + (pick - below);
        bool ok = true;
        for (uint32_t i = 0; i < n && ok; i++) {
            int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd < 0)
                return gc_err_set (err, GC_E_SYS, "socket: %s", strerror (errno));
            struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) (start + (int) i)),
                                     .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
            ok = bind (fd, (struct sockaddr *) &a, sizeof a) == 0;
            close (fd);
        }
        if (ok) {
            *base = start;
            return 0;
        }
    }
    return gc_err_set (err, GC_E_SYS, "no range of %u free TCP ports found (set scenario/base_port)", n);
}
