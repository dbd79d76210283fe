/*  nnm[:F]+RULE: nearest-neighbour mixing in front of a rule. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"

//  NNM: each virtual input becomes the mean of itself and its kv - f - 1
//  nearest others (ties: lower index).
static int
s_stage_nnm (gc_robust_t *self, gc_robust_run_t *st, size_t f)
{
    gc_robust_ws_t *ws = &self->ws;
    if (f >= st->kv)
        return 2;
    int rc = gc_robust_vdist (self, st);
    if (rc)
        return rc;
    gc_robust_ensure_mix (self, st);
    size_t k = st->k, kv = st->kv, take = kv - f;
    for (size_t a = 0; a < kv; a++) {
        double *key = ws->vec_b;
        for (size_t b = 0; b < kv; b++)
            key [b] = b == a ? -1.0 : ws->vdist [a * kv + b];
        gc_robust_order (ws->idx, kv, key);
        double *row = ws->mix2 + a * k;
        memset (row, 0, k * sizeof *row);
        for (size_t t = 0; t < take; t++)
            for (size_t j = 0; j < k; j++)
                row [j] += ws->mix [ws->idx [t] * k + j];
        for (size_t j = 0; j < k; j++)
            row [j] /= (double) take;
    }
    memcpy (ws->mix, ws->mix2, kv * k * sizeof *ws->mix);
    st->have_vdist = false;
    return 0;
}

static int
s_parse (gc_robust_stage_t *p, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    (void) text;
    p->arg = -1;
    return t->n == 2 ? gc_parse_long (t->tok [1], 0, GC_ROBUST_MAX_INPUTS - 1, &p->arg, "nnm f", err) : 0;
}

//  nnm without F takes the rule's f.
static int
s_compose (gc_robust_stage_t *p, const gc_robust_params_t *rule, size_t *need, const char *spec,
           gc_err_t *err)
{
    if (p->arg < 0 && rule->f < 0)
        return gc_err_set (err, GC_ROBUST_ESPEC,
                           "robust rule '%s': nnm needs F (nnm:F) when the rule has no f", spec);
    if (p->arg < 0)
        p->arg = rule->f;
    *need = *need > (size_t) p->arg + 1 ? *need : (size_t) p->arg + 1;
    return 0;
}

static void
s_describe (const gc_robust_stage_t *p, char *buf, size_t size, size_t *used)
{
    gc_text_add (buf, size, used, "nnm:%ld+", p->arg);
}

static int
s_stage (gc_robust_t *self, gc_robust_run_t *st, const gc_robust_stage_t *p)
{
    return s_stage_nnm (self, st, (size_t) p->arg);
}

const gc_robust_pre_t gc_robust_pre_nnm = {
    .name = "nnm", .usage = "nnm[:F]", .max_tokens = 2,
    .help = "nearest-neighbour mixing: each input becomes the mean of its k - F nearest "
    "(F: the rule's f)",
    .example = "nnm+cwtm:1", .malformed = "nnm+mean",
    .parse = s_parse, .compose = s_compose, .describe = s_describe, .stage = s_stage,
};
