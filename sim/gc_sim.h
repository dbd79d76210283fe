/*  gc_sim — a deterministic discrete-event simulation of a whole gcnode
    network in one process: the same round engine (node/gc_engine.c) for
    every peer, an in-memory transport, and a virtual clock.

    Time is virtual: a round's compute takes step time x local steps x the
    peer's slow-down factors (never measured wall time); a message takes the
    sender's fault layer (drop, delay, rate: the timeline's actions), then
    the link's bandwidth and latency (docs/SCENARIOS.md, "gcsim"). Events are
    handled in (time, push order); events due at the same time are handled
    in batches: every event already queued for that time, each peer's in
    order, peers independently (in parallel with two threads), then what they
    sent is routed in peer order. So the outcome is a function of the
    scenario and the seed only, whatever the thread count.

    The result is what gcnet reports for a real run (gc_report.h: report.json,
    report.md, plots), with virtual seconds where gcnet has wall time, plus a
    "sim" member in report.json and, outside it (wall-clock, not
    reproducible), timing.json. */
#ifndef GC_SIM_H
#define GC_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gc_err.h"

typedef struct {
    const char *scenario;       /* the .zpl file */
    uint32_t    peers;          /* 0: scenario/peers */
    uint64_t    seed;           /* node/seed for every peer; 0: the scenario's */
    bool        has_seed;
    const char *out_dir;        /* created; files in it are replaced */
    int         threads;        /* 0: sim/threads (default 1) */
    double      target;         /* accuracy for *_to_target (0: 0.85) */
    bool        jsonl;          /* also write peerN.jsonl (metrics lines, as gcnode) */
    bool        keep_models;    /* keep peerN.model (consensus distance reads them) */
    bool        no_share;       /* each receiver decodes its own copy (same results, slower) */
    FILE       *log;            /* progress; NULL: quiet */
} gc_sim_opts_t;

/*  Run the scenario and write the report. Returns 0 (every assertion holds),
    1 (an assertion failed or the run did not complete) or 2 (bad scenario or
    option, with err). */
int gc_sim_run (const gc_sim_opts_t *opts, gc_err_t *err);

#endif
