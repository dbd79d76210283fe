/*  gc_compressor — spec parsing, state, and the dispatch to the methods. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_parse.h"
#include "gc_payload.h"
#include "gc_vec.h"

bool gc_compress_simd = true;

#define S_DEFAULT_RATIO     0.01
#define S_DEFAULT_TAU       1e-3
#define S_DEFAULT_LEVELS    16
#define S_DEFAULT_BUCKET    512
#define S_DEFAULT_RANK      2
#define S_DEFAULT_BUDGET    0.25
#define S_DEFAULT_MAXAGE    8
#define S_DEFAULT_KEEP      0.5

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
        return gc_err_set (err, GC_COMPRESS_ERR_NOMEM, "compressor: out of memory for %zu floats", n);
    return 0;
}

static bool
s_is_number (const char *t)
{
    return isdigit ((unsigned char) t [0]) || (t [0] == '.' && isdigit ((unsigned char) t [1]));
}

//  "key=value" with a known key: parses value into *out within [lo, hi].
static int
s_keyval (const char *tok, const char *key, double lo, double hi, double *out,
          bool *matched, gc_err_t *err)
{
    size_t kl = strlen (key);
    *matched = !strncmp (tok, key, kl) && tok [kl] == '=';
    if (!*matched)
        return 0;
    return gc_parse_double (tok + kl + 1, lo, hi, out, key, err);
}

static int
s_parse_method (gc_compressor_t *self, gc_spec_t *sp, int first, const char *spec, gc_err_t *err)
{
    const char *m = sp->tok [first];
    int i = first + 1;
    double v;
    self->valfmt = GC_VAL_FP32;
    if (!strcmp (m, "none") || !strcmp (m, "fp32"))
        self->method = GC_METHOD_NONE;
    else if (!strcmp (m, "fp16")) {
        self->method = GC_METHOD_FP16;
        self->valfmt = GC_VAL_FP16;
    }
    else if (!strcmp (m, "topk") || !strcmp (m, "randk")) {
        self->method = m [0] == 't' ? GC_METHOD_TOPK : GC_METHOD_RANDK;
        self->ratio = S_DEFAULT_RATIO;
        if (i < sp->n && s_is_number (sp->tok [i])) {
            if (gc_parse_double (sp->tok [i++], 1e-9, 1.0, &self->ratio, "ratio", err))
                return -1;
        }
    }
    else if (!strcmp (m, "threshold") || !strcmp (m, "thresh")) {
        self->method = GC_METHOD_THRESHOLD;
        self->tau = (float) S_DEFAULT_TAU;
        if (i < sp->n && s_is_number (sp->tok [i])) {
            if (gc_parse_double (sp->tok [i++], 0.0, 3.0e38, &v, "threshold", err))
                return -1;
            self->tau = (float) v;
        }
    }
    else if (!strcmp (m, "qsgd")) {
        self->method = GC_METHOD_QSGD;
        self->levels = S_DEFAULT_LEVELS;
        self->bucket = S_DEFAULT_BUCKET;
        if (i < sp->n && s_is_number (sp->tok [i])) {
            if (gc_parse_double (sp->tok [i++], 1, GC_QSGD_MAX_LEVELS, &v, "qsgd levels", err))
                return -1;
            if (v != floor (v))
                return gc_err_set (err, GC_COMPRESS_ERR_SPEC, "qsgd levels: %g is not an integer", v);
            self->levels = (uint32_t) v;
        }
    }
    else if (!strcmp (m, "sign")) {
        self->method = GC_METHOD_SIGN;
        self->bucket = 0;
    }
    else if (!strcmp (m, "powersgd")) {
        self->method = GC_METHOD_POWERSGD;
        self->rank = S_DEFAULT_RANK;
        if (i < sp->n && s_is_number (sp->tok [i])) {
            if (gc_parse_double (sp->tok [i++], 1, GC_POWERSGD_MAX_RANK, &v, "powersgd rank", err))
                return -1;
            if (v != floor (v))
                return gc_err_set (err, GC_COMPRESS_ERR_SPEC, "powersgd rank: %g is not an integer", v);
            self->rank = (uint32_t) v;
        }
    }
    else
        return gc_err_set (err, GC_COMPRESS_ERR_SPEC,
                           "compressor '%s': unknown method '%s' (none, fp16, topk, randk, "
                           "threshold, qsgd, sign, powersgd, lbs)", spec, m);
    //  Options.
    bool values = self->method == GC_METHOD_TOPK || self->method == GC_METHOD_RANDK
               || self->method == GC_METHOD_THRESHOLD || self->method == GC_METHOD_POWERSGD;
    bool buckets = self->method == GC_METHOD_QSGD || self->method == GC_METHOD_SIGN;
    for (; i < sp->n; i++) {
        const char *t = sp->tok [i];
        bool topk = self->method == GC_METHOD_TOPK, matched;
        if (values && !strcmp (t, "fp16"))
            self->valfmt = GC_VAL_FP16;
        else if (values && !strcmp (t, "fp32"))
            self->valfmt = GC_VAL_FP32;
        else if (topk && (!strcmp (t, "layer") || !strcmp (t, "global")))
            self->per_layer = t [0] == 'l';
        else if (topk && (!strcmp (t, "exact") || !strcmp (t, "sampled")))
            self->exact = t [0] == 'e';
        else if (self->method == GC_METHOD_RANDK && (!strcmp (t, "scaled") || !strcmp (t, "unscaled")))
            self->unscaled = t [0] == 'u';
        else if (buckets) {
            double lo = self->method == GC_METHOD_SIGN ? 0 : 1;
            if (s_keyval (t, "bucket", lo, 2147483647.0, &v, &matched, err))
                return -1;
            if (!matched)
                goto unknown;
            if (v != floor (v))
                return gc_err_set (err, GC_COMPRESS_ERR_SPEC, "bucket: %g is not an integer", v);
            self->bucket = (uint32_t) v;
        }
        else
            goto unknown;
    }
    return 0;
unknown:
    return gc_err_set (err, GC_COMPRESS_ERR_SPEC, "compressor '%s': unknown option '%s' for %s",
                       spec, sp->tok [i], gc_method_name (self->method));
}

static void
s_make_name (gc_compressor_t *self)
{
    const char *vf = self->valfmt == GC_VAL_FP16 ? "fp16" : "fp32";
    char *n = self->name;
    size_t sz = sizeof self->name;
    switch (self->method) {
        case GC_METHOD_NONE: snprintf (n, sz, "none"); break;
        case GC_METHOD_FP16: snprintf (n, sz, "fp16"); break;
        case GC_METHOD_TOPK:
            snprintf (n, sz, "topk:%g:%s:%s:%s", self->ratio, self->per_layer ? "layer" : "global",
                      self->exact ? "exact" : "sampled", vf);
            break;
        case GC_METHOD_RANDK:
            snprintf (n, sz, "randk:%g:%s:%s", self->ratio, self->unscaled ? "unscaled" : "scaled", vf);
            break;
        case GC_METHOD_THRESHOLD: snprintf (n, sz, "threshold:%g:%s", (double) self->tau, vf); break;
        case GC_METHOD_QSGD: snprintf (n, sz, "qsgd:%u:bucket=%u", self->levels, self->bucket); break;
        case GC_METHOD_SIGN: snprintf (n, sz, "sign:bucket=%u", self->bucket); break;
        default: snprintf (n, sz, "powersgd:%u:%s", self->rank, vf); break;
    }
}

static gc_compressor_t *
s_new (const char *spec, gc_spec_t *sp, int first, const gc_layout_t *layout,
       uint64_t seed, gc_err_t *err)
{
    gc_compressor_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_COMPRESS_ERR_NOMEM, "compressor: out of memory");
        return NULL;
    }
    self->layout = *layout;
    self->seed = seed;
    //  "lbs[:key=value...]:INNER"
    if (!strcmp (sp->tok [first], "lbs")) {
        double budget = S_DEFAULT_BUDGET, maxage = S_DEFAULT_MAXAGE, keep = S_DEFAULT_KEEP;
        int i = first + 1;
        for (; i < sp->n && strchr (sp->tok [i], '='); i++) {
            bool m1, m2, m3;
            if (s_keyval (sp->tok [i], "budget", 1e-6, 1.0, &budget, &m1, err)
            ||  s_keyval (sp->tok [i], "maxage", 1, 1e6, &maxage, &m2, err)
            ||  s_keyval (sp->tok [i], "keep", 0.0, 1.0, &keep, &m3, err))
                goto fail;
            if (!m1 && !m2 && !m3) {
                gc_err_set (err, GC_COMPRESS_ERR_SPEC, "compressor '%s': unknown lbs option '%s' "
                            "(budget=, maxage=, keep=)", spec, sp->tok [i]);
                goto fail;
            }
        }
        if (i >= sp->n || !strcmp (sp->tok [i], "lbs")) {
            gc_err_set (err, GC_COMPRESS_ERR_SPEC, "compressor '%s': lbs needs an inner method "
                        "other than lbs (e.g. lbs:topk:0.01)", spec);
            goto fail;
        }
        gc_compressor_t *inner = s_new (spec, sp, i, layout, seed, err);
        if (!inner)
            goto fail;
        self->method = inner->method;
        self->lbs = gc_lbs_new (layout, budget, (uint32_t) maxage, keep, inner, err);
        if (!self->lbs) {
            gc_compressor_destroy (&inner);
            goto fail;
        }
        char desc [64];
        gc_lbs_describe (self->lbs, desc, sizeof desc);
        snprintf (self->name, sizeof self->name, "lbs:%.60s:%.90s", desc, inner->name);
        return self;
    }
    if (s_parse_method (self, sp, first, spec, err))
        goto fail;
    s_make_name (self);
    if (self->method == GC_METHOD_TOPK || self->method == GC_METHOD_THRESHOLD) {
        self->select = gc_select_new ();
        if (!self->select) {
            gc_err_set (err, GC_COMPRESS_ERR_NOMEM, "compressor: out of memory");
            goto fail;
        }
    }
    if (self->method == GC_METHOD_POWERSGD && gc_powersgd_init (self, err))
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
        gc_err_set (err, GC_COMPRESS_ERR_INPUT, "compressor: empty layout");
        return NULL;
    }
    //  gc_parse's helpers report code 1, which is GC_COMPRESS_ERR_SPEC.
    gc_spec_t sp;
    if (gc_spec_split (&sp, spec, ':', "compressor spec", err))
        return NULL;
    return s_new (spec, &sp, 0, layout, seed, err);
}

void
gc_compressor_destroy (gc_compressor_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_compressor_t *self = *self_p;
    gc_lbs_destroy (&self->lbs);
    gc_select_destroy (&self->select);
    gc_powersgd_free (self);
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
    uint64_t seed = self->method == GC_METHOD_RANDK ? gc_randk_round_seed (self->seed, round) : 0;
    if (gc_payload_begin (out, &self->layout, self->method, flags, seed, err))
        return -1;
    if (lo >= hi)
        return 0;
    const gc_layout_t *layout = &self->layout;
    size_t base = layout->layers [lo].offset;
    size_t m = layout->layers [hi - 1].offset + layout->layers [hi - 1].count - base;
    //  Top-k and threshold check finiteness inside their selection pass.
    if (self->method != GC_METHOD_TOPK && self->method != GC_METHOD_THRESHOLD) {
        size_t bad = gc_vec_first_nonfinite (x + base, m);
        if (bad < m)
            return gc_err_set (err, GC_COMPRESS_ERR_INPUT, "input x[%zu] = %g is not finite",
                               base + bad, (double) x [base + bad]);
    }
    switch (self->method) {
        case GC_METHOD_NONE:
        case GC_METHOD_FP16:
            for (size_t l = lo; l < hi; l++)
                if (gc_payload_dense_section (out, layout, l, x, self->valfmt, err))
                    return -1;
            return 0;
        case GC_METHOD_TOPK:      return gc_topk_encode (self, x, round, lo, hi, out, err);
        case GC_METHOD_THRESHOLD: return gc_threshold_encode (self, x, lo, hi, out, err);
        case GC_METHOD_RANDK:     return gc_randk_encode (self, x, seed, lo, hi, out, err);
        case GC_METHOD_QSGD:      return gc_qsgd_encode (self, x, round, lo, hi, out, err);
        case GC_METHOD_SIGN:      return gc_sign_encode (self, x, lo, hi, out, err);
        default:                  return gc_powersgd_encode (self, x, lo, hi, out, err);
    }
}

int
gc_compressor_compress (gc_compressor_t *self, const float *x, uint64_t round,
                        gc_buf_t *out, gc_err_t *err)
{
    if (!x || !out)
        return gc_err_set (err, GC_COMPRESS_ERR_INPUT, "compressor: NULL input or output");
    if (self->lbs)
        return gc_lbs_compress (self->lbs, x, round, out, err);
    return gc_compressor_encode_range (self, x, round, 0, self->layout.n_layers, 0, out, err);
}
