/*  lgreco, after L-GreCo (Alimohammadi et al.): per-layer top-k ratios
    under the total budget of the compressor's ratio. Every `every` rounds,
    for each layer and each candidate ratio (the base x 1/8 .. 8), the mass
    top-k would drop from this round's input (what the residual would
    keep) is estimated from a strided sample of the layer; a dynamic
    programme over the layers picks the ratios minimising the summed
    estimate with at most the base budget of entries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_policy_method.h"

enum { S_EVERY };

#define S_SAMPLE  2048
#define S_UNITS   1000      /* budget resolution of the programme */

static const double s_mult [] = { 0.125, 0.25, 0.5, 1, 2, 4, 8 };
#define S_NC (sizeof s_mult / sizeof s_mult [0])

typedef struct {
    float    *sq;           /* one layer's sample, squared */
    double   *prefix;
    uint32_t *cost;         /* n_layers x S_NC */
    double   *err;
    double   *ratio;
    uint32_t *choice;
} s_lgreco_t;

double
gc_policy_allocate (size_t n_layers, size_t n_choices, const uint32_t *cost,
                    const double *err, uint32_t budget, uint32_t *choice)
{
    if (budget > 1000000 || n_layers == 0 || n_choices == 0)
        return -1;
    size_t nb = (size_t) budget + 1;
    double   *dp = malloc (2 * nb * sizeof *dp);
    uint32_t *pick = malloc (n_layers * nb * sizeof *pick);
    if (!dp || !pick) {
        free (dp);
        free (pick);
        return -1;
    }
    double *cur = dp, *next = dp + nb;
    //  cur [b]: least error of the layers so far with exactly b units spent.
    for (size_t b = 0; b < nb; b++)
        cur [b] = b ? INFINITY : 0;
    for (size_t l = 0; l < n_layers; l++) {
        for (size_t b = 0; b < nb; b++) {
            next [b] = INFINITY;
            for (size_t c = 0; c < n_choices; c++) {
                uint32_t w = cost [l * n_choices + c];
                if (w > b || cur [b - w] == INFINITY)
                    continue;
                double e = cur [b - w] + err [l * n_choices + c];
                if (e < next [b]) {
                    next [b] = e;
                    pick [l * nb + b] = (uint32_t) c;
                }
            }
        }
        double *t = cur;
        cur = next;
        next = t;
    }
    size_t best = nb;
    for (size_t b = 0; b < nb; b++)
        if (cur [b] < INFINITY && (best == nb || cur [b] < cur [best]))
            best = b;
    double result = best < nb ? cur [best] : -1;
    for (size_t l = n_layers; best < nb && l-- > 0; ) {
        choice [l] = pick [l * nb + best];
        best -= cost [l * n_choices + choice [l]];
    }
    free (dp);
    free (pick);
    return result;
}

static void
s_fini (gc_policy_t *self)
{
    s_lgreco_t *st = self->state;
    if (st) {
        free (st->sq);
        free (st->prefix);
        free (st->cost);
        free (st->err);
        free (st->ratio);
        free (st->choice);
    }
    free (st);
    self->state = NULL;
}

static int
s_init (gc_policy_t *self, gc_err_t *err)
{
    size_t nl = self->layout->n_layers;
    s_lgreco_t *st = calloc (1, sizeof *st);
    self->state = st;
    if (!st
    || !(st->sq = malloc (S_SAMPLE * sizeof *st->sq))
    || !(st->prefix = malloc ((S_SAMPLE + 1) * sizeof *st->prefix))
    || !(st->cost = malloc (nl * S_NC * sizeof *st->cost))
    || !(st->err = malloc (nl * S_NC * sizeof *st->err))
    || !(st->ratio = malloc (nl * S_NC * sizeof *st->ratio))
    || !(st->choice = malloc (nl * sizeof *st->choice))) {
        s_fini (self);
        return gc_err_set (err, GC_E_NOMEM, "lgreco: out of memory");
    }
    return 0;
}

static int
s_desc (const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;
    return (x < y) - (x > y);
}

//  The candidates of layer l: ratio, entries, and the estimated dropped mass.
static void
s_layer_curve (gc_policy_t *self, s_lgreco_t *st, size_t l, const float *v, double unit)
{
    const gc_layer_t *layer = &self->layout->layers [l];
    size_t m = layer->count, s = m < S_SAMPLE ? m : S_SAMPLE;
    const float *x = v + layer->offset;
    for (size_t i = 0; i < s; i++) {
        float a = x [(size_t) ((double) i * (double) m / (double) s)];
        st->sq [i] = a * a;
    }
    qsort (st->sq, s, sizeof *st->sq, s_desc);
    st->prefix [0] = 0;
    for (size_t i = 0; i < s; i++)
        st->prefix [i + 1] = st->prefix [i] + st->sq [i];
    for (size_t c = 0; c < S_NC; c++) {
        double r = fmin (1.0, s_mult [c] * self->base);
        size_t k = gc_k_of_ratio (r, m);
        size_t ks = (size_t) floor ((double) k * (double) s / (double) m + 0.5);
        if (ks > s)
            ks = s;
        st->ratio [l * S_NC + c] = r;
        st->cost [l * S_NC + c] = (uint32_t) floor ((double) k / unit + 0.5);
        st->err [l * S_NC + c] = (st->prefix [s] - st->prefix [ks]) * (double) m / (double) s;
    }
}

static void
s_decide (gc_policy_t *self, const gc_policy_round_t *r, gc_policy_decision_t *d)
{
    s_lgreco_t *st = self->state;
    d->ratio = 0;                       /* per layer: self->layer */
    //  Between recomputations the last allocation stands (gc_policy_new
    //  starts it uniform at the base).
    if (r->round % (uint64_t) self->opt [S_EVERY] != 0)
        return;
    size_t nl = self->layout->n_layers;
    double total = self->base * (double) self->layout->n_params;
    double unit = fmax (1.0, total / S_UNITS);
    for (size_t l = 0; l < nl; l++)
        s_layer_curve (self, st, l, r->input, unit);
    uint32_t budget = (uint32_t) floor (total / unit + 0.5);
    if (gc_policy_allocate (nl, S_NC, st->cost, st->err, budget, st->choice) < 0)
        for (size_t l = 0; l < nl; l++)
            st->choice [l] = 3;         /* nothing fits the units: the uniform base */
    for (size_t l = 0; l < nl; l++)
        self->layer [l] = st->ratio [l * S_NC + st->choice [l]];
}

const gc_policy_method_t gc_policy_lgreco = {
    .name = "lgreco", .usage = "lgreco[:every=10]",
    .help = "per-layer top-k ratios by dynamic programming under the total budget",
    .example = "lgreco:every=5", .malformed = "lgreco:every=0",
    .needs_ratio = true, .layered = true,
    .opts = { { "every", 1, 1000000, true, false, 10 } },
    .init = s_init, .fini = s_fini, .decide = s_decide,
};
