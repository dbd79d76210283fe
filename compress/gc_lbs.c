/*  LBS — layer-based sparsification: each round only a contiguous window of
    layers is sent (through the inner method); the others are deferred.
    The exact rule and its reasons are in docs/ALGORITHMS.md. In short:
        v_l   = deferred_l + x_l (or x_l when deferral is off),
        ms_l  = |v_l|^2 / count_l, the layer's mean-square pending change,
        avg   = sum_l |v_l|^2 / n, the same over the whole model,
        starving_l = age_l + 1 >= maxage;
    the window starts at the oldest starving layer, else at the layer with
    the largest ms_l, and grows one neighbour at a time (starving first,
    then larger ms) while the neighbour is starving or has
    ms >= keep^2 * avg, and the window stays within budget * n parameters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_method.h"
#include "gc_mem.h"
#include "gc_payload.h"
#include "gc_vec.h"

struct gc_lbs_t {
    const gc_layout_t *layout;      /* the inner compressor's copy */
    gc_compressor_t   *inner;
    double             budget;      /* share of n_params a window may cover */
    uint32_t           maxage;
    double             keep;
    bool               defer;
    float             *pending;     /* deferred sums (defer on) */
    uint32_t          *age;         /* rounds since the layer was last sent */
    double            *ms;
};

gc_lbs_t *
gc_lbs_new (const gc_layout_t *layout, double budget, uint32_t maxage, double keep,
            gc_compressor_t *inner, gc_err_t *err)
{
    gc_lbs_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "lbs: out of memory");
        return NULL;
    }
    self->inner = inner;
    self->layout = gc_compressor_layout (inner);
    self->budget = budget;
    self->maxage = maxage ? maxage : 1;
    self->keep = keep;
    self->defer = true;
    self->pending = gc_falloc (layout->n_params);
    self->age = calloc (layout->n_layers, sizeof *self->age);
    self->ms = calloc (layout->n_layers, sizeof *self->ms);
    if (!self->pending || !self->age || !self->ms) {
        gc_err_set (err, GC_E_NOMEM, "lbs: out of memory for %zu floats", layout->n_params);
        self->inner = NULL;
        gc_lbs_destroy (&self);
        return NULL;
    }
    return self;
}

void
gc_lbs_destroy (gc_lbs_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_lbs_t *self = *self_p;
    gc_compressor_destroy (&self->inner);
    gc_mem_free (self->pending);
    free (self->age);
    free (self->ms);
    free (self);
    *self_p = NULL;
}

#define S_DEFAULT_BUDGET 0.25
#define S_DEFAULT_MAXAGE 8
#define S_DEFAULT_KEEP   0.5

//  "lbs[:key=value...]:INNER": the options, then the inner compressor.
static int
s_parse (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    double budget = S_DEFAULT_BUDGET, maxage = S_DEFAULT_MAXAGE, keep = S_DEFAULT_KEEP;
    int i = *at;
    for (; i < sp->n && strchr (sp->tok [i], '='); i++) {
        bool m1, m2, m3;
        if (gc_compress_opt_keyval (sp->tok [i], "budget", 1e-6, 1.0, &budget, &m1, err)
        ||  gc_compress_opt_keyval (sp->tok [i], "maxage", 1, 1e6, &maxage, &m2, err)
        ||  gc_compress_opt_keyval (sp->tok [i], "keep", 0.0, 1.0, &keep, &m3, err))
            return -1;
        if (!m1 && !m2 && !m3)
            return gc_err_set (err, GC_E_SPEC, "unknown lbs option '%s' "
                               "(budget=, maxage=, keep=)", sp->tok [i]);
    }
    const gc_compress_method_t *next = i < sp->n ? gc_compress_method_find (sp->tok [i]) : NULL;
    if (i >= sp->n || (next && next->wrapper))
        return gc_err_set (err, GC_E_SPEC, "lbs needs an inner method "
                           "other than lbs (e.g. lbs:topk:0.01)");
    gc_compressor_t *inner = gc_compressor_new_at (sp, i, &self->layout, self->seed, err);
    if (!inner)
        return -1;
    //  The header is the inner method's: a receiver needs no notion of LBS.
    self->method = inner->method;
    self->lbs = gc_lbs_new (&self->layout, budget, (uint32_t) maxage, keep, inner, err);
    if (!self->lbs) {
        gc_compressor_destroy (&inner);
        return -1;
    }
    *at = sp->n;
    return 0;
}

static void
s_options (const gc_lbs_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "budget=%g:maxage=%u:keep=%g", self->budget, self->maxage, self->keep);
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    char desc [64];
    s_options (self->lbs, desc, sizeof desc);
    snprintf (buf, size, "lbs:%.60s:%.90s", desc, gc_compressor_name (self->lbs->inner));
}

void
gc_lbs_set_defer (gc_lbs_t *self, bool on)
{
    if (self->defer && !on)
        gc_vec_zero (self->pending, self->layout->n_params);
    self->defer = on;
}

gc_compressor_t *
gc_lbs_inner (gc_lbs_t *self)
{
    return self->inner;
}

const float *
gc_lbs_deferred (const gc_lbs_t *self)
{
    return self->defer ? self->pending : NULL;
}

void
gc_lbs_note_all_sent (gc_lbs_t *self)
{
    memset (self->age, 0, self->layout->n_layers * sizeof *self->age);
}

//  pending += x over a layer and return |pending|^2 (blocked float sums).
static double
s_accumulate (float *restrict p, const float *restrict x, size_t n)
{
    double total = 0;
    for (size_t i = 0; i < n; i += 256) {
        size_t end = i + 256 < n ? i + 256 : n;
        float part = 0;
        for (size_t j = i; j < end; j++) {
            p [j] += x [j];
            part += p [j] * p [j];
        }
        total += part;
    }
    return total;
}

//  Does layer l outrank layer o as the next one to add (or to start with)?
static bool
s_before (const gc_lbs_t *self, size_t l, size_t o, bool by_age)
{
    bool sl = self->age [l] + 1 >= self->maxage, so = self->age [o] + 1 >= self->maxage;
    if (sl != so)
        return sl;
    if (by_age && sl && self->age [l] != self->age [o])
        return self->age [l] > self->age [o];
    if (self->ms [l] != self->ms [o])
        return self->ms [l] > self->ms [o];
    return l < o;
}

int
gc_lbs_compress (gc_lbs_t *self, const float *x, uint64_t round, gc_buf_t *out, gc_err_t *err)
{
    const gc_layout_t *layout = self->layout;
    size_t nl = layout->n_layers, n = layout->n_params;
    size_t bad = gc_vec_first_nonfinite (x, n);
    if (bad < n)
        return gc_err_set (err, GC_E_NONFINITE, "input x[%zu] = %g is not finite",
                           bad, (double) x [bad]);
    const float *v = self->defer ? self->pending : x;
    double total = 0;
    for (size_t l = 0; l < nl; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        double sq = self->defer
                  ? s_accumulate (self->pending + layer->offset, x + layer->offset, layer->count)
                  : gc_vec_norm2sq (x + layer->offset, layer->count);
        self->ms [l] = sq / (double) layer->count;
        total += sq;
    }
    double floor_ms = self->keep * self->keep * total / (double) n;
    //  Start: the oldest starving layer, else the largest pending change.
    size_t start = 0;
    for (size_t l = 1; l < nl; l++)
        if (s_before (self, l, start, true))
            start = l;
    double limit = self->budget * (double) n;
    double used = (double) layout->layers [start].count;
    size_t lo = start, hi = start + 1;
    for (;;) {
        bool left_ok = false, right_ok = false;
        if (lo > 0) {
            size_t l = lo - 1;
            left_ok = (self->age [l] + 1 >= self->maxage || self->ms [l] >= floor_ms)
                   && used + (double) layout->layers [l].count <= limit;
        }
        if (hi < nl) {
            size_t l = hi;
            right_ok = (self->age [l] + 1 >= self->maxage || self->ms [l] >= floor_ms)
                    && used + (double) layout->layers [l].count <= limit;
        }
        if (!left_ok && !right_ok)
            break;
        bool take_left = left_ok && (!right_ok || s_before (self, lo - 1, hi, false));
        size_t l = take_left ? --lo : hi++;
        used += (double) layout->layers [l].count;
    }
    if (gc_compressor_encode_range (self->inner, v, round, lo, hi, GC_PAYLOAD_FLAG_LBS, out, err))
        return -1;
    for (size_t l = 0; l < nl; l++) {
        if (l >= lo && l < hi) {
            self->age [l] = 0;
            if (self->defer)
                gc_vec_zero (self->pending + layout->layers [l].offset, layout->layers [l].count);
        }
        else if (self->age [l] < UINT32_MAX)
            self->age [l]++;
    }
    return 0;
}

static int
s_compress (gc_compressor_t *self, const float *x, uint64_t round, gc_buf_t *out, gc_err_t *err)
{
    return gc_lbs_compress (self->lbs, x, round, out, err);
}

const gc_compress_method_t gc_method_lbs = {
    .name = "lbs", .wire_id = -1,
    .usage = "lbs[:budget=0.25][:maxage=8][:keep=0.5]:INNER",
    .help = "a window of layers per round through INNER (any method but lbs); the rest deferred",
    .example = "lbs:budget=0.5:maxage=4:topk:0.2", .malformed = "lbs:width=3:topk",
    .wrapper = true,
    .parse = s_parse, .describe = s_describe, .compress = s_compress,
};
