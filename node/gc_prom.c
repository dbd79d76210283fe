#include "gc_prom.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    gc_buf_t   *out;
    gc_err_t   *err;
    int         rc;
    char        self [96];          /* peer="0",peer_id="…" */
} s_writer_t;

static void
s_printf (s_writer_t *w, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
s_printf (s_writer_t *w, const char *fmt, ...)
{
    if (w->rc)
        return;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (NULL, 0, fmt, ap);
    va_end (ap);
    if (n < 0 || gc_buf_reserve (w->out, (size_t) n + 1, w->err)) {
        w->rc = -1;
        return;
    }
    va_start (ap, fmt);
    vsnprintf ((char *) w->out->data + w->out->len, (size_t) n + 1, fmt, ap);
    va_end (ap);
    w->out->len += (size_t) n;
}

//  A label value: backslash, double quote and newline escaped.
static void
s_label (s_writer_t *w, const char *value)
{
    for (const char *p = value; *p; p++) {
        if (*p == '\\' || *p == '"')
            s_printf (w, "\\%c", *p);
        else
        if (*p == '\n')
            s_printf (w, "\\n");
        else
            s_printf (w, "%c", *p);
    }
}

static void
s_family (s_writer_t *w, const char *name, const char *type, const char *help)
{
    s_printf (w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

//  name{self[,extra]} value
static void
s_sample_u (s_writer_t *w, const char *name, const char *extra, uint64_t v)
{
    s_printf (w, "%s{%s%s%s} %llu\n", name, w->self, extra ? "," : "", extra ? extra : "",
              (unsigned long long) v);
}

static void
s_sample_d (s_writer_t *w, const char *name, const char *extra, double v)
{
    char value [32];
    if (isnan (v))
        snprintf (value, sizeof value, "NaN");
    else
    if (isinf (v))
        snprintf (value, sizeof value, "%sInf", v > 0 ? "+" : "-");
    else
    if (fabs (v) >= 1e6)
        snprintf (value, sizeof value, "%.3f", v);    /* timestamps, byte counts: every digit */
    else
        snprintf (value, sizeof value, "%.9g", v);
    s_printf (w, "%s{%s%s%s} %s\n", name, w->self, extra ? "," : "", extra ? extra : "", value);
}

static void
s_counter (s_writer_t *w, const char *name, const char *help, uint64_t v)
{
    s_family (w, name, "counter", help);
    s_sample_u (w, name, NULL, v);
}

static void
s_gauge (s_writer_t *w, const char *name, const char *help, double v)
{
    s_family (w, name, "gauge", help);
    s_sample_d (w, name, NULL, v);
}

static void
s_info (s_writer_t *w, const gc_snapshot_t *s, const char *version)
{
    s_family (w, "gcnode_info", "gauge", "Constant 1; the labels describe this peer.");
    s_printf (w, "gcnode_info{%s,role=\"", w->self);
    s_label (w, s->role);
    s_printf (w, "\",network=\"");
    s_label (w, s->network);
    s_printf (w, "\",version=\"");
    s_label (w, version);
    s_printf (w, "\"} 1\n");
}

static void
s_learning (s_writer_t *w, const gc_snapshot_t *s)
{
    const gc_engine_stats_t *e = &s->engine;
    s_gauge (w, "gcnode_start_time_seconds", "When this peer started, Unix time.", s->started_unix);
    s_gauge (w, "gcnode_last_round_timestamp_seconds",
             "When the numbers below were taken (end of the last round), Unix time.", s->unix_time);
    //  the round number jumps on a catch-up (and starts high after a
    //  resume): a gauge; the counter counts what this process did
    s_gauge (w, "gcnode_round", "The peer's round (jumps forward on a catch-up, starts at the checkpoint's).",
             (double) e->round);
    s_counter (w, "gcnode_rounds_total", "Rounds this process completed (a catch-up counts as one).",
               s->rounds_run);
    s_family (w, "gcnode_state", "gauge", "1 for the peer's state, 0 for the others.");
    static const char *states [] = { "starting", "running", "done", "stopped" };
    for (size_t i = 0; i < sizeof states / sizeof states [0]; i++) {
        char label [32];
        snprintf (label, sizeof label, "state=\"%s\"", states [i]);
        s_sample_u (w, "gcnode_state", label, s->state && !strcmp (s->state, states [i]));
    }
    s_gauge (w, "gcnode_rounds_target", "Rounds this run is configured for (train/rounds).",
             (double) s->rounds_target);
    s_gauge (w, "gcnode_loss", "Mean training loss of the last round's local steps.", e->last_loss);
    if (s->has_accuracy) {
        s_gauge (w, "gcnode_accuracy", "Test accuracy at the last evaluation.", s->accuracy);
        s_gauge (w, "gcnode_test_loss", "Test loss at the last evaluation.", s->test_loss);
        s_gauge (w, "gcnode_accuracy_round", "Round of the last evaluation.", (double) s->accuracy_round);
    }
}

static void
s_traffic (s_writer_t *w, const gc_snapshot_t *s)
{
    const gc_engine_stats_t *e = &s->engine;
    s_counter (w, "gcnode_bytes_sent_total",
               "Message bytes handed to neighbour sockets, once per destination (not the dropped sends).",
               gc_snapshot_bytes_sent (s));
    s_counter (w, "gcnode_bytes_offered_total",
               "Message bytes the engine sent, once per destination, including sends the transport dropped.",
               e->bytes_sent);
    s_counter (w, "gcnode_bytes_received_total", "Message bytes received (before any check).",
               e->bytes_recv);
    s_counter (w, "gcnode_messages_sent_total", "Messages sent, counted once per destination.", e->msgs_sent);
    s_counter (w, "gcnode_messages_received_total", "Messages received (before any check).", e->msgs_recv);
    s_counter (w, "gcnode_dense_equivalent_bytes_total",
               "What the sent deltas would have cost as dense fp32 vectors.", e->dense_equiv_bytes);
    s_gauge (w, "gcnode_compression_ratio", "dense_equivalent_bytes / bytes_sent (0 before any send).",
             e->bytes_sent ? (double) e->dense_equiv_bytes / (double) e->bytes_sent : 0.0);
    s_gauge (w, "gcnode_wait_seconds", "Time the last round waited for neighbours.", e->last_wait_s);
    s_family (w, "gcnode_wait_seconds_total", "counter", "Time spent waiting for neighbours.");
    s_sample_d (w, "gcnode_wait_seconds_total", NULL, e->total_wait_s);
    s_gauge (w, "gcnode_wait_target", "Neighbours the wait policy waited for in the last round.",
             (double) e->wait_target);
    s_gauge (w, "gcnode_mixed_inputs", "Inputs of the last robust aggregation (0: mix skipped).",
             (double) e->mixed_inputs);
    s_counter (w, "gcnode_keyframes_sent_total", "Keyframes (full models) sent.", e->keyframes_sent);
    s_counter (w, "gcnode_keyframes_received_total", "Keyframes received and applied.", e->keyframes_recv);
    s_counter (w, "gcnode_keyframe_requests_sent_total", "Keyframe requests sent.", e->keyframe_requests_sent);
    s_counter (w, "gcnode_keyframe_requests_received_total", "Keyframe requests received.",
               e->keyframe_requests_recv);
    s_counter (w, "gcnode_deltas_applied_total", "Deltas applied to neighbour replicas.", e->deltas_applied);
    s_counter (w, "gcnode_sequence_gaps_total", "Sequence gaps seen (each asks for a keyframe).", e->gaps);
    s_counter (w, "gcnode_mix_skipped_total", "Rounds whose robust mix was skipped.", e->mix_skipped);
    s_counter (w, "gcnode_mix_fallbacks_total",
               "Rounds mixed under a weaker rule: too few fresh inputs for the configured one.", e->mix_fallbacks);
    s_counter (w, "gcnode_catchups_total", "Round catch-ups to faster neighbours.", e->catchups);
    s_counter (w, "gcnode_hellos_total", "HELLOs accepted from neighbours (sent once at their start).", e->hellos);
    s_counter (w, "gcnode_sends_skipped_total", "Rounds whose send the ratio policy skipped.",
               e->sends_skipped);
    s_gauge (w, "gcnode_equivocators", "Authors excluded on proof of equivocation.", (double) e->equivocators);
    s_counter (w, "gcnode_evidence_found_total", "Proofs of equivocation found here (two headers, one seq).",
               e->evidence_found);
    s_counter (w, "gcnode_evidence_received_total", "Valid EVIDENCE messages received.", e->evidence_recv);
    s_counter (w, "gcnode_evidence_sent_total", "EVIDENCE messages sent (per destination).", e->evidence_sent);
    s_gauge (w, "gcnode_send_budget", "Last round's compressor budget, fraction of entries (0: skipped).",
             e->send_budget);
    s_family (w, "gcnode_phase_seconds_total", "counter", "Time spent per phase of the round.");
    static const char *phases [] = { "train", "compress", "sign", "aggregate" };
    double t [4] = { e->time_train_s, e->time_compress_s, e->time_sign_s, e->time_aggregate_s };
    for (int i = 0; i < 4; i++) {
        char label [32];
        snprintf (label, sizeof label, "phase=\"%s\"", phases [i]);
        s_sample_d (w, "gcnode_phase_seconds_total", label, t [i]);
    }
}

static void
s_neighbours (s_writer_t *w, const gc_snapshot_t *s)
{
    s_gauge (w, "gcnode_neighbours", "Neighbours (in- and out-edges) in the topology.", (double) s->n_neighbours);
    s_gauge (w, "gcnode_neighbours_revoked", "Neighbours revoked by the configuration (not connected).",
             (double) s->revoked);
    if (s->connected >= 0)
        s_gauge (w, "gcnode_neighbours_connected", "Neighbour links that can take a message now.",
                 (double) s->connected);
    //  every in-neighbour, whatever its replica holds
    s_family (w, "gcnode_staleness_rounds", "gauge",
              "Own round minus the round of this in-neighbour's replica (negative: it is ahead; "
              "never delivered: own round; NaN: no usable state, waiting for a keyframe).");
    for (size_t i = 0; i < s->n_neighbours; i++)
        if (s->kind [i] != GC_REPLICA_NOT_IN && s->kind [i] != GC_SNAPSHOT_REVOKED) {
            char label [32];
            snprintf (label, sizeof label, "neighbour=\"%u\"", s->neighbours [i]);
            s_sample_d (w, "gcnode_staleness_rounds", label,
                        s->kind [i] == GC_REPLICA_RESYNC ? NAN : (double) s->lag [i]);
        }
    s_family (w, "gcnode_neighbour_replica", "gauge",
              "1 for what the replica of this in-neighbour holds: never (nothing delivered yet), resync "
              "(waiting for a keyframe), behind, current, ahead (its round against ours).");
    static const char *kinds [] = { "never", "resync", "behind", "current", "ahead" };
    for (size_t i = 0; i < s->n_neighbours; i++) {
        if (s->kind [i] == GC_REPLICA_NOT_IN || s->kind [i] == GC_SNAPSHOT_REVOKED)
            continue;
        int k = s->kind [i] == GC_REPLICA_NEVER ? 0 : s->kind [i] == GC_REPLICA_RESYNC ? 1
              : s->lag [i] > 0 ? 2 : s->lag [i] == 0 ? 3 : 4;
        for (int j = 0; j < 5; j++) {
            char label [64];
            snprintf (label, sizeof label, "neighbour=\"%u\",replica=\"%s\"", s->neighbours [i], kinds [j]);
            s_sample_u (w, "gcnode_neighbour_replica", label, j == k);
        }
    }
    s_family (w, "gcnode_neighbour_bytes_sent_total", "counter",
              "Message bytes handed to this neighbour's socket.");
    for (size_t i = 0; s->has_transport && i < s->n_neighbours; i++) {
        char label [32];
        snprintf (label, sizeof label, "neighbour=\"%u\"", s->neighbours [i]);
        s_sample_u (w, "gcnode_neighbour_bytes_sent_total", label, s->sent_bytes [i]);
    }
    s_family (w, "gcnode_neighbour_bytes_received_total", "counter",
              "Bytes of this neighbour's authentic messages (with an edge for their type).");
    for (size_t i = 0; i < s->n_neighbours; i++) {
        char label [32];
        snprintf (label, sizeof label, "neighbour=\"%u\"", s->neighbours [i]);
        s_sample_u (w, "gcnode_neighbour_bytes_received_total", label, s->recv_bytes [i]);
    }
    s_counter (w, "gcnode_rejected_total", "Messages rejected, every reason and sender.", s->engine.rejected);
    s_family (w, "gcnode_rejections_total", "counter",
              "Messages rejected by reason and sending neighbour (series appear at the first rejection).");
    for (size_t row = 0; row <= s->n_neighbours; row++)
        for (size_t j = 0; j < s->n_reasons; j++) {
            uint64_t n = s->rejections [row * s->n_reasons + j];
            if (!n)
                continue;
            char label [128], who [16];
            if (row < s->n_neighbours)
                snprintf (who, sizeof who, "%u", s->neighbours [row]);
            else
                snprintf (who, sizeof who, "unknown");
            snprintf (label, sizeof label, "reason=\"%s\",neighbour=\"%s\"",
                      gc_engine_reason_name (s->reasons [j]), who);
            s_sample_u (w, "gcnode_rejections_total", label, n);
        }
}

static void
s_transport (s_writer_t *w, const gc_snapshot_t *s)
{
    const gc_zmq_stats_t *t = &s->transport;
    s_counter (w, "gcnode_transport_sent_frames_total", "Messages handed to neighbour sockets.", t->sent_frames);
    s_counter (w, "gcnode_transport_sent_bytes_total", "Bytes of the messages handed to neighbour sockets.",
               t->sent_bytes);
    s_counter (w, "gcnode_transport_send_dropped_total",
               "Sends dropped: neighbour not connected or its queue full.", t->send_dropped);
    s_counter (w, "gcnode_transport_recv_malformed_total", "Inbound messages with the wrong frame count.",
               t->recv_malformed);
    s_counter (w, "gcnode_transport_recv_muted_total", "Inbound messages dropped from muted connections.",
               t->recv_muted);
    s_counter (w, "gcnode_transport_connections_muted_total",
               "Connections muted for sending unauthenticated garbage.", t->connections_muted);
}

static void
s_extra (s_writer_t *w, const gc_snapshot_t *s)
{
    const gc_metrics_extra_t *x = &s->extra;
    if (x->curve) {
        s_family (w, "gcnode_curve_handshake_failures_total", "counter",
                  "Inbound CURVE handshakes that failed: auth (client key not allowed), protocol "
                  "(e.g. the client does not use CURVE), other.");
        s_sample_u (w, "gcnode_curve_handshake_failures_total", "kind=\"auth\"", x->curve_failed_auth);
        s_sample_u (w, "gcnode_curve_handshake_failures_total", "kind=\"protocol\"", x->curve_failed_protocol);
        s_sample_u (w, "gcnode_curve_handshake_failures_total", "kind=\"other\"", x->curve_failed_other);
    }
    if (x->discovery) {
        s_counter (w, "gcnode_discovery_beacons_received_total", "gcnode beacons received (own included).",
                   x->beacons_received);
        s_counter (w, "gcnode_discovery_beacons_untrusted_total",
                   "Beacons ignored: peer id not in the trust store.", x->beacons_untrusted);
        s_counter (w, "gcnode_discovery_beacons_malformed_total", "Beacons ignored: malformed.",
                   x->beacons_malformed);
        s_counter (w, "gcnode_discovery_conflicts_total",
                   "Beacons announcing another endpoint for an already found peer.", x->beacon_conflicts);
        s_gauge (w, "gcnode_discovery_peers_wanted", "Neighbours whose endpoint is 'discover'.",
                 (double) x->peers_wanted);
        s_gauge (w, "gcnode_discovery_peers_found", "Of those, found by beacon.", (double) x->peers_found);
    }
}

//  The names client libraries use, so dashboards for any process work.
static void
s_process (s_writer_t *w, const gc_snapshot_t *s)
{
    const gc_procstat_t *p = &s->proc;
    s_gauge (w, "process_resident_memory_bytes", "Resident memory size in bytes.", (double) p->rss_bytes);
    s_family (w, "process_cpu_seconds_total", "counter", "User and system CPU time spent in seconds.");
    s_sample_d (w, "process_cpu_seconds_total", NULL, p->cpu_seconds);
    s_gauge (w, "process_open_fds", "Open file descriptors.", (double) p->open_fds);
    if (p->max_fds)
        s_gauge (w, "process_max_fds", "Maximum number of open file descriptors.", (double) p->max_fds);
    s_gauge (w, "process_start_time_seconds", "Start time of the process, Unix time.", s->started_unix);
}

int
gc_prom_render (const gc_snapshot_t *s, const char *version, gc_buf_t *out, gc_err_t *err)
{
    s_writer_t w = { .out = out, .err = err };
    //  peer ids are hex (checked when keys load), so no escaping is needed
    snprintf (w.self, sizeof w.self, "peer=\"%u\",peer_id=\"%s\"", s->peer, s->peer_id);
    s_info (&w, s, version);
    s_learning (&w, s);
    s_traffic (&w, s);
    s_neighbours (&w, s);
    if (s->has_transport)
        s_transport (&w, s);
    s_extra (&w, s);
    if (s->proc.valid)
        s_process (&w, s);
    return w.rc;
}
