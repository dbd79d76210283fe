/*  gc_endpoint — a ZeroMQ endpoint's host name resolved once, here.

    libzmq would resolve a tcp:// name again on every reconnect, inside the
    I/O thread that serves all of a peer's connections, and binds addresses
    only; so names are turned into addresses once, at start. */
#ifndef GC_ENDPOINT_H
#define GC_ENDPOINT_H

#include <stddef.h>

#include "gc_err.h"

/*  tcp://NAME:PORT -> tcp://ADDRESS:PORT (its first IPv4 address) in out.
    IP literals, `*`, bracketed IPv6, a name with only IPv6 addresses and
    other transports are copied unchanged. -1 when the name does not
    resolve: GC_E_CONFIG (no such name), GC_E_SYS (the resolver failed for
    now, EAI_AGAIN); out then holds the endpoint unchanged. */
int gc_endpoint_resolve (const char *endpoint, char *out, size_t size, gc_err_t *err);

#endif
