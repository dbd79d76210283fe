/*  gc_peerstat — what gcnet knows about one peer from its metrics file (one
    JSON object per round, node/gc_metrics.c), read incrementally while the
    peer runs.

    A restarted peer appends to the same file, with counters starting again
    from zero: gc_peerstat_restart folds the old process's totals into the
    peer's (bytes, rejections), so totals cover every process of the peer.
    Lines that do not parse are counted and skipped (a peer killed mid-write
    leaves half a line). */
#ifndef GC_PEERSTAT_H
#define GC_PEERSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GC_PEERSTAT_REASONS 64
#define GC_PEERSTAT_STALE   64

typedef struct {
    double   round;
    double   wall_s;            /* seconds since the run started */
    double   accuracy;
    double   bytes_sent;        /* total over the peer's processes */
} gc_point_t;

typedef struct {
    char     name [40];
    uint64_t base;              /* earlier processes */
    uint64_t now;               /* the current process */
} gc_reason_t;

typedef struct {
    char        *path;
    long         offset;            /* bytes consumed */
    char        *partial;           /* an unfinished last line */
    size_t       partial_len;
    double       spawn_wall_s;      /* when the current process started */
    //  the current process, from its last line
    char         id [24];
    uint64_t     round;
    double       t;                 /* its "t" (seconds since it started) */
    double       accuracy;          /* last evaluated accuracy, NAN before any */
    uint64_t     accuracy_round;
    uint64_t     bytes_sent, bytes_recv;
    //  totals of earlier processes
    uint64_t     base_bytes_sent, base_bytes_recv;
    gc_reason_t  reasons [GC_PEERSTAT_REASONS];
    size_t       n_reasons;
    //  staleness of each in-neighbour's replica at the last line
    uint32_t     stale_peer [GC_PEERSTAT_STALE];
    int64_t      stale_lag [GC_PEERSTAT_STALE];
    size_t       n_stale;
    gc_point_t  *series;            /* one point per evaluated line */
    size_t       n_series, cap_series;
    size_t       lines, bad_lines;
    //  restarts: the most rounds a new process did again (last round logged
    //  before the restart minus the first round logged after it, at least 0)
    uint64_t     round_before_restart, rounds_redone;
    bool         await_first_line;
} gc_peerstat_t;

gc_peerstat_t *gc_peerstat_new (const char *path);
void           gc_peerstat_destroy (gc_peerstat_t **self_p);
/*  Read what was appended since the last call; returns the number of lines. */
size_t         gc_peerstat_poll (gc_peerstat_t *self);
/*  A new process of the peer starts at spawn_wall_s (seconds since the run
    started): the counters of the old one become part of the totals. */
void           gc_peerstat_restart (gc_peerstat_t *self, double spawn_wall_s);
uint64_t       gc_peerstat_bytes_sent (const gc_peerstat_t *self);
uint64_t       gc_peerstat_bytes_recv (const gc_peerstat_t *self);
/*  Total rejections with that reason over all processes (0 if never seen). */
uint64_t       gc_peerstat_rejections (const gc_peerstat_t *self, const char *reason);
uint64_t       gc_peerstat_rejections_total (const gc_peerstat_t *self);
/*  Lag of in-neighbour peer's replica at the last line, or -1 (not listed). */
int64_t        gc_peerstat_staleness (const gc_peerstat_t *self, uint32_t peer);
/*  Feed one metrics line directly (what poll does per line; for tests). */
bool           gc_peerstat_feed (gc_peerstat_t *self, const char *line, size_t len);

#endif
