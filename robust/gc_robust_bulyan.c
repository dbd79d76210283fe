/*  Bulyan (bulyan:F): Krum selection, then trimmed coordinates. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"

//  Bulyan: theta = kv - 2f inputs chosen one at a time by Krum among those
//  left (neighbour count clamped to [1, left - 1] near the end), then per
//  coordinate the mean of the beta = theta - 2f values closest to the median.
static int
s_rule_bulyan (gc_robust_t *self, gc_robust_run_t *st, size_t f, float *out)
{
    gc_robust_ws_t *ws = &self->ws;
    int rc = gc_robust_vdist (self, st);
    if (rc)
        return rc;
    size_t kv = st->kv, theta = kv - 2 * f, beta = theta - 2 * f;
    size_t *left = ws->idx2, n_left = kv;
    for (size_t i = 0; i < kv; i++)
        left [i] = i;
    double *score = ws->scale, *total = ws->vw;
    for (size_t t = 0; t < theta; t++) {
        size_t nb = n_left > f + 3 ? n_left - f - 2 : 1;
        nb = nb < n_left - 1 ? nb : n_left - 1;
        gc_robust_krum_scores (self, kv, left, n_left, nb, score, total);
        size_t best = 0;
        for (size_t a = 1; a < n_left; a++)
            if (score [a] < score [best] || (score [a] == score [best] && total [a] < total [best]))
                best = a;
        self->info.selected [t] = left [best];
        memmove (left + best, left + best + 1, (n_left - best - 1) * sizeof *left);
        n_left--;
    }
    self->info.n_selected = theta;
    //  The selected inputs' coordinates: originals, or materialised rows.
    const float **rows = ws->ptrs;
    if (!st->mixed)
        for (size_t t = 0; t < theta; t++)
            rows [t] = st->in [self->info.selected [t]];
    else {
        if (gc_robust_ws_reserve_vbuf (ws, theta * st->d))
            return -1;
        for (size_t t = 0; t < theta; t++) {
            memcpy (ws->mix2 + t * st->k, ws->mix + self->info.selected [t] * st->k,
                    st->k * sizeof *ws->mix2);
            rows [t] = ws->rows [t] = ws->vbuf + t * st->d;
        }
        if ((rc = gc_robust_mix (ws, st->in, st->k, st->d, ws->mix2, theta, ws->rows)))
            return rc;
    }
    return gc_robust_cw_closest (ws, rows, theta, st->d, beta, out);
}

static int
s_parse (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    if (t->n != 2)
        return gc_robust_parse_count_error (r, text, err);
    return gc_parse_long (t->tok [1], 0, (GC_ROBUST_MAX_INPUTS - 3) / 4, &r->f, "bulyan f", err);
}

static size_t
s_min_inputs (const gc_robust_params_t *r)
{
    return 4 * (size_t) r->f + 3;
}

static void
s_describe (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    gc_text_add (buf, size, used, "bulyan:%ld", r->f);
}

static int
s_run (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w, float *out)
{
    (void) x;
    (void) w;
    return s_rule_bulyan (self, st, (size_t) self->rule.f, out);
}

const gc_robust_rule_t gc_robust_rule_bulyan = {
    .name = "bulyan", .usage = "bulyan:F", .help = "Bulyan: k - 2F inputs chosen by Krum, then per "
    "coordinate the mean of the k - 4F closest to the median",
    .example = "bulyan:1", .malformed = "bulyan:1:2",
    .parse = s_parse, .min_inputs = s_min_inputs, .describe = s_describe, .run = s_run,
};
