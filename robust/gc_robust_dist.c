/*  Pairwise squared distances through a blocked Gram matrix.

    ||x_i - x_j||^2 = G_ii + G_jj - 2 G_ij with G the Gram matrix of the
    inputs minus a centre z. Per block of `gblock` coordinates:
    - each row y_i = x_i - z is scaled by a power of two so that its largest
      entry lies in [0.5, 1): no float overflow whatever the inputs hold
      (|x| up to FLT_MAX, where x - z itself can overflow: then that row is
      formed in double), and the scale is exact;
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

static size_t
s_padded_rows (size_t k)
{
    return (k + S_GR - 1) / S_GR * S_GR;
}

static size_t
s_gblock (size_t k)
{
    size_t g = (size_t) 262144 / (k * k);
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

//  The products of rows ib..ib+3 with rows jb..jb+3 of the tile (row stride
//  gb, n16 coordinates, a multiple of 16), as 16 lanes per pair: lane l sums
//  t_i[c] * t_j[c] over c = l mod 16 in coordinate order, a product then an
//  add. lanes: 16 pairs x 16 floats, pair (r, s) at (r * S_GR + s) * 16.
static void
s_gram_lanes (const float *tile, size_t gb, size_t ib, size_t jb, size_t n16, float *lanes)
{
    const float *a0 = tile + ib * gb, *b0 = tile + jb * gb;
#if GC_KLEVEL >= GC_KLEVEL_AVX512
    __m512 acc [S_GR][S_GR];
    for (int r = 0; r < S_GR; r++)
        for (int q = 0; q < S_GR; q++)
            acc [r][q] = _mm512_setzero_ps ();
    for (size_t c = 0; c < n16; c += 16) {
        __m512 a [S_GR], b [S_GR];
        for (int r = 0; r < S_GR; r++) {
            a [r] = _mm512_load_ps (a0 + r * gb + c);
            b [r] = _mm512_load_ps (b0 + r * gb + c);
        }
        for (int r = 0; r < S_GR; r++)
            for (int q = 0; q < S_GR; q++)
                acc [r][q] = _mm512_add_ps (acc [r][q], _mm512_mul_ps (a [r], b [q]));
    }
    for (int r = 0; r < S_GR; r++)
        for (int q = 0; q < S_GR; q++)
            _mm512_storeu_ps (lanes + (r * S_GR + q) * 16, acc [r][q]);
#elif GC_KLEVEL == GC_KLEVEL_AVX2
    //  16 ymm registers: the low and the high 8 lanes apart (independent
    //  sums), 4 x 2 pairs at a time: 8 accumulators, 6 loads per step.
    for (int h = 0; h < 16; h += 8)
        for (int q0 = 0; q0 < S_GR; q0 += 2) {
            __m256 acc [S_GR][2];
            for (int r = 0; r < S_GR; r++)
                acc [r][0] = acc [r][1] = _mm256_setzero_ps ();
            for (size_t c = h; c < n16; c += 16) {
                __m256 b0v = _mm256_load_ps (b0 + q0 * gb + c);
                __m256 b1v = _mm256_load_ps (b0 + (q0 + 1) * gb + c);
                for (int r = 0; r < S_GR; r++) {
                    __m256 a = _mm256_load_ps (a0 + r * gb + c);
                    acc [r][0] = _mm256_add_ps (acc [r][0], _mm256_mul_ps (a, b0v));
                    acc [r][1] = _mm256_add_ps (acc [r][1], _mm256_mul_ps (a, b1v));
                }
            }
            for (int r = 0; r < S_GR; r++)
                for (int q = 0; q < 2; q++)
                    _mm256_storeu_ps (lanes + (r * S_GR + q0 + q) * 16 + h, acc [r][q]);
        }
#else
    for (int r = 0; r < S_GR; r++)
        for (int q = 0; q < S_GR; q++) {
            const float *restrict x = a0 + r * gb, *restrict y = b0 + q * gb;
            float acc [16] = { 0 };
            for (size_t c = 0; c < n16; c += 16)
                for (int l = 0; l < 16; l++)
                    acc [l] += x [c + l] * y [c + l];
            memcpy (lanes + (r * S_GR + q) * 16, acc, sizeof acc);
        }
#endif
}

//  gram[i * k + j] for i <= j < k: the block Gram of the first k rows of the
//  tile (rows padded with zeros to a multiple of S_GR, columns to n16).
static void
s_block_gram (const float *tile, size_t gb, size_t k, size_t n16, double *gram)
{
    float lanes [S_GR * S_GR * 16];
    for (size_t ib = 0; ib < k; ib += S_GR)
        for (size_t jb = ib; jb < k; jb += S_GR) {
            s_gram_lanes (tile, gb, ib, jb, n16, lanes);
            for (size_t r = 0; r < S_GR && ib + r < k; r++)
                for (size_t q = 0; q < S_GR && jb + q < k; q++)
                    if (ib + r <= jb + q)
                        gram [(ib + r) * k + jb + q] = s_lanes_sum (lanes + (r * S_GR + q) * 16);
        }
}

static int
s_gram_pass (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
             const float *centre, double *dist, double *norm2)
{
    size_t gb = s_gblock (k);
    float *tile = ws->gtile;
    double *gram = ws->gram;
    double *unscale = ws->scale;
    memset (dist, 0, k * k * sizeof *dist);
    memset (norm2, 0, k * sizeof *norm2);
    //  The padding rows (past k, to a whole register block) are never
    //  written by the packing: zero them once, they add nothing to any lane.
    memset (tile + k * gb, 0, (s_padded_rows (k) - k) * gb * sizeof *tile);
    for (size_t c0 = 0; c0 < d; c0 += gb) {
        size_t n = d - c0 < gb ? d - c0 : gb;
        if (s_pack_block (ws, in, k, centre, c0, n, gb))
            return 1;
        //  A partial last block: zeros past n, to a whole 16-lane column.
        size_t n16 = (n + 15) / 16 * 16;
        for (size_t i = 0; n < n16 && i < k; i++)
            memset (tile + i * gb + n, 0, (n16 - n) * sizeof *tile);
        s_block_gram (tile, gb, k, n16, gram);
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
    //  The tile (k rounded up to S_GR rows of gblock(k)) peaks at 38784
    //  floats (k = 9) below k = 605: reserve that much at once, so that a
    //  smaller k later never grows it.
    size_t need = s_padded_rows (k) * s_gblock (k);
    need = need > 38784 ? need : 38784;
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
