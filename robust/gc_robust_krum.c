/*  Krum (krum:F) and Multi-Krum (mkrum:F:M): the input(s) with the smallest
    sum of squared distances to their nearest neighbours. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"

//  Krum score of each candidate: the sum of its nb smallest squared
//  distances to the other candidates; and the sum of all of them, which
//  breaks ties (with nb = 1 two mutually nearest inputs always tie), so
//  that the choice does not depend on the order of the inputs.
//  cand: indices into vdist (kv x kv).
void
gc_robust_krum_scores (gc_robust_t *self, size_t kv, const size_t *cand, size_t nc, size_t nb,
                       double *score, double *total)
{
    double *row = self->ws.vec_a;
    for (size_t a = 0; a < nc; a++) {
        size_t n = 0;
        total [a] = 0;
        for (size_t b = 0; b < nc; b++)
            if (b != a) {
                row [n] = self->ws.vdist [cand [a] * kv + cand [b]];
                total [a] += row [n++];
            }
        //  Partial selection sort: nb is at most nc - 1 and nc <= 1024.
        double sum = 0;
        for (size_t t = 0; t < nb; t++) {
            size_t best = t;
            for (size_t u = t + 1; u < n; u++)
                best = row [u] < row [best] ? u : best;
            double v = row [best];
            row [best] = row [t];
            row [t] = v;
            sum += v;
        }
        score [a] = sum;
    }
}

//  Output the mean of the selected virtual inputs: one pass that reads
//  only the originals they are made of (an exact copy for plain Krum).
static int
s_output_selected (gc_robust_t *self, gc_robust_run_t *st, const size_t *sel, size_t m, float *out)
{
    gc_robust_ws_t *ws = &self->ws;
    size_t k = st->k;
    if (!st->mixed && m == 1) {
        memcpy (out, st->in [sel [0]], st->d * sizeof *out);
        return 0;
    }
    double *coef = ws->vec_b;
    memset (coef, 0, k * sizeof *coef);
    for (size_t t = 0; t < m; t++)
        for (size_t j = 0; j < k; j++)
            coef [j] += (st->mixed ? ws->mix [sel [t] * k + j] : (double) (sel [t] == j)) / (double) m;
    return gc_robust_combine (ws, st->in, coef, k, st->d, out);
}

static int
s_rule_krum (gc_robust_t *self, gc_robust_run_t *st, size_t f, size_t m, float *out)
{
    int rc = gc_robust_vdist (self, st);
    if (rc)
        return rc;
    size_t kv = st->kv;
    size_t *cand = self->ws.idx2;
    for (size_t i = 0; i < kv; i++)
        cand [i] = i;
    double *score = self->ws.scale, *total = self->ws.vw;   /* both free by now */
    gc_robust_krum_scores (self, kv, cand, kv, kv - f - 2, score, total);
    gc_robust_order2 (self->ws.idx, kv, score, total);
    memcpy (self->info.selected, self->ws.idx, m * sizeof *self->ws.idx);
    self->info.n_selected = m;
    return s_output_selected (self, st, self->ws.idx, m, out);
}

static int
s_parse_krum (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    if (t->n != 2)
        return gc_robust_parse_count_error (r, text, err);
    return gc_parse_long (t->tok [1], 0, (GC_ROBUST_MAX_INPUTS - 3) / 2, &r->f, "krum f", err);
}

static int
s_parse_mkrum (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    if (t->n != 3)
        return gc_robust_parse_count_error (r, text, err);
    if (gc_parse_long (t->tok [1], 0, (GC_ROBUST_MAX_INPUTS - 3) / 2, &r->f, "mkrum f", err)
    ||  gc_parse_long (t->tok [2], 1, GC_ROBUST_MAX_INPUTS - r->f, &r->m, "mkrum m", err))
        return -1;
    return 0;
}

static size_t
s_min_krum (const gc_robust_params_t *r)
{
    return 2 * (size_t) r->f + 3;
}

static size_t
s_min_mkrum (const gc_robust_params_t *r)
{
    size_t a = 2 * (size_t) r->f + 3, b = (size_t) (r->f + r->m);
    return a > b ? a : b;
}

static void
s_describe_krum (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    gc_text_add (buf, size, used, "krum:%ld", r->f);
}

static void
s_describe_mkrum (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    gc_text_add (buf, size, used, "mkrum:%ld:%ld", r->f, r->m);
}

static int
s_run_krum (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w,
            float *out)
{
    (void) x;
    (void) w;
    return s_rule_krum (self, st, (size_t) self->rule.f, 1, out);
}

static int
s_run_mkrum (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w,
             float *out)
{
    (void) x;
    (void) w;
    return s_rule_krum (self, st, (size_t) self->rule.f, (size_t) self->rule.m, out);
}

const gc_robust_rule_t gc_robust_rule_krum = {
    .name = "krum", .usage = "krum:F", .help = "Krum: the input nearest its k - F - 2 nearest others",
    .example = "krum:1", .malformed = "krum:-1",
    .parse = s_parse_krum, .min_inputs = s_min_krum, .describe = s_describe_krum, .run = s_run_krum,
};

const gc_robust_rule_t gc_robust_rule_mkrum = {
    .name = "mkrum", .usage = "mkrum:F:M", .help = "Multi-Krum: the mean of the M best Krum scores",
    .example = "mkrum:1:3", .malformed = "mkrum:1",
    .parse = s_parse_mkrum, .min_inputs = s_min_mkrum, .describe = s_describe_mkrum,
    .run = s_run_mkrum,
};
