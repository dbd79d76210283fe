/*  gc_wait — when does a round end? The wait policy decides, from which
    in-neighbours have delivered a fresh update and when. The policies are
    registered in gc_wait_policies.c (one file each):

      sync           all in-neighbours, or the timeout
      quorum:Q       the fastest Q in-neighbours, or the timeout
      adaptive       the number to wait for adapts to observed arrival delays
                     (after DSGD-AAU, Xiong et al.): see docs/ALGORITHMS.md

    Every policy is bounded by the timeout, so a dead, frozen or slow neighbour
    never blocks a peer for longer than that. Times are passed in (ns), never
    read from a clock here, so the simulator can drive the same code with a
    virtual clock. */
#ifndef GC_WAIT_H
#define GC_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

typedef struct gc_wait_t gc_wait_t;

/*  The known policies' usages, ", "-separated ("sync, quorum:Q, adaptive"),
    from the registry (gc_wait_policies.c), into buf (size bytes); returns buf. */
const char *gc_wait_known (char *buf, size_t size);

/*  n: in-neighbours; min_fresh: the fewest fresh neighbours the round wants
    (e.g. what the aggregation rule needs), clamped to n. */
gc_wait_t *gc_wait_new (const char *spec, size_t n, size_t min_fresh, int64_t timeout_ns,
                        gc_err_t *err);
void       gc_wait_destroy (gc_wait_t **self_p);
/*  Start waiting at time now. */
void       gc_wait_begin (gc_wait_t *self, int64_t now);
/*  Enough fresh neighbours (fresh[j] for each in-neighbour j), or timed out? */
bool       gc_wait_ready (const gc_wait_t *self, const bool *fresh, int64_t now);
/*  The time at which the wait ends whatever arrives. */
int64_t    gc_wait_deadline (const gc_wait_t *self);
/*  End the wait: arrival[j] is when neighbour j's fresh update arrived (<=
    begin counts as no delay), or -1 if it did not. Updates the estimates. */
void       gc_wait_end (gc_wait_t *self, const int64_t *arrival, int64_t now);
/*  How many fresh neighbours the policy currently waits for. */
size_t     gc_wait_target (const gc_wait_t *self);
/*  Estimated delay of neighbour j (adaptive), in ns. */
double     gc_wait_estimate (const gc_wait_t *self, size_t j);
const char *gc_wait_name (const gc_wait_t *self);

#endif
