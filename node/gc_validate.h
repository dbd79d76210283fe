/*  gc_validate — local validation of the neighbours' models (issue 22).

    Geometry alone cannot tell an honest neighbour with other classes from an
    attacker on heterogeneous data (docs/RESULTS.md section 6): both deviate
    as consistently, as far and as sign-balanced. What the peer can check
    without trusting anyone is what a neighbour's model does on the peer's
    OWN data. A few samples of the peer's shard are held out of training;
    every so often (at random rounds, about one in R) the engine scores each
    neighbour's replica on them, relative to a reference no minority of the
    inputs controls, and multiplies the neighbour's mixing weight by a factor
    in [0, 1] kept until the next validation; the weights are normalised
    again, so the inputs kept share what it loses. docs/ALGORITHMS.md, "Guard", has the exact rule.

    Spec (`gossip/validate`):
      auto     64:10:0.5:0.9:1 when the aggregator is guard, else off
      off | 0  off
      B[:R[:LO[:HI[:REL]]]]
               B held-out samples (8..65536), validated about every R rounds
               (1..1000000; default 10); absolute thresholds LO, HI (0.5, 0.9);
               REL 1 (default) or 0: the relative test on or off
               (docs/ALGORITHMS.md, "The relative test")
    The held-out part is at most an eighth of the shard; below 8 samples
    validation is off. The engine only validates a model it trains (not
    kind external). */
#ifndef GC_VALIDATE_H
#define GC_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_dataset.h"
#include "gc_err.h"
#include "gc_model.h"

#define GC_VALIDATE_DEFAULT_SAMPLES 64
#define GC_VALIDATE_DEFAULT_EVERY   10
#define GC_VALIDATE_DEFAULT_LO      0.5
#define GC_VALIDATE_DEFAULT_HI      0.9

typedef struct {
    size_t   samples;       /* 0: off */
    uint32_t every;         /* mean rounds between validations */
    double   lo, hi;        /* relative accuracy deficit: full weight up to lo, none from hi */
    bool     relative;      /* also the test against the inputs' median deficit (docs/ALGORITHMS.md) */
} gc_validate_cfg_t;

/*  Parse spec for the aggregator (NULL or "": not guard); -1 with err
    naming gossip/validate and what is wrong. */
int gc_validate_parse (const char *spec, const char *aggregator, gc_validate_cfg_t *cfg,
                       gc_err_t *err);

typedef struct gc_validate_t gc_validate_t;

/*  Split shard into held (the held-out samples, a seeded choice) and rest
    (the others, in shard order), both new datasets. Takes at most an eighth
    of the shard; *held gets n = 0 (and rest a copy) when that is under 8. */
int  gc_validate_split (const gc_dataset_t *shard, size_t samples, uint64_t seed,
                        gc_dataset_t *held, gc_dataset_t *rest, gc_err_t *err);

/*  A validator over the held-out data (borrowed) for n_slots neighbours
    (the engine's in-neighbour indices). NULL when out of memory. */
gc_validate_t *gc_validate_new (const gc_validate_cfg_t *cfg, const gc_dataset_t *held,
                                size_t n_slots, uint64_t seed);
void           gc_validate_destroy (gc_validate_t **self_p);

/*  One mix's inputs x[0..k) with weights w (normalised), slot[j] the
    neighbour of input j (-1: the peer's own model, input 0 = own). Validates
    this round or not (seeded draw), then scales every neighbour's weight by
    its factor and normalises the weights again (the own model's is never
    scaled, so the sum stays positive). With suspect (NULL: none), the
    inputs it marks (the robust rule's suspects, gc_robust_suspects), when
    they are at least half of the peer's n_slots neighbours, are scored
    but left out of the medians the relative test compares against: on the
    malicious ring two attackers and the own model are the majority of five
    inputs, and attackers that stay close to the peer would set the level
    by which the honest neighbours fall short. Neighbours whose models score
    the held-out samples as the own model does (copies of it: under 2 % of
    them scored unlike it, on average, after at least 5 validations) leave
    those medians the same way.
    Returns whether it validated this round. */
bool gc_validate_weigh (gc_validate_t *self, gc_model_t *model, const float *const *x,
                        const int *slot, const bool *suspect, double *w, size_t k);

/*  The labels the peer trains on (borrowed for the call only): their mix's
    distance from uniform is the relative test's floor (gc_validate_skew). */
void           gc_validate_set_labels (gc_validate_t *self, const gc_dataset_t *train);

/*  The total variation distance of the label mix of y[0..n) from the
    uniform one over classes, in [0, 1): 0 for a balanced shard; about
    0.4·sqrt(classes / n) for an iid one by chance alone. */
double gc_validate_skew (const uint8_t *y, size_t n, int classes);

/*  The relative test's margin t (docs/ALGORITHMS.md, "The relative test"):
    the larger of two standard errors of the paired difference of two
    running deficits (reference accuracy a on B held-out samples, a share
    disagree of them scored unlike the reference by the honest level's
    input, n_val validations) and the peer's label skew. */
double gc_validate_margin (double a, size_t b_samples, double disagree, double skew, uint64_t n_val);

/*  A neighbour's current factor (1 before its first validation). */
double gc_validate_factor (const gc_validate_t *self, size_t slot);

/*  Validations run so far (for stats and tests). */
uint64_t gc_validate_runs (const gc_validate_t *self);

#endif
