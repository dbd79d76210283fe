/*  gc_peer — one running peer: setup, rounds, checkpoints, the control
    channel and teardown, shared by `gcnode run` (cmd_run.c) and libgcnode.
    Threads: see gc_peer.h. */
#include "gc_peer.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_checkpoint.h"
#include "gc_cli.h"
#include "gc_config.h"
#include "gc_cpu.h"
#include "gc_dataset.h"
#include "gc_endpoint.h"
#include "gc_fs.h"
#include "gc_key.h"
#include "gc_log.h"
#include "gc_metrics.h"
#include "gc_model_file.h"
#include "gc_ops.h"
#include "gc_parse.h"
#include "gc_reject_log.h"
#include "gc_partition.h"
#include "gc_setup.h"
#include "gc_time.h"
#include "gc_topology.h"
#include "gc_trust.h"
#include "gc_wire.h"
#include "gc_zmq.h"

struct gc_peer_t {
    gc_config_t   *cfg;
    gc_key_t      *key;
    gc_trust_t    *trust;
    uint8_t      (*ids) [8];
    char         (*endpoints) [512];  /* per peer index: its endpoint, host resolved */
    gc_topology_t *topology;
    gc_dataset_t   shard, test;
    gc_zmq_t      *zmq;
    gc_engine_t   *engine;
    FILE          *metrics;
    bool           progress;
    bool           resume;
    bool           external;       /* the embedder trains and evaluates */
    double         accuracy_now;   /* [T] the last evaluation */
    double         loss_now;
    bool           evaluated_now;
    atomic_bool    accuracy_given; /* the embedder reported one */
    double         started;
    //  set by the control channel (network thread), read by the trainer
    _Atomic double slow;            /* training takes `slow` times as long */
    atomic_int     stop;            /* end the run as on SIGTERM */
    _Atomic double accuracy;        /* last evaluation, for status */
    gc_ops_t      *ops;             /* discovery, CURVE, status, HTTP, systemd */
    gc_checkpoint_t ckpt_bind;      /* network, peer and run every checkpoint carries */
};

//  Stamp c with what binds it to this run (gc_checkpoint.h).
static void
s_checkpoint_bind (const gc_peer_t *p, gc_checkpoint_t *c)
{
    memcpy (c->network, p->ckpt_bind.network, sizeof c->network);
    memcpy (c->peer, p->ckpt_bind.peer, sizeof c->peer);
    memcpy (c->run, p->ckpt_bind.run, sizeof c->run);
}

static int
s_lease_persist (void *ctx, uint64_t end, gc_err_t *err)
{
    return gc_checkpoint_lease_write (((gc_peer_t *) ctx)->cfg->checkpoint_dir, end, err);
}

//  At start: a checkpoint directory that cannot be used is fatal, a fresh
//  run does not mix with an earlier run's checkpoints, and seqs continue
//  past the stored lease (not from the wall clock).
static int
s_checkpoint_open (gc_peer_t *p, gc_err_t *err)
{
    gc_checkpoint_t *b = &p->ckpt_bind;
    uint64_t floor = 0;
    if (gc_wire_network_id (p->cfg->network, b->network, err)
    ||  gc_checkpoint_new_run (b->run, err))
        return -1;
    memcpy (b->peer, p->ids [p->cfg->index], sizeof b->peer);
    if (gc_checkpoint_open (p->cfg->checkpoint_dir, b, p->resume, err)
    ||  gc_checkpoint_lease_read (p->cfg->checkpoint_dir, &floor, err) < 0)
        return -1;
    gc_engine_seq_lease (p->engine, floor, s_lease_persist, p);
    return 0;
}


static int
s_setup_identity (gc_peer_t *p, gc_err_t *err)
{
    gc_config_t *cfg = p->cfg;
    p->key = gc_key_load_private (cfg->key, err);
    if (!p->key)
        return gc_err_prefix (err, "node/key: ");
    p->trust = gc_trust_new ();
    p->ids = calloc ((size_t) cfg->n_peers, sizeof *p->ids);
    if (!p->trust || !p->ids)
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    for (long i = 0; i < cfg->n_peers; i++) {
        //  A revoked peer is never trusted. Its id is still needed to name
        //  it: from its key file while that is there, else none (zero).
        if (cfg->peers [i].revoked) {
            gc_key_t *pub = cfg->peers [i].key && *cfg->peers [i].key ? gc_key_load (cfg->peers [i].key, NULL) : NULL;
            if (pub)
                memcpy (p->ids [i], gc_key_peer_id (pub), 8);
            gc_key_destroy (&pub);
            gc_log_info ("peer %ld is revoked (peers/%ld/revoked): not trusted, not connected", i, i);
            continue;
        }
        gc_key_t *pub = gc_key_load (cfg->peers [i].key, err);
        if (!pub) {
            char why [sizeof err->msg];
            snprintf (why, sizeof why, "%s", err->msg);
            return gc_err_set (err, err->code, "peers/%ld/key: %s (peers/%ld/revoked = 1 revokes that peer)", i,
                               why, i);
        }
        memcpy (p->ids [i], gc_key_peer_id (pub), 8);
        gc_key_destroy (&pub);
        if (gc_trust_add_file (p->trust, cfg->peers [i].key, err))
            return gc_err_prefix (err, "peers/%ld/key: ", i);
    }
    if (*cfg->trust && gc_trust_add_dir (p->trust, cfg->trust, err))
        return gc_err_prefix (err, "node/trust: ");
    char tag [96];
    snprintf (tag, sizeof tag, "peer %ld %s", cfg->index, gc_key_peer_id_hex (p->key));
    gc_log_set_tag (tag);
    return 0;
}

//  The whole training set is loaded, every peer computes the same split from
//  the shared seed and keeps its own part.
static int
s_setup_data (gc_peer_t *p, gc_err_t *err)
{
    gc_config_t *cfg = p->cfg;
    gc_dataset_t train;
    bool fell_back;
    if (gc_setup_data (cfg, &train, &p->test, &fell_back, err))
        return -1;
    if (fell_back)
        gc_log_warning ("%s has no dataset (install dataset-fashion-mnist): "
                        "using the built-in synthetic task", GC_DEFAULT_DATA_DIR);
    gc_split_t split;
    uint32_t *idx = NULL;
    size_t count = 0;
    int rc = gc_split_parse (cfg->split, &split, err);
    if (rc == 0)
        rc = gc_partition_peer (train.y, train.n, train.n_classes, &split, (uint32_t) cfg->n_peers,
                                cfg->seed, (uint32_t) cfg->index, &idx, &count, err);
    if (rc == 0)
        rc = gc_dataset_subset (&train, idx, count, &p->shard, err);
    free (idx);
    gc_dataset_free (&train);
    if (rc)
        return gc_err_prefix (err, "train/split: ");
    gc_log_info ("data: %zu training samples of %s (split %s), %zu test samples",
                 p->shard.n, *cfg->data ? cfg->data : GC_DEFAULT_DATA_DIR, cfg->split, p->test.n);
    return 0;
}

//  The engine sends through the transport; the transport delivers to the
//  engine. Both callbacks take the peer, so either can be created first.
static int
s_io_send (void *ctx, const uint32_t *dests, size_t n, const uint8_t *header, size_t hlen,
           const uint8_t *payload, size_t plen)
{
    return gc_zmq_send (((gc_peer_t *) ctx)->zmq, dests, n, header, hlen, payload, plen);
}

static gc_deliver_t
s_deliver (void *ctx, const uint8_t *header, size_t hlen, const uint8_t *payload, size_t plen,
           int64_t now)
{
    return gc_engine_on_message (((gc_peer_t *) ctx)->engine, header, hlen, payload, plen, now);
}

//  "0,1,2" -> peer indices
static size_t
s_parse_peer_list (const char *text, uint32_t *out, size_t max, long n_peers)
{
    size_t n = 0;
    const char *p = text;
    while (*p && n < max) {
        char *end;
        long v = strtol (p, &end, 10);
        if (end == p || v < 0 || v >= n_peers || (*end && *end != ','))
            return (size_t) -1;
        out [n++] = (uint32_t) v;
        p = *end ? end + 1 : end;
    }
    return n;
}

//  The control channel (node/control): fault injection for the harness and
//  a status query. Runs in the network thread.
static void
s_control (void *ctx, const char *request, char *reply, size_t size)
{
    gc_peer_t *p = ctx;
    char verb [32] = "", arg1 [4096] = "", arg2 [64] = "";
    int n = sscanf (request, "%31s %4095s %63s", verb, arg1, arg2);
    gc_err_t err = { 0 };
    double a = 0;
    int fault = gc_zmq_fault_control (p->zmq, request, &err);       /* drop, delay, rate */
    if (fault < 0) {
        snprintf (reply, size, "error: %s", err.msg);
        return;
    }
    if (fault == 0) {
        //  applied by the transport's fault layer
    }
    else
    if (n >= 1 && !strcmp (verb, "slow") && n == 2
    &&  gc_parse_double (arg1, 1, 1000, &a, "slow factor", &err) == 0)
        atomic_store (&p->slow, a);
    else
    if (n == 2 && !strcmp (verb, "partition")) {
        uint32_t allowed [GC_CONFIG_MAX_PEERS];
        size_t count = s_parse_peer_list (arg1, allowed, GC_CONFIG_MAX_PEERS, p->cfg->n_peers);
        if (count == (size_t) -1 || count == 0) {
            snprintf (reply, size, "error: partition '%s': expected peer indices 0..%ld, comma-separated",
                      arg1, p->cfg->n_peers - 1);
            return;
        }
        gc_engine_partition (p->engine, allowed, count);
        gc_log_info ("control: partitioned, talking only to %s", arg1);
    }
    else
    if (n == 1 && !strcmp (verb, "heal")) {
        gc_engine_partition (p->engine, NULL, 0);
        gc_log_info ("control: partition healed");
    }
    else
    if (n == 1 && !strcmp (verb, "stop"))
        atomic_store (&p->stop, 1);
    else
    if (n == 1 && !strcmp (verb, "status")) {
        gc_engine_stats_t s;
        gc_engine_stats (p->engine, &s);
        char faults [256];
        gc_zmq_fault_describe (p->zmq, faults, sizeof faults);
        snprintf (reply, size, "ok {\"peer\":%ld,\"round\":%llu,\"rounds\":%ld,\"accuracy\":%.6f,"
                  "\"loss\":%.6g,\"bytes_sent\":%llu,\"bytes_recv\":%llu,\"rejected\":%llu,"
                  "\"slow\":%g,\"faults\":\"%s\"}", p->cfg->index, (unsigned long long) s.round,
                  p->cfg->rounds, atomic_load (&p->accuracy), s.last_loss,
                  (unsigned long long) s.bytes_sent, (unsigned long long) s.bytes_recv,
                  (unsigned long long) s.rejected, atomic_load (&p->slow), faults);
        return;
    }
    else {
        snprintf (reply, size, "error: %s", err.msg [0] ? err.msg
                  : "unknown command (drop P | delay MS [JITTER] | rate B/S | slow F | "
                    "partition I,J,... | heal | status | stop)");
        return;
    }
    gc_log_info ("control: %s", request);
    snprintf (reply, size, "ok");
}

//  tcp://host:port -> tcp://ADDRESS:port; ipc:// endpoints bind as they are
static int
s_bind_endpoint (const char *endpoint, char *out, size_t size, gc_err_t *err)
{
    if (!strncmp (endpoint, "ipc://", 6)) {
        snprintf (out, size, "%s", endpoint);
        return 0;
    }
    const char *colon = strrchr (endpoint, ':');
    if (strncmp (endpoint, "tcp://", 6) || !colon || colon <= endpoint + 6)
        return gc_err_set (err, GC_E_CONFIG, "cannot derive a bind endpoint from '%s' (set node/bind)", endpoint);
    //  The interface of the configured address, never every interface
    //  (tcp://*): a name is resolved here, as libzmq binds addresses only.
    gc_err_t why = { 0 };
    if (gc_endpoint_resolve (endpoint, out, size, &why))
        return gc_err_set (err, GC_E_CONFIG, "%s, in '%s' to bind to (set node/bind)", why.msg, endpoint);
    return 0;
}

//  Is this endpoint reachable only from this machine?
static bool
s_local_endpoint (const char *endpoint)
{
    if (!strncmp (endpoint, "ipc://", 6) || !strncmp (endpoint, "inproc://", 9))
        return true;
    if (strncmp (endpoint, "tcp://", 6))
        return false;
    const char *host = endpoint + 6;
    return !strncmp (host, "127.", 4) || !strncmp (host, "[::1]", 5) || !strncmp (host, "localhost:", 10);
}

//  CURVE off: silent on loopback, else name what anyone can reach.
static void
s_warn_exposure (const gc_peer_t *p, const char *bind)
{
    const gc_config_t *cfg = p->cfg;
    if (cfg->curve)
        return;
    if (!s_local_endpoint (bind))
        gc_log_warning ("SECURITY: node/curve = 0 and the inbox listens on %s: anyone who reaches it can connect "
                        "and send (signatures are still checked; the memory guard bounds each connection); "
                        "set node/curve = 1", bind);
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (p->engine, &peers);
    for (size_t i = 0; i < n; i++)
        if (!s_local_endpoint (cfg->peers [peers [i]].endpoint))
            gc_log_warning ("SECURITY: node/curve = 0: the link to peer %u at %s is neither encrypted nor "
                            "bound to the peer's key", peers [i], cfg->peers [peers [i]].endpoint);
}

static int
s_setup_engine (gc_peer_t *p, gc_err_t *err)
{
    gc_config_t *cfg = p->cfg;
    p->topology = gc_topology_new (cfg->topology, (uint32_t) cfg->n_peers, cfg->seed, err);
    if (!p->topology)
        return gc_err_prefix (err, "topology/kind: ");
    gc_engine_config_t ec;
    gc_setup_parts_t parts = { .topology = p->topology, .key = p->key, .trust = p->trust,
                               .peer_ids = (const uint8_t (*) [8]) p->ids,
                               .train = p->external ? NULL : &p->shard,
                               .test = p->external ? NULL : &p->test };
    if (gc_setup_engine (cfg, &parts, &ec, err))
        return -1;
    gc_engine_io_t io = { .ctx = p, .send = s_io_send };
    p->engine = gc_engine_new (&ec, &io, err);
    return p->engine ? 0 : -1;
}

//  Each neighbour's endpoint with its host resolved (gc_endpoint.h), into
//  p->endpoints. A host that does not resolve is a mistake in the
//  configuration (ZeroMQ would retry it silently forever); a resolver that
//  is down for now is not (exit 1: a restart may succeed). Also tells the
//  rejection log where each neighbour is.
static int
s_check_endpoints (gc_peer_t *p, gc_err_t *err)
{
    p->endpoints = calloc ((size_t) p->cfg->n_peers, sizeof *p->endpoints);
    if (!p->endpoints)
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (p->engine, &peers);
    for (size_t i = 0; i < n; i++) {
        const char *ep = p->cfg->peers [peers [i]].endpoint;
        gc_reject_log_set_endpoint (peers [i], ep);
        if (!p->cfg->peers [peers [i]].revoked
        &&  gc_endpoint_resolve (ep, p->endpoints [peers [i]], sizeof p->endpoints [0], err))
            return gc_err_prefix (err, "peers/%u/endpoint %s: ", peers [i], ep);
    }
    return 0;
}

static int
s_setup_transport (gc_peer_t *p, gc_err_t *err)
{
    char bind [256];
    if (*p->cfg->bind)
        snprintf (bind, sizeof bind, "%s", p->cfg->bind);
    else
    if (s_bind_endpoint (p->cfg->peers [p->cfg->index].endpoint, bind, sizeof bind, err))
        return gc_err_prefix (err, "peers/%ld/endpoint: ", p->cfg->index);
    gc_zmq_config_t zc = { .bind = bind, .deliver = s_deliver, .ctx = p, .seed = p->cfg->seed + 7919 * (uint64_t) p->cfg->index,
                           .control = *p->cfg->control ? p->cfg->control : NULL,
                           .control_fn = s_control,
                           .max_frame = gc_engine_max_payload (p->engine) + 4096 };
    gc_ops_transport (p->ops, &zc);
    s_warn_exposure (p, bind);
    p->zmq = gc_zmq_new (&zc, err);
    if (!p->zmq)
        return -1;
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (p->engine, &peers);
    //  no link to a revoked peer: nothing is sent to it (the engine's sends
    //  to it are dropped by the transport)
    for (size_t i = 0; i < n; i++)
        if (!p->cfg->peers [peers [i]].revoked
        &&  gc_zmq_add_peer (p->zmq, peers [i], p->endpoints [peers [i]], err))
            return gc_err_prefix (err, "peers/%u/endpoint: ", peers [i]);
    return gc_zmq_start (p->zmq, err);
}

static void
s_teardown (gc_peer_t *p)
{
    gc_zmq_destroy (&p->zmq);           /* stops the network thread first */
    gc_ops_destroy (&p->ops);           /* after the sockets it secured */
    gc_engine_destroy (&p->engine);
    gc_topology_destroy (&p->topology);
    gc_dataset_free (&p->shard);
    gc_dataset_free (&p->test);
    gc_trust_destroy (&p->trust);
    gc_key_destroy (&p->key);
    free (p->ids);
    free (p->endpoints);
    if (p->metrics)
        fclose (p->metrics);
}

static void
s_report (gc_peer_t *p, bool evaluated, double accuracy, double loss)
{
    gc_zmq_stats_t zs;
    gc_zmq_stats (p->zmq, &zs);
    gc_metrics_ctx_t m = {
        .peer = (uint32_t) p->cfg->index, .peer_id = gc_key_peer_id_hex (p->key),
        .role = p->cfg->role, .elapsed_s = gc_now_s () - p->started,
        .evaluated = evaluated, .accuracy = accuracy, .test_loss = loss, .transport = &zs
    };
    gc_ops_round (p->ops, &m);
    if (p->metrics)
        gc_metrics_write_json (p->engine, &m, p->metrics);
    if (p->progress)
        gc_metrics_write_progress (p->engine, &m, (uint64_t) p->cfg->rounds, stderr);
}

//  Messages to a neighbour that is not connected yet are dropped (not
//  queued), so give the neighbours a bounded moment to come up first: what is
//  lost after that is repaired by keyframes. All of them within 10 s, or, once
//  some are there, whoever is there after 2 s (a neighbour may be down for good).
static void
s_wait_for_neighbours (gc_peer_t *p, volatile int *stop)
{
    const uint32_t *peers;
    int n = (int) gc_engine_neighbours (p->engine, &peers), total = 0, connected = 0;
    for (int i = 0; i < n; i++)
        total += !p->cfg->peers [peers [i]].revoked;
    double start = gc_now_s ();
    while (!(stop && *stop) && !atomic_load (&p->stop) && (connected = gc_zmq_connected (p->zmq)) < total) {
        double waited = gc_now_s () - start;
        if (waited > 10.0 || (connected > 0 && waited > 2.0))
            break;
        zclock_sleep (20);
    }
    if (connected < total) {
        //  the transport counts links, not which: name every candidate
        char names [1024] = "";
        size_t used = 0;
        for (int i = 0; i < n && used + 1 < sizeof names; i++) {
            if (p->cfg->peers [peers [i]].revoked)
                continue;
            int k = snprintf (names + used, sizeof names - used, "%speer %u at %s", used ? ", " : "", peers [i],
                              p->cfg->peers [peers [i]].endpoint);
            used = k < 0 ? sizeof names : used + (size_t) k;
        }
        gc_log (connected == 0 ? GC_LOG_ERROR : GC_LOG_WARNING,
                "%d of %d neighbours reachable after %.0f s (%s %s); starting anyway, they are retried",
                connected, total, gc_now_s () - start, connected == 0 ? "none of" : "not all of", names);
    }
    else
        gc_log_info ("connected to all %d neighbours", total);
}

static void
s_report_refused (void *ctx, const char *msg)
{
    gc_log_warning ("checkpoint refused: %s", msg);
}

static int
s_resume (gc_peer_t *p, gc_err_t *err)
{
    size_t n = gc_engine_n_params (p->engine);
    gc_checkpoint_t c = { .n = n };
    s_checkpoint_bind (p, &c);
    snprintf (c.spec, sizeof c.spec, "%s", gc_engine_model_spec (p->engine));
    c.x = malloc (n * sizeof (float));
    c.v = malloc (n * sizeof (float));
    char path [1024] = "";
    int rc = c.x && c.v ? gc_checkpoint_load_newest (p->cfg->checkpoint_dir, &c, s_report_refused,
                                                     NULL, path, sizeof path, err)
                        : gc_err_set (err, GC_E_NOMEM, "out of memory");
    if (rc == 0) {
        gc_engine_restore (p->engine, c.round, c.seq, c.x, c.v);
        memcpy (p->ckpt_bind.run, c.run, sizeof c.run);    /* continue that run */
        gc_log_info ("resumed from %s (round %llu)", path, (unsigned long long) c.round);
    }
    else
    if (rc == 1) {
        gc_log_info ("no valid checkpoint in %s: starting fresh", p->cfg->checkpoint_dir);
        rc = 0;
    }
    free (c.x);
    free (c.v);
    return rc;
}

static void
s_checkpoint (gc_peer_t *p)
{
    gc_checkpoint_t c = { .n = gc_engine_n_params (p->engine) };
    const float *x, *v;
    gc_engine_snapshot (p->engine, &c.round, &c.seq, &x, &v);
    s_checkpoint_bind (p, &c);
    snprintf (c.spec, sizeof c.spec, "%s", gc_engine_model_spec (p->engine));
    c.x = (float *) x;
    c.v = (float *) v;
    gc_err_t err = { 0 };
    if (gc_checkpoint_save (p->cfg->checkpoint_dir, &c, &err))
        gc_log_error ("checkpoint: %s", err.msg);
}


//  The control channel can stop or partition this peer and has no
//  authentication of its own, so it is only ipc:// in a directory nobody
//  else may enter (created 0700 when missing): the file system is the
//  authentication. Never tcp, where anyone who reaches the port could.
int
gc_peer_check_control (const char *control, gc_err_t *err)
{
    if (!*control)
        return 0;
    if (strncmp (control, "ipc://", 6) || control [6] == '@' || !control [6])
        return gc_err_set (err, GC_E_CONFIG, "node/control: '%s' is refused: the control channel can stop or "
                           "partition this peer and is not authenticated; use ipc://PATH in a private "
                           "directory (mode 0700)", control);
    char dir [4096];
    const char *path = control + 6, *slash = strrchr (path, '/');
    size_t len = slash ? (size_t) (slash - path) : 1;
    if (len >= sizeof dir)
        return gc_err_set (err, GC_E_CONFIG, "node/control: '%s': path too long", control);
    memcpy (dir, slash ? path : ".", len);
    dir [len] = '\0';
    if (len == 0)
        snprintf (dir, sizeof dir, "/");
    struct stat st;
    if (stat (dir, &st) != 0) {
        if (errno != ENOENT)
            return gc_err_set (err, GC_E_CONFIG, "node/control: '%s': directory %s: %s", control, dir, strerror (errno));
        if (gc_fs_mkdirs (dir, 0700, err))
            return gc_err_prefix (err, "node/control: '%s': ", control);
        if (stat (dir, &st) != 0)
            return gc_err_set (err, GC_E_CONFIG, "node/control: '%s': directory %s: %s", control, dir, strerror (errno));
    }
    if (!S_ISDIR (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 077))
        return gc_err_set (err, GC_E_CONFIG, "node/control: '%s' is refused: directory %s (mode %04o, owner uid %u) "
                           "is not private to this user (uid %u); the control channel is authenticated by that "
                           "directory only: use one of mode 0700", control, dir, (unsigned) (st.st_mode & 07777),
                           (unsigned) st.st_uid, (unsigned) geteuid ());
    return 0;
}

gc_peer_t *
gc_peer_new (gc_config_t *cfg, const gc_peer_options_t *opt, bool *bad_input, gc_err_t *err)
{
    static const gc_peer_options_t none = { 0 };
    if (!opt)
        opt = &none;
    bool bad = false;
    gc_peer_t *p = calloc (1, sizeof *p);
    if (!p) {
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        goto fail;
    }
    p->started = gc_now_s ();
    p->slow = 1.0;
    p->cfg = cfg;
    p->resume = opt->resume;
    p->external = opt->external;
    int rc = 0;
    gc_reject_log_enable (GC_REJECT_LOG_EVERY_S);
    if (gc_log_setup (cfg->log_level, cfg->log_to, err) || s_setup_identity (p, err)
    ||  (!p->external && s_setup_data (p, err)) || s_setup_engine (p, err)) {
        bad = true;
        rc = -1;
    }
    if (rc == 0 && opt->params)
        gc_engine_bind_params (p->engine, opt->params, opt->adopt);
    if (rc == 0 && !(p->ops = gc_ops_new (&(gc_ops_config_t) { cfg, p->key, p->trust,
                                          (const uint8_t (*) [8]) p->ids, p->engine }, err))) {
        bad = gc_cli_exit_code (err) == GC_EXIT_USAGE;
        rc = -1;
    }
    if (rc == 0 && s_check_endpoints (p, err)) {
        bad = gc_cli_exit_code (err) == GC_EXIT_USAGE;
        rc = -1;
    }
    if (rc == 0 && (s_setup_transport (p, err) || gc_ops_ready (p->ops, p->zmq, err)))
        rc = -1;
    if (rc == 0 && *cfg->checkpoint_dir && s_checkpoint_open (p, err))
        rc = -1;
    if (rc == 0 && p->resume && s_resume (p, err))
        rc = -1;
    //  where the final model goes, tried now rather than when the run ends
    if (rc == 0 && *cfg->final_model && gc_fs_check_writable (cfg->final_model, err)) {
        gc_err_prefix (err, "node/final_model: ");
        bad = true;
        rc = -1;
    }
    if (rc == 0 && *cfg->metrics && !(p->metrics = fopen (cfg->metrics, "a"))) {
        gc_err_set (err, GC_E_IO, "node/metrics: cannot open %s (%s)", cfg->metrics, strerror (errno));
        bad = true;
        rc = -1;
    }
    if (rc) {
        gc_peer_destroy (&p);
        goto fail;
    }
    p->progress = !strcmp (cfg->progress, "on")
               || (!strcmp (cfg->progress, "auto") && isatty (STDERR_FILENO));
    if (!p->external)
        gc_cli_set_blas_threads ((int) cfg->threads);
    gc_log_info ("kernels %s (this CPU: %s)", gc_cpu_name (gc_cpu_level ()), gc_cpu_name (gc_cpu_detected ()));
    gc_log_info ("listening, %s, %zu-parameter model %s, rounds %ld, %s + %s, %s, wait %s",
                 gc_topology_name (p->topology), gc_engine_n_params (p->engine), cfg->model,
                 cfg->rounds, cfg->compress, cfg->ec, cfg->aggregator, cfg->wait);
    return p;
fail:
    if (bad_input)
        *bad_input = bad;
    return NULL;
}

void
gc_peer_destroy (gc_peer_t **self_p)
{
    gc_peer_t *p = *self_p;
    if (!p)
        return;
    s_teardown (p);
    free (p);
    *self_p = NULL;
}

void
gc_peer_connect (gc_peer_t *p, volatile int *stop)
{
    s_wait_for_neighbours (p, stop);
    if (gc_engine_start (p->engine, gc_now_ns ()))
        gc_log_warning ("could not announce this peer to its neighbours");
}

int
gc_peer_round (gc_peer_t *p, volatile int *stop, gc_err_t *err)
{
    double t0 = gc_now_s ();
    gc_engine_train (p->engine);
    double slow = atomic_load (&p->slow);
    if (slow > 1)       /* fault injection: a straggler */
        zclock_sleep ((int) ((slow - 1) * (gc_now_s () - t0) * 1e3));
    //  What the bandwidth policy plans a send with besides the measured
    //  train time: the link's rate where known (the fault layer's cap; a real
    //  link's capacity is not measured: bandwidth:rate=B gives it).
    gc_engine_set_link_rate (p->engine, p->zmq ? gc_zmq_link_rate (p->zmq) : 0);
    if (gc_engine_gossip (p->engine, stop, err))
        return gc_err_prefix (err, "round %llu: ", (unsigned long long) gc_engine_round (p->engine));
    uint64_t round = gc_engine_round (p->engine);
    if (*p->cfg->checkpoint_dir && round % (uint64_t) p->cfg->checkpoint_every == 0)
        s_checkpoint (p);
    long every = p->cfg->eval_every;
    p->evaluated_now = !p->external && every > 0 && round % (uint64_t) every == 0;
    if (p->evaluated_now) {
        gc_engine_evaluate (p->engine, &p->accuracy_now, &p->loss_now);
        atomic_store (&p->accuracy, p->accuracy_now);
    }
    s_report (p, p->external ? atomic_load (&p->accuracy_given) : p->evaluated_now,
              atomic_load (&p->accuracy), p->loss_now);
    return 0;
}

void
gc_peer_finish (gc_peer_t *p, bool stopped, double *accuracy_out)
{
    gc_err_t err = { 0 };
    if (p->progress)
        fputc ('\n', stderr);
    if (*p->cfg->checkpoint_dir)
        s_checkpoint (p);
    double accuracy = atomic_load (&p->accuracy), loss = p->loss_now;
    if (!p->external) {
        gc_engine_evaluate (p->engine, &accuracy, &loss);
        atomic_store (&p->accuracy, accuracy);
    }
    s_report (p, !p->external || atomic_load (&p->accuracy_given), accuracy, loss);
    if (*p->cfg->final_model
    &&  gc_model_file_write (p->cfg->final_model, gc_engine_params (p->engine),
                             gc_engine_n_params (p->engine), &err))
        gc_log_error ("node/final_model: %s", err.msg);
    gc_engine_stats_t s;
    gc_engine_stats (p->engine, &s);
    gc_log_info ("%s after %llu rounds: test accuracy %.4f, sent %llu bytes (%.1fx less than dense), "
                 "%llu rejected", stopped || atomic_load (&p->stop) ? "stopped" : "done", (unsigned long long) s.round,
                 accuracy, (unsigned long long) s.bytes_sent,
                 s.bytes_sent ? (double) s.dense_equiv_bytes / (double) s.bytes_sent : 0.0,
                 (unsigned long long) s.rejected);
    if (accuracy_out)
        *accuracy_out = accuracy;
}

gc_engine_t *gc_peer_engine (gc_peer_t *p) { return p->engine; }
bool gc_peer_stopped (gc_peer_t *p) { return atomic_load (&p->stop); }
void
gc_peer_set_accuracy (gc_peer_t *p, double accuracy)
{
    atomic_store (&p->accuracy, accuracy);
    atomic_store (&p->accuracy_given, true);
}
