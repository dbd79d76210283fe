/*  gc_robust_guard — self-centred clipping with a radius from the peer's own
    steps and a per-neighbour consistency history (issue 22).

    The one rule of robust/ that keeps state across calls: the peer's last
    output (its own step is measured against it) and, per neighbour key, an
    exponential average of the clipped deviation and of its norm. The exact
    rule, its parameters and their sources are in docs/ALGORITHMS.md
    ("guard"). Internal to gcrobust: the rule's descriptor
    (gc_robust_rule_guard, in gc_robust_guard.c) parses the spec, creates
    this state on its first run and calls gc_robust_guard_run. */
#ifndef GC_ROBUST_GUARD_H
#define GC_ROBUST_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_robust_internal.h"

typedef struct gc_robust_guard_t gc_robust_guard_t;

typedef struct {
    double c;           /* radius = c x the own step's running norm */
    double horizon;     /* history length in calls (average weight 1 - 1/horizon) */
    double rho_lo;      /* consistency excess over the reference up to which a neighbour
                           keeps its full weight (rho_lo >= 1: history off) */
    double rho_hi;      /* excess from which it has none */
    bool   redist;      /* the weight cut from neighbours goes to the kept ones (the
                           default; false: it stays on the own model, `:self`) */
    bool   sign_test;   /* the sign balance counts (the default; false: `:nosign`) */
    bool   dir_test;    /* the direction test counts (the default; false: `:nodir`) */
    bool   med_test;    /* the median-sign test counts (the default; false: `:nomed`) */
    bool   still_test;  /* the stillness test counts (the default; false: `:nostill`) */
    bool   fast_test;   /* the speed test counts (the default; false: `:nofast`) */
    bool   echo_test;   /* the echo test counts (the default; false: `:noecho`) */
    bool   low_test;    /* the low-consistency test counts (the default; false: `:nolow`) */
    bool   drift_test;  /* the drift test counts (the default; false: `:nodrift`) */
    bool   follow_test; /* the follow test counts (the default; false: `:nofollow`) */
    bool   far_test;    /* the far test counts (the default; false: `:nofar`) */
} gc_robust_guard_cfg_t;

gc_robust_guard_t *gc_robust_guard_new (const gc_robust_guard_cfg_t *cfg);
void               gc_robust_guard_destroy (gc_robust_guard_t **self_p);

/*  Whether the neighbour of key got less than half of its weight at its
    last call (after its warm-up; false for a key without a history). */
bool gc_robust_guard_suspects (const gc_robust_guard_t *self, uint64_t key);

/*  out = own + f sum_j w_j h_j c_j (x_j - own) over the n inputs (w normalised,
    own among them or not), c_j the clip factor, h_j the history weight of
    keys[j] (NULL: the input's position is its key), f = the neighbours'
    weight over the weight they keep, at most 2 (cfg.redist), or 1 without
    cfg.redist. Returns a kernel code:
    0, 1 (an input holds NaN or Inf; no state was changed), -1 (no memory).
    moved[j] (NULL: all) says whether a message changed input j since the
    last call; the stillness test measures only those.
    *tau and *clipped receive the radius used and the inputs clipped. With
    mix (not NULL) out is not written: mix->x += gamma (that - mix->centre)
    instead (gc_robust_set_mix; a mix->x equal to own is also the centre). */
int gc_robust_guard_run (gc_robust_guard_t *self, gc_robust_ws_t *ws,
                         const float *const *x, const double *w, size_t n, size_t d,
                         const float *own, const uint64_t *keys, const bool *moved,
                         const gc_robust_mix_t *mix, float *out, double *tau, size_t *clipped);

#endif
