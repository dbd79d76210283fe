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
      last few validations, which smooths the fixed held-out set's noise.
    - The relative test (on by default) compares a neighbour's longer running
      deficit with the honest level's (a lower median), beyond a margin that
      follows the honest spread: the paired noise of the honest level on
      the same samples, or the peer's own label skew, neither of which an
      attacker among the inputs can widen (gc_validate_margin). */
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
    double   *disagree;     /* per slot: running share of held-out samples scored unlike the reference */
    double   *own_dis;      /* per slot: the same against the own model (s_copies) */
    bool     *out;          /* per slot: cut by the relative test, until back within its margin */
    double    own_rel, own_disagree;    /* the own model's, likewise (among the medians) */
    uint64_t  own_seen;
    double    skew;         /* the shard's label mix: distance from uniform (the relative test's floor) */
    double   *acc, *sorted;     /* per input of one call: accuracy, and sorted (grown) */
    uint8_t  *hit;          /* per input of one call: per held-out sample, right (1) or not */
    size_t    cap;
    gc_rng_t  rng;
    uint64_t  runs;
};

int
gc_validate_parse (const char *spec, const char *aggregator, gc_validate_cfg_t *cfg,
                   gc_err_t *err)
{
    *cfg = (gc_validate_cfg_t) { GC_VALIDATE_DEFAULT_SAMPLES, GC_VALIDATE_DEFAULT_EVERY,
                                 GC_VALIDATE_DEFAULT_LO, GC_VALIDATE_DEFAULT_HI, true };
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
    long b = 0, r = GC_VALIDATE_DEFAULT_EVERY, rel = 1;
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
    self->disagree = calloc (m, sizeof *self->disagree);
    self->own_dis = calloc (m, sizeof *self->own_dis);
    self->out = calloc (m, sizeof *self->out);
    if (!self->excess || !self->factor || !self->seen || !self->rel_excess || !self->disagree
    ||  !self->own_dis || !self->out) {
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
    free (self->disagree);
    free (self->own_dis);
    free (self->out);
    free (self->hit);
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
    uint8_t *c = realloc (self->hit, k * self->held->n);
    if (c)
        self->hit = c;
    if (!a || !b || !c)
        return -1;
    self->cap = k;
    return 0;
}

//  Which held-out samples params gets right (hit, one byte each; the first
//  largest logit, as training counts them), and how many; none when a logit
//  is not finite (a model that is not finite there scores 0).
static size_t
s_hits (gc_model_t *model, const float *params, const gc_dataset_t *h, uint8_t *hit)
{
    size_t classes = (size_t) gc_model_n_classes (model), right = 0;
    const float *z = gc_model_forward (model, params, h->x, h->n);
    bool finite = true;
    for (size_t i = 0; i < h->n * classes; i++)
        finite &= isfinite (z [i]) != 0;
    for (size_t r = 0; r < h->n; r++, z += classes) {
        size_t arg = 0;
        for (size_t c = 1; c < classes; c++)
            if (z [c] > z [arg])
                arg = c;
        hit [r] = finite && arg == h->y [r];
        right += hit [r];
    }
    return right;
}

//  Accuracy of every input on the held-out samples, and the reference: the
//  upper median of them, an honest accuracy while honest inputs are at least
//  half; *ref_j gets the first input that scored it.
static double
s_accuracies (gc_validate_t *self, gc_model_t *model, const float *const *x, size_t k,
              size_t *ref_j)
{
    const gc_dataset_t *h = self->held;
    for (size_t j = 0; j < k; j++) {
        size_t correct = s_hits (model, x [j], h, self->hit + j * h->n);
        self->acc [j] = (double) correct / (double) h->n;
        size_t i = j;
        for (; i > 0 && self->sorted [i - 1] < self->acc [j]; i--)
            self->sorted [i] = self->sorted [i - 1];
        self->sorted [i] = self->acc [j];
    }
    double a = self->sorted [(k - 1) / 2];
    for (*ref_j = 0; self->acc [*ref_j] != a; (*ref_j)++)
        ;
    return a;
}

//  The share of held-out samples that input j scores unlike input r (one
//  right, the other wrong): the variance of their paired difference.
static double
s_disagreement (const gc_validate_t *self, size_t j, size_t r)
{
    size_t n = self->held->n, d = 0;
    const uint8_t *a = self->hit + j * n, *b = self->hit + r * n;
    for (size_t i = 0; i < n; i++)
        d += a [i] != b [i];
    return (double) d / (double) n;
}

//  Relative test: the margin above the inputs' median running deficit past
//  which a neighbour starts to lose weight, in standard errors of the
//  difference of two running deficits on B held-out samples.
#define S_REL_SE 2.0
//  The relative test's running mean: over about this many validations (a
//  longer memory than the absolute test's, for a smaller standard error:
//  honest models disagree on 10-20 % of 64 held-out samples, so one
//  validation cannot tell a 5 % shortfall from noise; an attacker it flags
//  keeps being scored, so it stays flagged only while it stays worse).
//  Measured on the malicious ring: 10 let dissensus back in as the honest
//  models converged (docs/RESULTS.md).
#define S_REL_HORIZON 30.0

//  Copies of the own model (s_copies): a neighbour whose running share of
//  held-out samples scored unlike the own model stays under S_COPY, after
//  at least S_COPY_SEEN validations (one validation of B = 64 samples
//  scores an honest model that disagrees on 5 % alike on all of them 4 %
//  of the time).
#define S_COPY 0.02
#define S_COPY_SEEN 5

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

//  The margin t of the relative test (gc_validate.h). The noise is that of a
//  paired difference on the same B samples: its variance is the share of
//  samples the two models score differently, not two binomials'. The
//  disagreement is the honest level's (a lower median over the inputs), so
//  that an attacker cannot widen its own margin by disagreeing more. The
//  skew floor is what heterogeneous data needs: an honest neighbour with
//  other classes falls short on a skewed peer's samples by up to about its
//  label mix's distance from uniform (traced: 0.24-0.72 of it on the torus,
//  Dirichlet 0.5), and no attacker can move the peer's own labels.
double
gc_validate_margin (double a, size_t b_samples, double disagree, double skew, uint64_t n_val)
{
    double n = (double) b_samples, b = 1.0 / S_REL_HORIZON;
    double acc = fmax (a, 1.0 / n), d = fmax (disagree, 1.0 / n);
    double shrink = fmax (1.0 / (double) (n_val ? n_val : 1), b / (2.0 - b));
    double se = sqrt (2.0 * d * shrink / n) / acc;
    return fmax (S_REL_SE * se, skew);
}

double
gc_validate_skew (const uint8_t *y, size_t n, int classes)
{
    if (!n || classes < 2)
        return 0.0;
    size_t c = (size_t) classes;
    size_t *count = calloc (c, sizeof *count);
    if (!count)
        return 1.0;             /* unknown: the loosest floor, never a stricter test */
    for (size_t i = 0; i < n; i++)
        if (y [i] < c)
            count [y [i]]++;
    double tv = 0;
    for (size_t k = 0; k < c; k++)
        tv += fabs ((double) count [k] / (double) n - 1.0 / (double) c);
    free (count);
    return 0.5 * tv;
}

void
gc_validate_set_labels (gc_validate_t *self, const gc_dataset_t *train)
{
    if (self && train)
        self->skew = gc_validate_skew (train->y, train->n, train->n_classes);
}

//  The lower median over the call's inputs of a running statistic (per
//  slot, and the own model's own), suspects left out (s_suspects): an
//  honest level while honest inputs are at least half (own counted), as on
//  the malicious ring (own + 2 honest + 2 Byzantine), and so never above
//  the largest honest value.
static double
s_lower_median (gc_validate_t *self, const int *slot, const bool *suspect, size_t k,
                const double *per_slot, double own)
{
    size_t m = 0;
    for (size_t j = 0; j < k; j++) {
        bool nb = s_is_slot (self, slot [j]);
        if ((!nb && j) || (j && suspect && suspect [j]))
            continue;
        double v = nb ? per_slot [slot [j]] : own;
        size_t i = m++;
        for (; i > 0 && self->sorted [i - 1] > v; i--)
            self->sorted [i] = self->sorted [i - 1];
        self->sorted [i] = v;
    }
    return m ? self->sorted [(m - 1) / 2] : 0.0;
}

//  The suspects to leave out of the relative test's medians (else NULL):
//  only when they are at least half of the peer's neighbours (its slots,
//  not this call's inputs, which validation's own cuts shrink); a minority
//  cannot set a median anyway. Not out of the reference accuracy A: there,
//  measured, leaving them out moved the upper median of what was left up
//  (mimic on the 4x4 torus: -0.4 points on Dirichlet 0.5, seed 2, with one
//  suspect of four left out; on Dirichlet 0.1, seed 3, a peer with two
//  suspects of four cut its honest neighbours and fell to chance).
static const bool *
s_suspects (const gc_validate_t *self, const int *slot, const bool *suspect, size_t k)
{
    size_t sus = 0;
    for (size_t j = 1; suspect && j < k; j++)
        sus += s_is_slot (self, slot [j]) && suspect [j];
    return sus && 2 * sus >= self->n_slots ? suspect : NULL;
}

//  leave[j] = suspect[j] (none: NULL), or input j a copy of the own model: it
//  scores the held-out samples as the own model does, so it is the own
//  model's vote again, not an honest level of its own. Two attackers that
//  send the peer's model back with noise (the stealth attack on the
//  malicious ring) are three of five inputs with the own model, and set
//  the medians to the own model's deficit, under which the honest
//  neighbours fall and are cut (docs/ALGORITHMS.md). Honest copies (models
//  converged at the end of a schedule) lose no weight: their deficit is the
//  own model's, which stays in the medians. What it gives away: with honest
//  copies and attackers at half, the medians are the own model's and the
//  attackers', and attackers somewhat short of it are no longer cut by this
//  test (test_copies_leave_the_levels); the two cases look alike here.
static const bool *
s_copies (const gc_validate_t *self, const int *slot, const bool *suspect, size_t k, bool *leave)
{
    for (size_t j = 0; j < k; j++) {
        bool nb = j && s_is_slot (self, slot [j]);
        size_t s = nb ? (size_t) slot [j] : 0;
        leave [j] = (suspect && suspect [j])
               || (nb && self->seen [s] >= S_COPY_SEEN && self->own_dis [s] < S_COPY);
    }
    return leave;
}

//  Score the inputs: the running mean of their relative accuracy deficit
//  against the reference accuracy ref_a, and from it each neighbour's
//  factor: the lesser of the absolute test (LO, HI) and the relative one
//  (a deficit beyond the inputs' median by more than the margin).
static void
s_score (gc_validate_t *self, const int *slot, const bool *suspect, size_t k, double ref_a,
         size_t ref_j)
{
    bool rel = self->cfg.relative;
    for (size_t j = 0; j < k; j++) {
        bool nb = s_is_slot (self, slot [j]);
        if (!nb && j)
            continue;
        //  no input better than chance on our samples says nothing yet
        double r = ref_a > 0 ? fmax (0.0, (ref_a - self->acc [j]) / ref_a) : 0.0;
        double d = rel ? s_disagreement (self, j, ref_j) : 0.0;
        if (nb) {
            size_t s = (size_t) slot [j];
            uint64_t n = ++self->seen [s];
            self->excess [s] = s_running (self->excess [s], r, n, S_HORIZON);
            self->rel_excess [s] = s_running (self->rel_excess [s], r, n, S_REL_HORIZON);
            self->disagree [s] = s_running (self->disagree [s], d, n, S_REL_HORIZON);
            if (rel)
                self->own_dis [s] = s_running (self->own_dis [s], s_disagreement (self, j, 0), n,
                                               S_REL_HORIZON);
        }
        else {
            uint64_t n = ++self->own_seen;
            self->own_rel = s_running (self->own_rel, r, n, S_REL_HORIZON);
            self->own_disagree = s_running (self->own_disagree, d, n, S_REL_HORIZON);
        }
    }
    //  the medians and margins only when the relative test is on
    bool leave [k];
    suspect = rel ? s_suspects (self, slot, s_copies (self, slot, suspect, k, leave), k) : NULL;
    double ref = rel ? s_lower_median (self, slot, suspect, k, self->rel_excess, self->own_rel) : 0.0;
    double dis = rel ? s_lower_median (self, slot, suspect, k, self->disagree, self->own_disagree)
                     : 0.0;
    for (size_t j = 1; j < k; j++) {
        if (!s_is_slot (self, slot [j]))
            continue;
        size_t s = (size_t) slot [j];
        double f = s_ramp (self->cfg.lo, self->cfg.hi, self->excess [s]);
        if (rel) {
            double t = gc_validate_margin (ref_a, self->held->n, dis, self->skew, self->seen [s]);
            double e = self->rel_excess [s], g = s_ramp (ref + t, ref + 2.0 * t, e);
            //  one it cut comes back only at full weight, not up the ramp:
            //  what an attacker that keeps its deficit just past the margin
            //  gets is none, not a share (docs/ALGORITHMS.md)
            if (self->out [s] && e > ref + t)
                g = 0.0;
            self->out [s] = g == 0.0;
            f = fmin (f, g);
        }
        self->factor [s] = f;
    }
}

bool
gc_validate_weigh (gc_validate_t *self, gc_model_t *model, const float *const *x,
                   const int *slot, const bool *suspect, double *w, size_t k)
{
    if (!self || !self->held || !self->held->n || k < 2)
        return false;
    //  one draw per call whether or not it validates: the schedule depends
    //  on the seed and the call count only
    bool run = gc_rng_below (&self->rng, self->cfg.every) == 0;
    size_t ref_j = 0;
    if (run && s_reserve (self, k) == 0) {
        double a = s_accuracies (self, model, x, k, &ref_j);
        s_score (self, slot, suspect, k, a, ref_j);
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
