#include "gc_discovery.h"

#include <ctype.h>
#include <czmq.h>
#include <pthread.h>
#include <string.h>

#include "gc_hex.h"

#define S_MAX_IDS    65536
#define S_BEACON_MAX 255            /* zbeacon's UDP frame limit */

typedef struct {
    uint32_t peer;
    uint8_t  id [8];
    bool     found;
    bool     conflict_seen;
    char     endpoint [GC_DISCOVERY_ENDPOINT_MAX + 1];
} s_want_t;

struct gc_discovery_t {
    gc_discovery_config_t cfg;
    char            *interface;
    char             self_hex [17];
    char             beacon [S_BEACON_MAX + 1];
    size_t           beacon_len;
    uint8_t        (*trusted) [8];
    size_t           n_trusted;
    s_want_t        *wanted;
    size_t           n_wanted;
    zactor_t        *actor;
    pthread_mutex_t  lock;          /* wanted[], stats, address */
    gc_discovery_stats_t stats;
    char             address [64];
    char             start_error [128];
};

//  ---------------------------------------------------------------------------
//  parsing: every beacon is hostile input

static bool
s_host_char (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '.' || c == '-';
}

//  tcp://HOST:PORT with HOST a name, an IPv4 address, [IPv6] or "*".
static bool
s_endpoint_ok (const char *ep, size_t len)
{
    if (len < 9 || len > GC_DISCOVERY_ENDPOINT_MAX || strncmp (ep, "tcp://", 6))
        return false;
    const char *host = ep + 6, *end = ep + len;
    const char *colon = NULL;
    for (const char *p = end - 1; p > host; p--)
        if (*p == ':') {
            colon = p;
            break;
        }
    if (!colon || end - colon - 1 < 1 || end - colon - 1 > 5)
        return false;
    long port = 0;
    for (const char *p = colon + 1; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false;
        port = port * 10 + (*p - '0');
    }
    if (port < 1 || port > 65535)
        return false;
    size_t hlen = (size_t) (colon - host);
    if (hlen == 1 && *host == '*')
        return true;
    if (hlen >= 3 && host [0] == '[' && host [hlen - 1] == ']') {
        for (size_t i = 1; i + 1 < hlen; i++)
            if (!(isxdigit ((unsigned char) host [i]) || host [i] == ':' || host [i] == '.'))
                return false;
        return true;
    }
    for (size_t i = 0; i < hlen; i++)
        if (!s_host_char (host [i]))
            return false;
    return hlen > 0 && host [0] != '-' && host [0] != '.';
}

//  A source address as zbeacon reports it (IPv4 or IPv6 text).
static bool
s_address_ok (const char *a)
{
    size_t len = a ? strlen (a) : 0;
    if (len < 2 || len > 45)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!(isxdigit ((unsigned char) a [i]) || a [i] == '.' || a [i] == ':'))
            return false;
    return true;
}

int
gc_discovery_parse (const uint8_t *data, size_t size, const char *source,
                    uint8_t id [8], char endpoint [GC_DISCOVERY_ENDPOINT_MAX + 1])
{
    const size_t plen = strlen (GC_DISCOVERY_PREFIX);
    if (!data || size < plen + 17 || size > S_BEACON_MAX || memcmp (data, GC_DISCOVERY_PREFIX, plen))
        return -1;
    const char *text = (const char *) data + plen;
    size_t rest = size - plen;
    if (text [16] != ' ')
        return -1;
    char hex [17];
    memcpy (hex, text, 16);
    hex [16] = 0;
    size_t n = 0;
    if (gc_hex_decode (hex, id, 8, &n, "beacon peer id", NULL) || n != 8)
        return -1;
    const char *ep = text + 17;
    size_t eplen = rest - 17;
    if (memchr (ep, 0, eplen) || !s_endpoint_ok (ep, eplen))
        return -1;
    if (eplen >= 8 && !strncmp (ep + 6, "*:", 2)) {
        //  "the address this beacon came from"
        if (!s_address_ok (source))
            return -1;
        bool v6 = strchr (source, ':') != NULL;
        int w = snprintf (endpoint, GC_DISCOVERY_ENDPOINT_MAX + 1, "tcp://%s%s%s%.*s", v6 ? "[" : "",
                          source, v6 ? "]" : "", (int) (eplen - 7), ep + 7);
        return w > 0 && w <= GC_DISCOVERY_ENDPOINT_MAX ? 0 : -1;
    }
    memcpy (endpoint, ep, eplen);
    endpoint [eplen] = 0;
    return 0;
}

//  ---------------------------------------------------------------------------

gc_discovery_t *
gc_discovery_new (const gc_discovery_config_t *cfg, gc_err_t *err)
{
    if (cfg->port < 1 || cfg->port > 65535 || cfg->interval_ms < 10 || !cfg->announce || !cfg->self_id) {
        gc_err_set (err, GC_E_CONFIG, "discovery: port 1..65535, interval >= 10 ms, announce and id are required");
        return NULL;
    }
    size_t alen = strlen (cfg->announce);
    if (!s_endpoint_ok (cfg->announce, alen)) {
        gc_err_set (err, GC_E_CONFIG, "discovery: cannot announce '%s' (expected tcp://HOST:PORT)", cfg->announce);
        return NULL;
    }
    gc_discovery_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "discovery: out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    self->interface = strdup (cfg->interface ? cfg->interface : "");
    self->trusted = calloc (64, sizeof *self->trusted);
    self->wanted = calloc (64, sizeof *self->wanted);
    pthread_mutex_init (&self->lock, NULL);
    gc_hex_encode (cfg->self_id, 8, self->self_hex);
    self->beacon_len = (size_t) snprintf (self->beacon, sizeof self->beacon, "%s%s %s",
                                          GC_DISCOVERY_PREFIX, self->self_hex, cfg->announce);
    self->cfg.interface = NULL;
    self->cfg.announce = NULL;
    self->cfg.self_id = NULL;
    if (!self->interface || !self->trusted || !self->wanted || self->beacon_len >= sizeof self->beacon) {
        gc_discovery_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "discovery: out of memory");
    }
    return self;
}

//  Capacity doubles from 64 as entries arrive.
static int
s_grow (void **array, size_t n, size_t item, gc_err_t *err)
{
    if (n < 64 || (n & (n - 1)))
        return 0;
    if (n >= S_MAX_IDS)
        return gc_err_set (err, GC_E_RANGE, "discovery: more than %d keys", S_MAX_IDS);
    void *bigger = realloc (*array, 2 * n * item);
    if (!bigger)
        return gc_err_set (err, GC_E_NOMEM, "discovery: out of memory");
    *array = bigger;
    return 0;
}

int
gc_discovery_trust (gc_discovery_t *self, const uint8_t id [8], gc_err_t *err)
{
    if (self->actor)
        return gc_err_set (err, GC_E_ARG, "discovery: keys must be added before start");
    if (s_grow ((void **) &self->trusted, self->n_trusted, sizeof *self->trusted, err))
        return -1;
    memcpy (self->trusted [self->n_trusted++], id, 8);
    return 0;
}

int
gc_discovery_want (gc_discovery_t *self, uint32_t peer, const uint8_t id [8], gc_err_t *err)
{
    if (self->actor)
        return gc_err_set (err, GC_E_ARG, "discovery: peers must be added before start");
    if (s_grow ((void **) &self->wanted, self->n_wanted, sizeof *self->wanted, err))
        return -1;
    s_want_t *w = &self->wanted [self->n_wanted++];
    memset (w, 0, sizeof *w);
    w->peer = peer;
    memcpy (w->id, id, 8);
    self->stats.wanted = (uint32_t) self->n_wanted;
    return 0;
}

static bool
s_trusted (const gc_discovery_t *self, const uint8_t id [8])
{
    for (size_t i = 0; i < self->n_trusted; i++)
        if (!memcmp (self->trusted [i], id, 8))
            return true;
    return false;
}

//  One beacon: [source address][bytes].
static void
s_on_beacon (gc_discovery_t *self, zmsg_t *msg)
{
    char *source = zmsg_popstr (msg);
    zframe_t *frame = zmsg_pop (msg);
    uint8_t id [8];
    char endpoint [GC_DISCOVERY_ENDPOINT_MAX + 1];
    bool ok = source && frame && zmsg_size (msg) == 0
           && gc_discovery_parse (zframe_data (frame), zframe_size (frame), source, id, endpoint) == 0;
    pthread_mutex_lock (&self->lock);
    gc_discovery_stats_t *s = &self->stats;
    s->received++;
    if (!ok)
        s->malformed++;
    else {
        char hex [17];
        gc_hex_encode (id, 8, hex);
        if (!strcmp (hex, self->self_hex))
            s->own++;
        else
        if (!s_trusted (self, id)) {
            s->untrusted++;
            snprintf (s->last_untrusted, sizeof s->last_untrusted, "%s from %.45s", hex,
                      s_address_ok (source) ? source : "?");
        }
        else
            for (size_t i = 0; i < self->n_wanted; i++) {
                s_want_t *w = &self->wanted [i];
                if (memcmp (w->id, id, 8))
                    continue;
                if (!w->found) {
                    w->found = true;
                    snprintf (w->endpoint, sizeof w->endpoint, "%s", endpoint);
                    s->found++;
                }
                else
                if (strcmp (w->endpoint, endpoint)) {
                    s->conflicts++;
                    snprintf (s->last_conflict, sizeof s->last_conflict, "peer %u: kept %.60s, ignored %.60s "
                              "from %.45s", w->peer, w->endpoint, endpoint, s_address_ok (source) ? source : "?");
                }
            }
    }
    pthread_mutex_unlock (&self->lock);
    zstr_free (&source);
    zframe_destroy (&frame);
}

static void
s_actor (zsock_t *pipe, void *arg)
{
    gc_discovery_t *self = arg;
    zactor_t *beacon = zactor_new (zbeacon, NULL);
    char *host = NULL;
    if (beacon && zsock_send (beacon, "si", "CONFIGURE", self->cfg.port) == 0)
        host = zstr_recv (beacon);
    if (!host || !*host) {
        snprintf (self->start_error, sizeof self->start_error, "no broadcast-capable interface%s%s",
                  *self->interface ? " named " : " found", self->interface);
        zstr_free (&host);
        zactor_destroy (&beacon);
        zsock_signal (pipe, 1);
        return;
    }
    pthread_mutex_lock (&self->lock);
    snprintf (self->address, sizeof self->address, "%s", host);
    pthread_mutex_unlock (&self->lock);
    zstr_free (&host);
    zsock_send (beacon, "sbi", "PUBLISH", self->beacon, self->beacon_len, self->cfg.interval_ms);
    zsock_send (beacon, "sb", "SUBSCRIBE", GC_DISCOVERY_PREFIX, strlen (GC_DISCOVERY_PREFIX));
    zsock_signal (pipe, 0);

    zmq_pollitem_t items [2] = { { zsock_resolve (pipe), 0, ZMQ_POLLIN, 0 },
                                 { zsock_resolve (beacon), 0, ZMQ_POLLIN, 0 } };
    while (true) {
        if (zmq_poll (items, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (items [0].revents & ZMQ_POLLIN) {
            zmsg_t *cmd = zmsg_recv (pipe);
            zmsg_destroy (&cmd);
            break;                      /* $TERM is the only command */
        }
        if (items [1].revents & ZMQ_POLLIN) {
            zmsg_t *msg = zmsg_recv (beacon);
            if (msg)
                s_on_beacon (self, msg);
            zmsg_destroy (&msg);
        }
    }
    zactor_destroy (&beacon);
}

int
gc_discovery_start (gc_discovery_t *self, gc_err_t *err)
{
    if (self->actor)
        return 0;
    //  zbeacon reads the interface from CZMQ's process-wide setting.
    if (*self->interface)
        zsys_set_interface (self->interface);
    self->actor = zactor_new (s_actor, self);
    if (!self->actor)
        return gc_err_set (err, GC_E_SYS, "discovery: cannot start the beacon thread");
    if (*self->start_error) {
        zactor_destroy (&self->actor);
        return gc_err_set (err, GC_E_SYS, "discovery: %s (UDP port %d; set discovery/interface, "
                           "see docs/OPERATIONS.md)", self->start_error, self->cfg.port);
    }
    return 0;
}

const char *
gc_discovery_address (gc_discovery_t *self)
{
    return self->address;
}

bool
gc_discovery_endpoint (gc_discovery_t *self, uint32_t peer, char *out, size_t size)
{
    bool found = false;
    pthread_mutex_lock (&self->lock);
    for (size_t i = 0; i < self->n_wanted && !found; i++)
        if (self->wanted [i].peer == peer && self->wanted [i].found) {
            snprintf (out, size, "%s", self->wanted [i].endpoint);
            found = true;
        }
    pthread_mutex_unlock (&self->lock);
    return found;
}

void
gc_discovery_stats (gc_discovery_t *self, gc_discovery_stats_t *out)
{
    pthread_mutex_lock (&self->lock);
    *out = self->stats;
    pthread_mutex_unlock (&self->lock);
}

void
gc_discovery_destroy (gc_discovery_t **self_p)
{
    gc_discovery_t *self = *self_p;
    if (!self)
        return;
    zactor_destroy (&self->actor);
    pthread_mutex_destroy (&self->lock);
    free (self->interface);
    free (self->trusted);
    free (self->wanted);
    free (self);
    *self_p = NULL;
}
