/*  gc_ports — loopback TCP ports for a local network of peers (gcnet's, and
    the tests' that start gcnode processes). */
#ifndef GC_PORTS_H
#define GC_PORTS_H

#include <stdint.h>

#include "gc_err.h"

/*  n consecutive TCP ports on 127.0.0.1 that nobody listens on now (the
    peers bind them a moment later; a collision shows up as a peer that
    cannot bind), outside the kernel's ephemeral range: while the peers
    start, each one's sockets connect to neighbours not yet listening, again
    and again, and every attempt takes an ephemeral local port, which may be
    the one another peer is about to bind. *base receives the first. 0, or
    -1 with err (GC_E_SYS) when no such range is found. */
int gc_ports_free (uint32_t n, int *base, gc_err_t *err);

#endif
