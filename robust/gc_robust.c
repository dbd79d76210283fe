/*  gc_robust — spec parsing, validation, and the aggregation pipeline.

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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_parse.h"
#include "gc_rng.h"
#include "gc_robust_internal.h"
#include "gc_vec.h"

typedef enum {
    S_MEAN, S_CWMED, S_CWTM, S_KRUM, S_MKRUM, S_BULYAN, S_GM, S_CCLIP, S_SCCLIP
} s_kind_t;

typedef struct {
    s_kind_t kind;
    long     f;             /* cwtm b; krum, mkrum, bulyan f; -1 when none */
    long     m;             /* mkrum: inputs averaged */
    double   nu, tol;       /* gm */
    long     iters;         /* gm: iteration cap; cclip: L */
    double   tau;           /* cclip, scclip (fixed) */
    bool     adaptive;      /* scclip */
    double   delta;         /* scclip adaptive: Byzantine weight bound */
} s_rule_t;

typedef enum { S_NNM, S_BUCKET } s_pre_kind_t;

typedef struct {
    s_pre_kind_t kind;
    long f;                 /* nnm */
    long s;                 /* bucket size */
} s_pre_t;

#define S_MAX_PRE (GC_SPEC_MAX_TOKENS - 1)

//  Defaults (docs/ALGORITHMS.md lists them with the reasons).
#define S_GM_NU      1e-6
#define S_GM_ITERS   32
#define S_GM_TOL     1e-6
#define S_CCLIP_TAU  10.0
#define S_CCLIP_L    3
#define S_SCCLIP_DELTA 0.25

struct gc_robust_t {
    s_pre_t   pre [S_MAX_PRE];
    size_t    n_pre;
    s_rule_t  rule;
    size_t    min_inputs;
    char      name [2 * GC_SPEC_MAX_LEN];
    gc_rng_t  rng;
    gc_robust_ws_t   ws;
    gc_robust_info_t info;
    size_t   *bad;          /* inputs found non-finite by the last call */
    size_t    n_bad, bad_cap;
};

//  --- Spec parsing ------------------------------------------------------------

//  Shortest %g form that reads back as the same double.
static void
s_fmt_double (char *buf, size_t size, double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf (buf, size, "%.*g", prec, v);
        if (strtod (buf, NULL) == v)
            return;
    }
}

static int
s_parse_rule (s_rule_t *r, gc_spec_t *t, const char *text, gc_err_t *err)
{
    const char *kind = t->tok [0];
    int n = t->n;
    *r = (s_rule_t) { .f = -1, .nu = S_GM_NU, .tol = S_GM_TOL, .iters = S_GM_ITERS,
                      .tau = S_CCLIP_TAU, .delta = S_SCCLIP_DELTA };
    //  Parameters are bounded so that every min_inputs fits GC_ROBUST_MAX_INPUTS.
    if (!strcmp (kind, "mean") && n == 1)
        r->kind = S_MEAN;
    else
    if (!strcmp (kind, "cwmed") && n == 1)
        r->kind = S_CWMED;
    else
    if (!strcmp (kind, "cwtm") && n == 2) {
        r->kind = S_CWTM;
        return gc_parse_long (t->tok [1], 0, (GC_ROBUST_MAX_INPUTS - 1) / 2, &r->f, "cwtm b", err);
    }
    else
    if (!strcmp (kind, "krum") && n == 2) {
        r->kind = S_KRUM;
        return gc_parse_long (t->tok [1], 0, (GC_ROBUST_MAX_INPUTS - 3) / 2, &r->f, "krum f", err);
    }
    else
    if (!strcmp (kind, "mkrum") && n == 3) {
        r->kind = S_MKRUM;
        if (gc_parse_long (t->tok [1], 0, (GC_ROBUST_MAX_INPUTS - 3) / 2, &r->f, "mkrum f", err)
        ||  gc_parse_long (t->tok [2], 1, GC_ROBUST_MAX_INPUTS - r->f, &r->m, "mkrum m", err))
            return -1;
    }
    else
    if (!strcmp (kind, "bulyan") && n == 2) {
        r->kind = S_BULYAN;
        return gc_parse_long (t->tok [1], 0, (GC_ROBUST_MAX_INPUTS - 3) / 4, &r->f, "bulyan f", err);
    }
    else
    if (!strcmp (kind, "gm") && n <= 4) {
        r->kind = S_GM;
        if ((n > 1 && gc_parse_double (t->tok [1], 1e-30, 1e30, &r->nu, "gm nu", err))
        ||  (n > 2 && gc_parse_long (t->tok [2], 1, 10000, &r->iters, "gm iterations", err))
        ||  (n > 3 && gc_parse_double (t->tok [3], 0, 1, &r->tol, "gm tolerance", err)))
            return -1;
    }
    else
    if (!strcmp (kind, "cclip") && n <= 3) {
        r->kind = S_CCLIP;
        r->iters = S_CCLIP_L;
        if ((n > 1 && gc_parse_double (t->tok [1], 1e-30, 1e30, &r->tau, "cclip tau", err))
        ||  (n > 2 && gc_parse_long (t->tok [2], 1, 10000, &r->iters, "cclip L", err)))
            return -1;
    }
    else
    if (!strcmp (kind, "scclip") && n <= 3) {
        r->kind = S_SCCLIP;
        r->adaptive = n == 1 || !strcmp (t->tok [1], "auto");
        if (r->adaptive) {
            if (n > 2 && gc_parse_double (t->tok [2], 1e-6, 1 - 1e-6, &r->delta, "scclip delta", err))
                return -1;
        }
        else
        if (n > 2 || gc_parse_double (t->tok [1], 1e-30, 1e30, &r->tau, "scclip tau", err))
            return n > 2 ? gc_err_set (err, GC_ROBUST_ESPEC,
                                       "'%s': scclip takes TAU, or auto[:DELTA]", text) : -1;
    }
    else
        return gc_err_set (err, GC_ROBUST_ESPEC,
                           "'%s': unknown rule or wrong number of parameters "
                           "(mean, cwmed, cwtm:B, krum:F, mkrum:F:M, bulyan:F, gm[:NU[:ITERS[:TOL]]], "
                           "cclip[:TAU[:L]], scclip[:TAU], scclip:auto[:DELTA])", text);
    return 0;
}

static int
s_parse_pre (s_pre_t *p, gc_spec_t *t, const char *text, gc_err_t *err)
{
    if (!strcmp (t->tok [0], "nnm") && t->n <= 2) {
        p->kind = S_NNM;
        p->f = -1;
        return t->n == 2 ? gc_parse_long (t->tok [1], 0, GC_ROBUST_MAX_INPUTS - 1, &p->f, "nnm f", err) : 0;
    }
    if (!strcmp (t->tok [0], "bucket") && t->n == 2) {
        p->kind = S_BUCKET;
        return gc_parse_long (t->tok [1], 1, GC_ROBUST_MAX_INPUTS, &p->s, "bucket size", err);
    }
    return gc_err_set (err, GC_ROBUST_ESPEC, "'%s': a pre-aggregation before '+' must be nnm[:F] or bucket:S", text);
}

static size_t
s_rule_min_inputs (const s_rule_t *r)
{
    switch (r->kind) {
        case S_CWTM:   return 2 * (size_t) r->f + 1;
        case S_KRUM:   return 2 * (size_t) r->f + 3;
        case S_MKRUM: {
            size_t a = 2 * (size_t) r->f + 3, b = (size_t) (r->f + r->m);
            return a > b ? a : b;
        }
        case S_BULYAN: return 4 * (size_t) r->f + 3;
        default:       return 1;
    }
}

//  Append to the name, never past its end (names are far shorter anyway:
//  at most 15 pre-aggregations of 12 characters and one rule).
static void
s_name_add (gc_robust_t *self, size_t *used, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void
s_name_add (gc_robust_t *self, size_t *used, const char *fmt, ...)
{
    if (*used >= sizeof self->name)
        return;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (self->name + *used, sizeof self->name - *used, fmt, ap);
    va_end (ap);
    *used += n > 0 ? (size_t) n : 0;
}

static void
s_make_name (gc_robust_t *self)
{
    size_t used = 0;
    for (size_t i = 0; i < self->n_pre; i++) {
        const s_pre_t *pre = &self->pre [i];
        if (pre->kind == S_NNM)
            s_name_add (self, &used, "nnm:%ld+", pre->f);
        else
            s_name_add (self, &used, "bucket:%ld+", pre->s);
    }
    const s_rule_t *r = &self->rule;
    char a [32], b [32];
    switch (r->kind) {
        case S_MEAN:   s_name_add (self, &used, "mean"); break;
        case S_CWMED:  s_name_add (self, &used, "cwmed"); break;
        case S_CWTM:   s_name_add (self, &used, "cwtm:%ld", r->f); break;
        case S_KRUM:   s_name_add (self, &used, "krum:%ld", r->f); break;
        case S_MKRUM:  s_name_add (self, &used, "mkrum:%ld:%ld", r->f, r->m); break;
        case S_BULYAN: s_name_add (self, &used, "bulyan:%ld", r->f); break;
        case S_GM:
            s_fmt_double (a, sizeof a, r->nu);
            s_fmt_double (b, sizeof b, r->tol);
            s_name_add (self, &used, "gm:%s:%ld:%s", a, r->iters, b);
            break;
        case S_CCLIP:
            s_fmt_double (a, sizeof a, r->tau);
            s_name_add (self, &used, "cclip:%s:%ld", a, r->iters);
            break;
        case S_SCCLIP:
            s_fmt_double (a, sizeof a, r->adaptive ? r->delta : r->tau);
            s_name_add (self, &used, r->adaptive ? "scclip:auto:%s" : "scclip:%s", a);
            break;
    }
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
                rc = gc_err_set (err, GC_ROBUST_ESPEC, "'%s': empty field", text);
        if (!rc)
            rc = i + 1 < stages.n ? s_parse_pre (&self->pre [self->n_pre++], &t, text, err)
                                  : s_parse_rule (&self->rule, &t, text, err);
    }
    if (rc) {
        //  The parse helpers use their own codes: report one.
        gc_err_prefix (err, "robust rule '%s': ", spec);
        if (err)
            err->code = GC_ROBUST_ESPEC;
        return -1;
    }
    //  nnm without F takes the rule's f; min_inputs composes right to left.
    size_t need = s_rule_min_inputs (&self->rule);
    for (size_t i = self->n_pre; i-- > 0; ) {
        s_pre_t *pre = &self->pre [i];
        if (pre->kind == S_NNM) {
            if (pre->f < 0 && self->rule.f < 0)
                return gc_err_set (err, GC_ROBUST_ESPEC,
                                   "robust rule '%s': nnm needs F (nnm:F) when the rule has no f", spec);
            if (pre->f < 0)
                pre->f = self->rule.f;
            need = need > (size_t) pre->f + 1 ? need : (size_t) pre->f + 1;
        }
        else
            need = (need - 1) * (size_t) pre->s + 1;
        if (need > GC_ROBUST_MAX_INPUTS)
            return gc_err_set (err, GC_ROBUST_ESPEC, "robust rule '%s' needs more than %d inputs",
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
        gc_err_set (err, GC_ROBUST_ESPEC, "robust rule: missing");
        return NULL;
    }
    gc_robust_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_ROBUST_ENOMEM, "robust rule: out of memory");
        return NULL;
    }
    if (s_parse (self, spec, err)) {
        free (self);
        return NULL;
    }
    gc_robust_set_seed (self, 0);
    return self;
}

void
gc_robust_destroy (gc_robust_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_robust_t *self = *self_p;
    gc_robust_ws_free (&self->ws);
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
    ||  !S_GROW (ws->mix2, k2) || !S_GROW (ws->gram, k2) || !S_GROW (ws->scale, k)
    ||  !S_GROW (ws->lanes, 16 * k)
    ||  !S_GROW (ws->vw, k) || !S_GROW (ws->vec_a, k) || !S_GROW (ws->vec_b, k)
    ||  !S_GROW (ws->idx, k) || !S_GROW (ws->idx2, k) || !S_GROW (ws->ptrs, k)
    ||  !S_GROW (ws->rows, k) || !S_GROW (ws->coef, k + 1))
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
                      ws->mix, ws->mix2, ws->vw, ws->vec_a, ws->vec_b, ws->acc,
                      ws->idx, ws->idx2, (void *) ws->ptrs, ws->vbuf, ws->lanes, ws->rows, ws->coef };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        gc_mem_free (bufs [i]);
    gc_robust_net_free (&ws->net);
    memset (ws, 0, sizeof *ws);
}

//  --- Pipeline state -----------------------------------------------------------

//  What the pipeline knows about its current (virtual) inputs.
typedef struct {
    const float *const *in;     /* originals */
    size_t  k, d;
    const float *own;           /* peer's vector or explicit centre, or NULL */
    size_t  kv;                 /* virtual inputs */
    bool    mixed;              /* false: virtual = originals, mix unused */
    bool    have_dist;          /* ws->dist holds the originals' distances */
    bool    have_vdist;         /* ws->vdist holds the virtual distances */
} s_run_t;

//  Ensure ws->vdist: one Gram pass over the originals, then the quadratic
//  form for mixed inputs. Returns a kernel code (0, 1 non-finite, -1 nomem).
static int
s_vdist (gc_robust_t *self, s_run_t *st)
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
static void
s_ensure_mix (gc_robust_t *self, s_run_t *st)
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

static void
s_order2 (size_t *idx, size_t n, const double *key, const double *key2)
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

static void
s_order (size_t *idx, size_t n, const double *key)
{
    s_order2 (idx, n, key, NULL);
}

//  NNM: each virtual input becomes the mean of itself and its kv - f - 1
//  nearest others (ties: lower index).
static int
s_stage_nnm (gc_robust_t *self, s_run_t *st, size_t f)
{
    gc_robust_ws_t *ws = &self->ws;
    if (f >= st->kv)
        return 2;
    int rc = s_vdist (self, st);
    if (rc)
        return rc;
    s_ensure_mix (self, st);
    size_t k = st->k, kv = st->kv, take = kv - f;
    for (size_t a = 0; a < kv; a++) {
        double *key = ws->vec_b;
        for (size_t b = 0; b < kv; b++)
            key [b] = b == a ? -1.0 : ws->vdist [a * kv + b];
        s_order (ws->idx, kv, key);
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

//  Bucketing: a random permutation cut into buckets of s, each replaced by
//  its weighted mean and weighted by the sum of its weights.
static int
s_stage_bucket (gc_robust_t *self, s_run_t *st, size_t s)
{
    gc_robust_ws_t *ws = &self->ws;
    s_ensure_mix (self, st);
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

//  --- Rules on virtual inputs --------------------------------------------------

//  Krum score of each candidate: the sum of its nb smallest squared
//  distances to the other candidates; and the sum of all of them, which
//  breaks ties (with nb = 1 two mutually nearest inputs always tie), so
//  that the choice does not depend on the order of the inputs.
//  cand: indices into vdist (kv x kv).
static void
s_krum_scores (gc_robust_t *self, size_t kv, const size_t *cand, size_t nc, size_t nb,
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
s_output_selected (gc_robust_t *self, s_run_t *st, const size_t *sel, size_t m, float *out)
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
s_rule_krum (gc_robust_t *self, s_run_t *st, size_t f, size_t m, float *out)
{
    int rc = s_vdist (self, st);
    if (rc)
        return rc;
    size_t kv = st->kv;
    size_t *cand = self->ws.idx2;
    for (size_t i = 0; i < kv; i++)
        cand [i] = i;
    double *score = self->ws.scale, *total = self->ws.vw;   /* both free by now */
    s_krum_scores (self, kv, cand, kv, kv - f - 2, score, total);
    s_order2 (self->ws.idx, kv, score, total);
    memcpy (self->info.selected, self->ws.idx, m * sizeof *self->ws.idx);
    self->info.n_selected = m;
    return s_output_selected (self, st, self->ws.idx, m, out);
}

//  Bulyan: theta = kv - 2f inputs chosen one at a time by Krum among those
//  left (neighbour count clamped to [1, left - 1] near the end), then per
//  coordinate the mean of the beta = theta - 2f values closest to the median.
static int
s_rule_bulyan (gc_robust_t *self, s_run_t *st, size_t f, float *out)
{
    gc_robust_ws_t *ws = &self->ws;
    int rc = s_vdist (self, st);
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
        s_krum_scores (self, kv, left, n_left, nb, score, total);
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

static double
s_clip_factor (double d2, double tau)
{
    double dist = sqrt (d2);
    return dist > tau ? tau / dist : 1.0;
}

//  Smoothed Weiszfeld from the coordinate-wise median: beta_i = w_i /
//  max(nu, ||z - x_i||), z <- sum beta_i x_i / sum beta_i, until the
//  objective sum w_i ||z - x_i|| improves by less than tol (relative).
static int
s_rule_gm (gc_robust_t *self, const float *const *x, const double *w, size_t n, size_t d,
           float *out)
{
    const s_rule_t *r = &self->rule;
    gc_robust_ws_t *ws = &self->ws;
    double *d2 = ws->vec_a, *a = ws->vec_b;
    int rc = gc_robust_cw_window (ws, x, n, d, (n - 1) / 2, n / 2, out);
    if (rc || (rc = gc_robust_dist_to (ws, x, n, d, out, d2)))
        return rc;
    double obj = 0;
    for (size_t i = 0; i < n; i++)
        obj += w [i] * sqrt (d2 [i]);
    for (long it = 1; it <= r->iters; it++) {
        double bsum = 0;
        for (size_t i = 0; i < n; i++) {
            double dist = sqrt (d2 [i]);
            a [i] = w [i] / (dist > r->nu ? dist : r->nu);
            bsum += a [i];
        }
        for (size_t i = 0; i < n; i++)
            a [i] /= bsum;
        if ((rc = gc_robust_step (ws, x, a, n, d, out, out, d2)))
            return rc;
        double next = 0;
        for (size_t i = 0; i < n; i++)
            next += w [i] * sqrt (d2 [i]);
        self->info.iterations = (int) it;
        bool done = obj - next <= r->tol * next;
        obj = next;
        if (done)
            break;
    }
    return 0;
}

//  Centered clipping: v <- v + sum w_i clip_tau(x_i - v), L times, from the
//  given centre (else the coordinate-wise median).
static int
s_rule_cclip (gc_robust_t *self, const float *const *x, const double *w, size_t n, size_t d,
              const float *own, float *out)
{
    const s_rule_t *r = &self->rule;
    gc_robust_ws_t *ws = &self->ws;
    double *d2 = ws->vec_a, *a = ws->vec_b;
    int rc;
    if (own && own != out)
        memcpy (out, own, d * sizeof *out);
    else
    if (!own && (rc = gc_robust_cw_window (ws, x, n, d, (n - 1) / 2, n / 2, out)))
        return rc;
    if ((rc = gc_robust_dist_to (ws, x, n, d, out, d2)))
        return rc;
    for (long it = 1; it <= r->iters; it++) {
        size_t clipped = 0;
        for (size_t i = 0; i < n; i++) {
            double c = s_clip_factor (d2 [i], r->tau);
            clipped += c < 1.0;
            a [i] = w [i] * c;
        }
        self->info.n_clipped = clipped;
        self->info.iterations = (int) it;
        if ((rc = gc_robust_step (ws, x, a, n, d, out, out, it < r->iters ? d2 : NULL)))
            return rc;
    }
    return 0;
}

//  The adaptive radius: tau^2 = (1/delta) sum of w_j ||x_j - x_own||^2 over
//  the nearest inputs holding weight 1 - delta (the last one fractionally):
//  the ClippedGossip choice tau^2 = (1/delta) sum_{honest j} w_j E||.||^2
//  with the unknown honest set replaced by the closest 1 - delta of weight,
//  which never exceeds it since the honest weight is at least 1 - delta.
static double
s_adaptive_tau (gc_robust_t *self, const double *d2, const double *w, size_t n, double delta)
{
    s_order (self->ws.idx, n, d2);
    double budget = 1.0 - delta, sum = 0;
    for (size_t t = 0; t < n && budget > 0; t++) {
        size_t i = self->ws.idx [t];
        double take = w [i] < budget ? w [i] : budget;
        sum += take * d2 [i];
        budget -= take;
    }
    return sqrt (sum / delta);
}

//  Self-centered clipping: out = own + sum_j w_j clip_tau(x_j - own).
static int
s_rule_scclip (gc_robust_t *self, const float *const *x, const double *w, size_t n, size_t d,
               const float *own, float *out)
{
    const s_rule_t *r = &self->rule;
    gc_robust_ws_t *ws = &self->ws;
    double *d2 = ws->vec_a, *a = ws->vec_b;
    int rc = gc_robust_dist_to (ws, x, n, d, own, d2);
    if (rc)
        return rc;
    double tau = r->adaptive ? s_adaptive_tau (self, d2, w, n, r->delta) : r->tau;
    size_t clipped = 0;
    for (size_t i = 0; i < n; i++) {
        double c = tau > 0 ? s_clip_factor (d2 [i], tau) : (d2 [i] > 0 ? 0.0 : 1.0);
        clipped += c < 1.0;
        a [i] = w [i] * c;
    }
    self->info.tau = tau;
    self->info.n_clipped = clipped;
    return gc_robust_step (ws, x, a, n, d, own, out, NULL);
}

//  Inputs no kernel read (zero weight or coefficient) are still checked:
//  a peer that sends NaN is reported whatever its weight.
static int
s_check_unread (const float *const *in, const double *coef, size_t k, size_t d)
{
    for (size_t i = 0; i < k; i++)
        if (coef [i] == 0 && !gc_vec_all_finite (in [i], d))
            return 1;
    return 0;
}

//  Materialise the virtual inputs (if mixed) and run a coordinate rule.
static int
s_rule_coords (gc_robust_t *self, s_run_t *st, float *out)
{
    gc_robust_ws_t *ws = &self->ws;
    const s_rule_t *r = &self->rule;
    size_t n = st->kv, d = st->d;
    const float *const *x = st->in;
    int rc;
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
    switch (r->kind) {
        case S_MEAN:
            rc = gc_robust_combine (ws, x, w, n, d, out);
            return rc ? rc : s_check_unread (x, w, n, d);
        case S_CWMED:
            return gc_robust_cw_window (ws, x, n, d, (n - 1) / 2, n / 2, out);
        case S_CWTM:
            return gc_robust_cw_window (ws, x, n, d, (size_t) r->f, n - 1 - (size_t) r->f, out);
        case S_GM:
            return s_rule_gm (self, x, w, n, d, out);
        case S_CCLIP:
            return s_rule_cclip (self, x, w, n, d, st->own, out);
        default:
            return s_rule_scclip (self, x, w, n, d, st->own, out);
    }
}

static int
s_run (gc_robust_t *self, s_run_t *st, float *out)
{
    if (self->rule.kind == S_SCCLIP && !st->own)
        return 2;
    int rc = 0;
    for (size_t i = 0; i < self->n_pre && !rc; i++) {
        const s_pre_t *pre = &self->pre [i];
        if (pre->kind == S_NNM)
            rc = s_stage_nnm (self, st, (size_t) pre->f);
        else
            rc = s_stage_bucket (self, st, (size_t) pre->s);
    }
    if (rc)
        return rc;
    const s_rule_t *r = &self->rule;
    if (st->kv < s_rule_min_inputs (r))
        return 2;
    switch (r->kind) {
        case S_KRUM:   return s_rule_krum (self, st, (size_t) r->f, 1, out);
        case S_MKRUM:  return s_rule_krum (self, st, (size_t) r->f, (size_t) r->m, out);
        case S_BULYAN: return s_rule_bulyan (self, st, (size_t) r->f, out);
        default:       return s_rule_coords (self, st, out);
    }
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
        return gc_err_set (err, GC_ROBUST_EARG, "%s: inputs and out must not be NULL", name);
    if (k == 0 || k > GC_ROBUST_MAX_INPUTS)
        return gc_err_set (err, GC_ROBUST_EINPUTS, "%s: k = %zu inputs, must be 1..%d",
                           name, k, GC_ROBUST_MAX_INPUTS);
    if (k < self->min_inputs)
        return gc_err_set (err, GC_ROBUST_EINPUTS, "%s: needs at least %zu inputs, got k = %zu",
                           name, self->min_inputs, k);
    if (d == 0 || d > SIZE_MAX / sizeof (float) / GC_ROBUST_MAX_INPUTS)
        return gc_err_set (err, GC_ROBUST_EINPUTS, "%s: dimension d = %zu out of range", name, d);
    if (self_index < -1 || self_index >= (int) k)
        return gc_err_set (err, GC_ROBUST_EINPUTS, "%s: self_index %d is not in -1..%zu",
                           name, self_index, k - 1);
    for (size_t i = 0; i < k; i++) {
        if (!inputs [i])
            return gc_err_set (err, GC_ROBUST_EARG, "%s: input %zu is NULL", name, i);
        if (s_overlap (inputs [i], out, d))
            return gc_err_set (err, GC_ROBUST_EARG, "%s: out overlaps input %zu", name, i);
    }
    if (centre && centre != out && s_overlap (centre, out, d))
        return gc_err_set (err, GC_ROBUST_EARG, "%s: out overlaps the centre", name);
    if (centre && !gc_vec_all_finite (centre, d))
        return gc_err_set (err, GC_ROBUST_EINPUTS, "%s: the centre holds NaN or Inf", name);
    if (weights) {
        double sum = 0;
        for (size_t i = 0; i < k; i++) {
            if (!isfinite (weights [i]) || weights [i] < 0)
                return gc_err_set (err, GC_ROBUST_EWEIGHTS, "%s: weight %zu is %g", name, i, weights [i]);
            sum += weights [i];
        }
        if (!(sum > 0) || !isfinite (sum))
            return gc_err_set (err, GC_ROBUST_EWEIGHTS, "%s: the weights sum to %g", name, sum);
    }
    return 0;
}

//  After a kernel saw NaN/Inf: find every input that holds one.
static int
s_report_nonfinite (gc_robust_t *self, const float *const *inputs, size_t k, size_t d,
                    gc_err_t *err)
{
    if (self->bad_cap < k) {
        size_t *bad = realloc (self->bad, k * sizeof *bad);
        if (!bad)
            return gc_err_set (err, GC_ROBUST_ENOMEM, "%s: out of memory", self->name);
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
        return gc_err_set (err, GC_ROBUST_ENONFINITE, "%s: a non-finite value appeared", self->name);
    return gc_err_set (err, GC_ROBUST_ENONFINITE, "%s: input %zu holds NaN or Inf (coordinate %zu)%s",
                       self->name, self->bad [0], first_at,
                       self->n_bad > 1 ? ", and more inputs do" : "");
}

int
gc_robust_aggregate_centered (gc_robust_t *self, const float *const *inputs,
                              const double *weights, size_t k, size_t d, int self_index,
                              const float *centre, float *out, gc_err_t *err)
{
    self->n_bad = 0;
    self->info.n_selected = 0;
    self->info.iterations = 0;
    self->info.tau = 0;
    self->info.n_clipped = 0;
    self->info.gram_passes = 0;
    if (s_validate (self, inputs, weights, k, d, self_index, centre, out, err))
        return -1;
    gc_robust_ws_t *ws = &self->ws;
    if (gc_robust_ws_reserve_k (ws, k))
        return gc_err_set (err, GC_ROBUST_ENOMEM, "%s: out of memory for k = %zu", self->name, k);
    for (size_t i = 0; i < k; i++)
        ws->vw [i] = weights ? weights [i] : 1.0;
    s_run_t st = {
        .in = inputs, .k = k, .d = d, .kv = k,
        .own = centre ? centre : self_index >= 0 ? inputs [self_index] : NULL
    };
    int rc = s_run (self, &st, out);
    if (rc == 1)
        return s_report_nonfinite (self, inputs, k, d, err);
    if (rc == 2)
        return gc_err_set (err, GC_ROBUST_EINPUTS,
                           self->rule.kind == S_SCCLIP
                           ? "%s: needs the peer's own vector (self_index or a centre)"
                           : "%s: too few inputs left after pre-aggregation", self->name);
    if (rc)
        return gc_err_set (err, GC_ROBUST_ENOMEM, "%s: out of memory (k = %zu, d = %zu)",
                           self->name, k, d);
    return 0;
}

int
gc_robust_aggregate (gc_robust_t *self, const float *const *inputs, const double *weights,
                     size_t k, size_t d, int self_index, float *out, gc_err_t *err)
{
    return gc_robust_aggregate_centered (self, inputs, weights, k, d, self_index, NULL, out, err);
}
