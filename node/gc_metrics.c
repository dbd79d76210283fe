#include "gc_metrics.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "gc_json.h"
#include "gc_topology.h"
#include "gc_wire_reason.h"

//  Every reason the engine can count: the wire's, then the engine's own.
static int
s_next_reason (int r)
{
    if (r + 1 < GC_WIRE_NREASONS)
        return r + 1;
    if (r + 1 < GC_REJECT_NOT_NEIGHBOUR)
        return GC_REJECT_NOT_NEIGHBOUR;
    return r + 1 < GC_REJECT_LAST ? r + 1 : -1;
}

size_t
gc_metrics_reasons (int *out, size_t max)
{
    size_t n = 0;
    for (int r = 1; r >= 0 && n < max; r = s_next_reason (r))
        out [n++] = r;
    return n;
}

static void
s_write_reasons (gc_engine_t *engine, uint32_t peer, FILE *out)
{
    bool first = true;
    fputc ('{', out);
    for (int r = 1; r >= 0; r = s_next_reason (r)) {
        uint64_t n = gc_engine_rejections (engine, peer, r);
        if (n) {
            fprintf (out, "%s\"%s\":%llu", first ? "" : ",", gc_engine_reason_name (r),
                     (unsigned long long) n);
            first = false;
        }
    }
    fputc ('}', out);
}

//  ,"key":value — JSON has no NaN or Infinity: a diverged loss is null.
static void
s_number (FILE *out, const char *key, double v, const char *fmt)
{
    fprintf (out, ",\"%s\":", key);
    gc_json_write_double (out, fmt, v);
}

void
gc_metrics_write_json (gc_engine_t *engine, const gc_metrics_ctx_t *ctx, FILE *out)
{
    gc_engine_stats_t s;
    gc_engine_stats (engine, &s);
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    fprintf (out, "{\"unix_s\":%.3f,", (double) now.tv_sec + 1e-9 * (double) now.tv_nsec);
    //  role comes from the configuration: escaped, like every string
    fprintf (out, "\"t\":%.3f,\"peer\":%u,\"id\":", ctx->elapsed_s, ctx->peer);
    gc_json_write_string (out, ctx->peer_id);
    fputs (",\"role\":", out);
    gc_json_write_string (out, ctx->role);
    fprintf (out, ",\"round\":%llu", (unsigned long long) s.round);
    s_number (out, "loss", s.last_loss, "%.6g");
    if (ctx->evaluated) {
        s_number (out, "accuracy", ctx->accuracy, "%.6f");
        s_number (out, "test_loss", ctx->test_loss, "%.6g");
    }
    fprintf (out, ",\"bytes_sent\":%llu,\"bytes_recv\":%llu,\"msgs_sent\":%llu,\"msgs_recv\":%llu"
             ",\"dense_equiv_bytes\":%llu,\"compression_ratio\":%.3f"
             ",\"wait_s\":%.6f,\"wait_total_s\":%.3f,\"wait_target\":%zu,\"mixed_inputs\":%zu"
             ",\"keyframes_sent\":%llu,\"keyframes_recv\":%llu"
             ",\"keyframe_requests_sent\":%llu,\"keyframe_requests_recv\":%llu"
             ",\"deltas_applied\":%llu,\"gaps\":%llu,\"mix_skipped\":%llu,\"catchups\":%llu"
             ",\"diverged\":%llu,\"partitioned\":%llu"
             ",\"rejected\":%llu,\"bytes_offered\":%llu,\"mix_fallbacks\":%llu",
             (unsigned long long) (ctx->transport ? ctx->transport->sent_bytes : s.bytes_sent),
             (unsigned long long) s.bytes_recv,
             (unsigned long long) s.msgs_sent, (unsigned long long) s.msgs_recv,
             (unsigned long long) s.dense_equiv_bytes,
             s.bytes_sent ? (double) s.dense_equiv_bytes / (double) s.bytes_sent : 0.0,
             s.last_wait_s, s.total_wait_s, s.wait_target, s.mixed_inputs,
             (unsigned long long) s.keyframes_sent, (unsigned long long) s.keyframes_recv,
             (unsigned long long) s.keyframe_requests_sent, (unsigned long long) s.keyframe_requests_recv,
             (unsigned long long) s.deltas_applied, (unsigned long long) s.gaps,
             (unsigned long long) s.mix_skipped, (unsigned long long) s.catchups,
             (unsigned long long) s.diverged, (unsigned long long) s.partitioned,
             (unsigned long long) s.rejected, (unsigned long long) s.bytes_sent,
             (unsigned long long) s.mix_fallbacks);
    fprintf (out, ",\"sends_skipped\":%llu,\"send_budget\":%.6g,\"equivocators\":%llu"
             ",\"evidence_found\":%llu,\"evidence_recv\":%llu,\"evidence_sent\":%llu,\"hellos\":%llu"
             ",\"witness_sent\":%llu,\"witness_recv\":%llu",
             (unsigned long long) s.sends_skipped, s.send_budget, (unsigned long long) s.equivocators,
             (unsigned long long) s.evidence_found, (unsigned long long) s.evidence_recv,
             (unsigned long long) s.evidence_sent, (unsigned long long) s.hellos,
             (unsigned long long) s.witness_sent, (unsigned long long) s.witness_recv);
    if (ctx->transport)
        fprintf (out, ",\"sent_frames\":%llu,\"send_dropped\":%llu,\"recv_muted\":%llu"
                 ",\"recv_malformed\":%llu,\"connections_muted\":%llu",
                 (unsigned long long) ctx->transport->sent_frames,
                 (unsigned long long) ctx->transport->send_dropped,
                 (unsigned long long) ctx->transport->recv_muted,
                 (unsigned long long) ctx->transport->recv_malformed,
                 (unsigned long long) ctx->transport->connections_muted);
    const gc_metrics_extra_t *x = ctx->extra;
    if (x && x->curve)
        fprintf (out, ",\"curve\":{\"handshake_failed_auth\":%llu,\"handshake_failed_protocol\":%llu"
                 ",\"handshake_failed_other\":%llu}",
                 (unsigned long long) x->curve_failed_auth, (unsigned long long) x->curve_failed_protocol,
                 (unsigned long long) x->curve_failed_other);
    if (x && x->discovery)
        fprintf (out, ",\"discovery\":{\"beacons_received\":%llu,\"beacons_untrusted\":%llu"
                 ",\"beacons_malformed\":%llu,\"conflicts\":%llu,\"peers_wanted\":%u,\"peers_found\":%u}",
                 (unsigned long long) x->beacons_received, (unsigned long long) x->beacons_untrusted,
                 (unsigned long long) x->beacons_malformed, (unsigned long long) x->beacon_conflicts,
                 x->peers_wanted, x->peers_found);
    fprintf (out, ",\"time\":{\"train\":%.3f,\"compress\":%.3f,\"sign\":%.3f,\"aggregate\":%.3f}",
             s.time_train_s, s.time_compress_s, s.time_sign_s, s.time_aggregate_s);
    //  staleness and rejections per neighbour (peer index as the key)
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (engine, &peers);
    fprintf (out, ",\"staleness\":{");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        int64_t lag = gc_engine_staleness (engine, peers [i]);
        if (lag >= 0) {
            fprintf (out, "%s\"%u\":%lld", first ? "" : ",", peers [i], (long long) lag);
            first = false;
        }
    }
    //  what "staleness" leaves out: in-neighbours ahead of us (by how many
    //  rounds) and those without a usable state (waiting for a keyframe);
    //  never delivered: still at the shared initial state of round 0
    fprintf (out, "},\"staleness_ahead\":{");
    first = true;
    for (size_t i = 0; i < n; i++) {
        int64_t lag;
        if (gc_engine_replica_kind (engine, peers [i], &lag) == GC_REPLICA_STATE && lag < 0) {
            fprintf (out, "%s\"%u\":%lld", first ? "" : ",", peers [i], -(long long) lag);
            first = false;
        }
    }
    static const struct { const char *key; gc_replica_kind_t kind; } lists [] = {
        { "no_state", GC_REPLICA_RESYNC }, { "never_delivered", GC_REPLICA_NEVER }
    };
    fputc ('}', out);
    for (size_t l = 0; l < 2; l++) {
        fprintf (out, ",\"%s\":[", lists [l].key);
        first = true;
        for (size_t i = 0; i < n; i++) {
            int64_t lag;
            if (gc_engine_replica_kind (engine, peers [i], &lag) == lists [l].kind) {
                fprintf (out, "%s%u", first ? "" : ",", peers [i]);
                first = false;
            }
        }
        fputc (']', out);
    }
    //  local validation: the factor each in-neighbour's weight gets
    bool validating = false;
    for (size_t i = 0; i < n; i++) {
        double f = gc_engine_validation_weight (engine, peers [i]);
        if (f < 0)
            continue;
        fprintf (out, "%s\"%u\":%.4g", validating ? "," : ",\"validation_weight\":{", peers [i], f);
        validating = true;
    }
    if (validating)
        fprintf (out, "},\"validations\":%llu", (unsigned long long) gc_engine_validations (engine));
    //  by reason, over every sender (the neighbours and the unattributed)
    fprintf (out, ",\"rejections\":{");
    first = true;
    for (int r = 1; r >= 0; r = s_next_reason (r)) {
        uint64_t total = gc_engine_rejections (engine, UINT32_MAX, r);
        for (size_t i = 0; i < n; i++)
            total += gc_engine_rejections (engine, peers [i], r);
        if (total) {
            fprintf (out, "%s\"%s\":%llu", first ? "" : ",", gc_engine_reason_name (r),
                     (unsigned long long) total);
            first = false;
        }
    }
    fprintf (out, "},\"rejections_by_peer\":{");
    first = true;
    for (size_t i = 0; i < n; i++) {
        uint64_t any = 0;
        for (int r = 1; r >= 0; r = s_next_reason (r))
            any += gc_engine_rejections (engine, peers [i], r);
        if (any) {
            fprintf (out, "%s\"%u\":", first ? "" : ",", peers [i]);
            s_write_reasons (engine, peers [i], out);
            first = false;
        }
    }
    fprintf (out, "},\"rejections_unattributed\":");
    s_write_reasons (engine, UINT32_MAX, out);
    fprintf (out, "}\n");
    fflush (out);
}

static void
s_bytes (double b, char *buf, size_t size)
{
    if (b >= 1e9)
        snprintf (buf, size, "%.2f GB", b * 1e-9);
    else if (b >= 1e6)
        snprintf (buf, size, "%.2f MB", b * 1e-6);
    else
        snprintf (buf, size, "%.1f kB", b * 1e-3);
}

void
gc_metrics_write_progress (gc_engine_t *engine, const gc_metrics_ctx_t *ctx, uint64_t rounds, FILE *out)
{
    gc_engine_stats_t s;
    gc_engine_stats (engine, &s);
    char sent [32], recv [32];
    s_bytes ((double) s.bytes_sent, sent, sizeof sent);
    s_bytes ((double) s.bytes_recv, recv, sizeof recv);
    fprintf (out, "\r\033[Kpeer %u  round %llu/%llu  loss %.4f  acc %s%.4f  sent %s  recv %s  "
             "wait %.0f ms  mixed %zu  rejected %llu",
             ctx->peer, (unsigned long long) s.round, (unsigned long long) rounds, s.last_loss,
             ctx->evaluated ? "" : "~", ctx->accuracy, sent, recv, s.last_wait_s * 1e3,
             s.mixed_inputs, (unsigned long long) s.rejected);
    fflush (out);
}
