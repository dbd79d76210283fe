/*  gc_validate — local validation of the neighbours' models (gc_validate.h).

    Why each part (docs/ALGORITHMS.md, "Guard", validation):
    - The score is a neighbour's replica *accuracy* on the peer's held-out
      samples, relative to the upper median of the accuracies of all inputs
      (the peer's own model among them): with honest inputs at least half the
      median is an honest accuracy, so an honest neighbour whose classes
      differ from the peer's (and so does a bit worse on its data) is compared
      with other honest neighbours in the same position, not with the peer's
      own model, which is fitted to those samples. Accuracy, not loss: an
      honest neighbour's held-out loss has a heavy tail on non-iid data.
    - Validations are at random rounds (a seeded draw, one in R on average)
      so that an attacker cannot send good models on the validated rounds
      only, and a factor is kept in between: the cost is B forward passes
      per input every R rounds.
    - The factor follows a running mean of the relative deficit over the
      last few validations, which smooths the fixed held-out set's noise. */
#include "gc_validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_parse.h"
#include "gc_rng.h"

//  Running mean of the deficit over about this many validations.
#define S_HORIZON 3.0
//  The fewest held-out samples worth scoring on; the most of the shard taken.
#define S_MIN_SAMPLES 8
#define S_MAX_FRACTION 8

struct gc_validate_t {
    gc_validate_cfg_t cfg;
    const gc_dataset_t *held;
    size_t    n_slots;
    double   *excess;       /* per slot: running mean of the relative accuracy deficit */
    double   *factor;       /* per slot: the weight factor in force */
    uint64_t *seen;         /* per slot: validations that scored it */
    double   *rel_excess;   /* per slot: the same over S_REL_HORIZON (the relative test) */
    double    own_rel;      /* the own model's, likewise (among the relative test's median) */
    uint64_t  own_seen;
    double   *acc, *sorted;     /* per input of one call: accuracy, and sorted (grown) */
    size_t    cap;
    gc_rng_t  rng;
    uint64_t  runs;
};

int
gc_validate_parse (const char *spec, const char *aggregator, gc_validate_cfg_t *cfg,
                   gc_err_t *err)
{
    *cfg = (gc_validate_cfg_t) { GC_VALIDATE_DEFAULT_SAMPLES, GC_VALIDATE_DEFAULT_EVERY,
                                 GC_VALIDATE_DEFAULT_LO, GC_VALIDATE_DEFAULT_HI, false };
    if (!spec || !*spec || !strcmp (spec, "auto")) {
        //  on with the default defence only: other rules keep their published behaviour
        if (!aggregator || strncmp (aggregator, "guard", 5) || (aggregator [5] && aggregator [5] != ':'))
            cfg->samples = 0;
        return 0;
    }
    if (!strcmp (spec, "off") || !strcmp (spec, "0")) {
        cfg->samples = 0;
        return 0;
    }
    gc_spec_t t;
    if (gc_spec_split (&t, spec, ':', "gossip/validate", err))
        return -1;
    if (t.n > 5)
        return gc_err_set (err, GC_E_CONFIG, "gossip/validate '%s': expected auto, off or "
                           "B[:R[:LO[:HI[:REL]]]]", spec);
    long b = 0, r = GC_VALIDATE_DEFAULT_EVERY, rel = 0;
    if (gc_parse_long (t.tok [0], S_MIN_SAMPLES, 65536, &b, "gossip/validate samples B", err)
    ||  (t.n > 1 && gc_parse_long (t.tok [1], 1, 1000000, &r, "gossip/validate rounds R", err))
    ||  (t.n > 2 && gc_parse_double (t.tok [2], 0, 1, &cfg->lo, "gossip/validate LO", err))
    ||  (t.n > 3 && gc_parse_double (t.tok [3], cfg->lo, 1, &cfg->hi, "gossip/validate HI", err))
    ||  (t.n > 4 && gc_parse_long (t.tok [4], 0, 1, &rel, "gossip/validate REL", err)))
        return -1;
    cfg->relative = rel == 1;
    if (t.n == 3 && cfg->hi < cfg->lo)
        cfg->hi = cfg->lo;          /* LO alone: a step there */
    cfg->samples = (size_t) b;
    cfg->every = (uint32_t) r;
    return 0;
}

static int
s_cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return x < y ? -1 : x > y;
}

int
gc_validate_split (const gc_dataset_t *shard, size_t samples, uint64_t seed,
                   gc_dataset_t *held, gc_dataset_t *rest, gc_err_t *err)
{
    memset (held, 0, sizeof *held);
    memset (rest, 0, sizeof *rest);
    size_t n = shard->n, b = samples < n / S_MAX_FRACTION ? samples : n / S_MAX_FRACTION;
    if (b < S_MIN_SAMPLES)
        b = 0;
    uint32_t *perm = malloc ((n ? n : 1) * sizeof *perm);
    if (!perm)
        return gc_err_set (err, GC_E_NOMEM, "gossip/validate: out of memory");
    for (size_t i = 0; i < n; i++)
        perm [i] = (uint32_t) i;
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0x7A11D);
    gc_rng_shuffle_u32 (&rng, perm, n);
    //  the rest in shard order: the sampler's permutations then do not
    //  depend on which samples were held out
    qsort (perm + b, n - b, sizeof *perm, s_cmp_u32);
    int rc = (b && gc_dataset_subset (shard, perm, b, held, err))
          || gc_dataset_subset (shard, perm + b, n - b, rest, err) ? -1 : 0;
    free (perm);
    if (rc) {
        gc_dataset_free (held);
        gc_dataset_free (rest);
        memset (held, 0, sizeof *held);
    }
    return rc;
}

gc_validate_t *
gc_validate_new (const gc_validate_cfg_t *cfg, const gc_dataset_t *held, size_t n_slots,
                 uint64_t seed)
{
    gc_validate_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cfg = *cfg;
    if (self->cfg.every < 1)
        self->cfg.every = 1;
    self->held = held;
    self->n_slots = n_slots;
    size_t m = n_slots ? n_slots : 1;
    self->excess = calloc (m, sizeof *self->excess);
    self->factor = malloc (m * sizeof *self->factor);
    self->seen = calloc (m, sizeof *self->seen);
    self->rel_excess = calloc (m, sizeof *self->rel_excess);
    if (!self->excess || !self->factor || !self->seen || !self->rel_excess) {
        gc_validate_destroy (&self);
        return NULL;
    }
    for (size_t i = 0; i < n_slots; i++)
        self->factor [i] = 1.0;
    gc_rng_init (&self->rng, seed, 0x7A11D + 1);
    return self;
}

void
gc_validate_destroy (gc_validate_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_validate_t *self = *self_p;
    free (self->excess);
    free (self->factor);
    free (self->seen);
    free (self->rel_excess);
    free (self->acc);
    free (self->sorted);
    free (self);
    *self_p = NULL;
}

static int
s_reserve (gc_validate_t *self, size_t k)
{
    if (self->cap >= k)
        return 0;
    double *a = realloc (self->acc, k * sizeof *a);
    if (a)
        self->acc = a;
    double *b = realloc (self->sorted, k * sizeof *b);
    if (b)
        self->sorted = b;
    if (!a || !b)
        return -1;
    self->cap = k;
    return 0;
}

//  Accuracy of every input on the held-out samples (a model that is not
//  finite there: 0), and the reference: the upper median of them, an honest
//  accuracy while honest inputs are at least half.
static double
s_accuracies (gc_validate_t *self, gc_model_t *model, const float *const *x, size_t k)
{
    const gc_dataset_t *h = self->held;
    for (size_t j = 0; j < k; j++) {
        size_t correct = 0;
        double l = gc_model_loss_grad (model, x [j], h->x, h->y, h->n, NULL, 1, 0, &correct);
        self->acc [j] = isfinite (l) ? (double) correct / (double) h->n : 0.0;
        size_t i = j;
        for (; i > 0 && self->sorted [i - 1] < self->acc [j]; i--)
            self->sorted [i] = self->sorted [i - 1];
        self->sorted [i] = self->acc [j];
    }
    return self->sorted [(k - 1) / 2];
}

//  Relative test: the margin above the inputs' median running deficit past
//  which a neighbour starts to lose weight, in standard errors of the
//  difference of two running deficits on B held-out samples.
#define S_REL_SE 2.0
//  The relative test's running mean: over about this many validations (a
//  longer memory than the absolute test's, for a smaller standard error;
//  an attacker it flags keeps being scored, so it stays flagged only while
//  it stays worse).
#define S_REL_HORIZON 10.0

//  Whether an input's slot is a neighbour's (else the own model, or one
//  without a slot).
static inline bool
s_is_slot (const gc_validate_t *self, int slot)
{
    return slot >= 0 && (size_t) slot < self->n_slots;
}

//  The running mean of a deficit r after n validations (n counts this one).
static double
s_running (double prev, double r, uint64_t n, double horizon)
{
    double b = 1.0 / fmin ((double) n, horizon);
    return (1.0 - b) * prev + b * r;
}

static double
s_ramp (double lo, double hi, double e)
{
    double span = hi - lo;
    double f = span > 0 ? (hi - e) / span : e < lo ? 1.0 : 0.0;
    return fmin (1.0, fmax (0.0, f));
}

//  The margin t of the relative test: two standard errors of the difference
//  of two running deficits after n validations (accuracy a on B samples:
//  relative standard error sqrt ((1 - a) / (a B)) per validation; a running
//  mean of n <= H values is their plain mean, variance 1 / n of one, and
//  later b / (2 - b) with b = 1 / H; two of them, twice that), and at least
//  twice the honest deficit level ref, so that on heterogeneous data, where
//  honest neighbours fall short of one another by their classes, the test is
//  no stricter than that spread.
static double
s_margin (double a, size_t b_samples, double ref, uint64_t n_val)
{
    double n = (double) b_samples, b = 1.0 / S_REL_HORIZON;
    double miss = fmax (1.0 - a, 1.0 / n), acc = fmax (a, 1.0 / n);
    double shrink = fmax (1.0 / (double) (n_val ? n_val : 1), b / (2.0 - b));
    double se = sqrt (miss / (acc * n)) * sqrt (2.0 * shrink);
    return fmax (S_REL_SE * se, 2.0 * ref);
}

//  The lower median of the call's running deficits, the own model's
//  included: an honest level while honest inputs are at least half (own
//  counted), as on the malicious ring (own + 2 honest + 2 Byzantine).
static double
s_deficit_median (gc_validate_t *self, const int *slot, size_t k)
{
    size_t m = 0;
    for (size_t j = 0; j < k; j++) {
        bool nb = s_is_slot (self, slot [j]);
        if (!nb && j)
            continue;
        double v = nb ? self->rel_excess [slot [j]] : self->own_rel;
        size_t i = m++;
        for (; i > 0 && self->sorted [i - 1] > v; i--)
            self->sorted [i] = self->sorted [i - 1];
        self->sorted [i] = v;
    }
    return m ? self->sorted [(m - 1) / 2] : 0.0;
}

//  Score the inputs: the running mean of their relative accuracy deficit
//  against the reference accuracy ref_a, and from it each neighbour's
//  factor: the lesser of the absolute test (LO, HI) and the relative one
//  (a deficit beyond the inputs' median by more than the margin).
static void
s_score (gc_validate_t *self, const int *slot, size_t k, double ref_a)
{
    for (size_t j = 0; j < k; j++) {
        bool nb = s_is_slot (self, slot [j]);
        if (!nb && j)
            continue;
        //  no input better than chance on our samples says nothing yet
        double r = ref_a > 0 ? fmax (0.0, (ref_a - self->acc [j]) / ref_a) : 0.0;
        if (nb) {
            size_t s = (size_t) slot [j];
            self->excess [s] = s_running (self->excess [s], r, ++self->seen [s], S_HORIZON);
            self->rel_excess [s] = s_running (self->rel_excess [s], r, self->seen [s], S_REL_HORIZON);
        }
        else
            self->own_rel = s_running (self->own_rel, r, ++self->own_seen, S_REL_HORIZON);
    }
    //  the median and margins only when the relative test is on
    double ref = self->cfg.relative ? s_deficit_median (self, slot, k) : 0.0;
    for (size_t j = 1; j < k; j++) {
        if (!s_is_slot (self, slot [j]))
            continue;
        size_t s = (size_t) slot [j];
        double f = s_ramp (self->cfg.lo, self->cfg.hi, self->excess [s]);
        if (self->cfg.relative) {
            double t = s_margin (ref_a, self->held->n, ref, self->seen [s]);
            f = fmin (f, s_ramp (ref + t, ref + 2.0 * t, self->rel_excess [s]));
        }
        self->factor [s] = f;
    }
}

bool
gc_validate_weigh (gc_validate_t *self, gc_model_t *model, const float *const *x,
                   const int *slot, double *w, size_t k)
{
    if (!self || !self->held || !self->held->n || k < 2)
        return false;
    //  one draw per call whether or not it validates: the schedule depends
    //  on the seed and the call count only
    bool run = gc_rng_below (&self->rng, self->cfg.every) == 0;
    if (run && s_reserve (self, k) == 0) {
        s_score (self, slot, k, s_accuracies (self, model, x, k));
        self->runs++;
    }
    else
        run = false;
    //  the inputs kept share the weight the others lose, in proportion: on
    //  heterogeneous data a peer that gave it all to its own model would mix
    //  less with the honest neighbours it still has (measured: docs/RESULTS.md)
    double total = 0;
    for (size_t j = 0; j < k; j++) {
        if (s_is_slot (self, slot [j]))
            w [j] *= self->factor [slot [j]];
        total += w [j];
    }
    for (size_t j = 0; j < k && total > 0; j++)
        w [j] /= total;
    return run;
}

double
gc_validate_factor (const gc_validate_t *self, size_t slot)
{
    return self && slot < self->n_slots ? self->factor [slot] : 1.0;
}

uint64_t
gc_validate_runs (const gc_validate_t *self)
{
    return self ? self->runs : 0;
}
