/*  gc_status — the peer's state as one flat JSON object: the status file
    (node/status_file, rewritten atomically every round), the HTTP /status
    route, and what `gcnode status` reads back.

    {"v":1,"state":"running","peer":0,"peer_id":"0f38…","pid":4242,
     "network":"lab","role":"honest","time":1764470000.123,"started":…,
     "round":30,"rounds":300,"loss":0.0416,"accuracy":0.952,"accuracy_round":30,
     "neighbours":2,"connected":2,"max_staleness":1,"bytes_sent":…,
     "bytes_recv":…,"msgs_recv":…,"rejected":0,"http":"127.0.0.1:9100"}

    "accuracy" is null until the first evaluation; "connected" is -1 when
    unknown; "max_staleness" -1 when no neighbour state is known yet.
    What gcnode status judges (gc_status_check.h) follows: "revoked"
    neighbours (peers/N/revoked: expected unconnected), "in_neighbours"
    (not revoked),
    how many of them have no state ("no_state", named in "no_state_peers":
    never delivered, or waiting for a keyframe), how many are ahead, and the
    last minute ("window_s" seconds: "window_rounds" rounds, of which
    "window_mix_skipped" did not mix and "window_mix_fallbacks" mixed under
    a weaker rule, and "window_rejected" rejections). */
#ifndef GC_STATUS_H
#define GC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_buf.h"
#include "gc_err.h"
#include "gc_snapshot.h"

#define GC_STATUS_FILE_MAX 65536

typedef struct {
    char     state [16];
    long     peer;
    char     peer_id [17];
    long     pid;
    char     network [64];
    char     role [32];
    char     http [64];
    double   time, started;
    uint64_t round, rounds;
    double   loss;
    bool     has_accuracy;
    double   accuracy;
    uint64_t accuracy_round;
    long     neighbours, connected, max_staleness;
    uint64_t bytes_sent, bytes_recv, msgs_recv, rejected;
    long     in_neighbours, no_state, ahead;    /* -1: not in the file (older peer) */
    long     revoked;                           /* neighbours revoked (not connected, silent) */
    char     no_state_peers [128];
    double   window_s;
    uint64_t window_rounds, window_rejected, window_mix_skipped, window_mix_fallbacks;
} gc_status_t;

/*  The last minute of rounds (trainer thread), kept by the status writer. */
#define GC_STATUS_WINDOW_S   60.0
#define GC_STATUS_WINDOW_MAX 256
typedef struct {
    double   t [GC_STATUS_WINDOW_MAX];
    uint64_t rejected [GC_STATUS_WINDOW_MAX], skipped [GC_STATUS_WINDOW_MAX], fallbacks [GC_STATUS_WINDOW_MAX];
    size_t   head, n;
} gc_status_window_t;

/*  After a round: note the snapshot's counters and fill its window_* fields
    (the rounds, rejections and skipped mixes since the newest sample at
    least GC_STATUS_WINDOW_S old, or the oldest one kept). */
void gc_status_window_update (gc_status_window_t *w, gc_snapshot_t *snap);

/*  Append the JSON object (and a newline) to out. */
int gc_status_render (const gc_snapshot_t *snap, gc_buf_t *out, gc_err_t *err);
/*  Write it to path through path.tmp + rename: a reader never sees half. */
int gc_status_write (const char *path, const gc_snapshot_t *snap, gc_err_t *err);
/*  Parse a status object (hostile text: any byte sequence is refused or
    read, never overrun). Requires v = 1, state, peer, time and round;
    ignores keys it does not know. */
int gc_status_parse (const char *text, size_t len, gc_status_t *out, gc_err_t *err);
/*  Read and parse a status file. */
int gc_status_load (const char *path, gc_status_t *out, gc_err_t *err);

#endif
