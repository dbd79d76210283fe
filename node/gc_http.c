#include "gc_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GC_HAVE_MHD

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>

#include "gc_prom.h"

struct gc_http_t {
    struct MHD_Daemon *daemon;
    gc_http_render_fn  render;
    void              *ctx;
    char               bound [80];
};

bool
gc_http_available (void)
{
    return true;
}

static enum MHD_Result
s_reply (struct MHD_Connection *conn, unsigned status, const char *type, const void *body, size_t len)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer (len, (void *) body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header (resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header (resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header (resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response (conn, status, resp);
    MHD_destroy_response (resp);
    return rc;
}

static enum MHD_Result
s_handle (void *cls, struct MHD_Connection *conn, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
    gc_http_t *self = cls;
    static const char text [] = "text/plain; charset=utf-8";
    if (strcmp (method, MHD_HTTP_METHOD_GET) && strcmp (method, MHD_HTTP_METHOD_HEAD))
        return s_reply (conn, MHD_HTTP_METHOD_NOT_ALLOWED, text, "GET or HEAD only\n", 17);
    //  A GET with a body: take no part of it.
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    gc_http_route_t route;
    const char *type;
    if (!strcmp (url, "/metrics")) {
        route = GC_HTTP_METRICS;
        type = GC_PROM_CONTENT_TYPE;
    }
    else
    if (!strcmp (url, "/status")) {
        route = GC_HTTP_STATUS;
        type = "application/json";
    }
    else
    if (!strcmp (url, "/")) {
        static const char index [] = "gcnode: /metrics (Prometheus text), /status (JSON)\n";
        return s_reply (conn, MHD_HTTP_OK, text, index, sizeof index - 1);
    }
    else
        return s_reply (conn, MHD_HTTP_NOT_FOUND, text, "not found\n", 10);
    gc_buf_t body;
    gc_buf_init (&body);
    enum MHD_Result rc = self->render (self->ctx, route, &body) == 0
                       ? s_reply (conn, MHD_HTTP_OK, type, body.data ? (const char *) body.data : "", body.len)
                       : s_reply (conn, MHD_HTTP_INTERNAL_SERVER_ERROR, text, "cannot render\n", 14);
    gc_buf_free (&body);
    return rc;
}

//  "HOST:PORT" -> a socket address (HOST may be [v6]).
static int
s_resolve (const char *bind, struct sockaddr_storage *addr, gc_err_t *err)
{
    const char *colon = strrchr (bind, ':');
    if (!colon || colon == bind || !colon [1])
        return gc_err_set (err, GC_E_CONFIG, "node/metrics_http: '%s': expected HOST:PORT, e.g. 127.0.0.1:9100", bind);
    char host [256], *end;
    const char *h = bind;
    size_t hlen = (size_t) (colon - bind);
    if (*h == '[' && hlen >= 2 && h [hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    long port = strtol (colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535 || hlen == 0 || hlen >= sizeof host)
        return gc_err_set (err, GC_E_CONFIG, "node/metrics_http: '%s': expected HOST:PORT with PORT 0..65535", bind);
    memcpy (host, h, hlen);
    host [hlen] = 0;
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res = NULL;
    int gai = getaddrinfo (host, NULL, &hints, &res);
    if (gai || !res)
        return gc_err_set (err, GC_E_CONFIG, "node/metrics_http: cannot resolve '%s' (%s)", host, gai_strerror (gai));
    memset (addr, 0, sizeof *addr);
    memcpy (addr, res->ai_addr, res->ai_addrlen);
    freeaddrinfo (res);
    if (addr->ss_family == AF_INET)
        ((struct sockaddr_in *) addr)->sin_port = htons ((uint16_t) port);
    else
        ((struct sockaddr_in6 *) addr)->sin6_port = htons ((uint16_t) port);
    return 0;
}

int
gc_http_check_bind (const char *bind, gc_err_t *err)
{
    struct sockaddr_storage addr;
    return s_resolve (bind, &addr, err);
}

gc_http_t *
gc_http_new (const char *bind, gc_http_render_fn render, void *ctx, gc_err_t *err)
{
    struct sockaddr_storage addr;
    if (s_resolve (bind, &addr, err))
        return NULL;
    gc_http_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "node/metrics_http: out of memory");
        return NULL;
    }
    self->render = render;
    self->ctx = ctx;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    self->daemon = MHD_start_daemon (flags, 0, NULL, NULL, s_handle, self,
                                     MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
                                     MHD_OPTION_CONNECTION_LIMIT, (unsigned) 16,
                                     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned) 8,
                                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 10,
                                     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) 64 * 1024,
                                     MHD_OPTION_END);
    if (!self->daemon) {
        free (self);
        gc_err_set (err, GC_E_SYS, "node/metrics_http: cannot listen on %s (address in use or not local?)", bind);
        return NULL;
    }
    //  The port actually bound (port 0 asks for a free one).
    const union MHD_DaemonInfo *info = MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_storage got;
    socklen_t len = sizeof got;
    char host [INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (info && getsockname (info->listen_fd, (struct sockaddr *) &got, &len) == 0) {
        if (got.ss_family == AF_INET) {
            inet_ntop (AF_INET, &((struct sockaddr_in *) &got)->sin_addr, host, sizeof host);
            port = ntohs (((struct sockaddr_in *) &got)->sin_port);
        }
        else {
            inet_ntop (AF_INET6, &((struct sockaddr_in6 *) &got)->sin6_addr, host, sizeof host);
            port = ntohs (((struct sockaddr_in6 *) &got)->sin6_port);
        }
    }
    snprintf (self->bound, sizeof self->bound, got.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
    return self;
}

const char *
gc_http_bound (const gc_http_t *self)
{
    return self->bound;
}

void
gc_http_destroy (gc_http_t **self_p)
{
    gc_http_t *self = *self_p;
    if (!self)
        return;
    MHD_stop_daemon (self->daemon);
    free (self);
    *self_p = NULL;
}

#else   /* no libmicrohttpd */

struct gc_http_t {
    int unused;
};

bool
gc_http_available (void)
{
    return false;
}

int
gc_http_check_bind (const char *bind, gc_err_t *err)
{
    return gc_err_set (err, GC_E_USAGE, "node/metrics_http: this gcnode is built without libmicrohttpd "
                       "(install libmicrohttpd-dev and rebuild, or leave node/metrics_http empty)");
}

gc_http_t *
gc_http_new (const char *bind, gc_http_render_fn render, void *ctx, gc_err_t *err)
{
    gc_http_check_bind (bind, err);
    return NULL;
}

const char *
gc_http_bound (const gc_http_t *self)
{
    return "";
}

void
gc_http_destroy (gc_http_t **self_p)
{
    *self_p = NULL;
}

#endif
