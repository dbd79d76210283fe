/*  gc_policy — a ratio policy: decides, round by round (and layer by layer
    where it applies), the budget handed to the compressor, or that this
    round's send is skipped.

    The policies are registered in gc_ratio_policies.c (one file each); the
    spec is `NAME[:OPTIONS]`, tokens separated by ':':

      fixed                        the compressor's own ratio, every round
      lazy[:theta=1][:K=2][:window=8]
                                   skip the send (the residual keeps the update)
                                   when |u|^2 < theta * mean of the last window
                                   rounds' |u|^2; never more than K in a row
      accordion[:crit=R][:calm=R][:eta=0.5][:window=10]
                                   ratio crit in a critical regime (the mean
                                   |u| of a window changed by eta or more
                                   against the previous window), calm otherwise
      settle[:lo=R/4][:hi=4R][:window=10][:power=2]
                                   ratio lo (first window's mean |u| / this
                                   window's)^power, within [lo, hi]: more as
                                   the model settles
      bandwidth[:frac=0.5][:rate=B/S][:min=R][:max=R]
                                   the largest ratio in [min, max] whose payload
                                   goes out within frac x the round's compute
                                   time at the link rate
      lgreco[:every=10]            per-layer top-k ratios, chosen by dynamic
                                   programming every `every` rounds to minimise
                                   the estimated dropped mass under the total
                                   budget of the compressor's ratio

    A chain `A+B[+...]` runs every stage each round and takes the smallest
    ratio (a stage with nothing to go on gives none); only the first may
    skip, and lgreco is not chained: `settle+bandwidth:frac=0.5` spends
    bytes late, but no more than a thin link carries in half a round.

    A policy budgets the RATIO of topk and randk (lbs: its inner method's);
    `fixed` works with every method and changes nothing. Decisions are
    counted (gc_policy_budget, gc_policy_skipped). Algorithms:
    docs/ALGORITHMS.md, "Ratio policies". */
#ifndef GC_POLICY_H
#define GC_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_compressor.h"
#include "gc_err.h"

typedef struct gc_policy_t gc_policy_t;

/*  The known policies' usages, ", "-separated, from the registry. */
const char *gc_policy_known (char *buf, size_t size);

/*  spec: above. comp is borrowed (its ratio is the base budget) and must
    outlive the policy. NULL with err (GC_E_SPEC) on a bad spec or a method
    the policy cannot budget. */
gc_policy_t *gc_policy_new (const char *spec, gc_compressor_t *comp, gc_err_t *err);
void         gc_policy_destroy (gc_policy_t **self_p);

/*  Canonical spec, every default spelled out. */
const char *gc_policy_name (const gc_policy_t *self);
/*  `fixed`: the caller need not consult it at all. */
bool        gc_policy_is_fixed (const gc_policy_t *self);
/*  Skipping needs a residual that keeps what was not sent (EC ef, liec). */
bool        gc_policy_skips (const gc_policy_t *self);

/*  What the round costs and what the link carries: compute_s the round's
    compute time (s), rate the bytes/s of the slowest out-link (0: unknown).
    Either <= 0 leaves the previous value. */
void gc_policy_set_env (gc_policy_t *self, double compute_s, double rate);
/*  The time of the peer's last whole round (s): from one publish to the
    next, waiting for the neighbours included. <= 0 leaves the previous value. */
void gc_policy_set_round (gc_policy_t *self, double round_s);
/*  The link rate exactly (0: unknown, e.g. a rate cap that was lifted). */
void gc_policy_set_rate (gc_policy_t *self, double rate);

/*  Decide round `round`: update u (this round's change, n floats) and input
    (what would be compressed, u + e; may equal update). Sets the
    compressor's budget for the round (gc_compressor_set_budget) and *skip.
    -1 only on memory or a compressor refusing the budget. */
int  gc_policy_decide (gc_policy_t *self, const float *update, const float *input,
                       uint64_t round, bool *skip, gc_err_t *err);
/*  The round's payload went out (len bytes; not called for skips). */
void gc_policy_note_sent (gc_policy_t *self, size_t len);
/*  The round was an exact synchronisation instead (LIEC): budget 1. */
void gc_policy_note_exact (gc_policy_t *self);

/*  The last round's budget as a fraction of the entries (0: skipped) and
    the sends skipped so far. */
double   gc_policy_budget (const gc_policy_t *self);
uint64_t gc_policy_skipped (const gc_policy_t *self);

/*  The per-layer allocation of lgreco, exposed for tests: choose one of
    n_choices options per layer (cost [l * n_choices + c] budget units,
    error err [...]) minimising the summed error with summed cost <= budget
    (budget <= 1e6). Writes choice [n_layers]; returns the minimum, or -1
    when no choice fits (choice untouched) or memory runs out. */
double gc_policy_allocate (size_t n_layers, size_t n_choices, const uint32_t *cost,
                           const double *err, uint32_t budget, uint32_t *choice);

#endif
