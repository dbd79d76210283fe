/*  gc_robust_guard — self-centred clipping, own-step radius, consistency history.

    Why each part (docs/ALGORITHMS.md, "guard", has the exact rule):
    - Self-centred clipping (He, Karimireddy, Jaggi 2022, ClippedGossip)
      bounds what any neighbour moves the peer in one round by w_j tau.
    - The radius follows the peer's own step (the norm of own_t - out_{t-1},
      the local SGD update when gamma = 1), which no neighbour controls: a
      Byzantine majority can neither inflate it (ALIE z = 10, IPM) nor
      shrink it to cut the peer off, unlike a radius from neighbour
      distances.
    - Clipping alone leaks: an attacker that pushes the same way every
      round still moves the peer by w_j tau per round, and that adds up.
      Honest deviations from the peer change direction from round to round
      (the peer moves toward them, their own noise is fresh), so the
      average of a neighbour's clipped deviation over the last rounds is
      much shorter than the average of its norms; an attacker's is not.
      Their ratio rho (in [0, 1] by the triangle inequality) is a
      direction-consistency statistic that needs no scale: above rho_lo the
      neighbour's weight falls linearly to zero at rho_hi, and the weight
      it loses goes to the neighbours kept (s_redist; with `:self` it stays
      on the peer's own model, for ablation).
    - Sign balance and direction catch what stays inside the honest spread:
      ALIE's mu - z sigma lies below the peer in most coordinates, and
      dissensus points away from the neighbours' median (constants below).
    - The median-sign test catches the small-z ALIE that the sign balance
      misses: measured against the neighbours' coordinate-wise median
      rather than against the peer (whose own deviation drowns a shift of
      0.25 sigma), and relative to the other neighbours' balances, a model
      shifted the same way in every coordinate stands out at z = 0.1.
    - The stillness test catches a neighbour that replays old models: an
      honest model moves every round it trains, a stale or replayed one
      does not (mimic's stale pair bounces two first-round models).
    - The low-consistency test catches a push whose direction changes
      every round (the stealth attack): it averages out of its own running
      mean, while an honest neighbour's offset drifts slowly.
    - The drift test catches the steady part of such a push: the running
      mean of a neighbour's deviation, read at a fixed coordinate sample,
      leans one way in most coordinates when the push keeps a direction
      under its noise, while an honest offset has no preferred sign.
    - The follow test catches a model made from the peer's own: a neighbour
      whose movement carries the peer's fresh SGD noise of this very call
      (dissensus's 2 own - mu, stealth's own + noise) built it from the
      peer's model, which no honest neighbour has yet. It needs no
      majority, so it holds where half of the neighbours attack.
    - The far test catches a neighbour that stays many radii away while
      the others are within about one: clipping makes it a push of w tau
      per round, and a far model (sign flip's -mu) pushes the same way
      every round, which on heterogeneous data the consistency test no
      longer tells from honest neighbours' steady offsets.
      Each test can be switched off alone (`:nosign`, `:nodir`, `:nomed`,
      `:nostill`, `:nofast`, `:noecho`, `:nolow`, `:nodrift`, `:nofollow`, `:nofar`)
      for ablation. */
#include "gc_robust_guard.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gc_robust_rule.h"

//  Calls a new neighbour needs before its history counts: fewer rounds of
//  averaging give a ratio close to 1 for honest neighbours too (the test is
//  relative to the other neighbours, whose ratios are inflated alike).
#define S_WARMUP 20
//  Running norm of the own step: average over about this many calls.
#define S_STEP_HORIZON 10.0
//  History entries kept at most (least recently seen evicted first).
#define S_MAX_ENTRIES 4096
//  Lowest reference consistency of the consistency test (pass 2 of
//  gc_robust_guard_run), and of the low-consistency test. Why the first is
//  higher: attackers whose pushes wander (consistency about 0.3) and hold
//  half of a peer's neighbours (the malicious ring) set the lower median;
//  from a floor of 0.35 the honest neighbours' 0.58 - 0.63 (traced there,
//  stealth:3:0.3:balanced, seed 1, call 25) counted as too consistent and
//  lost most of their weight. From 0.5 they keep it, and a steady push
//  (ALIE's, near 1) is still cut from 0.65 on.
#define S_RHO_FLOOR 0.5
#define S_LOW_FLOOR 0.35
//  Sign balance: an honest neighbour's deviation from the peer is about as
//  often positive as negative coordinate by coordinate; ALIE's mu - z sigma
//  is not (a fraction Phi(z) of its coordinates lie below the peer's). The
//  neighbour's weight falls from 1 at skew S_SKEW_LO to 0 at S_SKEW_HI, the
//  fraction averaged over about S_SIGN_HORIZON calls.
#define S_SKEW_LO 0.1
#define S_SKEW_HI 0.2
#define S_SIGN_HORIZON 10.0
//  Median sign: the fraction of its coordinates (off the median) in which a
//  neighbour lies above the neighbours' coordinate-wise median, minus 1/2,
//  averaged like the sign balance; its excess over the median of those
//  values (the other neighbours' level, which an attacker in the median
//  shifts for everyone alike) takes the weight from 1 at S_MED_LO to 0 at
//  S_MED_HI. Measured on the 4x4 torus (600 rounds, constant lr, seed 1):
//  honest neighbours at most 0.041 (iid and Dirichlet 0.5, no attack) and
//  0.057 beside an attacker; ALIE z = 0.2 at 0.105 - 0.2 (mean 0.16).
//  Like the direction test it counts only while the neighbours it flags
//  hold less than half of the neighbours' weight (an honest minority
//  would be the outlier).
#define S_MED_LO 0.06
#define S_MED_HI 0.12
//  Direction: honest deviations share the pull toward the honest mean, so
//  their cosine with the neighbours' coordinate-wise median (minus own) is
//  positive; dissensus pushes the other way. Weight 1 above S_COS_HI, 0
//  below S_COS_LO (the cosine averaged like the sign balance).
//  The low-consistency test (step 4): a neighbour whose consistency is
//  under S_LOW_HI x ref (the lower median floored at S_LOW_FLOOR) loses
//  weight linearly, all of it at S_LOW_LO x ref.
//  Why: an honest neighbour's offset from the own model drifts slowly, so
//  its consistency sits near the others' (0.64-0.88 on the 4x4 torus,
//  Dirichlet 0.5, constant lr, no two more than 0.25 apart); a push that
//  changes direction every round (the stealth attack: pure noise at the
//  radius costs 2 points there) averages out of its running mean, 0.28 at
//  stealth's RHO = 0.3 (docs/RESULTS.md, "The stealth attack").
#define S_LOW_LO 0.5
#define S_LOW_HI 0.7
//  Drift (step 4): the running mean of a neighbour's clipped deviation,
//  read at a fixed sample of coordinates, is as often positive as negative
//  for an honest neighbour (the offset between two honest models has no
//  preferred sign), but not for a push that keeps one direction under
//  fresh noise: stealth's RHO part along -sigma is negative in every
//  coordinate, and the noise that hides it from the per-call sign balance
//  averages out of the running mean. |fraction above 0 - 1/2|, traced
//  every 50 calls (docs/RESULTS.md, "The drift test"): honest neighbours at
//  most 0.065 without attack (the 4x4 torus on Dirichlet 0.5 and 0.1, the
//  ring, the exponential graph; constant lr), stealth:3:0.3 at least 0.34. Weight 1 below S_DRIFT_LO, 0 from S_DRIFT_HI; like the
//  sign balance it needs no majority (an honest offset is balanced
//  whatever the others do).
//  With fewer coordinates than S_P in the sample, the cut starts no lower
//  than S_DRIFT_Z standard errors of a balanced sample's fraction (0.5 /
//  sqrt(n): 0.016 at n = 1024, 0.0625 at n = 64), so that the sampling
//  noise of a small vector cuts no one.
#define S_DRIFT_LO 0.15
#define S_DRIFT_HI 0.25
#define S_DRIFT_Z 4.0
#define S_COS_LO -0.15
#define S_COS_HI 0.05
//  Stillness: a neighbour whose model stops moving is not training, whatever
//  it claims (a stale or replayed model: mimic's stale pair bounces two
//  first-round models back and forth). Its movement is the smaller of the
//  sketch distances to its model one and two measured calls ago (two: a pair
//  alternating between two models moves each call), over the peer's own
//  step of the same call (not its running norm, which lags a decaying
//  learning rate: at the end of a cosine schedule honest neighbours fell
//  under 0.05 of it), averaged like the sign balance. Traced (a scratch
//  build with a print) on the 4x4 torus (Dirichlet 0.5, 600 rounds, constant lr, seed 1, from round 50):
//  honest neighbours 0.30 - 0.35 on average, never under 0.077, with and
//  without mimic; its stale pair at most 0.00003. Weight 1 above S_STILL_HI, 0 below
//  S_STILL_LO; a neighbour below S_STILL_HI also leaves the statistics the
//  other tests compare against (the median, the reference levels).
#define S_STILL_LO 0.02
#define S_STILL_HI 0.05
#define S_STILL_WARMUP 4
//  Speed: the opposite of stillness. An honest model moves by its own SGD
//  step and its mix, call after call about as far as the other neighbours'
//  (0.2 - 0.7 own steps on average, traced on the torus, the ring and
//  Dirichlet 0.1; a neighbour's running movement at most 3.4 times the
//  neighbours' median without attack). A neighbour whose model moves more
//  than S_FAST times the neighbours' median movement in most calls is not
//  training: realistic dissensus between two colluders (each attacks the
//  other's replica, which feeds its own mean) doubles its distance every
//  call, and clipping alone leaves it a push of w tau per round in a
//  direction that hardly changes. Each measured call adds whether the
//  movement exceeded S_FAST x the median of the previous call, with weight
//  S_FAST_B from the first call on (one jump, a resynchronised replica,
//  adds S_FAST_B; a run of m adds 1 - (1 - S_FAST_B)^m); weight 1 below
//  S_FAST_LO (three in a row), 0 above S_FAST_HI (seven).
#define S_FAST 8.0
#define S_FAST_B 0.1
#define S_FAST_LO 0.25
#define S_FAST_HI 0.5
//  Echo: a neighbour that sends the peer's own model of the last call back
//  to it (mimic, when the peer it copies is its victim too) adds weight to
//  the peer's past instead of news from elsewhere: the peer mixes less and
//  drifts toward its own data. Its distance to the peer's own model of the
//  last call, over this call's own step, averaged like the stillness: an
//  exact copy measures 1e-4 (sketch rounding); honest neighbours at least
//  0.67 in single calls (traced without attack on the torus, iid and
//  Dirichlet 0.1 and 0.5, the ring, a cosine schedule). Weight 0 below
//  S_ECHO_LO, 1 above S_ECHO_HI, counted after S_STILL_WARMUP measurements.
#define S_ECHO_LO 0.1
#define S_ECHO_HI 0.2
//  Follow: the running regression coefficient of a neighbour's movement
//  (its sketch against its sketch at the last measured call) on the
//  innovation of the peer's own step (s_innovation: the part of the step
//  that the last step, the running mean and the neighbours' last
//  deviations do not explain, which is the batch noise, new every call) of
//  this call and of the last (lags 0 and 1: an attacker builds on the
//  peer's model as published, this round's or the last's), sum <movement,
//  innovation> / sum |innovation|^2 over about S_FOL_HORIZON measured
//  calls. An honest neighbour mixed the peer's model of the last call at
//  most, with its weight w times its clip factor: about w c at lag 1.
//  Dissensus, 2 own - mu, has about 2 at its lag. Traced on the malicious
//  ring, Dirichlet 0.5, seed 1 (docs/research/guard-validate-trace.patch
//  prints it, less the standard errors): honest -0.02 to 0.32, dissensus
//  0.67 - 1.09 at call 25 and 0.71 - 1.56 after (early on the mean
//  gradient moves and the innovation holds some of it). Weight 1 at a
//  coefficient (less S_FOL_Z standard errors) up to S_FOL_LO, 0 from
//  S_FOL_HI, counted after S_FOL_WARMUP measured calls.
#define S_FOL_LAGS 2
#define S_INNOV_HORIZON 10.0
#define S_FOL_HORIZON 20.0
#define S_FOL_WARMUP 6
#define S_FOL_Z 3.0
#define S_FOL_LO 0.5
#define S_FOL_HI 0.9
//  Far: the running mean of a neighbour's distance over the radius tau
//  (capped at S_FAR_CAP: one outlying call moves the mean by at most a
//  tenth of it), against R, the lower median of the neighbours' (floored
//  at 1: within the radius, all are near). Weight 1 up to S_FAR_LO x R, 0
//  from S_FAR_HI x R, counted after S_FAR_WARMUP measured calls and only
//  while the neighbours it flags hold less than half of the neighbours'
//  weight (with an honest minority the median is the attackers'). Traced
//  without attack (docs/RESULTS.md, "The far test"; every call, 4x4 torus
//  iid and Dirichlet 0.5 and 0.1, the malicious ring, the CNN): honest
//  neighbours at most 2.5 R, but for the CNN on Dirichlet 0.5, seed 3,
//  where some reached 5.5 R for about 30 calls while the follow test
//  still cut every honest neighbour early on (a partial cut; the run ended
//  as with `:nofar`; 0.9 R since the follow level); sign flip 10 - 64 R on
//  the CNN, Dirichlet 0.5, where the consistency test let it shrink every
//  model to 0.45 accuracy. LO 6 and HI 12 with the upper median for R
//  leave that honest case alone but cut sign flip later: seed 3 ended 0.6
//  points lower.
#define S_FAR_CAP 64.0
#define S_FAR_LO 4.0
#define S_FAR_HI 8.0
#define S_FAR_WARMUP 4
//  The neighbours' share of the weight below which the radius grows
//  (s_share_gain), and the most it grows (a peer with one neighbour of
//  weight 1/1024 would otherwise follow it without any bound).
#define S_SHARE (2.0 / 3.0)
#define S_SHARE_GAIN_MAX 8.0

typedef struct {
    uint64_t key;
    uint64_t seen;          /* calls that updated it */
    uint64_t last;          /* call number of the last update */
    double   a;             /* running mean of ||u||, u the clipped deviation */
    double   up;            /* running mean of the fraction of coordinates with u > 0 */
    double   cos;           /* running mean of the cosine of u with the neighbours' median */
    double   mup;           /* running mean of the fraction of coordinates above that median */
    double   still;         /* running mean of its movement over the own step */
    uint64_t still_n;       /* calls that measured it */
    double   fast;          /* running fraction of those that moved over S_FAST x the median */
    double   echo;          /* running mean of its distance to the last call's own, over the step */
    uint64_t echo_n;        /* calls that measured it */
    uint64_t have_p;        /* previous sketches held: 0, 1 or 2 */
    double   drift;         /* its drift at the last call (s_drift) */
    double   h;             /* its weight factor at the last call (1: none yet) */
    double   far;           /* running mean of its distance over the radius, capped */
    uint64_t far_n;         /* calls that measured it */
    //  Per lag L (S_FOL_LAGS): running means of <its movement, the own step's
    //  innovation L calls ago>, of |that innovation|^2 and of |its movement|^2
    //  over the calls that measured them, and their count.
    double   fol_num [S_FOL_LAGS], fol_den [S_FOL_LAGS], fol_mv2 [S_FOL_LAGS];
    uint64_t fol_n [S_FOL_LAGS];
} s_entry_t;

#define S_P GC_ROBUST_SKETCH

typedef struct {
    double   *d2, *dot;             /* the scan's sums (gc_robust_guard_sums_t) */
    int64_t  *pos, *nz, *above, *below;
    uint32_t *big;
    double   *mup;                  /* per input: its running median-sign fraction - 1/2, or NAN */
    float    *a;                    /* the output's factors */
    float    *sx;                   /* n x S_P: each input's sketch of x_j - own */
    float   **sxp;                  /* per input: its row of sx, or NULL (no history) */
    size_t   *entry;                /* history entry per input, or SIZE_MAX */
    double   *g;                    /* per input: its stillness weight before this call */
    double   *drift;                /* per input: its drift (s_drift; 0: not measured) */
    float    *basis;                /* n x S_P: the follow test's orthonormal directions */
    bool     *lvl;                  /* per input: it counts in the levels the tests compare
                                       against (neither still nor drifting at the last call) */
    const float **nb_blk;           /* the scan's scratch */
} s_scratch_t;

struct gc_robust_guard_t {
    gc_robust_guard_cfg_t cfg;
    size_t    d;            /* dimension the state belongs to; 0 = none yet */
    float     sprev [S_P];  /* sketch of the previous output */
    float     sown [S_P];   /* sketch of this call's own vector */
    float     sown_prev [S_P];  /* sketch of the last call's own vector (have_prev) */
    float     sout [S_P];   /* sketch of this call's output */
    float     gprev [S_P];  /* the last call's own step, sown - sprev (have_gprev) */
    float     ebar [S_P];   /* running mean of the step's unpredicted part (s_innovation) */
    double    ar_num, ar_den;   /* running means of <step, last step> and |last step|^2 */
    uint64_t  ar_n;
    bool      have_gprev;
    float     innov [S_FOL_LAGS][S_P];  /* the own step's innovation, this call and the last */
    double    innov2 [S_FOL_LAGS];      /* |innov|^2 */
    bool      have_innov [S_FOL_LAGS];
    size_t    sample [S_P]; /* the drift sample's coordinates (n_sample of them, set with d) */
    float     own_s [S_P];  /* this call's own vector at those coordinates */
    size_t    n_sample;
    uint8_t  *sign;         /* d: the sketch's sign per coordinate (1: minus) */
    const float **nb;       /* the neighbours' inputs (own left out), n_cap */
    bool      have_prev;
    double    step_avg;     /* running norm of own - prev_out */
    double    move_med;     /* the neighbours' median running movement at the last call (0: none) */
    double    drift_lo;     /* the drift from which a neighbour loses weight (set with d) */
    double    fol_level;    /* the neighbours' follow level at the last call (s_follow_level) */
    uint64_t  step_n;
    uint64_t  calls;
    s_entry_t *entries;
    float    *m;            /* cap x S_P: sketches of the running means of u, row per entry */
    float    *px;           /* cap x 2 S_P: sketches of its model one and two measured calls ago */
    float    *ms;           /* cap x S_P: running means of c (x_j - own) at the drift sample */
    size_t    n_entries, cap;
    s_scratch_t sc;         /* per input of one call, n_cap of each */
    size_t    n_cap;
};

gc_robust_guard_t *
gc_robust_guard_new (const gc_robust_guard_cfg_t *cfg)
{
    gc_robust_guard_t *self = calloc (1, sizeof *self);
    if (self)
        self->cfg = *cfg;
    return self;
}

static void
s_reset (gc_robust_guard_t *self)
{
    free (self->sign);
    self->sign = NULL;
    free (self->nb);
    self->nb = NULL;
    s_scratch_t *sc = &self->sc;
    void *bufs [] = { sc->d2, sc->dot, sc->pos, sc->nz, sc->above, sc->below, sc->big,
                      sc->mup, sc->a, sc->sx,
                      sc->sxp, sc->entry, sc->g, sc->drift, sc->lvl, (void *) sc->nb_blk,
                      sc->basis };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        free (bufs [i]);
    memset (sc, 0, sizeof *sc);
    self->n_cap = 0;
    free (self->entries);
    free (self->m);
    free (self->px);
    free (self->ms);
    self->entries = NULL;
    self->m = NULL;
    self->px = NULL;
    self->ms = NULL;
    self->n_entries = self->cap = 0;
    self->have_prev = false;
    self->step_avg = 0;
    self->step_n = 0;
    self->move_med = 0;
    memset (self->ebar, 0, sizeof self->ebar);
    self->ar_num = self->ar_den = 0;
    self->ar_n = 0;
    self->have_gprev = false;
    memset (self->have_innov, 0, sizeof self->have_innov);
    self->d = 0;
}

void
gc_robust_guard_destroy (gc_robust_guard_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    s_reset (*self_p);
    free (*self_p);
    *self_p = NULL;
}

static bool
s_history_on (const gc_robust_guard_t *self)
{
    return self->cfg.rho_lo < 1.0;
}

//  The index of key's entry, or SIZE_MAX when it has none.
static size_t
s_lookup (const gc_robust_guard_t *self, uint64_t key)
{
    for (size_t i = 0; i < self->n_entries; i++)
        if (self->entries [i].key == key)
            return i;
    return SIZE_MAX;
}

//  The entry of key, created (or the stalest one recycled) if new; NULL
//  when no memory.
static s_entry_t *
s_entry (gc_robust_guard_t *self, uint64_t key, float **row)
{
    size_t d = S_P;
    size_t found = s_lookup (self, key);
    if (found != SIZE_MAX) {
        *row = self->m + found * d;
        return &self->entries [found];
    }
    size_t at = self->n_entries;
    if (at == self->cap && self->cap < S_MAX_ENTRIES) {
        size_t cap = self->cap ? 2 * self->cap : 8;
        cap = cap < S_MAX_ENTRIES ? cap : S_MAX_ENTRIES;
        s_entry_t *e = realloc (self->entries, cap * sizeof *e);
        if (!e)
            return NULL;
        self->entries = e;
        float *m = realloc (self->m, cap * d * sizeof *m);
        if (!m)
            return NULL;
        self->m = m;
        float *px = realloc (self->px, cap * 2 * d * sizeof *px);
        if (!px)
            return NULL;
        self->px = px;
        float *ms = realloc (self->ms, cap * d * sizeof *ms);
        if (!ms)
            return NULL;
        self->ms = ms;
        self->cap = cap;
    }
    if (at == self->cap) {
        at = 0;
        for (size_t i = 1; i < self->n_entries; i++)
            if (self->entries [i].last < self->entries [at].last)
                at = i;
    }
    else
        self->n_entries++;
    self->entries [at] = (s_entry_t) { .key = key, .h = 1.0 };
    *row = self->m + at * d;
    memset (*row, 0, d * sizeof **row);
    memset (self->ms + at * d, 0, d * sizeof *self->ms);
    return &self->entries [at];
}

//  Inserts v into the ascending a [0 .. m) (room for one more); the rule's
//  medians are over a handful of inputs, where this is the cheap sort.
static void
s_sorted_insert (double *a, size_t m, double v)
{
    size_t i = m;
    for (; i > 0 && a [i - 1] > v; i--)
        a [i] = a [i - 1];
    a [i] = v;
}

//  Radius before any own step is known: the median distance to the peer
//  over the inputs (the peer's own at 0 among them), which an honest
//  majority of the inputs bounds by an honest distance.
static double
s_median_distance (const double *d2, size_t n, double *tmp)
{
    for (size_t i = 0; i < n; i++)
        s_sorted_insert (tmp, i, d2 [i]);
    return sqrt (tmp [(n - 1) / 2]);
}

//  An input that differs from the peer's model by 2^59 or more in some
//  coordinate gets clip factor 0 (gc_robust_internal.h).
#define S_HUGE_BITS GC_ROBUST_GUARD_HUGE_BITS

//  The per-input scratch of one call, grown with n.
static int
s_reserve (gc_robust_guard_t *self, size_t n)
{
    if (self->n_cap >= n)
        return 0;
    s_scratch_t *sc = &self->sc;
    void **bufs [] = { (void **) &sc->d2, (void **) &sc->dot, (void **) &sc->pos, (void **) &sc->nz,
                       (void **) &sc->above, (void **) &sc->below,
                       (void **) &sc->big, (void **) &sc->mup, (void **) &sc->a, (void **) &sc->sx,
                       (void **) &sc->sxp, (void **) &sc->entry, (void **) &sc->g,
                       (void **) &sc->drift, (void **) &sc->lvl, (void **) &sc->nb_blk,
                       (void **) &self->nb, (void **) &sc->basis };
    size_t sizes [] = { sizeof (double), sizeof (double), sizeof (int64_t), sizeof (int64_t),
                        sizeof (int64_t), sizeof (int64_t),
                        sizeof (uint32_t), sizeof (double), sizeof (float), S_P * sizeof (float),
                        sizeof (float *), sizeof (size_t), sizeof (double), sizeof (double),
                        sizeof (bool), sizeof (float *), sizeof (float *), S_P * sizeof (float) };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes [0]; i++) {
        void *p = realloc (*bufs [i], n * sizes [i]);
        if (!p)
            return -1;
        *bufs [i] = p;
    }
    self->n_cap = n;
    return 0;
}

//  The neighbours (own left out), whose coordinate-wise median the scan
//  forms: the direction the honest neighbours agree on while they are the
//  majority.
static size_t
s_neighbours (gc_robust_guard_t *self, const float *const *x, size_t n, const float *own)
{
    size_t kn = 0;
    for (size_t j = 0; j < n; j++)
        if (x [j] != own && self->sc.lvl [j])
            self->nb [kn++] = x [j];
    return kn;
}

//  A weight rising from 0 at v = lo to 1 at v = hi (the stillness and
//  echo tests: a statistic too small is what they cut).
static double
s_ramp_up (double v, double lo, double hi)
{
    return v >= hi ? 1.0 : fmax (0.0, (v - lo) / (hi - lo));
}

//  The stillness weight of an entry: 1 until it has a measured history.
static double
s_still_weight (const gc_robust_guard_t *self, const s_entry_t *e)
{
    if (!self->cfg.still_test || e->still_n < S_STILL_WARMUP)
        return 1.0;
    return s_ramp_up (e->still, S_STILL_LO, S_STILL_HI);
}

static double s_follow_weight (const gc_robust_guard_t *self, size_t j);

//  Each neighbour's history entry (by index: a new entry may move the rows).
static int
s_find_entries (gc_robust_guard_t *self, const float *const *x, size_t n, const float *own,
                const uint64_t *keys)
{
    s_scratch_t *sc = &self->sc;
    for (size_t j = 0; j < n; j++) {
        sc->entry [j] = SIZE_MAX;
        if (s_history_on (self) && x [j] != own) {
            float *row;
            s_entry_t *e = s_entry (self, keys ? keys [j] : (uint64_t) j, &row);
            if (!e)
                return -1;
            sc->entry [j] = (size_t) (e - self->entries);
        }
    }
    for (size_t j = 0; j < n; j++) {
        sc->sxp [j] = sc->entry [j] == SIZE_MAX ? NULL : sc->sx + j * S_P;
        const s_entry_t *e = sc->entry [j] == SIZE_MAX ? NULL : &self->entries [sc->entry [j]];
        sc->g [j] = e ? s_still_weight (self, e) : 1.0;
        sc->lvl [j] = sc->g [j] >= 1.0 && !(e && e->drift > self->drift_lo)
                   && s_follow_weight (self, j) >= 1.0;
    }
    return 0;
}

//  Update input j's history from the scan's sums and its clip factor c:
//  the sketch of the running mean, m <- (1 - b) m + b c S(x_j - own), whose
//  norm estimates the running mean's. Returns the consistency (-1: not
//  counted yet).
static double
s_history (gc_robust_guard_t *self, size_t j, double c, double dist, double med_norm,
           bool huge, double *skew, double *cosv)
{
    s_scratch_t *sc = &self->sc;
    s_entry_t *e = &self->entries [sc->entry [j]];
    e->seen++;
    e->last = self->calls;
    double b = 1.0 / fmin ((double) e->seen, self->cfg.horizon);
    double bs = 1.0 / fmin ((double) e->seen, S_SIGN_HORIZON);
    float keep = (float) (1.0 - b), take = (float) (b * c);
    float *m = self->m + sc->entry [j] * S_P;
    const float *sx = sc->sxp [j];
    double m2 = 0;
    for (size_t i = 0; i < S_P; i++) {
        m [i] = keep * m [i] + take * sx [i];
        m2 += (double) m [i] * (double) m [i];
    }
    double mnorm = sqrt (m2);
    double up = sc->nz [j] ? (double) sc->pos [j] / (double) sc->nz [j] : 0.5;
    double cosj = !huge && dist > 0 && med_norm > 0 ? sc->dot [j] / (dist * med_norm) : 0;
    e->cos = (1.0 - bs) * e->cos + bs * cosj;
    e->a = (1.0 - b) * e->a + b * c * dist;
    e->up = (1.0 - bs) * e->up + bs * up;
    int64_t off = sc->above [j] + sc->below [j];
    double mup = off ? (double) sc->above [j] / (double) off : 0.5;
    e->mup = (1.0 - bs) * e->mup + bs * mup;
    sc->mup [j] = e->mup - 0.5;
    *cosv = e->cos;
    *skew = fabs (e->up - 0.5);
    if (e->seen < S_WARMUP)
        return -1;
    double rho = e->a > 0 ? mnorm / e->a : 0;
    return isfinite (rho) ? rho : 1.0;
}

//  The drift sample for dimension d: S_P coordinates spread evenly over the
//  vector (all of them when d is smaller), and where the drift test's cut
//  starts for that many.
static void
s_drift_sample (gc_robust_guard_t *self, size_t d)
{
    self->n_sample = d < S_P ? d : S_P;
    for (size_t k = 0; k < self->n_sample; k++)
        self->sample [k] = d < S_P ? k : (size_t) (((2 * (uint64_t) k + 1) * d) / (2 * S_P));
    self->drift_lo = fmax (S_DRIFT_LO, S_DRIFT_Z * 0.5 / sqrt ((double) self->n_sample));
}

//  Input j's drift: the running mean of its clipped deviation c (x_j - own)
//  at the drift sample (own's values gathered once per call in own_s),
//  averaged like the consistency; returns |the fraction of them above 0 -
//  1/2|. Not the count sketch: its random signs would erase the
//  coordinates' signs, which are what this test reads.
static double
s_drift (gc_robust_guard_t *self, size_t j, const float *xj, double c)
{
    s_entry_t *e = &self->entries [self->sc.entry [j]];
    double b = 1.0 / fmin ((double) e->seen, self->cfg.horizon);
    float *ms = self->ms + self->sc.entry [j] * S_P;
    size_t pos = 0, nz = 0;
    for (size_t k = 0; k < self->n_sample; k++) {
        double v = (1.0 - b) * ms [k] + b * c * ((double) xj [self->sample [k]] - (double) self->own_s [k]);
        ms [k] = (float) v;
        pos += v > 0;
        nz += v != 0;
    }
    e->drift = nz && e->seen >= S_WARMUP ? fabs ((double) pos / (double) nz - 0.5) : 0.0;
    return e->drift;
}

//  Input j's movement since one and two measured calls ago (the smaller),
//  and its distance to the last call's own model, over this call's own
//  step `step` (0: none yet), into its entry's running means; then its
//  model's sketch, S x_j = S (x_j - own) + S own, becomes the newest
//  previous one. Called only for an input a message changed since the
//  last call: one that none did neither counts nor shifts.
static void
s_stillness (gc_robust_guard_t *self, size_t j, double step)
{
    s_scratch_t *sc = &self->sc;
    s_entry_t *e = &self->entries [sc->entry [j]];
    float *p1 = self->px + sc->entry [j] * 2 * S_P, *p2 = p1 + S_P;
    const float *sx = sc->sxp [j];
    double d1 = 0, d2 = 0, d0 = 0, fol [S_FOL_LAGS] = { 0 };
    for (size_t i = 0; i < S_P; i++) {
        float v = sx [i] + self->sown [i];
        double a = (double) v - (double) p1 [i], b = (double) v - (double) p2 [i];
        double o = (double) v - (double) self->sown_prev [i];
        for (int l = 0; l < S_FOL_LAGS; l++)
            fol [l] += a * (double) self->innov [l][i];
        d1 += a * a;
        d2 += b * b;
        d0 += o * o;
        p2 [i] = p1 [i];
        p1 [i] = v;
    }
    double echo = step > 0 ? sqrt (d0) / step : NAN;     /* step > 0: a last call */
    if (isfinite (echo)) {
        double be = 1.0 / fmin ((double) ++e->echo_n, S_SIGN_HORIZON);
        e->echo = (1.0 - be) * e->echo + be * echo;
    }
    if (e->have_p == 2 && step > 0) {
        double mv = sqrt (fmin (d1, d2)) / step;
        if (isfinite (mv)) {
            double bs = 1.0 / fmin ((double) ++e->still_n, S_SIGN_HORIZON);
            e->still = (1.0 - bs) * e->still + bs * mv;
            if (self->move_med > 0)
                e->fast = (1.0 - S_FAST_B) * e->fast + S_FAST_B * (mv > S_FAST * self->move_med);
        }
    }
    for (int l = 0; l < S_FOL_LAGS; l++)
        if (e->have_p >= 1 && self->have_innov [l] && isfinite (fol [l]) && isfinite (d1)) {
            double bf = 1.0 / fmin ((double) ++e->fol_n [l], S_FOL_HORIZON);
            e->fol_num [l] = (1.0 - bf) * e->fol_num [l] + bf * fol [l];
            e->fol_den [l] = (1.0 - bf) * e->fol_den [l] + bf * self->innov2 [l];
            e->fol_mv2 [l] = (1.0 - bf) * e->fol_mv2 [l] + bf * d1;
        }
    e->have_p += e->have_p < 2;
}

//  Input j's history entry when its speed counts (S_FAST): measured for
//  as many calls as the stillness test needs, and not still.
static const s_entry_t *
s_fast_entry (const gc_robust_guard_t *self, size_t j)
{
    const s_scratch_t *sc = &self->sc;
    if (sc->entry [j] == SIZE_MAX || !sc->lvl [j])
        return NULL;
    const s_entry_t *e = &self->entries [sc->entry [j]];
    return e->still_n >= S_STILL_WARMUP ? e : NULL;
}

//  Input j's history entry for a test that is on, or NULL (off, or no entry).
static const s_entry_t *
s_tested_entry (const gc_robust_guard_t *self, size_t j, bool on)
{
    size_t i = self->sc.entry [j];
    return on && i != SIZE_MAX ? &self->entries [i] : NULL;
}

//  The echo weight of input j's entry: 1 until measured S_STILL_WARMUP times.
static double
s_echo_weight (const gc_robust_guard_t *self, size_t j)
{
    const s_entry_t *e = s_tested_entry (self, j, self->cfg.echo_test);
    if (!e || e->echo_n < S_STILL_WARMUP)
        return 1.0;
    return s_ramp_up (e->echo, S_ECHO_LO, S_ECHO_HI);
}

//  An entry's follow coefficient at lag l, less S_FOL_Z of its standard
//  errors (0 until measured S_FOL_WARMUP times): a sketch's inner product
//  errs by about |a| |b| / sqrt(P) per call, so a neighbour that moves far
//  more than the peer's step (a peer with a tiny step) gets a noisy
//  coefficient that this keeps from counting.
static double
s_follow_coefficient (const s_entry_t *e, int l)
{
    if (e->fol_n [l] < S_FOL_WARMUP || !(e->fol_den [l] > 0))
        return 0.0;
    double n_eff = fmin ((double) e->fol_n [l], S_FOL_HORIZON);
    double se = sqrt (e->fol_mv2 [l] / e->fol_den [l] / ((double) S_P * n_eff));
    double beta = fabs (e->fol_num [l] / e->fol_den [l]) - S_FOL_Z * se;
    return isfinite (beta) ? beta : 0.0;
}

//  Input j's follow coefficient, the largest over the lags, and whether it
//  is counted (measured S_FOL_WARMUP times at some lag); -1 when not.
static double
s_follow_beta (const gc_robust_guard_t *self, size_t j)
{
    const s_entry_t *e = s_tested_entry (self, j, self->cfg.follow_test);
    double beta = -1;
    for (int l = 0; e && l < S_FOL_LAGS; l++)
        if (e->fol_n [l] >= S_FOL_WARMUP)
            beta = fmax (beta, fmax (0.0, s_follow_coefficient (e, l)));
    return beta;
}

//  The neighbours' follow level: the smallest of their counted
//  coefficients (at least 0), an honest one while any neighbour is honest.
//  Why: early in training every model moves with the mean gradient, which
//  the innovation still holds, and every honest neighbour reads as
//  following (the CNN on Dirichlet 0.5, seed 3: all of them at 0.78 from
//  call 9 on, cut for some 50 calls, 3 points lost without attack); an
//  attacker's model made from the peer's stands out of the level. Why the
//  smallest and not the lower median: on the malicious ring (two honest
//  neighbours of four) the larger honest coefficient can read high, and
//  with it as the level a ring peer of seed 2 (Dirichlet 0.5, dissensus)
//  kept its attackers and fell to chance.
static double
s_follow_level (const gc_robust_guard_t *self, const float *const *x, size_t n,
                const float *own, double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        double beta = x [j] != own ? s_follow_beta (self, j) : -1;
        if (beta >= 0)
            s_sorted_insert (tmp, m++, beta);
    }
    return m ? tmp [0] : 0.0;
}

//  The follow weight of input j: its coefficient's excess over the level.
static double
s_follow_weight (const gc_robust_guard_t *self, size_t j)
{
    double excess = s_follow_beta (self, j) - self->fol_level;
    if (excess <= S_FOL_LO)
        return 1.0;
    return fmax (0.0, (S_FOL_HI - excess) / (S_FOL_HI - S_FOL_LO));
}

//  Input j's distance over the radius, into its running mean (the far test).
static void
s_far_update (gc_robust_guard_t *self, size_t j, double dist, double tau)
{
    if (!(tau > 0))
        return;
    s_entry_t *e = &self->entries [self->sc.entry [j]];
    double b = 1.0 / fmin ((double) ++e->far_n, S_SIGN_HORIZON);
    e->far = (1.0 - b) * e->far + b * fmin (dist / tau, S_FAR_CAP);
}

//  Input j's entry when the far test counts it (on, measured often enough).
static const s_entry_t *
s_far_entry (const gc_robust_guard_t *self, size_t j)
{
    const s_entry_t *e = s_tested_entry (self, j, self->cfg.far_test);
    return e && e->far_n >= S_FAR_WARMUP ? e : NULL;
}

//  Input j's far where the far test's level reads it (a neighbour in the
//  levels, counted), else -1.
static double
s_far_of (const gc_robust_guard_t *self, const float *const *x, const float *own, size_t j)
{
    const s_entry_t *e = x [j] != own && self->sc.lvl [j] ? s_far_entry (self, j) : NULL;
    return e ? e->far : -1.0;
}

//  The far test's level R (the lower median of the counted neighbours' far
//  in the levels, at least 1), and whether the test counts this call: the
//  neighbours beyond S_FAR_LO x R hold less than half of the weight `all`
//  of the neighbours in the levels. 0 (off) when it does not count.
static double
s_far_level (const gc_robust_guard_t *self, const float *const *x, const double *w, size_t n,
             const float *own, double all, double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        double far = s_far_of (self, x, own, j);
        if (far >= 0)
            s_sorted_insert (tmp, m++, far);
    }
    double level = fmax (m ? tmp [(m - 1) / 2] : 0.0, 1.0), flagged = 0;
    for (size_t j = 0; j < n; j++)
        flagged += s_far_of (self, x, own, j) > S_FAR_LO * level ? w [j] : 0.0;
    return flagged < 0.5 * all ? level : 0.0;
}

//  The far weight of input j at level R (0: the test does not count).
static double
s_far_weight (const gc_robust_guard_t *self, size_t j, double level)
{
    const s_entry_t *e = level > 0 ? s_far_entry (self, j) : NULL;
    if (!e || e->far <= S_FAR_LO * level)
        return 1.0;
    return fmax (0.0, (S_FAR_HI - e->far / level) / (S_FAR_HI - S_FAR_LO));
}

//  The low-consistency weight of a consistency rho (-1: not counted yet)
//  against the reference ref: 1 from S_LOW_HI x ref up, 0 at S_LOW_LO x ref.
static double
s_low_weight (double rho, double ref)
{
    if (rho < 0 || rho >= S_LOW_HI * ref)
        return 1.0;
    return fmax (0.0, (rho / ref - S_LOW_LO) / (S_LOW_HI - S_LOW_LO));
}

static double
s_fast_weight (double fast)
{
    return fast <= S_FAST_LO ? 1.0 : fmax (0.0, (S_FAST_HI - fast) / (S_FAST_HI - S_FAST_LO));
}

//  The lower median of the neighbours' running movements (0: none
//  measured), the scale the next call's speed test compares against.
static double
s_move_median (const gc_robust_guard_t *self, size_t n, double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        const s_entry_t *e = s_fast_entry (self, j);
        if (e)
            s_sorted_insert (tmp, m++, e->still);
    }
    return m ? tmp [(m - 1) / 2] : 0.0;
}

//  The weight factor h of a neighbour from its consistency, direction and
//  sign balance (docs/ALGORITHMS.md, "guard", step 4).
static double
s_weight (const gc_robust_guard_t *self, double rho, double ref, bool direction, double cosv,
          double skew)
{
    double span = self->cfg.rho_hi - self->cfg.rho_lo, h = 1.0;
    if (rho >= 0) {
        double excess = rho - ref;
        h = span > 0 ? fmin (1.0, fmax (0.0, (self->cfg.rho_hi - excess) / span))
                     : (excess < self->cfg.rho_lo ? 1.0 : 0.0);
    }
    if (direction && cosv < S_COS_HI)
        h *= fmax (0.0, (cosv - S_COS_LO) / (S_COS_HI - S_COS_LO));
    if (self->cfg.sign_test && skew > S_SKEW_LO)
        h *= fmax (0.0, (S_SKEW_HI - skew) / (S_SKEW_HI - S_SKEW_LO));
    return h;
}

//  The sketch's sign of each coordinate, from a 32-bit mixer of its index
//  (so that the coordinates sharing a bucket get unrelated signs); the
//  kernels at AVX2 and up recompute it in registers.
static uint8_t *
s_signs (size_t d)
{
    uint8_t *sign = malloc (d ? d : 1);
    for (size_t i = 0; sign && i < d; i++) {
        uint32_t h = (uint32_t) i * 0x9e3779b1u;
        h ^= h >> 15;
        h *= 0x85ebca77u;
        h ^= h >> 13;
        sign [i] = (uint8_t) (h >> 31);
    }
    return sign;
}

//  The radius's gain for a peer whose neighbours hold the share `share` of
//  the (normalised) weight: 1 from S_SHARE up, S_SHARE / share below. Why:
//  a neighbour of weight w moves the peer by at most w tau per round, so a
//  peer with few neighbours (a leaf of the malicious ring holds 0.8 of its
//  own weight with Metropolis weights) would follow them by less than its
//  own SGD step and drift away from the graph (traced: leaves at 4 radii
//  from their neighbour, the no-attack ring 0.7 points below `mean`). At
//  S_SHARE and above (every peer of the 4x4 torus, the ring's honest peers,
//  also with both attackers cut) the radius is C x the own step as before.
static double
s_share_gain (double share)
{
    //  (a share of 2/3 summed from normalised weights may round just below)
    return share >= S_SHARE * (1 - 1e-9) ? 1.0
         : share > S_SHARE / S_SHARE_GAIN_MAX ? S_SHARE / share : S_SHARE_GAIN_MAX;
}

//  The factor on every neighbour's coefficient that gives the weight the
//  tests cut to the neighbours kept, in proportion to what they keep, so
//  that a peer which cuts an attacker still mixes as much with the others
//  (with `:self` the cut weight stays on the own model: a peer cutting one
//  of four mixes 3/5 with the rest instead of 3/4, and on heterogeneous
//  data the honest models drift apart; docs/RESULTS.md 1l). Exactly 1 when
//  nothing is cut (kept sums the same terms as share, in the same order).
//  At most S_REDIST_MAX: should the tests cut honest neighbours and keep an
//  attacker, its pull grows by that much at most, w_j x S_REDIST_MAX x tau.
#define S_REDIST_MAX 2.0

static double
s_redist (double share, double kept)
{
    return kept * S_REDIST_MAX > share ? share / kept : S_REDIST_MAX;
}

//  ||a - b|| over two sketches.
static double
s_sketch_distance (const float *a, const float *b)
{
    double sq = 0;
    for (size_t i = 0; i < S_P; i++) {
        double v = (double) a [i] - (double) b [i];
        sq += v * v;
    }
    return sqrt (sq);
}

//  The median-sign test: excess [j] = |mup_j - the median of the
//  neighbours' mup| (0 for an input without a history). Returns whether it
//  counts: only while the neighbours whose excess passes S_MED_LO hold less
//  than half of the neighbours' weight `all` (with an honest minority the
//  median level is the attackers'). Uses excess as the sort's scratch first.
static bool
s_median_sign (const double *mup, const float *const *x, const double *w, size_t n,
               const float *own, double all, double *excess)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
        if (x [j] != own && !isnan (mup [j]))
            s_sorted_insert (excess, m++, mup [j]);
    if (m == 0)
        return false;
    double level = 0.5 * (excess [(m - 1) / 2] + excess [m / 2]), flagged = 0;
    for (size_t j = 0; j < n; j++) {
        excess [j] = x [j] != own && !isnan (mup [j]) ? fabs (mup [j] - level) : 0.0;
        flagged += excess [j] > S_MED_LO ? w [j] : 0.0;
    }
    return flagged < 0.5 * all;
}

//  v less its components along the m orthonormal rows of basis (P floats each).
static void
s_remove_directions (const float *basis, size_t m, float *v)
{
    for (size_t k = 0; k < m; k++) {
        const float *u = basis + k * S_P;
        double dot = 0;
        for (size_t i = 0; i < S_P; i++)
            dot += (double) v [i] * (double) u [i];
        for (size_t i = 0; i < S_P; i++)
            v [i] -= (float) dot * u [i];
    }
}

//  v less its projection on the neighbours' deviations from the peer at the
//  last call (their sketches then, S x_j' - S own_{t-1}): whatever of the own
//  step those explain was known before this call, not its fresh noise. With
//  gamma = 1 the step is the local SGD update and loses almost nothing (a
//  few directions of P); where the peer's model is not its last output plus
//  a step (gamma < 1: it keeps part of the mix undone), the step holds part
//  of the last mix, which is made of those deviations, and an honest
//  neighbour's movement would read as following.
static void
s_project_out (gc_robust_guard_t *self, size_t n, float *v)
{
    s_scratch_t *sc = &self->sc;
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        if (sc->entry [j] == SIZE_MAX || self->entries [sc->entry [j]].have_p < 1)
            continue;
        const float *p1 = self->px + sc->entry [j] * 2 * S_P;
        float *b = sc->basis + m * S_P;
        double n0 = 0, nn = 0;
        for (size_t i = 0; i < S_P; i++) {
            b [i] = p1 [i] - self->sown_prev [i];
            n0 += (double) b [i] * (double) b [i];
        }
        s_remove_directions (sc->basis, m, b);
        for (size_t i = 0; i < S_P; i++)
            nn += (double) b [i] * (double) b [i];
        if (!isfinite (nn) || !(nn > 1e-6 * n0))
            continue;           /* zero, or within the directions already kept */
        float r = (float) (1.0 / sqrt (nn));
        for (size_t i = 0; i < S_P; i++)
            b [i] *= r;
        m++;
    }
    s_remove_directions (sc->basis, m, v);
}

//  The innovation of this call's own step (the follow test): the part of
//  the step g = sown - sprev that the last step does not predict, e = g -
//  a g', a the running regression coefficient of g on the last step g'
//  (momentum SGD makes g = m g' - lr grad: a is about m and e the fresh
//  gradient), less the running mean of e (the mean gradient): what is left
//  is the batch noise, new every call and unrelated to the calls before.
//  Without the whitening the innovation keeps the momentum's memory, and a
//  model that moves with the peer's (dissensus moves 2x as far) reads as
//  only 2 (1 - the innovation's autocorrelation), with a = 0.9 not far
//  above what honest neighbours read. Measured from the fourth call on (the third step:
//  the first gives g', the second the first estimate of a).
static void
s_innovation (gc_robust_guard_t *self, size_t n)
{
    for (int l = S_FOL_LAGS - 1; l > 0; l--) {
        memcpy (self->innov [l], self->innov [l - 1], sizeof self->innov [l]);
        self->innov2 [l] = self->innov2 [l - 1];
        self->have_innov [l] = self->have_innov [l - 1];
    }
    self->have_innov [0] = false;
    if (!self->have_prev) {
        self->have_gprev = false;
        return;
    }
    float g [S_P];
    double gg = 0, g2 = 0;
    for (size_t i = 0; i < S_P; i++) {
        g [i] = self->sown [i] - self->sprev [i];
        gg += (double) g [i] * (double) self->gprev [i];
        g2 += (double) self->gprev [i] * (double) self->gprev [i];
    }
    if (!isfinite (gg) || !isfinite (g2)) {
        self->have_gprev = false;
        return;
    }
    if (self->have_gprev) {
        double b = 1.0 / fmin ((double) ++self->ar_n, S_INNOV_HORIZON);
        self->ar_num = (1.0 - b) * self->ar_num + b * gg;
        self->ar_den = (1.0 - b) * self->ar_den + b * g2;
        double a = self->ar_den > 0 ? fmin (fmax (self->ar_num / self->ar_den, 0.0), 1.0) : 0.0;
        double q = 0, be = 1.0 / fmin ((double) self->ar_n, S_INNOV_HORIZON);
        for (size_t i = 0; i < S_P; i++) {
            float e = g [i] - (float) a * self->gprev [i];
            self->innov [0][i] = e - self->ebar [i];
            self->ebar [i] = (float) ((1.0 - be) * self->ebar [i] + be * e);
        }
        s_project_out (self, n, self->innov [0]);
        for (size_t i = 0; i < S_P; i++)
            q += (double) self->innov [0][i] * (double) self->innov [0][i];
        self->innov2 [0] = q;
        self->have_innov [0] = self->ar_n >= 2 && isfinite (q) && q > 0;
    }
    memcpy (self->gprev, g, sizeof self->gprev);
    self->have_gprev = true;
}

int
gc_robust_guard_run (gc_robust_guard_t *self, gc_robust_ws_t *ws,
                     const float *const *x, const double *w, size_t n, size_t d,
                     const float *own, const uint64_t *keys, const bool *moved,
                     const gc_robust_mix_t *mix, float *out, double *tau_out, size_t *clipped_out)
{
    if (self->d != d) {
        s_reset (self);
        if (!(self->sign = s_signs (d)))
            return -1;
        self->d = d;
        s_drift_sample (self, d);
    }
    if (s_reserve (self, n) || s_find_entries (self, x, n, own, keys))
        return -1;
    s_scratch_t *sc = &self->sc;
    size_t kn = s_history_on (self) ? s_neighbours (self, x, n, own) : 0;
    const gc_robust_guard_kern_t *kern = gc_robust_guard_kern ();
    gc_robust_guard_io_t io = { .x = x, .n = n, .own = own, .nb = self->nb, .kn = kn,
                                .nb_blk = sc->nb_blk, .sx = sc->sxp, .sign = self->sign,
                                .mix = mix };
    gc_robust_guard_sums_t sums = { .d2 = sc->d2, .dot = sc->dot, .pos = sc->pos, .nz = sc->nz,
                                    .above = sc->above, .below = sc->below,
                                    .big = sc->big, .sown = self->sown };
    int rc = kern->scan (ws, &io, d, &sums);
    if (rc)
        return rc;
    self->calls++;
    double step = 0;        /* this call's own step, for the stillness test */
    s_innovation (self, n);
    if (self->have_prev) {
        double s = s_sketch_distance (self->sown, self->sprev);
        double b = 1.0 / fmin ((double) ++self->step_n, S_STEP_HORIZON);
        if (isfinite (s)) {
            self->step_avg = (1.0 - b) * self->step_avg + b * s;
            step = s;
        }
    }
    //  The neighbours' share of the weight (own left out): below S_SHARE the
    //  radius grows by S_SHARE / share, so that the neighbours together can
    //  still pull the peer by C x S_SHARE own steps per round.
    double share = 0;
    for (size_t j = 0; j < n; j++)
        share += x [j] != own ? w [j] : 0.0;
    double tau = self->cfg.c * self->step_avg * s_share_gain (share);
    if (!(tau > 0))
        tau = s_median_distance (sc->d2, n, ws->vec_b);
    //  A median too far to square in float says nothing about direction.
    double med_norm = kn && sums.med_big < S_HUGE_BITS ? sqrt (sums.med2) : 0;
    double *rho = ws->coef, *sorted = ws->dist;     /* k + 1 and k x k scratch */
    double *skew = ws->mix, *cosv = ws->vdist;      /* k x k scratch */
    double *coef = ws->vec_b;
    size_t clipped = 0, m = 0;
    for (size_t k = 0; self->cfg.drift_test && k < self->n_sample; k++)
        self->own_s [k] = own [self->sample [k]];
    for (size_t j = 0; j < n; j++) {
        bool huge = sc->big [j] >= S_HUGE_BITS;
        double dist = sqrt (sc->d2 [j]);
        double c = huge ? 0.0 : dist > tau ? tau / dist : 1.0;
        clipped += c < 1.0;
        coef [j] = w [j] * c;
        rho [j] = -1;
        sc->drift [j] = 0;
        sc->mup [j] = NAN;
        skew [j] = 0;
        cosv [j] = 1;
        if (sc->sxp [j] && (sc->d2 [j] > 0 || huge)) {
            rho [j] = s_history (self, j, huge ? 0.0 : c, dist, med_norm, huge, &skew [j], &cosv [j]);
            if (!huge)
                s_far_update (self, j, dist, tau);
            if (!huge && self->cfg.drift_test)
                sc->drift [j] = s_drift (self, j, x [j], c);
            if (!huge && (!moved || moved [j]))
                s_stillness (self, j, step);
        }
        if (!sc->lvl [j])
            sc->mup [j] = NAN;      /* a still or drifting neighbour leaves the levels */
        if (rho [j] >= 0 && sc->lvl [j])
            s_sorted_insert (sorted, m++, rho [j]);
    }
    //  The reference is the lower median of the neighbours' consistencies
    //  (an honest one while honest neighbours are at least half), never
    //  below S_RHO_FLOOR (attackers that look random cannot pull it down to
    //  exclude honest neighbours); the low-consistency test's, never below
    //  S_LOW_FLOOR.
    double med = m ? sorted [(m - 1) / 2] : 0.0;
    double ref = fmax (med, S_RHO_FLOOR), ref_low = fmax (med, S_LOW_FLOOR);
    //  The direction test trusts the median only while the neighbours it
    //  flags hold less than half of the neighbours' weight: with an honest
    //  minority (the malicious ring) the median is the attackers', and the
    //  test would exclude the honest ones.
    double flagged = 0, all = 0;
    for (size_t j = 0; j < n; j++)
        if (x [j] != own && sc->lvl [j]) {
            all += w [j];
            flagged += cosv [j] < S_COS_HI ? w [j] : 0;
        }
    bool direction = self->cfg.dir_test && flagged < 0.5 * all;
    double far_level = s_far_level (self, x, w, n, own, all, sorted);
    self->fol_level = s_follow_level (self, x, n, own, sorted);
    double *mexcess = sorted;       /* the consistencies' order is no longer needed */
    bool median_sign = self->cfg.med_test && s_median_sign (sc->mup, x, w, n, own, all, mexcess);
    //  The speed test, again only while those it flags are a minority.
    double fast = 0;
    for (size_t j = 0; j < n; j++) {
        const s_entry_t *e = x [j] != own ? s_fast_entry (self, j) : NULL;
        fast += e && e->fast > S_FAST_LO ? w [j] : 0.0;
    }
    bool speed = self->cfg.fast_test && fast < 0.5 * all;
    //  The low-consistency test, again only while those it flags are a
    //  minority (with an honest minority the reference is the attackers').
    double low = 0;
    for (size_t j = 0; j < n; j++)
        if (x [j] != own && sc->lvl [j])
            low += s_low_weight (rho [j], ref_low) < 1.0 ? w [j] : 0.0;
    bool low_test = self->cfg.low_test && low < 0.5 * all;
    double *h = rho, kept = 0;      /* each rho is read only by its own weight */
    for (size_t j = 0; j < n; j++)
        if (x [j] != own) {
            //  A huge input is cut, not only clipped to nothing, so that its
            //  weight goes to the neighbours kept.
            double rj = rho [j];
            h [j] = sc->big [j] >= S_HUGE_BITS ? 0.0
                  : s_weight (self, rj, ref, direction, cosv [j], skew [j]) * sc->g [j];
            if (median_sign && mexcess [j] > S_MED_LO)
                h [j] *= fmax (0.0, (S_MED_HI - mexcess [j]) / (S_MED_HI - S_MED_LO));
            const s_entry_t *e = speed ? s_fast_entry (self, j) : NULL;
            if (e)
                h [j] *= s_fast_weight (e->fast);
            h [j] *= s_echo_weight (self, j);
            h [j] *= s_follow_weight (self, j);
            h [j] *= s_far_weight (self, j, far_level);
            if (low_test && sc->lvl [j])
                h [j] *= s_low_weight (rj, ref_low);
            if (sc->drift [j] > self->drift_lo)
                h [j] *= fmax (0.0, 1.0 - (sc->drift [j] - self->drift_lo) / (S_DRIFT_HI - S_DRIFT_LO));
            kept += w [j] * h [j];
            if (sc->entry [j] != SIZE_MAX)
                self->entries [sc->entry [j]].h = h [j];
        }
    self->move_med = s_move_median (self, n, mexcess);    /* mexcess: read for the last time above */
    double f = self->cfg.redist ? s_redist (share, kept) : 1.0;
    for (size_t j = 0; j < n; j++)
        sc->a [j] = x [j] == own ? 0.0f : (float) (coef [j] * h [j] * f);
    kern->apply (&io, d, sc->a, out, self->sout);
    memcpy (self->sprev, self->sout, sizeof self->sprev);
    memcpy (self->sown_prev, self->sown, sizeof self->sown_prev);
    self->have_prev = true;
    *tau_out = tau;
    *clipped_out = clipped;
    return 0;
}

bool
gc_robust_guard_suspects (const gc_robust_guard_t *self, uint64_t key)
{
    size_t i = s_lookup (self, key);
    return i != SIZE_MAX && self->entries [i].seen >= S_WARMUP && self->entries [i].h < 0.5;
}

//  --- The rule's descriptor (gc_robust_rule.h) ----------------------------------

#define S_GUARD_C      3.0
#define S_GUARD_H      200.0
#define S_GUARD_LO     0.15
#define S_GUARD_HI     0.3

//  The trailing words, each at most once, in any order (the canonical name
//  lists them in this order). `redist` is the default, still accepted
//  (configs written when it was opt-in); `self` is its opposite.
typedef enum { S_W_SELF, S_W_REDIST, S_W_NOSIGN, S_W_NODIR, S_W_NOMED, S_W_NOSTILL, S_W_NOFAST,
               S_W_NOECHO, S_W_NOLOW, S_W_NODRIFT, S_W_NOFOLLOW, S_W_NOFAR, S_W_COUNT } s_word_t;
static const char *s_words [S_W_COUNT] = { "self", "redist", "nosign", "nodir", "nomed", "nostill",
                                            "nofast", "noecho", "nolow", "nodrift", "nofollow",
                                            "nofar" };

static int
s_word (const char *tok)
{
    for (int i = 0; i < S_W_COUNT; i++)
        if (!strcmp (tok, s_words [i]))
            return i;
    return -1;
}

//  Strips the trailing words off the n tokens; -1 on a repeated word or on
//  both self and redist.
static int
s_parse_words (const gc_spec_t *t, int *n, bool seen [S_W_COUNT], const char *text,
               gc_err_t *err)
{
    memset (seen, 0, S_W_COUNT * sizeof *seen);
    int w;
    while (*n > 1 && (w = s_word (t->tok [*n - 1])) >= 0) {
        if (seen [w])
            return gc_err_set (err, GC_E_SPEC, "'%s': guard word '%s' given twice",
                               text, s_words [w]);
        seen [w] = true;
        (*n)--;
    }
    if (seen [S_W_SELF] && seen [S_W_REDIST])
        return gc_err_set (err, GC_E_SPEC,
                           "'%s': guard words 'self' and 'redist' contradict", text);
    return 0;
}

static int
s_parse (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    int n = t->n;
    bool seen [S_W_COUNT];
    if (s_parse_words (t, &n, seen, text, err))
        return -1;
    if (n > 5)
        return gc_robust_parse_count_error (r, text, err);
    r->guard = (gc_robust_guard_cfg_t) { S_GUARD_C, S_GUARD_H, S_GUARD_LO, S_GUARD_HI,
                                         .redist = !seen [S_W_SELF],
                                         .sign_test = !seen [S_W_NOSIGN],
                                         .dir_test = !seen [S_W_NODIR],
                                         .med_test = !seen [S_W_NOMED],
                                         .still_test = !seen [S_W_NOSTILL],
                                         .fast_test = !seen [S_W_NOFAST],
                                         .echo_test = !seen [S_W_NOECHO],
                                         .low_test = !seen [S_W_NOLOW],
                                         .drift_test = !seen [S_W_NODRIFT],
                                         .follow_test = !seen [S_W_NOFOLLOW],
                                         .far_test = !seen [S_W_NOFAR] };
    if ((n > 1 && gc_parse_double (t->tok [1], 1e-6, 1e6, &r->guard.c, "guard c", err))
    ||  (n > 2 && gc_parse_double (t->tok [2], 1, 1e9, &r->guard.horizon, "guard horizon", err))
    ||  (n > 3 && gc_parse_double (t->tok [3], 0, 1, &r->guard.rho_lo, "guard rho_lo", err))
    ||  (n > 4 && gc_parse_double (t->tok [4], r->guard.rho_lo, 1, &r->guard.rho_hi,
                                   "guard rho_hi", err)))
        return -1;
    //  LO given without HI: a step at LO rather than an empty ramp.
    if (n == 4 && r->guard.rho_hi < r->guard.rho_lo)
        r->guard.rho_hi = r->guard.rho_lo;
    return 0;
}

static void
s_describe (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    char c [32], h [32], lo [32], hi [32];
    gc_robust_fmt_double (c, sizeof c, r->guard.c);
    gc_robust_fmt_double (h, sizeof h, r->guard.horizon);
    gc_robust_fmt_double (lo, sizeof lo, r->guard.rho_lo);
    gc_robust_fmt_double (hi, sizeof hi, r->guard.rho_hi);
    gc_text_add (buf, size, used, "guard:%s:%s:%s:%s%s%s%s%s%s%s%s%s%s%s%s", c, h, lo, hi,
                 r->guard.redist ? "" : ":self", r->guard.sign_test ? "" : ":nosign",
                 r->guard.dir_test ? "" : ":nodir", r->guard.med_test ? "" : ":nomed",
                 r->guard.still_test ? "" : ":nostill", r->guard.fast_test ? "" : ":nofast",
                 r->guard.echo_test ? "" : ":noecho", r->guard.low_test ? "" : ":nolow",
                 r->guard.drift_test ? "" : ":nodrift", r->guard.follow_test ? "" : ":nofollow",
                 r->guard.far_test ? "" : ":nofar");
}

static int
s_run (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w, float *out)
{
    if (!self->state && !(self->state = gc_robust_guard_new (&self->rule.guard)))
        return -1;
    //  After a pre-aggregation an input is a mixture, not one neighbour: no keys.
    const uint64_t *keys = st->mixed || self->n_keys != st->k ? NULL : self->keys;
    const bool *moved = keys ? self->moved : NULL;
    const gc_robust_mix_t *mix = self->mix.x ? &self->mix : NULL;
    int rc = gc_robust_guard_run (self->state, &self->ws, x, w, st->kv, st->d, st->own, keys, moved,
                                  mix, out, &self->info.tau, &self->info.n_clipped);
    self->mixed = rc == 0 && mix;
    return rc;
}

static void
s_fini (void *state)
{
    gc_robust_guard_t *self = state;
    gc_robust_guard_destroy (&self);
}

static bool
s_suspects (const void *state, uint64_t key)
{
    return gc_robust_guard_suspects (state, key);
}

const gc_robust_rule_t gc_robust_rule_guard = {
    .name = "guard", .usage = "guard[:C[:H[:LO[:HI]]]][:self][:nosign][:nodir][:nomed][:nostill][:nofast][:noecho][:nolow][:nodrift][:nofollow][:nofar]",
    .help = "self-centred clipping at C x the own step, with a per-neighbour consistency, "
            "sign, direction, median-sign, stillness, speed, echo, drift, follow and far history over "
            "H calls (stateful), the weight cut going to the neighbours kept; ablation: self (it "
            "stays on the own model), nosign, nodir, nomed, nostill, nofast, noecho, nolow, "
            "nodrift, nofollow, nofar (that test off)",
    .example = "guard:3:200:0.15:0.3", .malformed = "guard:3:200:0.15:0.3:1",
    .coords = true, .needs_centre = true,
    .parse = s_parse, .describe = s_describe, .run = s_run, .fini = s_fini,
    .suspects = s_suspects,
};
