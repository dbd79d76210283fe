/*  gc_metrics — what a peer reports about itself: one JSON object per line
    (the metrics file), the live progress line, and the status file. */
#ifndef GC_METRICS_H
#define GC_METRICS_H

#include <stdbool.h>
#include <stdio.h>

#include "gc_engine.h"
#include "gc_zmq.h"

typedef struct {
    uint32_t     peer;
    const char  *peer_id;           /* hex */
    const char  *role;
    double       elapsed_s;         /* since the peer started */
    bool         evaluated;         /* accuracy/test_loss are valid */
    double       accuracy;
    double       test_loss;
    const gc_zmq_stats_t *transport;    /* may be NULL */
} gc_metrics_ctx_t;

/*  One JSON line: round, loss, accuracy (when evaluated), bytes, compression
    ratio, wait, staleness per neighbour, rejections by reason and by peer,
    keyframes. */
void gc_metrics_write_json (gc_engine_t *engine, const gc_metrics_ctx_t *ctx, FILE *out);
/*  "\r round 12/300  loss ...": for a terminal. */
void gc_metrics_write_progress (gc_engine_t *engine, const gc_metrics_ctx_t *ctx,
                                uint64_t rounds, FILE *out);

#endif
