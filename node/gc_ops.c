#include "gc_ops.h"

#include <czmq.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gc_cli.h"
#include "gc_curve.h"
#include "gc_discovery.h"
#include "gc_http.h"
#include "gc_log.h"
#include "gc_notify.h"
#include "gc_prom.h"
#include "gc_reject_log.h"
#include "gc_snapshot.h"
#include "gc_status.h"
#include "gc_time.h"

#ifndef GC_VERSION
#define GC_VERSION "0.0.0"
#endif
#define S_WARN_EVERY_NS (60 * 1000000000LL)

struct gc_ops_t {
    gc_config_t     *cfg;
    gc_engine_t     *engine;
    gc_zmq_t        *zmq;
    const char      *version;
    gc_curve_t      *curve;
    gc_discovery_t  *discovery;
    gc_notify_t     *notify;
    gc_http_t       *http;
    gc_snapshot_t   *work;          /* trainer thread only */
    gc_snapshot_t   *published;     /* under lock: what the HTTP thread reads */
    pthread_mutex_t  lock;
    gc_metrics_extra_t extra;
    //  what the last warnings reported (logged again when it grows, at most
    //  once a minute)
    uint64_t         warned_untrusted, warned_auth, warned_protocol, warned_conflicts, warned_fallbacks;
    int64_t          last_warning;
    bool             status_failed;
    gc_status_window_t window;      /* trainer thread: the last minute, for gcnode status */
};

static void s_publish (gc_ops_t *self);

//  The engine's view, with revoked neighbours marked: they are expected
//  to be silent and unconnected.
static void
s_take (gc_ops_t *self, gc_snapshot_t *w)
{
    gc_snapshot_take (w, self->engine);
    w->revoked = 0;
    for (size_t i = 0; i < w->n_neighbours; i++)
        if (self->cfg->peers [w->neighbours [i]].revoked) {
            w->kind [i] = GC_SNAPSHOT_REVOKED;
            w->revoked++;
        }
}

static double
s_unix_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

//  ---------------------------------------------------------------------------
//  CURVE

//  A key file the configuration names and that cannot be read is a wrong
//  value of that key (exit 2), not a failure of the running system.
static int
s_key_file_error (gc_err_t *err, const char *key)
{
    if (err && err->code == GC_E_IO)
        err->code = GC_E_CONFIG;
    return gc_err_prefix (err, "%s: ", key);
}

static int
s_setup_curve (gc_ops_t *self, gc_err_t *err)
{
    gc_config_t *cfg = self->cfg;
    char path [4096];
    if (gc_config_curve_secret (cfg, path, sizeof path))
        return gc_err_set (err, GC_E_CONFIG, "node/curve_key: path too long");
    self->curve = gc_curve_new (path, err);
    if (!self->curve)
        return s_key_file_error (err, "node/curve_key");
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (self->engine, &peers);
    size_t allowed = 0;
    for (size_t i = 0; i < n; i++) {
        if (cfg->peers [peers [i]].revoked) {
            //  Refused; its key, where still configured, only names it.
            gc_err_t ignored = { 0 };
            if (gc_config_curve_public (cfg, peers [i], path, sizeof path) == 0)
                gc_curve_add_revoked (self->curve, peers [i], path, &ignored);
            continue;
        }
        allowed++;
        if (gc_config_curve_public (cfg, peers [i], path, sizeof path))
            return gc_err_set (err, GC_E_CONFIG, "peers/%u/curve_key: path too long", peers [i]);
        char key [64];
        snprintf (key, sizeof key, "peers/%u/curve_key", peers [i]);
        if (gc_curve_add_peer (self->curve, peers [i], path, err))
            return s_key_file_error (err, key);
    }
    if (gc_curve_start (self->curve, err))
        return -1;
    self->extra.curve = true;
    gc_log_info ("CURVE on: public key %s, %zu neighbour keys allowed", gc_curve_public_txt (self->curve), allowed);
    return 0;
}

//  ---------------------------------------------------------------------------
//  discovery

//  What this peer announces: its endpoint, or tcp://*:PORT (receivers use
//  the beacon's source address) when its endpoint is itself "discover".
static int
s_announce (const gc_config_t *cfg, char *out, size_t size, gc_err_t *err)
{
    const char *own = cfg->peers [cfg->index].endpoint;
    if (strcmp (own, GC_CONFIG_DISCOVER)) {
        snprintf (out, size, "%s", own);
        return 0;
    }
    const char *colon = strrchr (cfg->bind, ':');
    if (strncmp (cfg->bind, "tcp://", 6) || !colon)
        return gc_err_set (err, GC_E_CONFIG, "node/bind: '%s': expected tcp://HOST:PORT (its port is announced)",
                           cfg->bind);
    snprintf (out, size, "tcp://*%s", colon);
    return 0;
}

static void
s_list_missing (gc_ops_t *self, const uint32_t *peers, size_t n, char *out, size_t size)
{
    size_t used = 0;
    out [0] = 0;
    for (size_t i = 0; i < n && used + 16 < size; i++)
        if (!strcmp (self->cfg->peers [peers [i]].endpoint, GC_CONFIG_DISCOVER) && !self->cfg->peers [peers [i]].revoked)
            used += (size_t) snprintf (out + used, size - used, "%s%u", used ? ", " : "", peers [i]);
}

static int
s_setup_discovery (gc_ops_t *self, const gc_ops_config_t *oc, gc_err_t *err)
{
    gc_config_t *cfg = self->cfg;
    char announce [GC_DISCOVERY_ENDPOINT_MAX + 1];
    if (s_announce (cfg, announce, sizeof announce, err))
        return -1;
    gc_discovery_config_t dc = {
        .port = (int) cfg->discovery_port, .interval_ms = (int) cfg->discovery_interval_ms,
        .interface = cfg->discovery_interface, .announce = announce, .self_id = gc_key_peer_id (oc->key)
    };
    self->discovery = gc_discovery_new (&dc, err);
    if (!self->discovery)
        return -1;
    for (size_t i = 0; i < gc_trust_size (oc->trust); i++)
        if (gc_discovery_trust (self->discovery, gc_key_peer_id (gc_trust_at (oc->trust, i)), err))
            return -1;
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (self->engine, &peers), wanted = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp (cfg->peers [peers [i]].endpoint, GC_CONFIG_DISCOVER) && !cfg->peers [peers [i]].revoked) {
            if (gc_discovery_want (self->discovery, peers [i], oc->ids [peers [i]], err))
                return -1;
            wanted++;
        }
    if (gc_discovery_start (self->discovery, err))
        return -1;
    self->extra.discovery = true;
    gc_log_info ("discovery: announcing %s on UDP %ld via %s; looking for %zu neighbours", announce,
                 cfg->discovery_port, gc_discovery_address (self->discovery), wanted);
    //  Links are made once, before the first round: wait for every
    //  neighbour we need an endpoint for (bounded).
    int64_t start = gc_now_ns (), deadline = start + cfg->discovery_wait_s * 1000000000LL;
    int64_t next_log = start + 10 * 1000000000LL, next_status = start;
    size_t found = 0;
    while (found < wanted && !zsys_interrupted && gc_now_ns () < deadline) {
        zclock_sleep (50);
        if (gc_now_ns () >= next_status) {
            //  alive while it looks: gcnode status sees "starting", fresh
            self->work->unix_time = s_unix_now ();
            s_publish (self);
            next_status += 1000000000LL;
        }
        for (size_t i = 0; i < n; i++) {
            char endpoint [GC_DISCOVERY_ENDPOINT_MAX + 1];
            gc_config_peer_t *p = &cfg->peers [peers [i]];
            if (!strcmp (p->endpoint, GC_CONFIG_DISCOVER)
            &&  gc_discovery_endpoint (self->discovery, peers [i], endpoint, sizeof endpoint)) {
                char *copy = strdup (endpoint);
                if (!copy)
                    return gc_err_set (err, GC_E_NOMEM, "discovery: out of memory");
                free (p->endpoint);
                p->endpoint = copy;
                found++;
                gc_log_info ("discovery: peer %u is at %s", peers [i], endpoint);
            }
        }
        if (found < wanted && gc_now_ns () >= next_log) {
            char missing [256];
            s_list_missing (self, peers, n, missing, sizeof missing);
            gc_log_info ("discovery: %zu of %zu found, still looking for peer(s) %s", found, wanted, missing);
            gc_notify_status (self->notify, true, "discovery: %zu of %zu neighbours found", found, wanted);
            next_log += 10 * 1000000000LL;
        }
    }
    if (found < wanted) {
        char missing [256];
        s_list_missing (self, peers, n, missing, sizeof missing);
        if (zsys_interrupted)
            return gc_err_set (err, GC_E_STOPPED, "discovery: stopped while looking for peer(s) %s",
                               missing);
        gc_discovery_stats_t ds;
        gc_discovery_stats (self->discovery, &ds);
        return gc_err_set (err, GC_E_TIMEOUT, "discovery: peer(s) %s not found within discovery/wait_s "
                           "= %ld s (%llu beacons: %llu untrusted%s%s, %llu malformed)", missing,
                           cfg->discovery_wait_s, (unsigned long long) ds.received,
                           (unsigned long long) ds.untrusted, ds.untrusted ? ", last " : "",
                           ds.untrusted ? ds.last_untrusted : "", (unsigned long long) ds.malformed);
    }
    return 0;
}

//  ---------------------------------------------------------------------------

gc_ops_t *
gc_ops_new (const gc_ops_config_t *oc, gc_err_t *err)
{
    gc_config_t *cfg = oc->cfg;
    if (*cfg->metrics_http && gc_http_check_bind (cfg->metrics_http, err))
        return NULL;
    gc_ops_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        return NULL;
    }
    self->cfg = cfg;
    self->engine = oc->engine;
    self->version = GC_VERSION;
    pthread_mutex_init (&self->lock, NULL);
    self->notify = gc_notify_new ();
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (oc->engine, &peers);
    self->work = gc_snapshot_new (n);
    self->published = gc_snapshot_new (n);
    if (!self->notify || !self->work || !self->published) {
        gc_ops_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        return NULL;
    }
    gc_snapshot_t *w = self->work;
    w->peer = (uint32_t) cfg->index;
    snprintf (w->peer_id, sizeof w->peer_id, "%s", gc_key_peer_id_hex (oc->key));
    snprintf (w->role, sizeof w->role, "%s", cfg->role);
    snprintf (w->network, sizeof w->network, "%s", cfg->network);
    w->pid = (long) getpid ();
    w->started_unix = w->unix_time = s_unix_now ();
    w->rounds_target = (uint64_t) cfg->rounds;
    s_take (self, w);
    s_publish (self);                   /* "starting" */
    if ((cfg->curve && s_setup_curve (self, err))
    ||  (cfg->discovery && s_setup_discovery (self, oc, err))) {
        gc_ops_destroy (&self);
        return NULL;
    }
    return self;
}

void
gc_ops_transport (gc_ops_t *self, gc_zmq_config_t *zc)
{
    if (self && self->curve) {
        zc->secure = gc_curve_apply;
        zc->secure_ctx = self->curve;
        zc->secure_event = gc_curve_event;
    }
}

//  HTTP thread: render from the published snapshot.
static int
s_render (void *ctx, gc_http_route_t route, gc_buf_t *out)
{
    gc_ops_t *self = ctx;
    pthread_mutex_lock (&self->lock);
    int rc = route == GC_HTTP_METRICS ? gc_prom_render (self->published, self->version, out, NULL)
                                      : gc_status_render (self->published, out, NULL);
    pthread_mutex_unlock (&self->lock);
    return rc;
}

static void
s_publish (gc_ops_t *self)
{
    pthread_mutex_lock (&self->lock);
    gc_snapshot_copy (self->published, self->work);
    pthread_mutex_unlock (&self->lock);
    if (*self->cfg->status_file) {
        gc_err_t err = { 0 };
        if (gc_status_write (self->cfg->status_file, self->work, &err) == 0)
            self->status_failed = false;
        else
        if (!self->status_failed) {
            gc_log_warning ("%s", err.msg);     /* once until it works again */
            self->status_failed = true;
        }
    }
}

static void
s_collect_extra (gc_ops_t *self)
{
    gc_metrics_extra_t *x = &self->extra;
    if (self->curve) {
        gc_curve_stats_t cs;
        gc_curve_stats (self->curve, &cs);
        x->curve_failed_auth = cs.handshake_failed_auth;
        x->curve_failed_protocol = cs.handshake_failed_protocol;
        x->curve_failed_other = cs.handshake_failed_other;
    }
    if (self->discovery) {
        gc_discovery_stats_t ds;
        gc_discovery_stats (self->discovery, &ds);
        x->beacons_received = ds.received;
        x->beacons_untrusted = ds.untrusted;
        x->beacons_malformed = ds.malformed;
        x->beacon_conflicts = ds.conflicts;
        x->peers_wanted = ds.wanted;
        x->peers_found = ds.found;
    }
}

//  Who was refused: the last refusal's address and key, and the peer the
//  key is of when it is a configured one (a revoked machine).
static void
s_warn_curve (gc_ops_t *self)
{
    const gc_metrics_extra_t *x = &self->extra;
    gc_curve_stats_t cs;
    gc_curve_stats (self->curve, &cs);
    if (x->curve_failed_auth > self->warned_auth) {
        char whose [96];
        if (cs.refused_peer == UINT32_MAX)
            snprintf (whose, sizeof whose, "a key of no configured peer");
        else
            snprintf (whose, sizeof whose, "peer %u's key, which is revoked (peers/%u/revoked)",
                      cs.refused_peer, cs.refused_peer);
        gc_log_warning ("CURVE: refused %llu connection(s) whose client key is not a neighbour's "
                        "(last: from %s, %s: %s)", (unsigned long long) (x->curve_failed_auth - self->warned_auth),
                        *cs.refused_address ? cs.refused_address : "an unknown address", whose, cs.refused_key);
        self->warned_auth = x->curve_failed_auth;
    }
    if (x->curve_failed_protocol > self->warned_protocol) {
        gc_log_warning ("CURVE: %llu handshake(s) failed (a peer without CURVE, or another protocol; last from %s)",
                        (unsigned long long) (x->curve_failed_protocol - self->warned_protocol),
                        *cs.failed_address ? cs.failed_address : "an unknown address");
        self->warned_protocol = x->curve_failed_protocol;
    }
}

//  Refused beacons and handshakes are what an operator needs to hear
//  about, but not every round; force (at shutdown) says what is still
//  pending, so that a refusal counted within a minute of an earlier
//  warning is not lost when the run ends first.
static void
s_warn (gc_ops_t *self, bool force)
{
    const gc_metrics_extra_t *x = &self->extra;
    int64_t now = gc_now_ns ();
    if (!force && self->last_warning && now - self->last_warning < S_WARN_EVERY_NS)
        return;
    bool warned = false;
    if (x->beacons_untrusted > self->warned_untrusted) {
        gc_discovery_stats_t ds;
        gc_discovery_stats (self->discovery, &ds);
        gc_log_warning ("discovery: ignored %llu beacon(s) from peer ids not in the trust store (last: %s)",
                        (unsigned long long) (x->beacons_untrusted - self->warned_untrusted),
                        ds.last_untrusted);
        self->warned_untrusted = x->beacons_untrusted;
        warned = true;
    }
    if (x->beacon_conflicts > self->warned_conflicts) {
        gc_discovery_stats_t ds;
        gc_discovery_stats (self->discovery, &ds);
        gc_log_warning ("discovery: %llu beacon(s) announced another endpoint for a peer already found "
                        "(kept the first; a moved peer needs a restart, a forged beacon is ignored; last: %s)",
                        (unsigned long long) (x->beacon_conflicts - self->warned_conflicts), ds.last_conflict);
        self->warned_conflicts = x->beacon_conflicts;
        warned = true;
    }
    if (x->curve_failed_auth > self->warned_auth || x->curve_failed_protocol > self->warned_protocol) {
        s_warn_curve (self);
        warned = true;
    }
    gc_engine_stats_t es;
    gc_engine_stats (self->engine, &es);
    if (es.mix_fallbacks > self->warned_fallbacks) {
        const char *used = gc_engine_fallback_rule (self->engine);
        gc_log_warning ("%llu round(s) had too few fresh inputs for %s: mixed under %s, which tolerates "
                        "fewer Byzantine neighbours (gossip/fallback; docs/ALGORITHMS.md)",
                        (unsigned long long) (es.mix_fallbacks - self->warned_fallbacks), self->cfg->aggregator,
                        *used ? used : "a weaker rule");
        self->warned_fallbacks = es.mix_fallbacks;
        warned = true;
    }
    if (warned)
        self->last_warning = now;
}

int
gc_ops_ready (gc_ops_t *self, gc_zmq_t *zmq, gc_err_t *err)
{
    if (!self)
        return 0;
    self->zmq = zmq;
    if (*self->cfg->metrics_http) {
        self->http = gc_http_new (self->cfg->metrics_http, s_render, self, err);
        if (!self->http)
            return -1;
        snprintf (self->work->http, sizeof self->work->http, "%s", gc_http_bound (self->http));
        gc_log_info ("metrics: http://%s/metrics, status: http://%s/status", self->work->http,
                     self->work->http);
    }
    s_take (self, self->work);
    self->work->unix_time = s_unix_now ();
    s_collect_extra (self);
    self->work->extra = self->extra;
    s_publish (self);
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (self->engine, &peers);
    gc_notify_ready (self->notify, n ? "listening; connecting to neighbours" : "listening");
    if (gc_notify_watchdog_usec (self->notify))
        gc_log_info ("systemd watchdog every %.1f s", 1e-6 * (double) gc_notify_watchdog_usec (self->notify));
    return 0;
}

void
gc_ops_round (gc_ops_t *self, gc_metrics_ctx_t *m)
{
    if (!self)
        return;
    s_collect_extra (self);
    m->extra = &self->extra;
    gc_snapshot_t *w = self->work;
    if (m->evaluated) {
        w->has_accuracy = true;
        w->accuracy = m->accuracy;
        w->test_loss = m->test_loss;
        w->accuracy_round = gc_engine_round (self->engine);
    }
    if (self->http || *self->cfg->status_file) {
        w->state = gc_engine_done (self->engine) ? "done" : "running";
        s_take (self, w);
        w->unix_time = s_unix_now ();
        gc_status_window_update (&self->window, w);
        w->has_transport = m->transport != NULL;
        if (m->transport)
            w->transport = *m->transport;
        w->connected = self->zmq ? gc_zmq_connected (self->zmq) : -1;
        for (size_t i = 0; self->zmq && i < w->n_neighbours; i++)
            w->sent_bytes [i] = gc_zmq_peer_sent_bytes (self->zmq, w->neighbours [i]);
        w->rounds_run++;
        gc_procstat_read (&w->proc);
        w->extra = self->extra;
        s_publish (self);
    }
    gc_notify_watchdog (self->notify);
    gc_reject_log_flush (gc_now_ns ());
    if (w->has_accuracy)
        gc_notify_status (self->notify, false, "round %llu/%ld, test accuracy %.4f",
                          (unsigned long long) gc_engine_round (self->engine), self->cfg->rounds, w->accuracy);
    else
        gc_notify_status (self->notify, false, "round %llu/%ld",
                          (unsigned long long) gc_engine_round (self->engine), self->cfg->rounds);
    s_warn (self, false);
}

void
gc_ops_destroy (gc_ops_t **self_p)
{
    gc_ops_t *self = *self_p;
    if (!self)
        return;
    gc_notify_stopping (self->notify);
    if (self->engine) {
        s_collect_extra (self);
        s_warn (self, true);
    }
    //  The last word in the status file: finished, or stopped early.
    if (self->work && self->published && (self->http || *self->cfg->status_file)) {
        self->work->state = gc_engine_done (self->engine) ? "done" : "stopped";
        self->work->unix_time = s_unix_now ();
        s_publish (self);
    }
    gc_http_destroy (&self->http);
    gc_discovery_destroy (&self->discovery);
    gc_curve_destroy (&self->curve);
    gc_notify_destroy (&self->notify);
    gc_snapshot_destroy (&self->work);
    gc_snapshot_destroy (&self->published);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}
