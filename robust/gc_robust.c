/*  gc_robust — spec parsing, validation, and the aggregation pipeline. The
    rules and pre-aggregations themselves are in their own files, listed in
    gc_robust_rules.c; this file only goes through those lists.

    Pre-aggregations (nnm, bucket) are kept as a mixing matrix M over the
    original inputs (virtual input a = sum_j M[a][j] x_j) instead of being
    materialised at once: distance rules then need one Gram pass over the
    originals, whose distances give the virtual inputs' distances exactly
    (for rows a, b of M, which sum to 1, ||v_a - v_b||^2 = -1/2 (M_a - M_b)^T
    D (M_a - M_b)), and Krum after NNM only reads what it outputs. Rules that
    need coordinates (median, trimmed mean, gm, clipping) get the virtual
    inputs materialised in one pass. */
#include "gc_robust.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_parse.h"
#include "gc_rng.h"
#include "gc_robust_internal.h"
#include "gc_robust_rule.h"
#include "gc_vec.h"

//  --- Spec parsing ------------------------------------------------------------

//  Shortest %g form that reads back as the same double.
void
gc_robust_fmt_double (char *buf, size_t size, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf (buf, size, "%.*g", prec, v);
        if (strtod (buf, NULL) == v)
            return;
    }
}

int
gc_robust_parse_count_error (const gc_robust_params_t *r, const char *text, gc_err_t *err)
{
    return gc_err_set (err, GC_E_SPEC, "'%s': wrong number of parameters (%s)",
                       text, r->desc->usage);
}

int
gc_robust_parse_plain (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    return t->n == 1 ? 0 : gc_robust_parse_count_error (r, text, err);
}

void
gc_robust_describe_plain (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    gc_text_add (buf, size, used, "%s", r->desc->name);
}

static int
s_parse_rule (gc_robust_params_t *r, gc_spec_t *t, const char *text, gc_err_t *err)
{
    //  Parameters are bounded so that every min_inputs fits GC_ROBUST_MAX_INPUTS.
    *r = (gc_robust_params_t) { .desc = gc_robust_rule_find (t->tok [0]), .f = -1 };
    if (!r->desc) {
        char known [512];
        return gc_err_set (err, GC_E_SPEC, "'%s': unknown rule '%s' (known: %s)",
                           text, t->tok [0], gc_robust_known (known, sizeof known));
    }
    return r->desc->parse (r, t, text, err);
}

static int
s_parse_pre (gc_robust_stage_t *p, gc_spec_t *t, const char *text, gc_err_t *err)
{
    p->desc = gc_robust_pre_find (t->tok [0]);
    int lo = p->desc && p->desc->min_tokens ? p->desc->min_tokens : 1;
    if (!p->desc || t->n < lo || t->n > p->desc->max_tokens) {
        char known [128];
        return gc_err_set (err, GC_E_SPEC, "'%s': a pre-aggregation before '+' must be %s",
                           text, gc_robust_pres_known (known, sizeof known));
    }
    return p->desc->parse (p, t, text, err);
}

static void
s_make_name (gc_robust_t *self)
{
    size_t used = 0;
    for (size_t i = 0; i < self->n_pre; i++)
        self->pre [i].desc->describe (&self->pre [i], self->name, sizeof self->name, &used);
    self->rule.desc->describe (&self->rule, self->name, sizeof self->name, &used);
}

static size_t
s_rule_min_inputs (const gc_robust_params_t *r)
{
    return r->desc->min_inputs ? r->desc->min_inputs (r) : 1;
}

static int
s_parse (gc_robust_t *self, const char *spec, gc_err_t *err)
{
    gc_spec_t stages, t;
    int rc = gc_spec_split (&stages, spec, '+', "robust rule", err);
    for (int i = 0; i < stages.n && !rc; i++) {
        const char *text = stages.tok [i];
        rc = gc_spec_split (&t, text, ':', "robust rule", err);
        for (int j = 0; j < t.n && !rc; j++)
            if (!*t.tok [j])
                rc = gc_err_set (err, GC_E_SPEC, "'%s': empty field", text);
        if (!rc)
            rc = i + 1 < stages.n ? s_parse_pre (&self->pre [self->n_pre++], &t, text, err)
                                  : s_parse_rule (&self->rule, &t, text, err);
    }
    if (rc) {
        //  The parse helpers use their own codes: report one.
        gc_err_prefix (err, "robust rule '%s': ", spec);
        if (err)
            err->code = GC_E_SPEC;
        return -1;
    }
    //  min_inputs composes right to left.
    size_t need = s_rule_min_inputs (&self->rule);
    for (size_t i = self->n_pre; i-- > 0; ) {
        gc_robust_stage_t *pre = &self->pre [i];
        if (pre->desc->compose (pre, &self->rule, &need, spec, err))
            return -1;
        if (need > GC_ROBUST_MAX_INPUTS)
            return gc_err_set (err, GC_E_SPEC, "robust rule '%s' needs more than %d inputs",
                               spec, GC_ROBUST_MAX_INPUTS);
    }
    self->min_inputs = need;
    s_make_name (self);
    return 0;
}

//  --- Object -------------------------------------------------------------------

gc_robust_t *
gc_robust_new (const char *spec, gc_err_t *err)
{
    if (!spec) {
        gc_err_set (err, GC_E_SPEC, "robust rule: missing");
        return NULL;
    }
    gc_robust_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "robust rule: out of memory");
        return NULL;
    }
    if (s_parse (self, spec, err)) {
        free (self);
        return NULL;
    }
    gc_robust_set_seed (self, 0);
    return self;
}

gc_robust_t *
gc_robust_new_fallback (const gc_robust_t *self, size_t k, gc_err_t *err)
{
    if (!self || k >= self->min_inputs || self->rule.f <= 0) {
        gc_err_set (err, GC_E_INPUT, "robust rule '%s': no weaker variant for %zu inputs", self ? self->name : "?", k);
        return NULL;
    }
    for (long f = self->rule.f - 1; f >= 0; f--) {
        gc_robust_t *w = calloc (1, sizeof *w);
        if (!w) {
            gc_err_set (err, GC_E_NOMEM, "robust rule: out of memory");
            return NULL;
        }
        w->rule = self->rule;
        w->rule.f = f;
        if (w->rule.desc == &gc_robust_rule_mkrum && w->rule.m > (long) k - f)
            w->rule.m = (long) k - f;
        size_t need = w->rule.m >= 1 || w->rule.desc != &gc_robust_rule_mkrum ? s_rule_min_inputs (&w->rule)
                                                                             : SIZE_MAX;
        //  nnm's F counts the same Byzantine inputs as the rule's f
        w->n_pre = self->n_pre;
        for (size_t i = self->n_pre; i-- > 0 && need <= k; ) {
            w->pre [i] = self->pre [i];
            if (w->pre [i].desc == &gc_robust_pre_nnm && w->pre [i].arg > f)
                w->pre [i].arg = f;
            if (w->pre [i].desc->compose (&w->pre [i], &w->rule, &need, self->name, NULL))
                need = SIZE_MAX;
        }
        if (need <= k) {
            w->min_inputs = need;
            w->rng = self->rng;
            w->ws.portable = self->ws.portable;
            s_make_name (w);
            return w;
        }
        free (w);
    }
    gc_err_set (err, GC_E_INPUT, "robust rule '%s': %zu inputs support no weaker variant", self->name, k);
    return NULL;
}

void
gc_robust_destroy (gc_robust_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_robust_t *self = *self_p;
    gc_robust_ws_free (&self->ws);
    if (self->state && self->rule.desc->fini)
        self->rule.desc->fini (self->state);
    free (self->bad);
    free (self);
    *self_p = NULL;
}

size_t
gc_robust_min_inputs (const gc_robust_t *self)
{
    return self->min_inputs;
}

const char *
gc_robust_name (const gc_robust_t *self)
{
    return self->name;
}

int
gc_robust_f (const gc_robust_t *self)
{
    return (int) self->rule.f;
}

int
gc_robust_bad_input (const gc_robust_t *self)
{
    return self->n_bad ? (int) self->bad [0] : -1;
}

size_t
gc_robust_bad_inputs (const gc_robust_t *self, size_t *idx, size_t max)
{
    size_t n = self->n_bad < max ? self->n_bad : max;
    if (idx)
        memcpy (idx, self->bad, n * sizeof *idx);
    return self->n_bad;
}

const gc_robust_info_t *
gc_robust_info (const gc_robust_t *self)
{
    return &self->info;
}

void
gc_robust_set_seed (gc_robust_t *self, uint64_t seed)
{
    gc_rng_init (&self->rng, seed, 0x6275636b6574ull);     /* "bucket" */
}

void
gc_robust_set_portable (gc_robust_t *self, bool portable)
{
    self->ws.portable = portable;
}

//  --- Workspace ----------------------------------------------------------------

#define S_GROW(ptr, n) \
    (gc_mem_free (ptr), (ptr) = gc_aligned_alloc ((n) * sizeof *(ptr)), (ptr) != NULL)

int
gc_robust_ws_reserve_k (gc_robust_ws_t *ws, size_t k)
{
    if (k <= ws->k_cap)
        return 0;
    size_t k2 = k * k;
    ws->k_cap = 0;
    if (!S_GROW (ws->dist, k2) || !S_GROW (ws->vdist, k2) || !S_GROW (ws->mix, k2)
    ||  !S_GROW (ws->mix2, k2) || !S_GROW (ws->mixc, k) || !S_GROW (ws->gram, k2)
    ||  !S_GROW (ws->mixlist, k2) || !S_GROW (ws->mixnz, k)
    ||  !S_GROW (ws->scale, k)
    ||  !S_GROW (ws->lanes, 16 * k)
    ||  !S_GROW (ws->vw, k) || !S_GROW (ws->vec_a, k) || !S_GROW (ws->vec_b, k)
    ||  !S_GROW (ws->idx, k) || !S_GROW (ws->idx2, k) || !S_GROW (ws->ptrs, k)
    ||  !S_GROW (ws->rows, k) || !S_GROW (ws->coef, k + 1)
    ||  !S_GROW (ws->wsum_in, k) || !S_GROW (ws->wsum_coef, k))
        return -1;
    if (!ws->acc && !S_GROW (ws->acc, GC_ROBUST_TB))
        return -1;
    ws->k_cap = k;
    return 0;
}

int
gc_robust_ws_reserve_tile (gc_robust_ws_t *ws, size_t rows)
{
    if (rows <= ws->tile_rows)
        return 0;
    ws->tile_rows = 0;
    if (!S_GROW (ws->tile, rows * GC_ROBUST_TB))
        return -1;
    ws->tile_rows = rows;
    return 0;
}

int
gc_robust_ws_reserve_dtile (gc_robust_ws_t *ws, size_t rows)
{
    if (rows <= ws->dtile_rows)
        return 0;
    ws->dtile_rows = 0;
    if (!S_GROW (ws->dtile, rows * GC_ROBUST_TB))
        return -1;
    ws->dtile_rows = rows;
    return 0;
}

int
gc_robust_ws_reserve_vbuf (gc_robust_ws_t *ws, size_t floats)
{
    if (floats <= ws->vbuf_cap)
        return 0;
    ws->vbuf_cap = 0;
    if (!S_GROW (ws->vbuf, floats))
        return -1;
    ws->vbuf_cap = floats;
    return 0;
}

void
gc_robust_ws_free (gc_robust_ws_t *ws)
{
    void *bufs [] = { ws->tile, ws->dtile, ws->gtile, ws->gram, ws->scale, ws->dist, ws->vdist,
                      ws->mix, ws->mix2, ws->mixc, ws->mixlist, ws->mixnz, ws->vw, ws->vec_a, ws->vec_b, ws->acc,
                      ws->idx, ws->idx2, (void *) ws->ptrs, ws->vbuf, ws->lanes, ws->rows, ws->coef,
                      (void *) ws->wsum_in, ws->wsum_coef };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        gc_mem_free (bufs [i]);
    gc_robust_net_free (&ws->net);
    memset (ws, 0, sizeof *ws);
}

//  --- Pipeline helpers the rules share ----------------------------------------

//  Ensure ws->vdist: one Gram pass over the originals, then the quadratic
//  form for mixed inputs. Returns a kernel code (0, 1 non-finite, -1 nomem).
int
gc_robust_vdist (gc_robust_t *self, gc_robust_run_t *st)
{
    gc_robust_ws_t *ws = &self->ws;
    if (st->have_vdist)
        return 0;
    if (!st->have_dist) {
        const float *centre = st->own ? st->own : st->in [0];
        int rc = gc_robust_distances (ws, st->in, st->k, st->d, centre, ws->dist,
                                      &self->info.gram_passes);
        if (rc)
            return rc;
        st->have_dist = true;
    }
    size_t k = st->k, kv = st->kv;
    if (!st->mixed) {
        memcpy (ws->vdist, ws->dist, k * k * sizeof *ws->dist);
        st->have_vdist = true;
        return 0;
    }
    double *diff = ws->vec_a;
    for (size_t a = 0; a < kv; a++) {
        ws->vdist [a * kv + a] = 0;
        for (size_t b = a + 1; b < kv; b++) {
            for (size_t j = 0; j < k; j++)
                diff [j] = ws->mix [a * k + j] - ws->mix [b * k + j];
            double q = 0;
            for (size_t p = 0; p < k; p++) {
                if (diff [p] == 0)
                    continue;
                double row = 0;
                for (size_t j = 0; j < k; j++)
                    row += ws->dist [p * k + j] * diff [j];
                q += diff [p] * row;
            }
            q = q < 0 ? -0.5 * q : 0;
            ws->vdist [a * kv + b] = ws->vdist [b * kv + a] = q;
        }
    }
    st->have_vdist = true;
    return 0;
}

//  Make the mixing matrix explicit (identity) before the first stage edits it.
void
gc_robust_ensure_mix (gc_robust_t *self, gc_robust_run_t *st)
{
    if (st->mixed)
        return;
    size_t k = st->k;
    memset (self->ws.mix, 0, k * k * sizeof *self->ws.mix);
    for (size_t i = 0; i < k; i++)
        self->ws.mix [i * k + i] = 1;
    st->mixed = true;
}

//  Order idx[0..n) by (key, key2, index); key2 may be NULL. A heapsort:
//  glibc's qsort allocates a buffer for arrays over 1 KB, and aggregate
//  must not allocate in steady state. The order is total, so the result
//  is unique.
typedef struct {
    const double *key, *key2;
} s_keys_t;

static bool
s_before (const s_keys_t *keys, size_t i, size_t j)
{
    if (keys->key [i] != keys->key [j])
        return keys->key [i] < keys->key [j];
    if (keys->key2 && keys->key2 [i] != keys->key2 [j])
        return keys->key2 [i] < keys->key2 [j];
    return i < j;
}

static void
s_sift_down (size_t *idx, size_t root, size_t n, const s_keys_t *keys)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && s_before (keys, idx [child], idx [child + 1]))
            child++;
        if (!s_before (keys, idx [root], idx [child]))
            return;
        size_t t = idx [root];
        idx [root] = idx [child];
        idx [child] = t;
        root = child;
    }
}

void
gc_robust_order2 (size_t *idx, size_t n, const double *key, const double *key2)
{
    s_keys_t keys = { key, key2 };
    for (size_t i = 0; i < n; i++)
        idx [i] = i;
    for (size_t i = n / 2; i-- > 0; )
        s_sift_down (idx, i, n, &keys);
    for (size_t end = n; end-- > 1; ) {
        size_t t = idx [0];
        idx [0] = idx [end];
        idx [end] = t;
        s_sift_down (idx, 0, end, &keys);
    }
}

void
gc_robust_order (size_t *idx, size_t n, const double *key)
{
    gc_robust_order2 (idx, n, key, NULL);
}

//  --- Running the rule ------------------------------------------------------------

//  Weights normalised to sum 1 (ws->vw holds the raw non-negative weights).
static void
s_normalised (const double *w, size_t n, double *out)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += w [i];
    for (size_t i = 0; i < n; i++)
        out [i] = sum > 0 ? w [i] / sum : 1.0 / (double) n;
}

double
gc_robust_clip_factor (double d2, double tau)
{
    double dist = sqrt (d2);
    return dist > tau ? tau / dist : 1.0;
}

//  Materialise the virtual inputs (if mixed) and run a coordinate rule.
static int
s_rule_coords (gc_robust_t *self, gc_robust_run_t *st, float *out)
{
    gc_robust_ws_t *ws = &self->ws;
    size_t n = st->kv, d = st->d;
    const float *const *x = st->in;
    int rc;
    size_t lo, hi;
    //  One window of the sorted virtual inputs: formed block by block.
    if (st->mixed && self->rule.desc->window) {
        self->rule.desc->window (&self->rule, n, &lo, &hi);
        return gc_robust_mix_window (ws, st->in, st->k, d, ws->mix, n, lo, hi, out);
    }
    if (st->mixed) {
        if (gc_robust_ws_reserve_vbuf (ws, n * d))
            return -1;
        for (size_t a = 0; a < n; a++)
            ws->ptrs [a] = ws->rows [a] = ws->vbuf + a * d;
        if ((rc = gc_robust_mix (ws, st->in, st->k, d, ws->mix, n, ws->rows)))
            return rc;
        x = ws->ptrs;
    }
    double *w = ws->mix2;       /* free after the pre-aggregations */
    s_normalised (ws->vw, n, w);
    return self->rule.desc->run (self, st, x, w, out);
}

static int
s_run (gc_robust_t *self, gc_robust_run_t *st, float *out)
{
    const gc_robust_rule_t *rule = self->rule.desc;
    if (rule->needs_centre && !st->own)
        return 2;
    int rc = 0;
    for (size_t i = 0; i < self->n_pre && !rc; i++)
        rc = self->pre [i].desc->stage (self, st, &self->pre [i]);
    if (rc)
        return rc;
    if (st->kv < s_rule_min_inputs (&self->rule))
        return 2;
    return rule->coords ? s_rule_coords (self, st, out) : rule->run (self, st, NULL, NULL, out);
}

//  --- Entry points ---------------------------------------------------------------

static bool
s_overlap (const float *a, const float *b, size_t d)
{
    uintptr_t pa = (uintptr_t) a, pb = (uintptr_t) b, len = d * sizeof (float);
    return pa < pb + len && pb < pa + len;
}

static int
s_validate (gc_robust_t *self, const float *const *inputs, const double *weights, size_t k,
            size_t d, int self_index, const float *centre, const float *out, gc_err_t *err)
{
    const char *name = self->name;
    if (!inputs || !out)
        return gc_err_set (err, GC_E_ARG, "%s: inputs and out must not be NULL", name);
    if (k == 0 || k > GC_ROBUST_MAX_INPUTS)
        return gc_err_set (err, GC_E_INPUT, "%s: k = %zu inputs, must be 1..%d",
                           name, k, GC_ROBUST_MAX_INPUTS);
    if (k < self->min_inputs)
        return gc_err_set (err, GC_E_INPUT, "%s: needs at least %zu inputs, got k = %zu",
                           name, self->min_inputs, k);
    if (d == 0 || d > SIZE_MAX / sizeof (float) / GC_ROBUST_MAX_INPUTS)
        return gc_err_set (err, GC_E_INPUT, "%s: dimension d = %zu out of range", name, d);
    if (self_index < -1 || self_index >= (int) k)
        return gc_err_set (err, GC_E_INPUT, "%s: self_index %d is not in -1..%zu",
                           name, self_index, k - 1);
    for (size_t i = 0; i < k; i++) {
        if (!inputs [i])
            return gc_err_set (err, GC_E_ARG, "%s: input %zu is NULL", name, i);
        if (s_overlap (inputs [i], out, d))
            return gc_err_set (err, GC_E_ARG, "%s: out overlaps input %zu", name, i);
    }
    if (centre && centre != out && s_overlap (centre, out, d))
        return gc_err_set (err, GC_E_ARG, "%s: out overlaps the centre", name);
    if (centre && !gc_vec_all_finite (centre, d))
        return gc_err_set (err, GC_E_INPUT, "%s: the centre holds NaN or Inf", name);
    if (weights) {
        double sum = 0;
        for (size_t i = 0; i < k; i++) {
            if (!isfinite (weights [i]) || weights [i] < 0)
                return gc_err_set (err, GC_E_WEIGHTS, "%s: weight %zu is %g", name, i, weights [i]);
            sum += weights [i];
        }
        if (!(sum > 0) || !isfinite (sum))
            return gc_err_set (err, GC_E_WEIGHTS, "%s: the weights sum to %g", name, sum);
    }
    return 0;
}

//  The mix's x may be the own vector or the centre itself, nothing else the
//  call reads or writes.
static int
s_validate_mix (gc_robust_t *self, const float *const *inputs, size_t k, size_t d,
                int self_index, const float *centre, const float *out, gc_err_t *err)
{
    const gc_robust_mix_t *m = &self->mix;
    if (!m->x)
        return 0;
    const float *own = centre ? centre : self_index >= 0 ? inputs [self_index] : NULL;
    if (!m->centre)
        return gc_err_set (err, GC_E_ARG, "%s: the mix has no centre", self->name);
    if (s_overlap (m->x, out, d))
        return gc_err_set (err, GC_E_ARG, "%s: the mix's x overlaps out", self->name);
    for (size_t i = 0; i < k; i++) {
        if (inputs [i] == m->x && m->x != own)
            return gc_err_set (err, GC_E_ARG, "%s: the mix's x is input %zu, not the own vector",
                               self->name, i);
        if (inputs [i] != m->x && s_overlap (m->x, inputs [i], d))
            return gc_err_set (err, GC_E_ARG, "%s: the mix's x overlaps input %zu", self->name, i);
    }
    if (m->x != m->centre && s_overlap (m->x, m->centre, d))
        return gc_err_set (err, GC_E_ARG, "%s: the mix's x overlaps its centre", self->name);
    if ((m->x == own) != (m->x == m->centre))
        return gc_err_set (err, GC_E_ARG, "%s: the mix's x is the own vector or its centre, "
                           "not both", self->name);
    return 0;
}

//  What the caller set for one call (gc_robust_set_keys, gc_robust_set_mix),
//  forgotten when it returns.
static void
s_forget_call (gc_robust_t *self)
{
    gc_robust_set_keys (self, NULL, NULL, 0);
    self->mix.x = NULL;
}

//  After a kernel saw NaN/Inf: find every input that holds one.
static int
s_report_nonfinite (gc_robust_t *self, const float *const *inputs, size_t k, size_t d,
                    gc_err_t *err)
{
    if (self->bad_cap < k) {
        size_t *bad = realloc (self->bad, k * sizeof *bad);
        if (!bad)
            return gc_err_set (err, GC_E_NOMEM, "%s: out of memory", self->name);
        self->bad = bad;
        self->bad_cap = k;
    }
    size_t first_at = 0;
    for (size_t i = 0; i < k; i++) {
        size_t at = gc_vec_first_nonfinite (inputs [i], d);
        if (at < d) {
            if (!self->n_bad)
                first_at = at;
            self->bad [self->n_bad++] = i;
        }
    }
    if (!self->n_bad)
        return gc_err_set (err, GC_E_NONFINITE, "%s: a non-finite value appeared", self->name);
    return gc_err_set (err, GC_E_NONFINITE, "%s: input %zu holds NaN or Inf (coordinate %zu)%s",
                       self->name, self->bad [0], first_at,
                       self->n_bad > 1 ? ", and more inputs do" : "");
}

int
gc_robust_aggregate_centered (gc_robust_t *self, const float *const *inputs,
                              const double *weights, size_t k, size_t d, int self_index,
                              const float *centre, float *out, gc_err_t *err)
{
    self->n_bad = 0;
    self->mixed = false;
    self->info.n_selected = 0;
    self->info.iterations = 0;
    self->info.tau = 0;
    self->info.n_clipped = 0;
    self->info.gram_passes = 0;
    if (s_validate (self, inputs, weights, k, d, self_index, centre, out, err)
    ||  s_validate_mix (self, inputs, k, d, self_index, centre, out, err)) {
        s_forget_call (self);
        return -1;
    }
    gc_robust_ws_t *ws = &self->ws;
    if (gc_robust_ws_reserve_k (ws, k)) {
        s_forget_call (self);
        return gc_err_set (err, GC_E_NOMEM, "%s: out of memory for k = %zu", self->name, k);
    }
    for (size_t i = 0; i < k; i++)
        ws->vw [i] = weights ? weights [i] : 1.0;
    gc_robust_run_t st = {
        .in = inputs, .k = k, .d = d, .kv = k,
        .own = centre ? centre : self_index >= 0 ? inputs [self_index] : NULL
    };
    int rc = s_run (self, &st, out);     /* guard sets mixed when it mixed */
    s_forget_call (self);
    if (rc == 1)
        return s_report_nonfinite (self, inputs, k, d, err);
    if (rc == 2)
        return gc_err_set (err, GC_E_INPUT,
                           self->rule.desc->needs_centre
                           ? "%s: needs the peer's own vector (self_index or a centre)"
                           : "%s: too few inputs left after pre-aggregation", self->name);
    if (rc)
        return gc_err_set (err, GC_E_NOMEM, "%s: out of memory (k = %zu, d = %zu)",
                           self->name, k, d);
    return 0;
}

int
gc_robust_aggregate (gc_robust_t *self, const float *const *inputs, const double *weights,
                     size_t k, size_t d, int self_index, float *out, gc_err_t *err)
{
    return gc_robust_aggregate_centered (self, inputs, weights, k, d, self_index, NULL, out, err);
}

void
gc_robust_set_mix (gc_robust_t *self, float *x, const float *centre, float gamma)
{
    self->mix = (gc_robust_mix_t) { .x = x, .centre = centre, .gamma = gamma };
}

bool
gc_robust_mixed (const gc_robust_t *self)
{
    return self->mixed;
}

bool
gc_robust_suspects (const gc_robust_t *self, uint64_t key)
{
    const gc_robust_rule_t *r = self->rule.desc;
    return self->state && r->suspects && r->suspects (self->state, key);
}

void
gc_robust_set_keys (gc_robust_t *self, const uint64_t *keys, const bool *moved, size_t k)
{
    self->keys = keys;
    self->moved = keys ? moved : NULL;
    self->n_keys = keys ? k : 0;
}
