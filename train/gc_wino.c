/*  The transforms of gc_wino.h, compiled once per kernel level like
    gc_conv.c (gc_klevel.h); gc_conv_kern.c picks one. A plane's even and
    odd columns are first split into padded rows of their own, so that the
    tiles of a row read entries tx and tx + 1 of each (tx + 2 as well for
    5x5), at unit stride; then every loop runs over a row of tiles rounded
    up to GC_WINO_LANES, so the vectoriser needs no short remainder (a
    14x14 plane has rows of 7 tiles). Sums in a fixed order, halvings exact
    (5x5: scalings by 2, 4 and 5 and divisions by 4, 6, 12 and 24, each in
    a fixed order too), no contraction: every level gives the same bits. */
#include "gc_conv_kern.h"
#include "gc_klevel.h"
#include "gc_wino.h"

#include <string.h>

/*  GCC turns a loop that copies a short row into a call of memmove, whose
    cost is then most of the copy (rows of 7 to 28 floats here). */
#if defined (__GNUC__) && !defined (__clang__)
#   define S_NO_LIBCALLS __attribute__ ((optimize ("no-tree-loop-distribute-patterns")))
#else
#   define S_NO_LIBCALLS
#endif

/*  The lanes of every transform loop (n is a multiple of GC_WINO_LANES):
    GCC's vector extension, eight floats where the level has AVX and four
    (SSE) where it has not, so that each loop over 16 output rows is
    vector code whatever the vectoriser makes of it. */
#if defined (__AVX__)
#   define S_VL 8
#else
#   define S_VL 4
#endif
typedef float s_vf __attribute__ ((vector_size (S_VL * 4)));

//  even and odd lanes of (a, b), and the lanes of a and b interleaved
//  (GCC 12 and clang both have __builtin_shufflevector)
#if S_VL == 8
#   define S_EVEN(a, b)   __builtin_shufflevector (a, b, 0, 2, 4, 6, 8, 10, 12, 14)
#   define S_ODD(a, b)    __builtin_shufflevector (a, b, 1, 3, 5, 7, 9, 11, 13, 15)
#   define S_ZIP_LO(a, b) __builtin_shufflevector (a, b, 0, 8, 1, 9, 2, 10, 3, 11)
#   define S_ZIP_HI(a, b) __builtin_shufflevector (a, b, 4, 12, 5, 13, 6, 14, 7, 15)
#else
#   define S_EVEN(a, b)   __builtin_shufflevector (a, b, 0, 2, 4, 6)
#   define S_ODD(a, b)    __builtin_shufflevector (a, b, 1, 3, 5, 7)
#   define S_ZIP_LO(a, b) __builtin_shufflevector (a, b, 0, 4, 1, 5)
#   define S_ZIP_HI(a, b) __builtin_shufflevector (a, b, 2, 6, 3, 7)
#endif

static inline s_vf
s_ld (const float *p)
{
    s_vf v;
    memcpy (&v, p, sizeof v);
    return v;
}

static inline void
s_st (float *p, s_vf v)
{
    memcpy (p, &v, sizeof v);
}

//  Row y of a plane, NULL outside it.
static const float *
s_row (const float *plane, size_t rows, size_t cols, long y)
{
    return y >= 0 && y < (long) rows ? plane + (size_t) y * cols : NULL;
}

/*  The tiling of a chunk of m samples of H x W planes, for V, M or Z of
    `rows` rows: tiles per plane column (th) and row (tw), a row of tiles
    rounded up to the lanes (L), a split row's length (S: L and the tile
    after), the row stride (ld) and the plane stride. */
typedef struct {
    size_t th, tw, L, S, ld, plane;
} s_tiling_t;

static s_tiling_t
s_tiling (size_t H, size_t W, size_t m, size_t rows)
{
    s_tiling_t g = { .th = (H + 1) / 2, .tw = (W + 1) / 2, .S = gc_wino_split_len (W) };
    g.L = g.S - GC_WINO_LANES;
    g.ld = gc_wino_ld (m * g.th * g.tw);
    g.plane = gc_wino_plane (rows, m * g.th * g.tw);
    return g;
}

//  Where tile row ty of sample n (of a chunk from n0) starts in a row of V, M or Z.
static size_t
s_tile_at (const s_tiling_t *g, size_t n, size_t n0, size_t ty)
{
    return ((n - n0) * g->th + ty) * g->tw;
}

/*  Rows [0, R) of a plane split into even (ev [yy][t] = p [2t]) and odd
    (od [yy][t] = p [2t + 1]) entries, t in [0, n) rounded up to the lanes
    (n: the entries the row's real tiles read; the transforms' last group
    of lanes reads further, for tiles past the row's end whose values no
    output uses, and finds what an earlier plane left or the zeros the
    caller wrote; splitting them too was a third of the split's work on a
    28-column plane, half on a 14-column one), where p is the plane's
    row yy + y0 placed at shift in a row of 2 S zeros (all zeros outside the
    plane). P: R rows of 2 S floats, zero but where rows are placed (each
    call places the same extents), so the surroundings read as zeros. All
    rows are placed first, then split: a vector load of floats stored a
    moment before by narrower stores does not forward (perf of a throwaway
    driver: 40 % of the input transform on that one load when it followed
    each row's copy). */
#if GC_KLEVEL >= GC_KLEVEL_AVX2
//  The mask of lanes j (of 8) with lo <= j < hi, for masked loads and stores.
static inline __m256i
s_lanes (long lo, long hi)
{
    __m256i j = _mm256_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256 (_mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) lo), j),
                                _mm256_cmpgt_epi32 (_mm256_set1_epi32 ((int) hi), j));
}

/*  The S_VL floats of a placed row from index `at` on: row[at + j] where
    0 <= at + j < W, else 0 (masked lanes are neither read nor faulted). */
static inline s_vf
s_ld_placed (const float *row, long at, long W)
{
    //  formed as an integer: the address may lie before the row
    return (s_vf) _mm256_maskload_ps ((const float *) ((__UINTPTR_TYPE__) row + at * 4),
                                      s_lanes (-at, W - at));
}
#endif

static S_NO_LIBCALLS void
s_split_plane (const float *plane, size_t H, size_t W, long y0, size_t R, size_t shift,
               float *P, size_t S, size_t n, float *ev, float *od)
{
#if GC_KLEVEL >= GC_KLEVEL_AVX2
    //  With masked loads the rows are split straight from the plane, P
    //  unused: its copy was scalar stores of rows of 7 to 28 floats, which
    //  the split's vector loads then waited on (store forwarding fails on a
    //  load that spans several stores; perf: a fifth of the split's time on
    //  one load, 12 % of a resnet8-gn step on a Xeon). The same values.
    (void) P;
    const s_vf zero = { 0 };
    for (size_t yy = 0; yy < R; yy++) {
        const float *row = s_row (plane, H, W, (long) yy + y0);
        for (size_t t = 0; t < n; t += S_VL) {
            long at = (long) (2 * t) - (long) shift;
            s_vf a = row ? s_ld_placed (row, at, (long) W) : zero;
            s_vf b = row ? s_ld_placed (row, at + S_VL, (long) W) : zero;
            s_st (ev + yy * S + t, S_EVEN (a, b));
            s_st (od + yy * S + t, S_ODD (a, b));
        }
    }
    return;
#endif
    for (size_t yy = 0; yy < R; yy++) {
        const float *row = s_row (plane, H, W, (long) yy + y0);
        float *dst = P + yy * 2 * S + shift;
        if (row)
            for (size_t x = 0; x < W; x++)
                dst [x] = row [x];
    }
    for (size_t yy = 0; yy < R; yy++)
        for (size_t t = 0; t < n; t += S_VL) {
            s_vf a = s_ld (P + yy * 2 * S + 2 * t), b = s_ld (P + yy * 2 * S + 2 * t + S_VL);
            s_st (ev + yy * S + t, S_EVEN (a, b));
            s_st (od + yy * S + t, S_ODD (a, b));
        }
}

//  Row i of B^T applied to a column (d0, d1, d2, d3).
static inline s_vf
s_bt (size_t i, s_vf d0, s_vf d1, s_vf d2, s_vf d3)
{
    return i == 0 ? d0 - d2 : i == 1 ? d1 + d2 : i == 2 ? d2 - d1 : d1 - d3;
}

/*  B^T d B of a row of tiles: e and o hold the split rows 2ty - 1 .. 2ty + 2
    (stride S), columns 2tx - 1 .. 2tx + 2 of tile tx being o [tx], e [tx],
    o [tx + 1], e [tx + 1]; v the 16 output rows, plane apart. Down the rows
    first (B^T: d0 - d2, d1 + d2, d2 - d1, d1 - d3), at tx and tx + 1, then
    along them the same; recomputed per output row rather than stored and
    reloaded (a vector store read back 1 float on fails to forward). */
static void
s_b_tiles (const float *e, const float *o, size_t S, float *v, size_t plane, size_t n)
{
    for (size_t t = 0; t < n; t += S_VL) {
        s_vf o0 = s_ld (o + t), o1 = s_ld (o + S + t), o2 = s_ld (o + 2 * S + t), o3 = s_ld (o + 3 * S + t);
        s_vf e0 = s_ld (e + t), e1 = s_ld (e + S + t), e2 = s_ld (e + 2 * S + t), e3 = s_ld (e + 3 * S + t);
        s_vf p0 = s_ld (o + t + 1), p1 = s_ld (o + S + t + 1), p2 = s_ld (o + 2 * S + t + 1);
        s_vf p3 = s_ld (o + 3 * S + t + 1);
        s_vf f0 = s_ld (e + t + 1), f1 = s_ld (e + S + t + 1), f2 = s_ld (e + 2 * S + t + 1);
        s_vf f3 = s_ld (e + 3 * S + t + 1);
        for (size_t i = 0; i < 4; i++) {
            s_vf a = s_bt (i, o0, o1, o2, o3), b = s_bt (i, e0, e1, e2, e3);
            s_vf c = s_bt (i, p0, p1, p2, p3), d = s_bt (i, f0, f1, f2, f3);
            float *vi = v + 4 * i * plane + t;
            s_st (vi, a - c);
            s_st (vi + plane, b + c);
            s_st (vi + 2 * plane, c - b);
            s_st (vi + 3 * plane, b - d);
        }
    }
}

/*  B^T (F(2x2, 5x5)'s, 6x6) applied to six values d [0 .. 5], read s
    apart, into out [0 .. 5], stride apart: 4 d0 - 5 d2 + d4, 4 (d1 + d2) -
    (d3 + d4), 4 (d2 - d1) + (d3 - d4), 2 (d3 - d1) + (d4 - d2), (d4 - d2) -
    2 (d3 - d1), 4 d1 - 5 d3 + d5. */
static inline void
s_bt6 (const s_vf *d, size_t s, s_vf *out, size_t stride)
{
    s_vf d0 = d [0], d1 = d [s], d2 = d [2 * s], d3 = d [3 * s], d4 = d [4 * s], d5 = d [5 * s];
    s_vf e = (d3 - d1) * 2.0f, f = d4 - d2;
    out [0] = (d0 * 4.0f - d2 * 5.0f) + d4;
    out [stride] = (d1 + d2) * 4.0f - (d3 + d4);
    out [2 * stride] = (d2 - d1) * 4.0f + (d3 - d4);
    out [3 * stride] = e + f;
    out [4 * stride] = f - e;
    out [5 * stride] = (d1 * 4.0f - d3 * 5.0f) + d5;
}

/*  B^T d B of a row of 6x6 tiles: e and o hold the split rows 2ty - 2 ..
    2ty + 3 (stride S), columns 2tx - 2 .. 2tx + 3 of tile tx being e [tx],
    o [tx], e [tx + 1], o [tx + 1], e [tx + 2], o [tx + 2]; v the 36 output
    rows, plane apart. Down the columns into h, then along h's rows: 36
    vectors, in registers where the level has 32 of them (the form that
    recomputed a column per output row, 6 times the loads, ran 1.4 times
    as long). */
static void
s_b6_tiles (const float *e, const float *o, size_t S, float *v, size_t plane, size_t n)
{
    for (size_t t = 0; t < n; t += S_VL) {
        s_vf d [6][6], h [6][6], u [6];
        for (size_t i = 0; i < 6; i++)
            for (size_t j = 0; j < 6; j++)
                d [i][j] = s_ld ((j % 2 ? o : e) + i * S + t + j / 2);
        for (size_t j = 0; j < 6; j++)
            s_bt6 (&d [0][j], 6, &h [0][j], 6);
        for (size_t i = 0; i < 6; i++) {
            s_bt6 (h [i], 1, u, 1);
            for (size_t j = 0; j < 6; j++)
                s_st (v + (6 * i + j) * plane + t, u [j]);
        }
    }
}

static void
s_input (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m, float *V,
         float *scratch)
{
    size_t C = op->c, H = op->h, W = op->w, pad = op->pad;
    s_tiling_t g = s_tiling (H, W, m, C);
    size_t S = g.S, R = 2 * g.th + op->k - 1;
    /*  split rows: e [yy] = columns 2t - pad, o [yy] = columns 2t - pad + 1
        of row yy - pad, each row placed pad on. 3x3 (pad 1): 2t - 1 is
        then odd and goes to o, so e and o trade places. */
    float *e = scratch, *o = e + R * S, *P = o + R * S;
    memset (scratch, 0, R * 4 * S * sizeof (float));
    //  the next plane asked for while this one is transformed (perf of
    //  lenet-w: the split had waited on its rows; gc_conv_set_prefetch)
    for (size_t c = 0; c < C; c++)
        for (size_t n = n0; n < n0 + m; n++) {
            const float *plane = x + (c * batch + n) * H * W;
            gc_conv_prefetch_next (x, H * W, c, n, n0, m, batch, C, false);
            if (op->k == 3)
                s_split_plane (plane, H, W, -1, R, 1, P, S, g.tw + 1, o, e);
            else
                s_split_plane (plane, H, W, -(long) pad, R, pad, P, S, g.tw + 2, e, o);
            for (size_t ty = 0; ty < g.th; ty++) {
                float *v = V + c * g.ld + s_tile_at (&g, n, n0, ty);
                if (op->k == 3)
                    s_b_tiles (e + 2 * ty * S, o + 2 * ty * S, S, v, g.plane, g.L);
                else
                    s_b6_tiles (e + 2 * ty * S, o + 2 * ty * S, S, v, g.plane, g.L);
            }
        }
}

#if GC_KLEVEL >= GC_KLEVEL_AVX2
//  Lanes at .. at + S_VL of a row of W floats (those below W): row = (row
//  + when add) v (+0 where mrow, when given, is not > 0; + b when bias,
//  then the ReLU), the scalar loop's operations lane by lane; a partial
//  vector through masked loads and stores.
static inline void
s_put_vec (float *row, const float *mrow, size_t at, size_t W, __m256 v, __m256 b, bool bias,
           bool relu, bool add)
{
    bool whole = at + S_VL <= W;
    __m256i in = s_lanes (0, (long) (W - at));
    if (mrow) {                         /* +0 where the mask is not > 0 */
        __m256 mv = whole ? _mm256_loadu_ps (mrow + at) : _mm256_maskload_ps (mrow + at, in);
        v = _mm256_and_ps (_mm256_cmp_ps (mv, _mm256_setzero_ps (), _CMP_GT_OQ), v);
    }
    if (add)
        v = _mm256_add_ps (v, whole ? _mm256_loadu_ps (row + at) : _mm256_maskload_ps (row + at, in));
    if (bias)
        v = _mm256_add_ps (v, b);
    if (relu)                           /* not v > 0 (NaN too): +0 */
        v = _mm256_and_ps (_mm256_cmp_ps (v, _mm256_setzero_ps (), _CMP_GT_OQ), v);
    if (whole)
        _mm256_storeu_ps (row + at, v);
    else
        _mm256_maskstore_ps (row + at, in, v);
}
#endif

/*  A^T M A of S_VL tiles of a tile row from t on: m holds the 16 rows of
    the tile row's products (plane apart); y [0 .. 3] get the two output
    rows' even and odd columns (y00, y01, y10, y11). Down the columns (s0 =
    m0 + m1 + m2, s1 = m1 - m2 - m3 of each column j), then the same along. */
static inline void
s_at16 (const float *m, size_t plane, size_t t, s_vf *y)
{
    s_vf s0 [4], s1 [4];
    for (size_t j = 0; j < 4; j++) {
        s_vf m0 = s_ld (m + j * plane + t), m1 = s_ld (m + (4 + j) * plane + t);
        s_vf m2 = s_ld (m + (8 + j) * plane + t), m3 = s_ld (m + (12 + j) * plane + t);
        s0 [j] = (m0 + m1) + m2;
        s1 [j] = (m1 - m2) - m3;
    }
    y [0] = (s0 [0] + s0 [1]) + s0 [2];
    y [1] = (s0 [1] - s0 [2]) - s0 [3];
    y [2] = (s1 [0] + s1 [1]) + s1 [2];
    y [3] = (s1 [1] - s1 [2]) - s1 [3];
}

/*  F(2x2, 5x5)'s A^T (2x6) applied to six values r [0 .. 5], s apart:
    (r1 + r2) + (r3 + r4) + r0 and (r1 - r2) + 2 (r3 - r4) + r5. */
static inline void
s_at2 (const s_vf *r, size_t s, s_vf *y0, s_vf *y1)
{
    *y0 = ((r [s] + r [2 * s]) + (r [3 * s] + r [4 * s])) + r [0];
    *y1 = ((r [s] - r [2 * s]) + (r [3 * s] - r [4 * s]) * 2.0f) + r [5 * s];
}

//  s_at16 for 6x6 tiles (36 rows of products): down each column j, then
//  along the two rows.
static inline void
s_at36 (const float *m, size_t plane, size_t t, s_vf *y)
{
    s_vf r [6][6], s0 [6], s1 [6];
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++)
            r [i][j] = s_ld (m + (6 * i + j) * plane + t);
    for (size_t j = 0; j < 6; j++)
        s_at2 (&r [0][j], 6, &s0 [j], &s1 [j]);
    s_at2 (s0, 1, &y [0], &y [1]);
    s_at2 (s1, 1, &y [2], &y [3]);
}

//  row = (row + when add) tmp (+0 where mrow, when given, is not > 0; +
//  bias, then the ReLU), W floats, one by one: s_put_vec's operations in
//  its order.
static S_NO_LIBCALLS void
s_put_tmp (float *row, const float *mrow, size_t W, const float *tmp, const float *bias,
           bool relu, bool add)
{
    float b = bias ? *bias : 0.0f;
    if (!mrow && !bias && !relu) {
        if (add)
            for (size_t x = 0; x < W; x++)
                row [x] += tmp [x];
        else
            for (size_t x = 0; x < W; x++)
                row [x] = tmp [x];
        return;
    }
    for (size_t x = 0; x < W; x++) {
        float v = mrow && !(mrow [x] > 0.0f) ? 0.0f : tmp [x];
        v = add ? v + row [x] : v;
        v = bias ? v + b : v;
        row [x] = relu && !(v > 0.0f) ? 0.0f : v;
    }
}

/*  The output rows of one tile row: row [r] (NULL past the plane's last
    row) = (row + when add) A^T M A's values (+0 where mrow [r], when not
    NULL, is not > 0; + bias, then the ReLU), W floats each; m as for
    s_at16, L tiles, tmp for the generic level. */
static S_NO_LIBCALLS void
s_put_rows (const float *m, size_t plane, size_t k, float *const *row, const float *const *mrow,
            size_t W, size_t L, float *tmp, const float *bias, bool relu, bool add)
{
#if GC_KLEVEL >= GC_KLEVEL_AVX2
    /*  Straight from the zipped vectors into the rows: through a buffer of
        a tile row's values, then one call per output row, they cost 1.4
        times as much (perf of lenet-w: 15 % of a step in s_output and
        s_put_row); through tmp and scalar stores, more still (4 % of a
        resnet8-gn step in the stores alone). */
    (void) tmp;
    __m256 bv = _mm256_set1_ps (bias ? *bias : 0.0f);
    for (size_t t = 0; t < L && 2 * t < W; t += S_VL) {
        s_vf y [4];
        if (k == 3)
            s_at16 (m, plane, t, y);
        else
            s_at36 (m, plane, t, y);
        for (size_t r = 0; r < 2 && row [r]; r++) {
            s_vf a = y [2 * r], b = y [2 * r + 1];
            s_put_vec (row [r], mrow [r], 2 * t, W, (__m256) S_ZIP_LO (a, b), bv, bias, relu, add);
            if (2 * t + S_VL < W)
                s_put_vec (row [r], mrow [r], 2 * t + S_VL, W, (__m256) S_ZIP_HI (a, b), bv, bias,
                           relu, add);
        }
    }
    return;
#endif
    //  tmp: the two rows, 2 L floats apart
    for (size_t t = 0; t < L; t += S_VL) {
        s_vf y [4];
        if (k == 3)
            s_at16 (m, plane, t, y);
        else
            s_at36 (m, plane, t, y);
        for (size_t r = 0; r < 2; r++) {
            s_st (tmp + r * 2 * L + 2 * t, S_ZIP_LO (y [2 * r], y [2 * r + 1]));
            s_st (tmp + r * 2 * L + 2 * t + S_VL, S_ZIP_HI (y [2 * r], y [2 * r + 1]));
        }
    }
    for (size_t r = 0; r < 2 && row [r]; r++)
        s_put_tmp (row [r], mrow [r], W, tmp + r * 2 * L, bias, relu, add);
}

static void
s_output (const gc_cnn_op_t *op, const float *M, size_t batch, size_t n0, size_t m,
          const float *bias, bool relu, bool add, const float *mask, float *y)
{
    size_t K = op->oc, H = op->oh, W = op->ow;
    s_tiling_t g = s_tiling (H, W, m, K);
    //  two rows of at most 512 tiles (1024 columns), rounded up
    float tmp [4 * (512 + GC_WINO_LANES)];
    for (size_t k = 0; k < K; k++)
        for (size_t n = n0; n < n0 + m; n++) {
            size_t at = (k * batch + n) * H * W;
            gc_conv_prefetch_next (y, H * W, k, n, n0, m, batch, K, true);
            if (mask)
                gc_conv_prefetch_next (mask, H * W, k, n, n0, m, batch, K, false);
            for (size_t ty = 0; ty < g.th; ty++) {
                bool two = 2 * ty + 1 < H;
                float *rows [2] = { y + at + 2 * ty * W, two ? y + at + (2 * ty + 1) * W : NULL };
                const float *mrows [2] = { mask ? mask + at + 2 * ty * W : NULL,
                                           mask && two ? mask + at + (2 * ty + 1) * W : NULL };
                s_put_rows (M + k * g.ld + s_tile_at (&g, n, n0, ty), g.plane, op->k, rows, mrows,
                            W, g.L, tmp, bias ? bias + k : NULL, relu, add);
            }
        }
}

typedef int32_t s_vi __attribute__ ((vector_size (S_VL * 4)));

//  a where the mask's lanes are set, else b (bit by bit)
static inline s_vf
s_pick (s_vi mask, s_vf a, s_vf b)
{
    return (s_vf) (((s_vi) a & mask) | ((s_vi) b & ~mask));
}

//  v + b (when bias), then the ReLU (+0 where not v > 0: NaN too), as s_put_vec.
static inline s_vf
s_bias_relu (s_vf v, bool bias, float b)
{
    v = bias ? v + b : v;
    return (s_vf) ((s_vi) (v > 0.0f) & (s_vi) v);
}

//  The first n lanes of v and of a into p and q (a whole vector when n >= S_VL).
static inline void
s_st_first (float *p, s_vf v, int32_t *q, s_vi a, size_t n)
{
    if (n >= S_VL) {
        memcpy (p, &v, sizeof v);
        memcpy (q, &a, sizeof a);
        return;
    }
    memcpy (p, &v, n * sizeof (float));
    memcpy (q, &a, n * sizeof (int32_t));
}

/*  One row of pooled outputs from a tile row (ty) of products m: the four
    values of each tile with the bias and the ReLU, then the window's
    maximum as s_maxpool2_split takes it (the right one of a row where it
    is larger, then the bottom row's where it is larger) and its index in
    the W-column plane. ow = W / 2 outputs, L tiles. */
static void
s_pool_row (const float *m, size_t plane, size_t k, size_t ty, size_t W, size_t L,
            const float *bias, float *out, int32_t *arg)
{
    size_t ow = W / 2;
    float b = bias ? *bias : 0.0f;
    s_vi lane;
    for (int l = 0; l < S_VL; l++)
        lane [l] = 2 * l;
    for (size_t t = 0; t < L && t < ow; t += S_VL) {
        s_vf y [4];
        if (k == 3)
            s_at16 (m, plane, t, y);
        else
            s_at36 (m, plane, t, y);
        for (int i = 0; i < 4; i++)
            y [i] = s_bias_relu (y [i], bias != NULL, b);
        s_vi col = lane + (int32_t) (2 * t);
        s_vi right0 = (s_vi) (y [1] > y [0]), right1 = (s_vi) (y [3] > y [2]);
        s_vf top = s_pick (right0, y [1], y [0]), bot = s_pick (right1, y [3], y [2]);
        s_vi itop = col + (int32_t) (2 * ty * W) + (right0 & 1);
        s_vi ibot = col + (int32_t) ((2 * ty + 1) * W) + (right1 & 1);
        s_vi down = (s_vi) (bot > top);
        s_st_first (out + t, s_pick (down, bot, top), arg + t, itop ^ ((itop ^ ibot) & down),
                    ow - t);
    }
}

static void
s_output_pool (const gc_cnn_op_t *op, const float *M, size_t batch, size_t n0, size_t m,
               const float *bias, float *pooled, int32_t *arg)
{
    size_t K = op->oc, H = op->oh, W = op->ow, P = (H / 2) * (W / 2);
    s_tiling_t g = s_tiling (H, W, m, K);
    for (size_t k = 0; k < K; k++)
        for (size_t n = n0; n < n0 + m; n++) {
            size_t at = (k * batch + n) * P;
            for (size_t ty = 0; ty < g.th; ty++)
                s_pool_row (M + k * g.ld + s_tile_at (&g, n, n0, ty), g.plane, op->k, ty, W, g.L,
                            bias ? bias + k : NULL, pooled + at + ty * (W / 2),
                            arg + at + ty * (W / 2));
        }
}

//  A down two rows of dY (g0, g1: q0 = g0, q1 = g0 + g1, q2 = g0 - g1,
//  q3 = -g1), at columns 2tx (e) and 2tx + 1 (o); A^T along them (z0 = qe,
//  z1 = qe + qo, z2 = qe - qo, z3 = -qo): 16 rows of z, plane apart.
static void
s_a_tiles (const float *e0, const float *e1, const float *o0, const float *o1, float *z,
           size_t plane, size_t n)
{
    for (size_t t = 0; t < n; t += S_VL) {
        s_vf ge0 = s_ld (e0 + t), ge1 = s_ld (e1 + t), go0 = s_ld (o0 + t), go1 = s_ld (o1 + t);
        s_vf qe [4] = { ge0, ge0 + ge1, ge0 - ge1, -ge1 };
        s_vf qo [4] = { go0, go0 + go1, go0 - go1, -go1 };
        for (size_t i = 0; i < 4; i++) {
            float *zi = z + 4 * i * plane + t;
            s_st (zi, qe [i]);
            s_st (zi + plane, qe [i] + qo [i]);
            s_st (zi + 2 * plane, qe [i] - qo [i]);
            s_st (zi + 3 * plane, -qo [i]);
        }
    }
}

/*  F(2x2, 5x5)'s A (6x2: rows (1, 0), (1, 1), (1, -1), (1, 2), (1, -2),
    (0, 1)) down and along a row of dY's 2x2 tiles, as s_a_tiles. */
static void
s_a6_tiles (const float *e0, const float *e1, const float *o0, const float *o1, float *z,
            size_t plane, size_t n)
{
    for (size_t t = 0; t < n; t += S_VL) {
        s_vf ge0 = s_ld (e0 + t), ge1 = s_ld (e1 + t), go0 = s_ld (o0 + t), go1 = s_ld (o1 + t);
        s_vf qe [6] = { ge0, ge0 + ge1, ge0 - ge1, ge0 + ge1 * 2.0f, ge0 - ge1 * 2.0f, ge1 };
        s_vf qo [6] = { go0, go0 + go1, go0 - go1, go0 + go1 * 2.0f, go0 - go1 * 2.0f, go1 };
        for (size_t i = 0; i < 6; i++) {
            float *zi = z + 6 * i * plane + t;
            s_st (zi, qe [i]);
            s_st (zi + plane, qe [i] + qo [i]);
            s_st (zi + 2 * plane, qe [i] - qo [i]);
            s_st (zi + 3 * plane, qe [i] + qo [i] * 2.0f);
            s_st (zi + 4 * plane, qe [i] - qo [i] * 2.0f);
            s_st (zi + 5 * plane, qo [i]);
        }
    }
}

static void
s_grad_tiles (const gc_cnn_op_t *op, const float *dy, size_t batch, size_t n0, size_t m,
              float *Z, float *scratch)
{
    size_t K = op->oc, H = op->oh, W = op->ow;
    s_tiling_t g = s_tiling (H, W, m, K);
    size_t S = g.S, R = 2 * g.th;
    //  split rows: e [y] = columns 2t, o [y] = columns 2t + 1 of dY's row y
    float *e = scratch, *o = e + R * S, *P = o + R * S;
    memset (scratch, 0, R * 4 * S * sizeof (float));
    for (size_t k = 0; k < K; k++)
        for (size_t n = n0; n < n0 + m; n++) {
            gc_conv_prefetch_next (dy, H * W, k, n, n0, m, batch, K, false);
            s_split_plane (dy + (k * batch + n) * H * W, H, W, 0, R, 0, P, S, g.tw, e, o);
            for (size_t ty = 0; ty < g.th; ty++) {
                const float *e0 = e + 2 * ty * S, *o0 = o + 2 * ty * S;
                float *z = Z + k * g.ld + s_tile_at (&g, n, n0, ty);
                if (op->k == 3)
                    s_a_tiles (e0, e0 + S, o0, o0 + S, z, g.plane, g.L);
                else
                    s_a6_tiles (e0, e0 + S, o0, o0 + S, z, g.plane, g.L);
            }
        }
}

//  Tap p [0] of S_VL consecutive 3x3 kernels (9 floats apart), as lanes.
#if S_VL == 8
#   define S_TAPS(p) ((s_vf) { (p) [0], (p) [9], (p) [18], (p) [27], (p) [36], (p) [45], (p) [54], (p) [63] })
#else
#   define S_TAPS(p) ((s_vf) { (p) [0], (p) [9], (p) [18], (p) [27] })
#endif

//  G applied to three values of S_VL kernels: (a, (a + b + c) / 2, (a - b + c) / 2, c).
static inline void
s_g3 (s_vf a, s_vf b, s_vf c, s_vf *out, size_t stride)
{
    out [0] = a;
    out [stride] = ((a + b) + c) * 0.5f;
    out [2 * stride] = ((a - b) + c) * 0.5f;
    out [3 * stride] = c;
}

//  The 16 rows of U = G g G^T of the S_VL kernels at k (9 floats each).
static inline void
s_kernel_rows (const float *k, s_vf *u)
{
    s_vf g [9], h [4][3];
    for (int x = 0; x < 9; x++)
        g [x] = S_TAPS (k + x);
    for (int col = 0; col < 3; col++)
        s_g3 (g [col], g [3 + col], g [6 + col], &h [0][col], 3);
    for (int i = 0; i < 4; i++)
        s_g3 (h [i][0], h [i][1], h [i][2], u + 4 * i, 1);
}

/*  G (F(2x2, 5x5)'s, 6x5) applied to five values: a / 4, (a + b + c + d +
    e) / 6, (a - b + c - d + e) / 6, (a + 2b + 4c + 8d + 16e) / 24, (a - 2b
    + 4c - 8d + 16e) / 24, e. Divided, not multiplied by a rounded 1/6. */
static void
s_g5 (const float *in, size_t in_stride, float *out, size_t stride)
{
    float a = in [0], b = in [in_stride], c = in [2 * in_stride], d = in [3 * in_stride];
    float e = in [4 * in_stride];
    float even = (a + c) + e, odd = b + d;
    float even4 = (a + c * 4.0f) + e * 16.0f, odd4 = b * 2.0f + d * 8.0f;
    out [0] = a * 0.25f;
    out [stride] = (even + odd) / 6.0f;
    out [2 * stride] = (even - odd) / 6.0f;
    out [3 * stride] = (even4 + odd4) / 24.0f;
    out [4 * stride] = (even4 - odd4) / 24.0f;
    out [5 * stride] = e;
}

//  U = G g G^T of every 5x5 kernel, one at a time (a small part of a
//  step: once per kernel, the sgemms' work is per tile).
static void
s_kernels5 (const float *w, size_t oc, size_t c, float *U)
{
    size_t plane = oc * c;
    for (size_t j = 0; j < plane; j++) {
        float h [6][5], u [6][6];
        for (int col = 0; col < 5; col++)
            s_g5 (w + j * 25 + col, 5, &h [0][col], 5);
        for (int i = 0; i < 6; i++)
            s_g5 (h [i], 1, u [i], 1);
        for (int x = 0; x < 36; x++)
            U [(size_t) x * plane + j] = u [x / 6][x % 6];
    }
}

/*  U = G g G^T of every 3x3 kernel, S_VL kernels at a time: each of the
    16 rows of U is then one vector store over consecutive kernels, where
    the scalar form made 16 stores a plane apart per kernel (3 % of a
    resnet8-gn step, twice a step per layer: forward and the flipped
    kernels of the input gradient). The 9 taps of S_VL kernels are read
    into lanes one by one (built in registers: a vector load of floats just
    stored one at a time would not forward). The last plane % S_VL kernels
    go through a zero-padded copy, their lanes stored one by one. */
static void
s_kernels3 (const float *w, size_t oc, size_t c, float *U)
{
    size_t plane = oc * c, j = 0;
    s_vf u [16];
    for (; j + S_VL <= plane; j += S_VL) {
        s_kernel_rows (w + j * 9, u);
        for (int r = 0; r < 16; r++)
            s_st (U + (size_t) r * plane + j, u [r]);
    }
    if (j == plane)
        return;
    float tail [S_VL * 9] = { 0 };
    memcpy (tail, w + j * 9, (plane - j) * 9 * sizeof *tail);
    s_kernel_rows (tail, u);
    for (int r = 0; r < 16; r++)
        for (size_t l = 0; j + l < plane; l++)
            U [(size_t) r * plane + j + l] = u [r][l];
}

static void
s_kernels (const float *w, size_t oc, size_t c, size_t k, float *U)
{
    if (k == 5)
        s_kernels5 (w, oc, c, U);
    else
        s_kernels3 (w, oc, c, U);
}

//  G^T applied to four values u [0 .. 3], in_stride apart: (u0 + (u1 + u2)
//  / 2, (u1 - u2) / 2, (u1 + u2) / 2 + u3).
static void
s_gt4 (const float *u, size_t in_stride, float *out, size_t stride)
{
    float a = u [0], b = u [in_stride], c = u [2 * in_stride], d = u [3 * in_stride];
    out [0] = a + (b + c) * 0.5f;
    out [stride] = (b - c) * 0.5f;
    out [2 * stride] = (b + c) * 0.5f + d;
}

/*  G^T (F(2x2, 5x5)'s, 5x6) applied to six values; with p = u1 + u2, q =
    u1 - u2, r = u3 + u4, s = u3 - u4: u0 / 4 + (4p + r) / 24, (2q + s) / 12,
    (p + r) / 6, (q + 2s) / 6, (p + 4r) / 6 + u5. */
static void
s_gt6 (const float *u, size_t in_stride, float *out, size_t stride)
{
    float p = u [in_stride] + u [2 * in_stride], q = u [in_stride] - u [2 * in_stride];
    float r = u [3 * in_stride] + u [4 * in_stride], s = u [3 * in_stride] - u [4 * in_stride];
    out [0] = u [0] * 0.25f + (p * 4.0f + r) / 24.0f;
    out [stride] = (q * 2.0f + s) / 12.0f;
    out [2 * stride] = (p + r) / 6.0f;
    out [3 * stride] = (q + s * 2.0f) / 6.0f;
    out [4 * stride] = (p + r * 4.0f) / 6.0f + u [5 * in_stride];
}

/*  dw = G^T dU G of every kernel (k x k from a side x side tile of dU,
    side = k + 1): G^T down the columns, then along the k rows, with the
    form's G^T (s_gt4, s_gt6). */
static void
s_kernel_grad (const float *dU, size_t oc, size_t c, size_t k, float beta, float *dw)
{
    void (*gt) (const float *, size_t, float *, size_t) = k == 5 ? s_gt6 : s_gt4;
    size_t plane = oc * c, side = k + 1, kk = k * k;
    for (size_t j = 0; j < plane; j++) {
        float d [36], a [30], g [25];
        for (size_t x = 0; x < side * side; x++)
            d [x] = dU [x * plane + j];
        for (size_t col = 0; col < side; col++)
            gt (d + col, side, a + col, side);
        for (size_t r = 0; r < k; r++)
            gt (a + r * side, 1, g + r * k, 1);
        float *out = dw + j * kk;
        for (size_t x = 0; x < kk; x++)
            out [x] = beta != 0.0f ? beta * out [x] + g [x] : g [x];
    }
}

const gc_wino_kern_t GC_KSYM (gc_wino_kern) = {
    .input = s_input, .output = s_output, .output_pool = s_output_pool, .grad_tiles = s_grad_tiles,
    .kernels = s_kernels, .kernel_grad = s_kernel_grad,
};
