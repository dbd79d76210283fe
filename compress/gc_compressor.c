/*  gc_compressor — the object, the helpers the methods' parsers share, and
    the dispatch to the methods through their registry entries. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_compress_method.h"
#include "gc_parse.h"
#include "gc_payload.h"
#include "gc_vec.h"

bool gc_compress_simd = true;

size_t
gc_k_of_ratio (double ratio, size_t m)
{
    if (m == 0)
        return 0;
    double k = floor (ratio * (double) m + 0.5);
    if (k < 1)
        return 1;
    return k >= (double) m ? m : (size_t) k;
}

int
gc_compressor_fscratch (gc_compressor_t *self, size_t n, gc_err_t *err)
{
    if (n <= self->fscratch_len && self->fscratch)
        return 0;
    free (self->fscratch);
    self->fscratch = malloc ((n ? n : 1) * sizeof (float));
    self->fscratch_len = self->fscratch ? n : 0;
    if (!self->fscratch)
        return gc_err_set (err, GC_E_NOMEM, "compressor: out of memory for %zu floats", n);
    return 0;
}

static bool
s_is_number (const char *t)
{
    return isdigit ((unsigned char) t [0]) || (t [0] == '.' && isdigit ((unsigned char) t [1]));
}

int
gc_compress_opt_number (const gc_spec_t *sp, int *at, double lo, double hi, bool integer,
                        const char *what, double *out, gc_err_t *err)
{
    if (*at >= sp->n || !s_is_number (sp->tok [*at]))
        return 0;
    if (gc_parse_double (sp->tok [(*at)++], lo, hi, out, what, err))
        return -1;
    if (integer && *out != floor (*out))
        return gc_err_set (err, GC_E_SPEC, "%s: %g is not an integer", what, *out);
    return 1;
}

int
gc_compress_opt_keyval (const char *tok, const char *key, double lo, double hi, double *out,
                        bool *matched, gc_err_t *err)
{
    size_t kl = strlen (key);
    *matched = !strncmp (tok, key, kl) && tok [kl] == '=';
    if (!*matched)
        return 0;
    return gc_parse_double (tok + kl + 1, lo, hi, out, key, err);
}

bool
gc_compress_opt_valfmt (gc_compressor_t *self, const char *tok)
{
    if (!strcmp (tok, "fp16"))
        self->valfmt = GC_VAL_FP16;
    else if (!strcmp (tok, "fp32"))
        self->valfmt = GC_VAL_FP32;
    else
        return false;
    return true;
}

bool
gc_compress_opt_choice (const char *tok, const char *yes, const char *no, bool *out)
{
    if (strcmp (tok, yes) && strcmp (tok, no))
        return false;
    *out = !strcmp (tok, yes);
    return true;
}

int
gc_compress_opt_valfmts (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    for (; *at < sp->n; (*at)++)
        if (!gc_compress_opt_valfmt (self, sp->tok [*at]))
            return gc_compress_opt_unknown (self, sp->tok [*at], err);
    return 0;
}

int
gc_compress_opt_buckets (gc_compressor_t *self, const gc_spec_t *sp, int *at, double lo,
                         gc_err_t *err)
{
    for (; *at < sp->n; (*at)++) {
        double v;
        bool matched;
        if (gc_compress_opt_keyval (sp->tok [*at], "bucket", lo, 2147483647.0, &v, &matched, err))
            return -1;
        if (!matched)
            return gc_compress_opt_unknown (self, sp->tok [*at], err);
        if (v != floor (v))
            return gc_err_set (err, GC_E_SPEC, "bucket: %g is not an integer", v);
        self->bucket = (uint32_t) v;
    }
    return 0;
}

int
gc_compress_opt_unknown (const gc_compressor_t *self, const char *tok, gc_err_t *err)
{
    return gc_err_set (err, GC_E_SPEC, "unknown option '%s' for %s", tok, self->desc->name);
}

const char *
gc_compress_valfmt_name (const gc_compressor_t *self)
{
    return self->valfmt == GC_VAL_FP16 ? "fp16" : "fp32";
}

gc_compressor_t *
gc_compressor_new_at (const gc_spec_t *sp, int first, const gc_layout_t *layout, uint64_t seed,
                      gc_err_t *err)
{
    const gc_compress_method_t *desc = gc_compress_method_find (sp->tok [first]);
    if (!desc) {
        char known [256];
        gc_err_set (err, GC_E_SPEC, "unknown method '%s' (known: %s)",
                    sp->tok [first], gc_compressor_known (known, sizeof known));
        return NULL;
    }
    gc_compressor_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "compressor: out of memory");
        return NULL;
    }
    self->layout = *layout;
    self->seed = seed;
    self->desc = desc;
    self->method = desc->wire_id;
    self->valfmt = GC_VAL_FP32;
    int at = first + 1;
    if (desc->parse (self, sp, &at, err))
        goto fail;
    //  A parser that left tokens over would silently ignore them.
    if (at < sp->n && !desc->wrapper) {
        gc_compress_opt_unknown (self, sp->tok [at], err);
        goto fail;
    }
    desc->describe (self, self->name, sizeof self->name);
    if (desc->init && desc->init (self, err))
        goto fail;
    return self;
fail:
    gc_compressor_destroy (&self);
    return NULL;
}

gc_compressor_t *
gc_compressor_new (const char *spec, const gc_layout_t *layout, uint64_t seed, gc_err_t *err)
{
    if (!layout || layout->n_layers == 0 || layout->n_params == 0) {
        gc_err_set (err, GC_E_INPUT, "compressor: empty layout");
        return NULL;
    }
    gc_spec_t sp;
    if (gc_spec_split (&sp, spec, ':', "compressor spec", err)) {
        gc_compress_spec_error (err);
        return NULL;
    }
    gc_compressor_t *self = gc_compressor_new_at (&sp, 0, layout, seed, err);
    if (!self)
        gc_compress_spec_error (err);
    //  Once, here: an inner method's failure is the whole spec's.
    if (!self && err && err->code == GC_E_SPEC)
        gc_err_prefix (err, "compressor '%s': ", spec);
    return self;
}

void
gc_compress_spec_error (gc_err_t *err)
{
    if (err && (err->code == GC_E_PARSE || err->code == GC_E_RANGE))
        err->code = GC_E_SPEC;
}

void
gc_compressor_destroy (gc_compressor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_compressor_t *self = *self_p;
    if (self->desc && self->desc->fini)
        self->desc->fini (self);
    gc_lbs_destroy (&self->lbs);
    free (self->layer_ratio);
    gc_select_destroy (&self->select);
    free (self->bitmap);
    free (self->fscratch);
    free (self);
    *self_p = NULL;
}

bool
gc_compressor_lossless (const gc_compressor_t *self)
{
    return self->method == GC_METHOD_NONE && self->valfmt == GC_VAL_FP32 && !self->lbs;
}

const char *
gc_compressor_name (const gc_compressor_t *self)
{
    return self->name;
}

const gc_layout_t *
gc_compressor_layout (const gc_compressor_t *self)
{
    return &self->layout;
}

void
gc_compressor_set_defer (gc_compressor_t *self, bool on)
{
    if (self->lbs)
        gc_lbs_set_defer (self->lbs, on);
}

const float *
gc_compressor_deferred (const gc_compressor_t *self)
{
    return self->lbs ? gc_lbs_deferred (self->lbs) : NULL;
}

//  The compressor whose ratio the budget is: lbs's inner one.
static gc_compressor_t *
s_ratio_owner (const gc_compressor_t *self)
{
    gc_compressor_t *c = (gc_compressor_t *) self;
    if (c->lbs)
        c = gc_lbs_inner (c->lbs);
    return c->method == GC_METHOD_TOPK || c->method == GC_METHOD_RANDK || c->method == GC_METHOD_LGC
         ? c : NULL;
}

double
gc_compressor_ratio (const gc_compressor_t *self)
{
    const gc_compressor_t *c = s_ratio_owner (self);
    return c ? c->ratio : 0;
}

int
gc_compressor_set_budget (gc_compressor_t *self, double ratio, const double *layer,
                          gc_err_t *err)
{
    gc_compressor_t *c = s_ratio_owner (self);
    if (!c)
        return gc_err_set (err, GC_E_ARG, "compressor %s has no ratio to budget", self->name);
    if (!(ratio >= 0 && ratio <= 1))
        return gc_err_set (err, GC_E_ARG, "budget ratio %g outside [0, 1]", ratio);
    size_t nl = c->layout.n_layers;
    if (layer) {
        if (c->method != GC_METHOD_TOPK)
            return gc_err_set (err, GC_E_ARG, "per-layer budgets need topk, not %s", c->name);
        for (size_t l = 0; l < nl; l++)
            if (!(layer [l] > 0 && layer [l] <= 1))
                return gc_err_set (err, GC_E_ARG, "layer %zu budget %g outside (0, 1]", l, layer [l]);
        if (!c->layer_ratio && !(c->layer_ratio = malloc (nl * sizeof *c->layer_ratio)))
            return gc_err_set (err, GC_E_NOMEM, "compressor: out of memory");
        memcpy (c->layer_ratio, layer, nl * sizeof *layer);
    }
    else {
        free (c->layer_ratio);
        c->layer_ratio = NULL;
    }
    c->round_ratio = ratio;
    return 0;
}

double
gc_compressor_ratio_at (const gc_compressor_t *self, size_t l)
{
    if (self->layer_ratio)
        return self->layer_ratio [l];
    return self->round_ratio > 0 ? self->round_ratio : self->ratio;
}

void
gc_compressor_note_exact (gc_compressor_t *self)
{
    if (self->lbs)
        gc_lbs_note_all_sent (self->lbs);
}

int
gc_compressor_encode_range (gc_compressor_t *self, const float *x, uint64_t round,
                            size_t lo, size_t hi, uint8_t flags, gc_buf_t *out, gc_err_t *err)
{
    const gc_compress_method_t *desc = self->desc;
    uint64_t seed = desc->header_seed ? desc->header_seed (self, round) : 0;
    if (gc_payload_begin (out, &self->layout, self->method, flags, seed, err))
        return -1;
    if (lo >= hi)
        return 0;
    const gc_layout_t *layout = &self->layout;
    size_t base = layout->layers [lo].offset;
    size_t m = layout->layers [hi - 1].offset + layout->layers [hi - 1].count - base;
    if (!desc->checks_finite) {
        size_t bad = gc_vec_first_nonfinite (x + base, m);
        if (bad < m)
            return gc_err_set (err, GC_E_NONFINITE, "input x[%zu] = %g is not finite",
                               base + bad, (double) x [base + bad]);
    }
    return desc->encode (self, x, round, seed, lo, hi, out, err);
}

int
gc_compressor_compress (gc_compressor_t *self, const float *x, uint64_t round,
                        gc_buf_t *out, gc_err_t *err)
{
    if (!x || !out)
        return gc_err_set (err, GC_E_ARG, "compressor: NULL input or output");
    if (self->desc->compress)
        return self->desc->compress (self, x, round, out, err);
    return gc_compressor_encode_range (self, x, round, 0, self->layout.n_layers, 0, out, err);
}
