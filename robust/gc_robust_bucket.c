/*  bucket:S+RULE: random buckets of S inputs averaged in front of a rule. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"

//  Bucketing: a random permutation cut into buckets of s, each replaced by
//  its weighted mean and weighted by the sum of its weights.
static int
s_stage_bucket (gc_robust_t *self, gc_robust_run_t *st, size_t s)
{
    gc_robust_ws_t *ws = &self->ws;
    gc_robust_ensure_mix (self, st);
    size_t k = st->k, kv = st->kv, nb = (kv + s - 1) / s;
    size_t *perm = ws->idx;
    for (size_t i = 0; i < kv; i++)
        perm [i] = i;
    for (size_t i = kv; i > 1; i--) {
        size_t j = (size_t) gc_rng_below (&self->rng, i);
        size_t t = perm [i - 1];
        perm [i - 1] = perm [j];
        perm [j] = t;
    }
    double *nw = ws->vec_b;
    for (size_t b = 0; b < nb; b++) {
        double *row = ws->mix2 + b * k;
        size_t first = b * s, last = first + s < kv ? first + s : kv;
        double wsum = 0;
        for (size_t t = first; t < last; t++)
            wsum += ws->vw [perm [t]];
        memset (row, 0, k * sizeof *row);
        for (size_t t = first; t < last; t++) {
            double c = wsum > 0 ? ws->vw [perm [t]] / wsum : 1.0 / (double) (last - first);
            for (size_t j = 0; j < k; j++)
                row [j] += c * ws->mix [perm [t] * k + j];
        }
        nw [b] = wsum;
    }
    memcpy (ws->mix, ws->mix2, nb * k * sizeof *ws->mix);
    memcpy (ws->vw, nw, nb * sizeof *nw);
    st->kv = nb;
    st->have_vdist = false;
    return 0;
}

static int
s_parse (gc_robust_stage_t *p, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    (void) text;
    return gc_parse_long (t->tok [1], 1, GC_ROBUST_MAX_INPUTS, &p->arg, "bucket size", err);
}

//  The rule needs `need` buckets: need - 1 full ones and one more input.
static int
s_compose (gc_robust_stage_t *p, const gc_robust_params_t *rule, size_t *need, const char *spec,
           gc_err_t *err)
{
    (void) rule;
    (void) spec;
    (void) err;
    *need = (*need - 1) * (size_t) p->arg + 1;
    return 0;
}

static void
s_describe (const gc_robust_stage_t *p, char *buf, size_t size, size_t *used)
{
    gc_text_add (buf, size, used, "bucket:%ld+", p->arg);
}

static int
s_stage (gc_robust_t *self, gc_robust_run_t *st, const gc_robust_stage_t *p)
{
    return s_stage_bucket (self, st, (size_t) p->arg);
}

const gc_robust_pre_t gc_robust_pre_bucket = {
    .name = "bucket", .usage = "bucket:S", .min_tokens = 2, .max_tokens = 2,
    .help = "random buckets of S inputs, each replaced by its weighted mean",
    .example = "bucket:2+cwmed", .malformed = "bucket+cwmed",
    .parse = s_parse, .compose = s_compose, .describe = s_describe, .stage = s_stage,
};
