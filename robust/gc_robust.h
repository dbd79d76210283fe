/*  gc_robust — robust aggregation of k dense vectors into one.

    A gc_robust_t holds one rule, parsed from a spec string, and a workspace
    that grows to the largest (k, d) seen, so that the hot path never
    allocates in steady state. Each call is a pure function of its arguments
    (plus the bucketing seed), except guard's, which keeps a per-neighbour
    history in the object: no I/O, no global state. Single-threaded: use
    one gc_robust_t per thread.

    Specs (exact definitions and breakdown points in docs/ALGORITHMS.md; the
    rules are registered in gc_robust_rules.c, one file each):
        mean                  weighted mean
        cwmed                 coordinate-wise median
        cwtm:B                coordinate-wise trimmed mean, B dropped each side
        krum:F                Krum
        mkrum:F:M             Multi-Krum, mean of the M best
        bulyan:F              Bulyan (Krum selection + trimmed coordinates)
        gm[:NU[:ITERS[:TOL]]] geometric median (smoothed Weiszfeld)
        cclip[:TAU[:L]]       centered clipping
        scclip[:TAU]          self-centered clipping (ClippedGossip), fixed tau
        scclip:auto[:DELTA]   ... with the adaptive tau for Byzantine weight DELTA
        guard[:C[:H[:LO[:HI]]]][:self][:nosign][:nodir][:nomed][:nostill][:nofast][:noecho]
             [:nolow][:nodrift][:nofollow][:nofar]
                              self-centred clipping at C x the own step, with a
                              per-neighbour consistency, sign, direction, median-sign,
                              stillness, speed, echo, low-consistency, drift, follow
                              and far history over H calls (stateful), the weight cut
                              going to the kept neighbours; ablation words: self (it
                              stays on the own model), nosign, nodir, nomed, nostill,
                              nofast, noecho, nolow, nodrift, nofollow, nofar (that
                              test off);
                              redist = the default
    Pre-aggregations, composable in front of any rule with '+':
        nnm[:F]+RULE          nearest-neighbour mixing (F defaults to RULE's f)
        bucket:S+RULE         random buckets of S inputs averaged first
    e.g. "nnm+cwtm:1", "bucket:2+cwmed", "bucket:2+nnm:1+krum:1". */
#ifndef GC_ROBUST_H
#define GC_ROBUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

/*  err->code after a failed call is a GC_E_* of gc_err.h: GC_E_SPEC (the
    spec string is malformed or out of range), GC_E_INPUT (k, d or
    self_index not acceptable for this rule), GC_E_NONFINITE (an input holds
    NaN or Inf: see gc_robust_bad_input), GC_E_WEIGHTS (a weight is negative
    or non-finite, or all are zero), GC_E_ARG (NULL pointer, or out overlaps
    an input), GC_E_NOMEM. */

/*  Largest k accepted (the workspace is O(k^2 + k * block)). */
#define GC_ROBUST_MAX_INPUTS  1024

typedef struct gc_robust_t gc_robust_t;

/*  The known rules' usages, ", "-separated ("mean, cwmed, cwtm:B, ..."), from
    the registry (gc_robust_rules.c), into buf (size bytes); returns buf. */
const char *gc_robust_known (char *buf, size_t size);

/*  NULL + err (GC_E_SPEC) on a bad spec. */
gc_robust_t *gc_robust_new (const char *spec, gc_err_t *err);
void         gc_robust_destroy (gc_robust_t **self_p);

/*  Aggregate k vectors of d floats into out.
    weights: k finite non-negative weights, not all zero (NULL = uniform);
    used by mean, gm, cclip, scclip and bucketing, ignored by the
    order-statistic and distance rules (cwmed, cwtm, krum, mkrum, bulyan, nnm).
    self_index: which input is the peer's own vector, or -1; scclip and cclip
    centre on it. out: d floats, must not overlap any input; unspecified
    when -1 is returned.
    Returns 0, or -1 with err: GC_E_INPUT (e.g. k below
    gc_robust_min_inputs), GC_E_NONFINITE (no output is produced; the
    offending inputs are listed by gc_robust_bad_input / _bad_inputs), ... */
int gc_robust_aggregate (gc_robust_t *self, const float *const *inputs,
                         const double *weights, size_t k, size_t d,
                         int self_index, float *out, gc_err_t *err);

/*  The same with an explicit centre (d finite floats, or NULL): the start of
    cclip's iterations and scclip's reference point, instead of
    inputs[self_index]. The distance rules (krum, mkrum, bulyan, nnm) use it
    only as the numerical centre of their Gram matrix; the others ignore it. */
int gc_robust_aggregate_centered (gc_robust_t *self, const float *const *inputs,
                                  const double *weights, size_t k, size_t d,
                                  int self_index, const float *centre,
                                  float *out, gc_err_t *err);

/*  Smallest k the rule accepts (e.g. 2f+3 for krum:f, 2b+1 for cwtm:b). */
size_t gc_robust_min_inputs (const gc_robust_t *self);

/*  The rule for k inputs when k is below gc_robust_min_inputs: the same
    stages with the number of tolerated Byzantine inputs f (cwtm's b,
    krum's, mkrum's, bulyan's f; nnm's F follows it, mkrum's M is cut to
    k - f) lowered to the largest that k inputs support, down to 0 (cwtm:0
    is the plain mean). NULL with GC_E_INPUT when none does (krum below 3
    inputs, a rule without f) or k is not too few; the caller owns the
    result (gc_robust_destroy). It starts from self's bucketing stream. */
gc_robust_t *gc_robust_new_fallback (const gc_robust_t *self, size_t k, gc_err_t *err);

/*  Canonical spec text, with every default spelled out ("cwtm:1",
    "nnm:1+cwtm:1", "gm:1e-06:32:1e-06"): equal names mean equal rules. */
const char *gc_robust_name (const gc_robust_t *self);

/*  The rule's f (Byzantine inputs tolerated by construction: cwtm's b,
    krum's f, ...), or -1 for rules without one (mean, cwmed, gm, clipping). */
int gc_robust_f (const gc_robust_t *self);

/*  After a call that failed with GC_E_NONFINITE: the index of the
    first input holding NaN or Inf (-1 otherwise), and all of them. */
int    gc_robust_bad_input (const gc_robust_t *self);
size_t gc_robust_bad_inputs (const gc_robust_t *self, size_t *idx, size_t max);

/*  What the last successful call did, for logs and tests. */
typedef struct {
    size_t selected [GC_ROBUST_MAX_INPUTS]; /* krum/mkrum/bulyan: inputs chosen, best first */
    size_t n_selected;                      /* (indices of the rule's inputs, after pre-aggregation) */
    int    iterations;                      /* gm, cclip: iterations run */
    double tau;                             /* scclip: the clipping radius used */
    size_t n_clipped;                       /* scclip, cclip (last iteration): inputs clipped */
    int    gram_passes;                     /* distance rules: Gram passes (2 after a recentre) */
} gc_robust_info_t;

const gc_robust_info_t *gc_robust_info (const gc_robust_t *self);

/*  Seed of the bucketing permutation; each call draws the next one. The
    same seed and call sequence give the same buckets. Default seed 0. */
void gc_robust_set_seed (gc_robust_t *self, uint64_t seed);

/*  Use the portable scalar kernels instead of the AVX-512/AVX2 ones (tests
    compare both). The coordinate-wise rules give identical bits; distance
    sums (gm, cclip, scclip) may differ in their last bits. */
void gc_robust_set_portable (gc_robust_t *self, bool portable);

/*  Who each input of the next aggregate call is (k keys, e.g. peer ids)
    and, with moved (NULL: every input), whether a message changed it since
    the last call (false: a straggler's replica, left as it was). The
    arrays must stay valid until that call returns. Rules with a
    per-neighbour history (guard) key it on them and measure movement only
    on moved inputs; without keys an input's position is its key. Other
    rules ignore both. */
void gc_robust_set_keys (gc_robust_t *self, const uint64_t *keys, const bool *moved, size_t k);

/*  The caller's mix step, x += gamma (o - centre) for the next call's output
    o, done inside the rule's output pass where the rule has one (guard), so
    that o is not stored and read back: out is then scratch (unspecified
    after the call) and gc_robust_mixed says so. Every other rule stores o in
    out as always, and the caller mixes. The float operations are the
    caller's loop's (the difference, the product, the sum), so x gets the
    same bits either way. x: d floats that overlap no input and not out,
    unless x is the call's own vector or centre itself (then read before it
    is written, coordinate by coordinate); centre: d floats. For the next
    call only; a failed call leaves x as it was. */
typedef struct {
    float       *x;
    const float *centre;
    float        gamma;
} gc_robust_mix_t;

void gc_robust_set_mix (gc_robust_t *self, float *x, const float *centre, float gamma);

/*  Whether the last successful call left its output in the mix's x. */
bool gc_robust_mixed (const gc_robust_t *self);

/*  Whether the rule's per-neighbour history holds the neighbour of this
    key (gc_robust_set_keys) suspect: guard gave it less than half of its
    weight at its last call. Always false for rules without a history. So
    that other defences of the peer (local validation) can leave suspects
    out of the levels they compare against, as guard does. */
bool gc_robust_suspects (const gc_robust_t *self, uint64_t key);

#endif
