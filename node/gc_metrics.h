/*  gc_metrics — what a peer reports about itself: one JSON object per line
    (the metrics file), the live progress line, and the status file. */
#ifndef GC_METRICS_H
#define GC_METRICS_H

#include <stdbool.h>
#include <stdio.h>

#include "gc_engine.h"
#include "gc_zmq.h"

/*  Counters of the operational features (gc_ops.h), when they are on. */
typedef struct {
    bool     curve;
    uint64_t curve_failed_auth;         /* inbound handshakes refused: key not allowed */
    uint64_t curve_failed_protocol;     /* e.g. the other side does not speak CURVE */
    uint64_t curve_failed_other;
    bool     discovery;
    uint64_t beacons_received, beacons_untrusted, beacons_malformed, beacon_conflicts;
    uint32_t peers_wanted, peers_found;
} gc_metrics_extra_t;

typedef struct {
    uint32_t     peer;
    const char  *peer_id;           /* hex */
    const char  *role;
    double       elapsed_s;         /* since the peer started */
    bool         evaluated;         /* accuracy/test_loss are valid */
    double       accuracy;
    double       test_loss;
    const gc_zmq_stats_t *transport;    /* may be NULL */
    const gc_metrics_extra_t *extra;    /* may be NULL */
} gc_metrics_ctx_t;

/*  One JSON line: round, loss, accuracy (when evaluated), bytes, compression
    ratio, wait, staleness per neighbour, rejections by reason and by peer,
    keyframes. */
void gc_metrics_write_json (gc_engine_t *engine, const gc_metrics_ctx_t *ctx, FILE *out);
/*  Every rejection reason the engine counts, in a stable order; returns how
    many were written (at most max). */
size_t gc_metrics_reasons (int *out, size_t max);
/*  "\r round 12/300  loss ...": for a terminal. */
void gc_metrics_write_progress (gc_engine_t *engine, const gc_metrics_ctx_t *ctx,
                                uint64_t rounds, FILE *out);

#endif
