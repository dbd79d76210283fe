/*  gc_http — the peer's small HTTP endpoint (libmicrohttpd, its own
    thread): GET /metrics (Prometheus text, gc_prom) and GET /status (the
    status JSON, gc_status). Off unless node/metrics_http is set.

    Bounded by design: GET and HEAD only, at most 16 connections, 10 s idle
    timeout, no request bodies. Bind to 127.0.0.1 unless the scraper is on
    another machine; the endpoint has no authentication (docs/OPERATIONS.md).

    Without libmicrohttpd at build time gc_http_new fails with a message
    that says so. */
#ifndef GC_HTTP_H
#define GC_HTTP_H

#include <stdbool.h>

#include "gc_buf.h"
#include "gc_err.h"

typedef enum { GC_HTTP_METRICS, GC_HTTP_STATUS } gc_http_route_t;

/*  Called from the HTTP thread: append the body of route to out. */
typedef int (*gc_http_render_fn) (void *ctx, gc_http_route_t route, gc_buf_t *out);

typedef struct gc_http_t gc_http_t;

bool        gc_http_available (void);
/*  Is bind a usable HOST:PORT (resolves, port in range)? Fails with the
    "not built in" message without libmicrohttpd. */
int         gc_http_check_bind (const char *bind, gc_err_t *err);
/*  bind: "HOST:PORT" — 127.0.0.1:9100, 0.0.0.0:9100, [::1]:9100; port 0
    picks a free port (see gc_http_bound). */
gc_http_t  *gc_http_new (const char *bind, gc_http_render_fn render, void *ctx, gc_err_t *err);
/*  The address actually bound, "HOST:PORT". */
const char *gc_http_bound (const gc_http_t *self);
void        gc_http_destroy (gc_http_t **self_p);

#endif
