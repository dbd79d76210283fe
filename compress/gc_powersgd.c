/*  PowerSGD (Vogels et al.): rank-r approximation of each matrix layer by
    one power iteration with a warm start. For a layer M (rows x cols) and
    the previous round's Q (cols x r):
        P = M Q;  P <- orthonormal columns (Gram-Schmidt);  Q = M^T P;
    the payload carries P and Q and the receiver adds P Q^T (= P P^T M,
    the projection of M on span P). The new Q is the next warm start.
    Vector layers, and matrices where r (rows + cols) >= rows * cols, are
    sent dense. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_method.h"
#include "gc_payload.h"
#include "gc_rng.h"
#include "gc_vec.h"

//  Dot product in eight double lanes (orthonormalisation: no overflow).
static double
s_dot (const float *restrict a, const float *restrict b, size_t n)
{
    double acc [8] = { 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int t = 0; t < 8; t++)
            acc [t] += (double) a [i + t] * (double) b [i + t];
    double total = 0;
    for (int t = 0; t < 8; t++)
        total += acc [t];
    for (; i < n; i++)
        total += (double) a [i] * b [i];
    return total;
}

//  The hot dot product (P = M Q) in sixteen float lanes, one vector
//  register: a single float accumulator would not vectorise under strict
//  IEEE order. |M| <= 2^30 and |Q| <= rows 2^30 keep it below 2^124.
static float
s_fdot (const float *restrict a, const float *restrict b, size_t n)
{
    float acc [16] = { 0 };
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int t = 0; t < 16; t++)
            acc [t] += a [i + t] * b [i + t];
    double total = 0;
    for (int t = 0; t < 16; t++)
        total += acc [t];
    for (; i < n; i++)
        total += (double) a [i] * b [i];
    return (float) total;
}

//  max |x| as the bits of |x| (an unsigned max, which vectorises where a
//  float max reduction would not).
static uint32_t
s_max_key (const float *restrict x, size_t n)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy (&u, x + i, 4);
        u &= 0x7fffffffu;
        m = u > m ? u : m;
    }
    return m;
}

//  Beyond this, P = M Q and the factors could overflow float; such a layer
//  (an update of more than 1e9 per entry: not seen in training) goes dense.
#define S_MAX_ENTRY_KEY 0x4e800000u     /* bits of 2^30 */

//  Rank used for a layer: 0 = send dense.
static uint32_t
s_layer_rank (const gc_layer_t *l, uint32_t rank)
{
    if (l->kind != GC_LAYER_MATRIX)
        return 0;
    uint32_t r = rank;
    r = r < l->rows ? r : l->rows;
    r = r < l->cols ? r : l->cols;
    if ((uint64_t) r * ((uint64_t) l->rows + l->cols) >= (uint64_t) l->rows * l->cols)
        return 0;
    return r;
}

static void
s_random_q (float *q, size_t cols, uint64_t seed, size_t layer, uint64_t salt)
{
    gc_rng_t rng;
    gc_rng_init (&rng, gc_seed_derive (seed, salt), 0x70736764 + layer);
    gc_rng_fill_normal (&rng, q, cols, 0.0f, 1.0f);
}

#define S_DEFAULT_RANK 2

static int
s_parse (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    double v;
    self->rank = S_DEFAULT_RANK;
    int got = gc_compress_opt_number (sp, at, 1, GC_POWERSGD_MAX_RANK, true, "powersgd rank", &v, err);
    if (got < 0)
        return -1;
    if (got)
        self->rank = (uint32_t) v;
    return gc_compress_opt_valfmts (self, sp, at, err);
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "powersgd:%u:%s", self->rank, gc_compress_valfmt_name (self));
}

static int
s_init (gc_compressor_t *self, gc_err_t *err)
{
    size_t n = self->layout.n_layers;
    self->qt = calloc (n, sizeof *self->qt);
    self->qt_rank = calloc (n, sizeof *self->qt_rank);
    if (!self->qt || !self->qt_rank)
        return gc_err_set (err, GC_COMPRESS_ERR_NOMEM, "powersgd: out of memory");
    for (size_t l = 0; l < n; l++) {
        const gc_layer_t *layer = &self->layout.layers [l];
        uint32_t r = s_layer_rank (layer, self->rank);
        self->qt_rank [l] = r;
        if (!r)
            continue;
        self->qt [l] = malloc ((size_t) r * layer->cols * sizeof (float));
        if (!self->qt [l])
            return gc_err_set (err, GC_COMPRESS_ERR_NOMEM, "powersgd: out of memory for layer '%s'",
                               layer->name);
        for (uint32_t k = 0; k < r; k++)
            s_random_q (self->qt [l] + (size_t) k * layer->cols, layer->cols, self->seed, l, k);
    }
    return 0;
}

static void
s_fini (gc_compressor_t *self)
{
    if (self->qt)
        for (size_t l = 0; l < self->layout.n_layers; l++)
            free (self->qt [l]);
    free (self->qt);
    free (self->qt_rank);
    self->qt = NULL;
    self->qt_rank = NULL;
}

//  Orthonormalise the r rows of pt (each of length n) in place; a row that
//  is (numerically) in the span of the previous ones becomes zero.
static void
s_orthonormalise (float *pt, uint32_t r, size_t n)
{
    for (uint32_t k = 0; k < r; k++) {
        float *v = pt + (size_t) k * n;
        double before = sqrt (s_dot (v, v, n));
        //  Twice ("twice is enough"): one pass loses orthogonality in float.
        for (int pass = 0; pass < 2; pass++)
            for (uint32_t j = 0; j < k; j++) {
                const float *u = pt + (size_t) j * n;
                gc_vec_axpy (v, (float) -s_dot (v, u, n), u, n);
            }
        double norm = sqrt (s_dot (v, v, n));
        if (!(norm > 1e-6 * before) || norm < 1e-30)
            gc_vec_zero (v, n);
        else
            gc_vec_scale (v, (float) (1.0 / norm), n);
    }
}

static int
s_encode (gc_compressor_t *self, const float *x, uint64_t round, uint64_t seed,
          size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    (void) round;
    (void) seed;
    const gc_layout_t *layout = &self->layout;
    size_t vs = gc_valfmt_size (self->valfmt);
    for (size_t l = lo; l < hi; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        uint32_t r = self->qt_rank [l];
        if (r && s_max_key (x + layer->offset, layer->count) > S_MAX_ENTRY_KEY)
            r = 0;
        if (!r) {
            if (gc_payload_dense_section (out, layout, l, x, self->valfmt, err))
                return -1;
            continue;
        }
        size_t rows = layer->rows, cols = layer->cols;
        const float *m = x + layer->offset;
        float *qt = self->qt [l];
        if (gc_compressor_fscratch (self, r * rows, err))
            return -1;
        float *pt = self->fscratch;
        //  A warm start that collapsed to zero (M was zero along it) is redrawn.
        for (uint32_t k = 0; k < r; k++)
            if (gc_vec_norm2sq (qt + k * cols, cols) == 0.0)
                s_random_q (qt + k * cols, cols, self->seed, l, 0x100 + k);
        //  P = M Q, row by row so each row of M is read once.
        for (size_t i = 0; i < rows; i++)
            for (uint32_t k = 0; k < r; k++)
                pt [k * rows + i] = s_fdot (m + i * cols, qt + k * cols, cols);
        s_orthonormalise (pt, r, rows);
        //  Q = M^T P.
        memset (qt, 0, (size_t) r * cols * sizeof *qt);
        for (size_t i = 0; i < rows; i++)
            for (uint32_t k = 0; k < r; k++) {
                float a = pt [k * rows + i];
                if (a != 0.0f)
                    gc_vec_axpy (qt + k * cols, a, m + i * cols, cols);
            }
        //  The decoder refuses factors whose product could overflow
        //  (r max|P| max|Q| > 1e38); only when M is near FLT_MAX: send it
        //  as it is and restart Q.
        float maxp = 0, maxq = 0;
        for (size_t i = 0; i < (size_t) r * rows; i++)
            maxp = fmaxf (maxp, fabsf (pt [i]));
        for (size_t i = 0; i < (size_t) r * cols; i++)
            maxq = fmaxf (maxq, fabsf (qt [i]));
        if (self->valfmt == GC_VAL_FP16)
            maxq = fminf (maxq, 65504.0f);
        if (!gc_vec_all_finite (qt, (size_t) r * cols) || !gc_vec_all_finite (pt, (size_t) r * rows)
        ||  (double) r * maxp * maxq > 1e38) {
            for (uint32_t k = 0; k < r; k++)
                s_random_q (qt + k * cols, cols, self->seed, l, k);
            if (gc_payload_dense_section (out, layout, l, x, self->valfmt, err))
                return -1;
            continue;
        }
        uint8_t *p = gc_payload_section (out, layout, l, GC_ENC_LOWRANK, self->valfmt,
                                         12 + (size_t) r * (rows + cols) * vs, err);
        if (!p)
            return -1;
        gc_put_u32 (p, (uint32_t) rows);
        gc_put_u32 (p + 4, (uint32_t) cols);
        gc_put_u32 (p + 8, r);
        gc_payload_put_values (p + 12, pt, (size_t) r * rows, self->valfmt);
        gc_payload_put_values (p + 12 + (size_t) r * rows * vs, qt, (size_t) r * cols, self->valfmt);
    }
    return 0;
}

const gc_compress_method_t gc_method_powersgd = {
    .name = "powersgd", .wire_id = GC_METHOD_POWERSGD,
    .usage = "powersgd[:RANK=2][:fp32|fp16]",
    .help = "rank-RANK factors of each matrix layer (one power step, warm start); vectors dense",
    .example = "powersgd:1:fp16", .malformed = "powersgd:65",
    .sections = GC_SECTION_BITS (GC_ENC_LOWRANK) | GC_SECTION_BITS (GC_ENC_DENSE),
    .parse = s_parse, .describe = s_describe, .init = s_init, .fini = s_fini, .encode = s_encode,
};
