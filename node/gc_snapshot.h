/*  gc_snapshot — a peer's state at the end of a round, copied out of the
    engine by the trainer thread. Other threads (the HTTP endpoint) and
    files (the status file) read this copy: they never touch the engine, and
    every number in one scrape comes from the same moment. The price is that
    a scrape may be up to one round old. */
#ifndef GC_SNAPSHOT_H
#define GC_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_engine.h"
#include "gc_metrics.h"
#include "gc_procstat.h"
#include "gc_zmq.h"

//  kind of a neighbour the configuration revoked (set by gc_ops)
#define GC_SNAPSHOT_REVOKED 255

typedef struct {
    const char        *state;       /* "starting", "running", "done", "stopped" (static) */
    uint32_t           peer;
    char               peer_id [17];
    char               role [32];
    char               network [64];
    char               http [64];   /* bound HOST:PORT of the endpoint, or "" */
    long               pid;
    double             started_unix, unix_time;
    uint64_t           rounds_target;
    gc_engine_stats_t  engine;
    bool               has_transport;
    gc_zmq_stats_t     transport;
    int                connected;   /* neighbour links that can take a message, -1: unknown */
    bool               has_accuracy;
    double             accuracy, test_loss;
    uint64_t           accuracy_round;
    gc_metrics_extra_t extra;
    //  per neighbour (sorted by index); staleness -1: no state yet (kept
    //  for the readers of old), kind and lag: gc_engine_replica_kind
    size_t             n_neighbours;
    uint32_t          *neighbours;
    int64_t           *staleness;
    uint8_t           *kind;        /* gc_replica_kind_t, or GC_SNAPSHOT_REVOKED */
    int64_t           *lag;
    uint64_t          *sent_bytes;  /* handed to its socket (filled by gc_ops with the transport) */
    uint64_t          *recv_bytes;  /* its authentic messages (gc_engine_bytes_from) */
    size_t             revoked;     /* neighbours revoked by the configuration (peers/N/revoked) */
    uint64_t           rounds_run;  /* rounds this process ran (a catch-up is one) */
    gc_procstat_t      proc;
    //  the last minute, for gcnode status (gc_status_window_update)
    double             window_s;
    uint64_t           window_rounds, window_rejected, window_mix_skipped, window_mix_fallbacks;
    //  rejections [row * n_reasons + j]: row i < n_neighbours is neighbour i,
    //  row n_neighbours the senders that could not be attributed
    size_t             n_reasons;
    int                reasons [GC_ENGINE_NREASONS];
    uint64_t          *rejections;
} gc_snapshot_t;

/*  Room for n_neighbours; everything else zero ("starting"). */
gc_snapshot_t *gc_snapshot_new (size_t n_neighbours);
void           gc_snapshot_destroy (gc_snapshot_t **self_p);
/*  Copy the engine's counters, staleness and rejections (trainer thread). */
void           gc_snapshot_take (gc_snapshot_t *self, gc_engine_t *engine);
/*  dst and src have the same number of neighbours. */
void           gc_snapshot_copy (gc_snapshot_t *dst, const gc_snapshot_t *src);
/*  Largest staleness over the neighbours with a state (-1: none). */
int64_t        gc_snapshot_max_staleness (const gc_snapshot_t *self);
/*  What reached the sockets (the transport's count), else what the engine
    sent: the engine counts sends the transport then drops. */
uint64_t       gc_snapshot_bytes_sent (const gc_snapshot_t *self);

#endif
