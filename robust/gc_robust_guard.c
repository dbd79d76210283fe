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
      it loses stays with the peer's own model.
    - Sign balance and direction catch what stays inside the honest spread:
      ALIE's mu - z sigma lies below the peer in most coordinates, and
      dissensus points away from the neighbours' median (constants below). */
#include "gc_robust_guard.h"

#include <math.h>
#include <stdbool.h>
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
//  Lowest reference consistency (pass 2 of gc_robust_guard_run).
#define S_RHO_FLOOR 0.35
//  Sign balance: an honest neighbour's deviation from the peer is about as
//  often positive as negative coordinate by coordinate; ALIE's mu - z sigma
//  is not (a fraction Phi(z) of its coordinates lie below the peer's). The
//  neighbour's weight falls from 1 at skew S_SKEW_LO to 0 at S_SKEW_HI, the
//  fraction averaged over about S_SIGN_HORIZON calls.
#define S_SKEW_LO 0.1
#define S_SKEW_HI 0.2
#define S_SIGN_HORIZON 10.0
//  Direction: honest deviations share the pull toward the honest mean, so
//  their cosine with the neighbours' coordinate-wise median (minus own) is
//  positive; dissensus pushes the other way. Weight 1 above S_COS_HI, 0
//  below S_COS_LO (the cosine averaged like the sign balance).
#define S_COS_LO -0.15
#define S_COS_HI 0.05

typedef struct {
    uint64_t key;
    uint64_t seen;          /* calls that updated it */
    uint64_t last;          /* call number of the last update */
    double   a;             /* running mean of ||u||, u the clipped deviation */
    double   up;            /* running mean of the fraction of coordinates with u > 0 */
    double   cos;           /* running mean of the cosine of u with the neighbours' median */
} s_entry_t;

struct gc_robust_guard_t {
    gc_robust_guard_cfg_t cfg;
    size_t    d;            /* dimension the state belongs to; 0 = none yet */
    float    *prev_out;     /* d */
    float    *med;          /* d: coordinate-wise median of the neighbours, minus own */
    const float **nb;       /* the neighbours' inputs (own left out) */
    size_t    nb_cap;
    bool      have_prev;
    double    step_avg;     /* running norm of own - prev_out */
    uint64_t  step_n;
    uint64_t  calls;
    s_entry_t *entries;
    float    *m;            /* cap x d running means of u, row per entry */
    size_t    n_entries, cap;
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
    free (self->prev_out);
    free (self->med);
    self->med = NULL;
    free (self->nb);
    self->nb = NULL;
    self->nb_cap = 0;
    free (self->entries);
    free (self->m);
    self->prev_out = NULL;
    self->entries = NULL;
    self->m = NULL;
    self->n_entries = self->cap = 0;
    self->have_prev = false;
    self->step_avg = 0;
    self->step_n = 0;
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

//  The entry of key, created (or the stalest one recycled) if new; NULL
//  when no memory.
static s_entry_t *
s_entry (gc_robust_guard_t *self, uint64_t key, float **row)
{
    size_t d = self->d;
    for (size_t i = 0; i < self->n_entries; i++)
        if (self->entries [i].key == key) {
            *row = self->m + i * d;
            return &self->entries [i];
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
    self->entries [at] = (s_entry_t) { .key = key };
    *row = self->m + at * d;
    memset (*row, 0, d * sizeof **row);
    return &self->entries [at];
}

//  Radius before any own step is known: the median distance to the peer
//  over the inputs (the peer's own at 0 among them), which an honest
//  majority of the inputs bounds by an honest distance.
static double
s_median_distance (const double *d2, size_t n, double *tmp)
{
    for (size_t i = 0; i < n; i++) {
        double v = d2 [i];
        size_t j = i;
        for (; j > 0 && tmp [j - 1] > v; j--)
            tmp [j] = tmp [j - 1];
        tmp [j] = v;
    }
    return sqrt (tmp [(n - 1) / 2]);
}

//  u = c (x - own), m <- (1 - b) m + b u; returns ||m||, in *up the
//  fraction of the coordinates where x differs from own with x > own, and in
//  *dot the dot product of x - own with med. One pass; the sums run in
//  S_LANES partial sums (so that the loop vectorises), added up at the end.
#define S_LANES 16

static double
s_update_mean (float *m, const float *x, const float *own, const float *med, size_t d,
               double c, double b, double *up, double *dot)
{
    double sq [S_LANES] = { 0 }, dt [S_LANES] = { 0 };
    int64_t pos [S_LANES] = { 0 }, nonzero [S_LANES] = { 0 };
    double keep = 1.0 - b, take = b * c;
    size_t i = 0;
    for (; i + S_LANES <= d; i += S_LANES)
        for (size_t l = 0; l < S_LANES; l++) {
            double diff = (double) x [i + l] - (double) own [i + l];
            double v = keep * (double) m [i + l] + take * diff;
            m [i + l] = (float) v;
            sq [l] += v * v;
            dt [l] += diff * (double) med [i + l];
            pos [l] += diff > 0;
            nonzero [l] += diff != 0;
        }
    for (size_t l = 0; i < d; i++, l++) {
        double diff = (double) x [i] - (double) own [i];
        double v = keep * (double) m [i] + take * diff;
        m [i] = (float) v;
        sq [l] += v * v;
        dt [l] += diff * (double) med [i];
        pos [l] += diff > 0;
        nonzero [l] += diff != 0;
    }
    double sq_all = 0, dt_all = 0;
    int64_t pos_all = 0, nz_all = 0;
    for (size_t l = 0; l < S_LANES; l++) {
        sq_all += sq [l];
        dt_all += dt [l];
        pos_all += pos [l];
        nz_all += nonzero [l];
    }
    *up = nz_all ? (double) pos_all / (double) nz_all : 0.5;
    *dot = dt_all;
    return sqrt (sq_all);
}

//  ||a - b|| (b NULL: ||a||) with the sums in lanes as above.
static double
s_distance (const float *a, const float *b, size_t d)
{
    double sq [S_LANES] = { 0 };
    size_t i = 0;
    for (; i + S_LANES <= d; i += S_LANES)
        for (size_t l = 0; l < S_LANES; l++) {
            double v = (double) a [i + l] - (b ? (double) b [i + l] : 0.0);
            sq [l] += v * v;
        }
    for (size_t l = 0; i < d; i++, l++) {
        double v = (double) a [i] - (b ? (double) b [i] : 0.0);
        sq [l] += v * v;
    }
    double all = 0;
    for (size_t l = 0; l < S_LANES; l++)
        all += sq [l];
    return sqrt (all);
}

int
gc_robust_guard_run (gc_robust_guard_t *self, gc_robust_ws_t *ws,
                     const float *const *x, const double *w, size_t n, size_t d,
                     const float *own, const uint64_t *keys,
                     float *out, double *tau_out, size_t *clipped_out)
{
    double *d2 = ws->vec_a, *coef = ws->vec_b;
    int rc = gc_robust_dist_to (ws, x, n, d, own, d2);
    if (rc)
        return rc;
    if (self->d != d) {
        s_reset (self);
        self->prev_out = malloc (d * sizeof *self->prev_out);
        self->med = malloc (d * sizeof *self->med);
        if (!self->prev_out || !self->med)
            return -1;
        self->d = d;
    }
    self->calls++;
    if (self->have_prev) {
        double s = s_distance (own, self->prev_out, d);
        double b = 1.0 / fmin ((double) ++self->step_n, S_STEP_HORIZON);
        if (isfinite (s))
            self->step_avg = (1.0 - b) * self->step_avg + b * s;
    }
    double tau = self->cfg.c * self->step_avg;
    if (!(tau > 0))
        tau = s_median_distance (d2, n, coef);
    size_t clipped = 0;
    double horizon = self->cfg.horizon, span = self->cfg.rho_hi - self->cfg.rho_lo;
    //  Pass 1: clip factors, history updates, consistencies (rho[j] < 0:
    //  no history for input j, or not warmed up).
    double *rho = ws->coef, *sorted = ws->dist;     /* k + 1 and k x k scratch */
    double *skew = ws->mix;                         /* k x k scratch */
    double *cosv = ws->vdist;                       /* k x k scratch */
    //  The neighbours' coordinate-wise median (own excluded) minus own: the
    //  direction the honest neighbours agree on while they are the majority.
    double med_norm = 0;
    if (s_history_on (self)) {
        if (self->nb_cap < n) {
            const float **nb = realloc (self->nb, n * sizeof *nb);
            if (!nb)
                return -1;
            self->nb = nb;
            self->nb_cap = n;
        }
        const float **nb = self->nb;
        size_t kn = 0;
        for (size_t j = 0; j < n; j++)
            if (x [j] != own)
                nb [kn++] = x [j];
        if (kn > 0) {
            if ((rc = gc_robust_cw_window (ws, nb, kn, d, (kn - 1) / 2, kn / 2, self->med)))
                return rc;
            for (size_t i = 0; i < d; i++)
                self->med [i] -= own [i];
            med_norm = s_distance (self->med, NULL, d);
        }
    }
    size_t m = 0;
    for (size_t j = 0; j < n; j++) {
        double dist = sqrt (d2 [j]);
        double c = dist > tau ? tau / dist : 1.0;
        clipped += c < 1.0;
        coef [j] = w [j] * c;
        rho [j] = -1;
        skew [j] = 0;
        cosv [j] = 1;
        if (s_history_on (self) && x [j] != own && d2 [j] > 0) {
            float *row;
            s_entry_t *e = s_entry (self, keys ? keys [j] : (uint64_t) j, &row);
            if (!e)
                return -1;
            e->seen++;
            e->last = self->calls;
            double b = 1.0 / fmin ((double) e->seen, horizon);
            double up, bs = 1.0 / fmin ((double) e->seen, S_SIGN_HORIZON);
            double dot;
            double mnorm = s_update_mean (row, x [j], own, self->med, d, c, b, &up, &dot);
            double cosj = dist > 0 && med_norm > 0 ? dot / (dist * med_norm) : 0;
            e->cos = (1.0 - bs) * e->cos + bs * cosj;
            cosv [j] = e->cos;
            e->a = (1.0 - b) * e->a + b * c * dist;
            e->up = (1.0 - bs) * e->up + bs * up;
            skew [j] = fabs (e->up - 0.5);
            if (e->seen >= S_WARMUP)
                rho [j] = e->a > 0 ? mnorm / e->a : 0;
        }
        if (rho [j] >= 0) {
            size_t i = m++;
            for (; i > 0 && sorted [i - 1] > rho [j]; i--)
                sorted [i] = sorted [i - 1];
            sorted [i] = rho [j];
        }
    }
    //  Pass 2: the reference is the lower median of the neighbours'
    //  consistencies (an honest one while honest neighbours are at least
    //  half), never below S_RHO_FLOOR (attackers that look random cannot
    //  pull it down to exclude honest neighbours).
    double ref = m ? fmax (sorted [(m - 1) / 2], S_RHO_FLOOR) : S_RHO_FLOOR;
    //  The direction test trusts the median only while the neighbours it
    //  flags hold less than half of the neighbours' weight: with an honest
    //  minority (the malicious ring) the median is the attackers', and the
    //  test would exclude the honest ones.
    double flagged = 0, all = 0;
    for (size_t j = 0; j < n; j++)
        if (x [j] != own) {
            all += w [j];
            flagged += cosv [j] < S_COS_HI ? w [j] : 0;
        }
    bool direction = flagged < 0.5 * all;
    for (size_t j = 0; j < n; j++) {
        double h = 1.0;
        if (rho [j] >= 0) {
            double excess = rho [j] - ref;
            h = span > 0 ? fmin (1.0, fmax (0.0, (self->cfg.rho_hi - excess) / span))
                         : (excess < self->cfg.rho_lo ? 1.0 : 0.0);
        }
        if (direction && cosv [j] < S_COS_HI)
            h *= fmax (0.0, (cosv [j] - S_COS_LO) / (S_COS_HI - S_COS_LO));
        if (skew [j] > S_SKEW_LO)
            h *= fmax (0.0, (S_SKEW_HI - skew [j]) / (S_SKEW_HI - S_SKEW_LO));
        coef [j] *= h;
    }
    if ((rc = gc_robust_step (ws, x, coef, n, d, own, out, NULL)))
        return rc;
    memcpy (self->prev_out, out, d * sizeof *out);
    self->have_prev = true;
    *tau_out = tau;
    *clipped_out = clipped;
    return 0;
}

//  --- The rule's descriptor (gc_robust_rule.h) ----------------------------------

#define S_GUARD_C      2.0
#define S_GUARD_H      200.0
#define S_GUARD_LO     0.15
#define S_GUARD_HI     0.3

static int
s_parse (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    int n = t->n;
    if (n > 5)
        return gc_robust_parse_count_error (r, text, err);
    r->guard = (gc_robust_guard_cfg_t) { S_GUARD_C, S_GUARD_H, S_GUARD_LO, S_GUARD_HI };
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
    gc_text_add (buf, size, used, "guard:%s:%s:%s:%s", c, h, lo, hi);
}

static int
s_run (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w, float *out)
{
    if (!self->state && !(self->state = gc_robust_guard_new (&self->rule.guard)))
        return -1;
    //  After a pre-aggregation an input is a mixture, not one neighbour: no keys.
    const uint64_t *keys = st->mixed || self->n_keys != st->k ? NULL : self->keys;
    return gc_robust_guard_run (self->state, &self->ws, x, w, st->kv, st->d, st->own, keys,
                                out, &self->info.tau, &self->info.n_clipped);
}

static void
s_fini (void *state)
{
    gc_robust_guard_t *self = state;
    gc_robust_guard_destroy (&self);
}

const gc_robust_rule_t gc_robust_rule_guard = {
    .name = "guard", .usage = "guard[:C[:H[:LO[:HI]]]]",
    .help = "self-centred clipping at C x the own step, with a per-neighbour consistency, "
            "sign and direction history over H calls (stateful)",
    .example = "guard:2:200:0.15:0.3", .malformed = "guard:2:200:0.15:0.3:1",
    .coords = true, .needs_centre = true,
    .parse = s_parse, .describe = s_describe, .run = s_run, .fini = s_fini,
};
