/*  gc_timeline — a scenario's timeline (docs/SCENARIOS.md, "timeline"):
    when each event fires (at a time, at the honest peers' median round, or
    `after` another one), the line that records it, what it asks of each
    peer, and the fault settings each peer holds so far (a restarted process
    gets them again). The same for every driver: gcnet carries the operations
    out with processes, signals and the control channel (gc_run.c), gcsim
    with engine calls (sim/gc_sim.c), a test with a recording.

    Two ways to drive it:
      - polling (ops.schedule NULL): gc_timeline_poll fires every event due
        at time t, in the scenario's order, `after` chains included (gcnet
        polls on its tick);
      - scheduled (ops.schedule set): gc_timeline_start asks the driver to
        schedule the timed events, firing an event asks it to schedule the
        events `after` it, the driver calls gc_timeline_fire when they are
        due, and gc_timeline_poll fires only the round events (gcsim, after
        each batch of its event queue).
    Times are seconds since the start, in the driver's clock. */
#ifndef GC_TIMELINE_H
#define GC_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_fault.h"
#include "gc_scenario.h"

//  What an event set in a peer's fault settings (gc_fault.h's GC_FAULT_* and
//  the compute slow-down).
#define GC_TIMELINE_SLOW 8u

typedef struct {
    gc_fault_t fault;           /* drop, delay, jitter, rate */
    double     slow;            /* compute takes `slow` times as long (1: normal) */
} gc_timeline_faults_t;

typedef struct {
    void *ctx;
    /*  kill: SIGKILL (clean false) or SIGTERM (true); freeze: stop (true) or
        continue (false); restart: kill if running, start again (resume: from
        the newest checkpoint), with the peer's fault settings so far. */
    void (*kill) (void *ctx, uint32_t peer, bool clean);
    void (*freeze) (void *ctx, uint32_t peer, bool frozen);
    void (*restart) (void *ctx, uint32_t peer, bool resume, const gc_timeline_faults_t *faults);
    /*  what (GC_FAULT_* | GC_TIMELINE_SLOW bits) changed; faults: all of them now. */
    void (*faults) (void *ctx, uint32_t peer, unsigned what, const gc_timeline_faults_t *faults);
    /*  talk only to allowed (n > 0: the peer's side, itself included), or
        heal (n == 0: everybody again). */
    void (*partition) (void *ctx, uint32_t peer, const uint32_t *allowed, size_t n);
    /*  after each peer's action of an event (not after a partition side's);
        gcsim routes there what the action made the peer send. NULL: none. */
    void (*acted) (void *ctx, uint32_t peer);
    /*  a line for the record (an event as it fires, or a driver's note via
        gc_timeline_note), with the honest median round then. */
    void (*record) (void *ctx, double round, const char *text);
    /*  peer's round now; -1: not counted in the median (Byzantine peers). */
    int64_t (*round) (void *ctx, uint32_t peer);
    /*  scheduled drivers: fire event `event` in delay_s seconds from now
        (gc_timeline_start: from the start; firing: from the event that
        fires). NULL: polling. */
    void (*schedule) (void *ctx, size_t event, double delay_s);
} gc_timeline_ops_t;

typedef struct gc_timeline_t gc_timeline_t;

gc_timeline_t *gc_timeline_new (const gc_scenario_t *sc, const gc_timeline_ops_t *ops);
void           gc_timeline_destroy (gc_timeline_t **self_p);

/*  Scheduled drivers, at time 0: schedule every timed event (in the
    scenario's order). */
void   gc_timeline_start (gc_timeline_t *self);
/*  Fire what is due at t (polling: everything; scheduled: the round events). */
void   gc_timeline_poll (gc_timeline_t *self, double t);
/*  Fire event e now (at t), unless it fired already. */
void   gc_timeline_fire (gc_timeline_t *self, size_t e, double t);
/*  Record a driver's note (a crash, the end of the run) as ops.record. */
void   gc_timeline_note (gc_timeline_t *self, const char *text);

/*  The honest peers' median round (ops.round; an even count: the floor of
    the two middle rounds' mean; none: 0). */
double gc_timeline_median_round (gc_timeline_t *self);
bool   gc_timeline_fired (const gc_timeline_t *self, size_t e);
/*  A restart that has not fired yet will bring peer back. */
bool   gc_timeline_restart_pending (const gc_timeline_t *self, uint32_t peer);
/*  The fault settings the timeline gave peer so far. */
const gc_timeline_faults_t *gc_timeline_faults (const gc_timeline_t *self, uint32_t peer);

#endif
