/*  gc_policy — the object: the spec's options through the descriptor's
    table, the round's decision and what it records for the metrics. */
#include "gc_policy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_compress_method.h"
#include "gc_policy_method.h"

static const char *
s_usage (size_t i)
{
    return gc_policy_methods [i] ? gc_policy_methods [i]->usage : NULL;
}

const char *
gc_policy_known (char *buf, size_t size)
{
    return gc_text_join (buf, size, ", ", s_usage);
}

const gc_policy_method_t *
gc_policy_method_find (const char *keyword)
{
    for (size_t i = 0; gc_policy_methods [i]; i++)
        if (!strcmp (keyword, gc_policy_methods [i]->name))
            return gc_policy_methods [i];
    return NULL;
}

//  Every token after the keyword is KEY=VALUE of the descriptor's table.
static int
s_parse (gc_policy_t *self, const gc_spec_t *sp, gc_err_t *err)
{
    const gc_policy_method_t *d = self->desc;
    for (int i = 0; i < GC_POLICY_MAX_OPTS && d->opts [i].key; i++) {
        const gc_policy_opt_t *o = &d->opts [i];
        self->opt [i] = o->ratio_default ? fmin (1.0, o->def * self->base) : o->def;
    }
    for (int t = 1; t < sp->n; t++) {
        bool matched = false;
        for (int i = 0; i < GC_POLICY_MAX_OPTS && d->opts [i].key && !matched; i++) {
            const gc_policy_opt_t *o = &d->opts [i];
            if (gc_compress_opt_keyval (sp->tok [t], o->key, o->lo, o->hi, &self->opt [i],
                                        &matched, err))
                return -1;
            if (matched && o->integer && self->opt [i] != floor (self->opt [i]))
                return gc_err_set (err, GC_E_SPEC, "%s: %g is not an integer", o->key,
                                   self->opt [i]);
        }
        if (!matched)
            return gc_err_set (err, GC_E_SPEC, "unknown option '%s' (usage: %s)", sp->tok [t],
                               d->usage);
    }
    size_t used = 0;
    gc_text_add (self->name, sizeof self->name, &used, "%s", d->name);
    for (int i = 0; i < GC_POLICY_MAX_OPTS && d->opts [i].key; i++)
        gc_text_add (self->name, sizeof self->name, &used, ":%s=%.6g", d->opts [i].key,
                     self->opt [i]);
    return 0;
}

//  One stage: NAME[:OPTIONS] over the compressor.
static gc_policy_t *
s_stage_new (const char *spec, gc_compressor_t *comp, gc_err_t *err)
{
    gc_spec_t sp;
    if (gc_spec_split (&sp, spec, ':', "ratio policy", err)) {
        gc_compress_spec_error (err);
        return NULL;
    }
    gc_policy_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "ratio policy: out of memory");
        return NULL;
    }
    self->comp = comp;
    self->env = &self->env_own;
    self->layout = gc_compressor_layout (comp);
    self->base = gc_compressor_ratio (comp);
    //  A method without a ratio (sign, qsgd, dense) sends every entry.
    self->budget = self->base > 0 ? self->base : 1;
    self->desc = gc_policy_method_find (sp.tok [0]);
    if (!self->desc) {
        char known [256];
        gc_err_set (err, GC_E_SPEC, "unknown policy '%s' (known: %s)", sp.tok [0],
                    gc_policy_known (known, sizeof known));
        goto fail;
    }
    if (self->desc->needs_ratio && self->base <= 0) {
        gc_err_set (err, GC_E_SPEC, "%s budgets a ratio: the compressor %s has none "
                    "(topk, randk, or lbs over them)", self->desc->name, gc_compressor_name (comp));
        goto fail;
    }
    if (s_parse (self, &sp, err))
        goto fail;
    if (self->desc->layered
    && !(self->layer = calloc (self->layout->n_layers, sizeof *self->layer))) {
        gc_err_set (err, GC_E_NOMEM, "ratio policy: out of memory");
        goto fail;
    }
    if (self->desc->layered) {
        //  Whether the compressor takes per-layer budgets: try, then reset.
        for (size_t l = 0; l < self->layout->n_layers; l++)
            self->layer [l] = self->base;
        if (gc_compressor_set_budget (comp, 0, self->layer, err)) {
            if (err)
                err->code = GC_E_SPEC;
            goto fail;
        }
        gc_compressor_set_budget (comp, 0, NULL, NULL);
    }
    if (self->desc->init && self->desc->init (self, err))
        goto fail;
    return self;
fail:
    gc_compress_spec_error (err);
    gc_policy_destroy (&self);
    return NULL;
}

//  A stage after the first only caps the ratio: it must decide one ratio
//  for the whole vector, and never skip; the first may skip but not set
//  per-layer budgets (a cap on those would have to rescale the layers).
static int
s_check_chain (const gc_policy_t *head, const gc_policy_t *stage, gc_err_t *err)
{
    const gc_policy_method_t *d = stage->desc;
    if (head->desc->layered)
        return gc_err_set (err, GC_E_SPEC, "'%s' sets per-layer budgets: it cannot be chained",
                           head->desc->name);
    if (d->needs_ratio && d->decide && !d->layered && !d->skips)
        return 0;
    return gc_err_set (err, GC_E_SPEC, "'%s' cannot follow '+': a later stage of a chain caps "
                       "the ratio, so it must decide one (bandwidth, settle, accordion)", d->name);
}

gc_policy_t *
gc_policy_new (const char *spec, gc_compressor_t *comp, gc_err_t *err)
{
    if (!comp) {
        gc_err_set (err, GC_E_ARG, "ratio policy: no compressor");
        return NULL;
    }
    char buf [256];
    size_t len = spec ? strlen (spec) : 0;
    if (!spec || len >= sizeof buf) {
        gc_err_set (err, GC_E_SPEC, "ratio policy: %s", spec ? "spec too long" : "no spec");
        return NULL;
    }
    if (!len || spec [0] == '+' || spec [len - 1] == '+' || strstr (spec, "++")) {
        gc_err_set (err, GC_E_SPEC, "ratio policy '%s': an empty stage", spec);
        return NULL;
    }
    snprintf (buf, sizeof buf, "%s", spec);
    gc_policy_t *head = NULL, **tail = &head;
    for (char *part = buf, *end; part; part = end) {
        //  a '+' before a letter starts the next stage ("1e+06" is a number)
        end = part;
        while ((end = strchr (end + 1, '+')) && !isalpha ((unsigned char) end [1]))
            ;
        if (end)
            *end++ = '\0';
        gc_policy_t *stage = s_stage_new (part, comp, err);
        if (stage && head && s_check_chain (head, stage, err))
            gc_policy_destroy (&stage);
        if (!stage)
            goto fail;
        *tail = stage;
        tail = &stage->next;
        stage->env = head->env;         /* the chain's rounds are the head's */
        if (stage != head) {
            size_t used = strlen (head->name);
            gc_text_add (head->name, sizeof head->name, &used, "+%s", stage->name);
        }
    }
    return head;
fail:
    gc_policy_destroy (&head);
    gc_err_prefix (err, "ratio policy '%s': ", spec);
    return NULL;
}

void
gc_policy_destroy (gc_policy_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_policy_t *self = *self_p;
    gc_policy_destroy (&self->next);
    if (self->desc && self->desc->fini)
        self->desc->fini (self);
    free (self->state);                 /* a fini has freed it and set it to NULL */
    free (self->layer);
    free (self);
    *self_p = NULL;
}

const char *
gc_policy_name (const gc_policy_t *self)
{
    return self->name;
}

bool
gc_policy_is_fixed (const gc_policy_t *self)
{
    return self->desc == &gc_policy_fixed && !self->next;
}

bool
gc_policy_skips (const gc_policy_t *self)
{
    return self->desc->skips;
}

void
gc_policy_set_env (gc_policy_t *self, double compute_s, double rate)
{
    if (compute_s > 0)
        self->env->compute_s = compute_s;
    if (rate > 0)
        self->env->rate = rate;
}

void
gc_policy_set_round (gc_policy_t *self, double round_s)
{
    if (round_s > 0)
        self->env->round_s = round_s;
}

void
gc_policy_set_rate (gc_policy_t *self, double rate)
{
    self->env->rate = rate > 0 ? rate : 0;
}

//  |x|^2 in eight independent lanes, which the compiler vectorises: the
//  policy's one pass over the update should cost a fraction of a step.
static double
s_norm2sq (const float *x, size_t n)
{
    double lane [8] = { 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++)
            lane [j] += (double) x [i + j] * (double) x [i + j];
    double sq = 0;
    for (; i < n; i++)
        sq += (double) x [i] * (double) x [i];
    for (size_t j = 0; j < 8; j++)
        sq += lane [j];
    return sq;
}

//  The whole vector's ratio of per-layer budgets.
static double
s_layers_ratio (const gc_policy_t *self)
{
    double k = 0;
    for (size_t l = 0; l < self->layout->n_layers; l++)
        k += self->layer [l] * (double) self->layout->layers [l].count;
    return k / (double) self->layout->n_params;
}

static bool
s_chain_uses_norm (const gc_policy_t *self)
{
    for (; self; self = self->next)
        if (self->desc->uses_norm)
            return true;
    return false;
}

//  A chain's ratio: the smallest its stages decide. Each decision is
//  preset to "no opinion" (HUGE_VAL), which a stage with nothing to go on
//  leaves (bandwidth before it knows a rate); when every stage leaves it,
//  the base. Every stage decides every round, so that each keeps its own
//  windows whatever the others decide. The head's skip stands.
static void
s_chain_decide (gc_policy_t *self, const gc_policy_round_t *r, gc_policy_decision_t *d)
{
    double ratio = HUGE_VAL;
    for (gc_policy_t *c = self; c; c = c->next) {
        gc_policy_decision_t dc = { .ratio = HUGE_VAL };
        if (c->desc->decide)
            c->desc->decide (c, r, &dc);
        ratio = fmin (ratio, dc.ratio);
        if (c == self)
            d->skip = dc.skip;
    }
    d->ratio = ratio < HUGE_VAL ? ratio : self->base;
}

int
gc_policy_decide (gc_policy_t *self, const float *update, const float *input,
                  uint64_t round, bool *skip, gc_err_t *err)
{
    *skip = false;
    if (!self->desc->decide && !self->next)
        return 0;
    size_t n = self->layout->n_params;
    double sq = s_chain_uses_norm (self) ? s_norm2sq (update, n) : 0;
    gc_policy_round_t r = { .update = update, .input = input, .sq_update = sq, .round = round };
    gc_policy_decision_t d = { .ratio = self->base };
    if (self->next)
        s_chain_decide (self, &r, &d);
    else
        self->desc->decide (self, &r, &d);
    double ratio = d.ratio;
    *skip = d.skip;
    if (*skip) {
        self->budget = 0;
        self->skipped++;
        return 0;
    }
    if (!self->desc->needs_ratio && !self->next) {
        self->budget = self->base > 0 ? self->base : 1;
        return 0;
    }
    bool layered = self->desc->layered && ratio <= 0;      /* never in a chain */
    if (gc_compressor_set_budget (self->comp, layered ? 0 : ratio, layered ? self->layer : NULL, err))
        return -1;
    if (layered)
        ratio = s_layers_ratio (self);
    self->budget = ratio;
    self->env->last_k = gc_k_of_ratio (ratio, n);
    return 0;
}

void
gc_policy_note_sent (gc_policy_t *self, size_t len)
{
    self->env->last_len = len;
}

void
gc_policy_note_exact (gc_policy_t *self)
{
    self->budget = 1;
}

double
gc_policy_budget (const gc_policy_t *self)
{
    return self->budget;
}

uint64_t
gc_policy_skipped (const gc_policy_t *self)
{
    return self->skipped;
}
