/*  Pairwise squared distances through a blocked Gram matrix.

    ||x_i - x_j||^2 = G_ii + G_jj - 2 G_ij with G the Gram matrix of the
    inputs minus a centre z. Per block of `gblock` coordinates:
    - the block Gram is formed straight from the inputs, y = x - z formed
      once in the diagonal register blocks; when a row's diagonal lanes show
      that its largest |y| lies outside [2^-40, 2^40) (or NaN/Inf), the
      block is formed again from a packed tile where such rows are scaled
      by a power of two so that their largest entry lies in [0.5, 1): no
      float overflow whatever the inputs hold (|x| up to FLT_MAX, where
      x - z itself can overflow: then that row is formed in double), and
      the scale is exact;
    - the k x k block Gram of the scaled tile is formed here, the same way
      at every level (s_block_gram: 16 float lanes per pair, products then
      adds, folded into double in lane order), so that the distances, and
      the inputs Krum and NNM choose, do not depend on the CPU (OpenBLAS's
      sgemm, used before, picks its kernels from the CPU itself; it also
      spent half its time on its own packing of such small blocks);
    - the unscaled block distances are accumulated in double.
    Why a centre: the float cancellation error in G_ii + G_jj - 2 G_ij is
    relative to ||y_i||^2 + ||y_j||^2, so it is small only when z sits among
    the inputs. Gossip peers pass their own (honest) model. If the medoid
    input (smallest median distance to the others) is more than S_RECENTRE
    times its median distance away from z, the centre was an outlier and one
    more pass recentres on the medoid.
    Compiled once per kernel level (gc_klevel.h). */
#include "gc_mem.h"
#include "gc_robust.h"
#include "gc_robust_internal.h"
#include "gc_robust_simd.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S_RECENTRE 16.0

//  Rows per register block of s_block_gram: the tile holds k rows rounded
//  up to a multiple of it, the rows past k zero.
#define S_GR 4

//  k^2 B, B the coordinates per Gram block: fewer, larger blocks fold
//  their float lanes into double less often (at 2^18 the folds were a
//  fifth of the block's work at k = 16, more at k = 33); the tile is k B
//  floats (256 KB at k = 16), and a lane sums at most B / 16 <= 256
//  products (s_lanes_safe).
#define S_GRAM_AREA 1048576

static size_t
s_padded_rows (size_t k)
{
    return (k + S_GR - 1) / S_GR * S_GR;
}

static size_t
s_gblock (size_t k)
{
    size_t g = (size_t) S_GRAM_AREA / (k * k);
    g = g / 16 * 16;
    return g < 64 ? 64 : g > 4096 ? 4096 : g;
}


//  Scale y = x - z into row, given the largest |y| (as a bit pattern);
//  returns the factor that undoes the scaling (0 for an all-zero row).
static double
s_scale_row (float *restrict row, const float *restrict x, const float *restrict z,
             size_t n, uint32_t topbits)
{
    float top;
    memcpy (&top, &topbits, sizeof top);
    if (top == 0) {
        memset (row, 0, n * sizeof *row);
        return 0;
    }
    int e;
    if (isfinite (top)) {
        frexpf (top, &e);
        e = e < -126 ? -126 : e;
        float s = ldexpf (1.0f, -e);
        for (size_t c = 0; c < n; c++)
            row [c] = (x [c] - z [c]) * s;
        return ldexp (1.0, e);
    }
    //  x - z overflowed float (|x|, |z| near FLT_MAX): form it in double.
    double dtop = 0;
    for (size_t c = 0; c < n; c++) {
        double t = fabs ((double) x [c] - (double) z [c]);
        dtop = t > dtop ? t : dtop;
    }
    frexp (dtop, &e);
    double s = ldexp (1.0, -e);
    for (size_t c = 0; c < n; c++)
        row [c] = (float) (((double) x [c] - (double) z [c]) * s);
    return ldexp (1.0, e);
}

//  Rows whose largest |x - z| lies in [2^-40, 2^40) are used as they are:
//  their products and the block's sums of them stay far inside float's
//  normal range, so scaling them (exact, by a power of two) would change
//  nothing but the cost of a second pass over the block.
#define S_SAFE_LO (87u << 23)           /* the bits of 2^-40 */
#define S_SAFE_HI (167u << 23)          /* the bits of 2^40 */

//  Pack one block: y = x - z into the tile rows, with the maxima of |x| (the
//  NaN/Inf check) and |y| per row, reading the k rows in lockstep 16 floats
//  at a time (the access pattern the hardware prefetcher streams at full
//  bandwidth; row after row in 4 KB bursts ran at a third of it); then the
//  rows outside the safe range are formed again, scaled, from cache.
//  Returns 1 when an input holds NaN or Inf.
static int
s_pack_block (gc_robust_ws_t *ws, const float *const *in, size_t k, const float *centre,
              size_t c0, size_t n, size_t gb)
{
    uint32_t *lanes = ws->lanes, big [16] = { 0 };
    float *tile = ws->gtile;
    memset (lanes, 0, k * 16 * sizeof *lanes);
    const float *z = centre + c0;
    size_t c = 0;
#ifdef S_W
    //  Explicit vectors: left to itself GCC vectorises across rows, with gathers.
    if (!ws->portable) {
        s_vi bigv = s_vi_zero ();
        //  16 floats (one 64-byte line) of each row per step, at any width.
        for (; c + 16 <= n; c += 16)
            for (size_t i = 0; i < k; i++) {
                const float *x = in [i] + c0 + c;
                gc_kprefetch (x);
                for (size_t h = 0; h < 16; h += S_W) {
                    s_vf v = s_loadu (x + h), y = s_sub (v, s_loadu (z + c + h));
                    bigv = s_vi_absmax (bigv, v);
                    s_store (tile + i * gb + c + h, y);
                    s_vi_store (lanes + i * 16 + h,
                                s_vi_absmax (s_vi_load (lanes + i * 16 + h), y));
                }
            }
        big [0] = s_vi_reduce (bigv);
    }
#endif
    for (; c + 16 <= n; c += 16)
        for (size_t i = 0; i < k; i++) {
            const float *restrict x = in [i] + c0 + c;
            float *restrict row = tile + i * gb + c;
            uint32_t *restrict top = lanes + i * 16;
            gc_kprefetch (x);
            for (size_t j = 0; j < 16; j++) {
                float y = x [j] - z [c + j];
                uint32_t u = s_absbits (x [j]), t = s_absbits (y);
                row [j] = y;
                big [j] = u > big [j] ? u : big [j];
                top [j] = t > top [j] ? t : top [j];
            }
        }
    for (; c < n; c++)
        for (size_t i = 0; i < k; i++) {
            float x = in [i][c0 + c], y = x - z [c];
            uint32_t u = s_absbits (x), t = s_absbits (y);
            tile [i * gb + c] = y;
            big [c % 16] = u > big [c % 16] ? u : big [c % 16];
            lanes [i * 16 + c % 16] = t > lanes [i * 16 + c % 16] ? t : lanes [i * 16 + c % 16];
        }
    for (size_t j = 0; j < 16; j++)
        if (big [j] >= GC_ROBUST_NONFINITE_BITS)
            return 1;
    for (size_t i = 0; i < k; i++) {
        uint32_t top = 0;
        for (size_t j = 0; j < 16; j++)
            top = lanes [i * 16 + j] > top ? lanes [i * 16 + j] : top;
        ws->scale [i] = top >= S_SAFE_LO && top < S_SAFE_HI ? 1.0
                      : s_scale_row (tile + i * gb, in [i] + c0, z, n, top);
    }
    return 0;
}


//  Fold 16 float lanes into double, in lane order.
static inline double
s_lanes_sum (const float *lane)
{
    double t = 0;
    for (int l = 0; l < 16; l++)
        t += (double) lane [l];
    return t;
}

//  The block Gram in register blocks of S_GR x S_GR rows, as 16 float lanes
//  per pair: lane l sums y_r[c] * y_q[c] over c = l mod 16 in coordinate
//  order, a product then an add. lanes: S_GR x S_GR pairs x 16 floats, pair
//  (r, q) at (r * S_GR + q) * 16.
//  s_gram_diag forms a diagonal block (rows against themselves, the pairs
//  r <= q): it reads its rows as x and z, writes y = x - z into the tile
//  rows t (in place when x is the tile and z zeros) and asks for the same
//  rows pf floats further on, the next block (0: none); s_gram_off forms
//  an off-diagonal block from two sets of tile rows. A column of blocks
//  starts with its diagonal, so every y is formed once, in the one pass
//  that reads the inputs.
#ifdef S_W
//  S_W lanes per vector: 16 (zmm, one pass) or 8 (ymm, the low and the
//  high 8 lanes apart, independent sums: 10 accumulators, 4 rows and z in
//  16 registers). The ymm passes go chunk by chunk of S_GRAM_CHUNK floats
//  (the sums carried in lanes from one chunk to the next: the same
//  operations in the same order), so that a chunk's rows stay in L1 from
//  one pass to the next (whole 16 KB rows were read from L2 twice, four
//  times off the diagonal).
#if S_W == 16
#   define S_GRAM_CHUNK 4096
#else
#   define S_GRAM_CHUNK 1024
#endif
static void
s_gram_diag (const float *const *x, const float *z, float *const *t, size_t n16, size_t pf,
             float *lanes)
{
    for (size_t c0 = 0; c0 < n16; c0 += S_GRAM_CHUNK)
    for (int h = 0; h < 16; h += S_W) {
        size_t c1 = n16 - c0 < S_GRAM_CHUNK ? n16 : c0 + S_GRAM_CHUNK;
        s_vf acc [S_GR][S_GR];
        for (int r = 0; r < S_GR; r++)
            for (int q = r; q < S_GR; q++)
                acc [r][q] = c0 ? s_loadu (lanes + (r * S_GR + q) * 16 + h) : s_zero ();
        for (size_t c = c0 + h; c < c1; c += 16) {
            s_vf zv = s_loadu (z + c), y [S_GR];
            for (int r = 0; r < S_GR; r++) {
                if (pf && !h)
                    __builtin_prefetch (x [r] + c + pf, 0, 2);
                y [r] = s_sub (s_loadu (x [r] + c), zv);
                s_store (t [r] + c, y [r]);
            }
            for (int r = 0; r < S_GR; r++)
                for (int q = r; q < S_GR; q++)
                    acc [r][q] = s_add (acc [r][q], s_mul (y [r], y [q]));
        }
        for (int r = 0; r < S_GR; r++)
            for (int q = r; q < S_GR; q++)
                s_storeu (lanes + (r * S_GR + q) * 16 + h, acc [r][q]);
    }
}
#endif

#if GC_KLEVEL >= GC_KLEVEL_AVX512
static void
s_gram_off (const float *const *a, const float *const *b, size_t n16, float *lanes)
{
    __m512 acc [S_GR][S_GR];
    for (int r = 0; r < S_GR; r++)
        for (int q = 0; q < S_GR; q++)
            acc [r][q] = _mm512_setzero_ps ();
    for (size_t c = 0; c < n16; c += 16) {
        __m512 av [S_GR], bv [S_GR];
        for (int r = 0; r < S_GR; r++) {
            av [r] = _mm512_load_ps (a [r] + c);
            bv [r] = _mm512_load_ps (b [r] + c);
        }
        for (int r = 0; r < S_GR; r++)
            for (int q = 0; q < S_GR; q++)
                acc [r][q] = _mm512_add_ps (acc [r][q], _mm512_mul_ps (av [r], bv [q]));
    }
    for (int r = 0; r < S_GR; r++)
        for (int q = 0; q < S_GR; q++)
            _mm512_storeu_ps (lanes + (r * S_GR + q) * 16, acc [r][q]);
}
#elif GC_KLEVEL == GC_KLEVEL_AVX2
//  Off the diagonal in 16 ymm registers: 4 x 2 pairs at a time, each half
//  of the lanes apart, 8 accumulators, 6 loads per step.
static void
s_gram_off (const float *const *a, const float *const *b, size_t n16, float *lanes)
{
    for (size_t c0 = 0; c0 < n16; c0 += S_GRAM_CHUNK)
    for (int h = 0; h < 16; h += 8)
        for (int q0 = 0; q0 < S_GR; q0 += 2) {
            size_t c1 = n16 - c0 < S_GRAM_CHUNK ? n16 : c0 + S_GRAM_CHUNK;
            __m256 acc [S_GR][2];
            for (int r = 0; r < S_GR; r++)
                for (int q = 0; q < 2; q++)
                    acc [r][q] = c0 ? _mm256_loadu_ps (lanes + (r * S_GR + q0 + q) * 16 + h)
                                    : _mm256_setzero_ps ();
            for (size_t c = c0 + h; c < c1; c += 16) {
                __m256 b0v = _mm256_load_ps (b [q0] + c);
                __m256 b1v = _mm256_load_ps (b [q0 + 1] + c);
                for (int r = 0; r < S_GR; r++) {
                    __m256 av = _mm256_load_ps (a [r] + c);
                    acc [r][0] = _mm256_add_ps (acc [r][0], _mm256_mul_ps (av, b0v));
                    acc [r][1] = _mm256_add_ps (acc [r][1], _mm256_mul_ps (av, b1v));
                }
            }
            for (int r = 0; r < S_GR; r++)
                for (int q = 0; q < 2; q++)
                    _mm256_storeu_ps (lanes + (r * S_GR + q0 + q) * 16 + h, acc [r][q]);
        }
}
#else
//  Plain C: s_gram_pass packs every block first at this level (x is the
//  tile, z zeros), so the diagonal only forms its pairs.
static void
s_gram_pairs (const float *const *a, const float *const *b, size_t n16, float *lanes, int diag)
{
    for (int r = 0; r < S_GR; r++)
        for (int q = diag ? r : 0; q < S_GR; q++) {
            const float *restrict x = a [r], *restrict y = b [q];
            float acc [16] = { 0 };
            for (size_t c = 0; c < n16; c += 16)
                for (int l = 0; l < 16; l++)
                    acc [l] += x [c + l] * y [c + l];
            memcpy (lanes + (r * S_GR + q) * 16, acc, sizeof acc);
        }
}

static void
s_gram_diag (const float *const *x, const float *z, float *const *t, size_t n16, size_t pf,
             float *lanes)
{
    (void) z, (void) t, (void) pf;
    s_gram_pairs (x, x, n16, lanes, 1);
}

static void
s_gram_off (const float *const *a, const float *const *b, size_t n16, float *lanes)
{
    s_gram_pairs (a, b, n16, lanes, 0);
}
#endif

//  Whether row i's diagonal lanes show that its largest |x - z| lies in the
//  range the packing leaves unscaled, [2^-40, 2^40) (so that using the row
//  as it is gives the packing's bits): every lane (a float sum of the
//  squares, never below any of them) below 2^80 bounds it from above, a
//  lane of at least 2^-71 from below (at most 256 squares per lane, each
//  below 2^-80 otherwise). The centre's own row is exactly zero when it is
//  finite, which the packing leaves as zeros too. NaN and Inf fail.
static int
s_lanes_safe (const float *lane, int is_centre)
{
    int hi = 1, lo = 0, zero = 1;
    for (int l = 0; l < 16; l++) {
        hi &= lane [l] < 0x1p80f;
        lo |= lane [l] >= 0x1p-71f;
        zero &= lane [l] == 0;
    }
    return is_centre ? zero : hi & lo;
}

//  gram[i * k + j] for i <= j < k: the block Gram of x[0..kp) minus z
//  (kp = k padded to a multiple of S_GR with rows equal to z: zeros), the
//  y = x - z left in the tile rows t[0..kp). With is_centre (which row is z
//  itself), returns -1 as soon as a row fails s_lanes_safe.
static int
s_block_gram (const float *const *x, const float *z, float *const *t, size_t k, size_t n16,
              size_t pf, double *gram, const unsigned char *is_centre)
{
    float lanes [S_GR * S_GR * 16];
    for (size_t jb = 0; jb < k; jb += S_GR) {
        s_gram_diag (x + jb, z, t + jb, n16, pf, lanes);
        for (size_t r = 0; is_centre && r < S_GR && jb + r < k; r++)
            if (!s_lanes_safe (lanes + (r * S_GR + r) * 16, is_centre [jb + r]))
                return -1;
        for (size_t r = 0; r < S_GR; r++)
            for (size_t q = r; q < S_GR && jb + q < k; q++)
                gram [(jb + r) * k + jb + q] = s_lanes_sum (lanes + (r * S_GR + q) * 16);
        for (size_t ib = 0; ib < jb; ib += S_GR) {
            s_gram_off ((const float *const *) t + ib, (const float *const *) t + jb, n16, lanes);
            for (size_t r = 0; r < S_GR; r++)
                for (size_t q = 0; q < S_GR && jb + q < k; q++)
                    gram [(ib + r) * k + jb + q] = s_lanes_sum (lanes + (r * S_GR + q) * 16);
        }
    }
    return 0;
}

//  Floats after the tile that stay zero: the centre of the packed tile's
//  Gram (whose rows are already x - z) and its padding rows.
#define S_ZROW 4096

//  The largest tile: k = 17, 20 rows of 3616 (s_gblock).
#define S_TILE_PEAK 72320

static int
s_gram_pass (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
             const float *centre, double *dist, double *norm2)
{
    size_t gb = s_gblock (k), kp = s_padded_rows (k);
    float *tile = ws->gtile, *zrow = ws->gtile + ws->gtile_cap - S_ZROW;
    double *gram = ws->gram;
    double *unscale = ws->scale;
    const float *xrow [GC_ROBUST_MAX_INPUTS + S_GR];
    float *trow [GC_ROBUST_MAX_INPUTS + S_GR];
    unsigned char is_centre [GC_ROBUST_MAX_INPUTS];
    memset (dist, 0, k * k * sizeof *dist);
    memset (norm2, 0, k * sizeof *norm2);
    memset (zrow, 0, S_ZROW * sizeof *zrow);
    for (size_t i = 0; i < kp; i++) {
        trow [i] = tile + i * gb;
        if (i < k)
            is_centre [i] = in [i] == centre;
    }
    for (size_t c0 = 0; c0 < d; c0 += gb) {
        size_t n = d - c0 < gb ? d - c0 : gb;
        //  The block's Gram straight from the inputs, when every row turns
        //  out to need no scaling (the usual case); else pack and scale.
#ifdef S_W
        int direct = n % 16 == 0;
#else
        //  Plain C would form x - z once per pair: packing first is cheaper.
        int direct = 0;
#endif
        for (size_t i = 0; direct && i < kp; i++)
            xrow [i] = (i < k ? in [i] : centre) + c0;
        if (direct && !s_block_gram (xrow, centre + c0, trow, k, n, gb, gram, is_centre)) {
            for (size_t i = 0; i < k; i++)
                unscale [i] = 1.0;
        }
        else {
            if (s_pack_block (ws, in, k, centre, c0, n, gb))
                return 1;
            //  Zeros past n, to a whole 16-lane column, and in the padding
            //  rows (the packing writes neither).
            size_t n16 = (n + 15) / 16 * 16;
            for (size_t i = 0; n < n16 && i < k; i++)
                memset (tile + i * gb + n, 0, (n16 - n) * sizeof *tile);
            memset (tile + k * gb, 0, (kp - k) * gb * sizeof *tile);
            s_block_gram ((const float *const *) trow, zrow, trow, k, n16, 0, gram, NULL);
        }
        for (size_t i = 0; i < k; i++) {
            double ui = unscale [i], gii = ui * ui * gram [i * k + i];
            norm2 [i] += gii;
            for (size_t j = i + 1; j < k; j++) {
                double uj = unscale [j];
                dist [i * k + j] += gii + uj * uj * gram [j * k + j]
                                  - 2.0 * ui * uj * gram [i * k + j];
            }
        }
    }
    for (size_t i = 0; i < k; i++) {
        dist [i * k + i] = 0;
        for (size_t j = i + 1; j < k; j++) {
            double v = dist [i * k + j] > 0 ? dist [i * k + j] : 0;
            dist [i * k + j] = dist [j * k + i] = v;
        }
    }
    return 0;
}

//  The kth smallest of a[0..n) (a is reordered): quickselect, so that no
//  call allocates (glibc's qsort does for arrays over 1 KB).
static double
s_select (double *a, size_t n, size_t kth)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = a [lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a [i] < pivot)
                i++;
            while (a [j] > pivot)
                j--;
            if (i <= j) {
                double t = a [i];
                a [i] = a [j];
                a [j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (kth <= j)
            hi = j;
        else
        if (kth >= i)
            lo = i;
        else
            return a [kth];
    }
    return a [kth];
}

//  The input whose median distance to the others is smallest (lowest index
//  on ties); *med receives that median.
static size_t
s_medoid (const double *dist, size_t k, double *scratch, double *med)
{
    size_t best = 0;
    double best_med = INFINITY;
    for (size_t i = 0; i < k; i++) {
        size_t n = 0;
        for (size_t j = 0; j < k; j++)
            if (j != i)
                scratch [n++] = dist [i * k + j];
        double m = s_select (scratch, n, (n - 1) / 2);
        if (m < best_med) {
            best_med = m;
            best = i;
        }
    }
    *med = best_med;
    return best;
}

int
GC_KSYM (gc_robust_distances) (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                     const float *centre, double *dist, int *passes)
{
    //  The tile (k rounded up to S_GR rows of gblock(k)) peaks at
    //  S_TILE_PEAK floats (k = 17) for every k up to GC_ROBUST_MAX_INPUTS
    //  (past k = 115, B is 64 and kp B at most 65536): reserve that much
    //  at once, so that another k later never grows it.
    size_t need = s_padded_rows (k) * s_gblock (k);
    need = (need > S_TILE_PEAK ? need : S_TILE_PEAK) + S_ZROW;
    if (need > ws->gtile_cap) {
        gc_mem_free (ws->gtile);
        ws->gtile_cap = 0;
        if (!(ws->gtile = gc_falloc (need)))
            return -1;
        ws->gtile_cap = need;
    }
    double *norm2 = ws->vec_a;
    if (s_gram_pass (ws, in, k, d, centre, dist, norm2))
        return 1;
    *passes = 1;
    if (k < 3)
        return 0;
    double med;
    size_t r = s_medoid (dist, k, ws->vec_b, &med);
    if (norm2 [r] > S_RECENTRE * med && in [r] != centre) {
        *passes = 2;
        if (s_gram_pass (ws, in, k, d, in [r], dist, norm2))
            return 1;
    }
    return 0;
}
