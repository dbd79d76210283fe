/*  Coordinate-wise kernels: order statistics by compare-exchange networks
    applied across coordinates, and the weighted sums the other rules use.

    Three implementations of a network window, bit-identical (same network,
    same min/max operand order, same summation order):
    - register kernels (AVX-512): for k <= GC_NET_REG_MAX and the common
      windows, straight-line code generated at build time keeps the k vectors
      of 16 coordinates in zmm registers;
    - tile interpreter: copies a block of GC_ROBUST_TB coordinates of the k
      inputs into a k x TB tile in L1 and runs the network row pair by row
      pair with vector min/max (AVX-512 or AVX2 when compiled in);
    - portable: the same tile loops in plain C, used when the build has no
      AVX2 or when gc_robust_set_portable asks for it (tests compare).
    Every kernel checks its inputs for NaN/Inf in the same pass (the largest
    |x| bit pattern), so no separate pre-pass reads memory. */
#include "gc_robust_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gc_robust_simd.h"

#define TB GC_ROBUST_TB

//  --- Register kernels --------------------------------------------------------

#if defined (__AVX512F__) && defined (__AVX512DQ__)
#   include "gc_robust_networks.h"
#   define S_HAVE_REG 1

#   define S_PASTE_(a, b) a##b
#   define S_PASTE(a, b) S_PASTE_ (a, b)
#   define S_LOAD(i) \
        __m512 v##i = _mm512_maskz_loadu_ps (m, in [i] + c); \
        bad = _mm512_max_epu32 (bad, _mm512_and_si512 (_mm512_castps_si512 (v##i), absmask));
#   define S_CE(a, b) { __m512 t_ = v##a; v##a = _mm512_min_ps (t_, v##b); v##b = _mm512_max_ps (t_, v##b); }
#   define S_MN(a, b) v##a = _mm512_min_ps (v##a, v##b);
#   define S_MX(a, b) v##b = _mm512_max_ps (v##a, v##b);
#   define S_LO8(v) _mm512_cvtps_pd (_mm512_castps512_ps256 (v))
#   define S_HI8(v) _mm512_cvtps_pd (_mm512_extractf32x8_ps (v, 1))
#   define S_FIRST(i) s0 = S_LO8 (v##i); s1 = S_HI8 (v##i);
#   define S_NEXT(i) s0 = _mm512_add_pd (s0, S_LO8 (v##i)); s1 = _mm512_add_pd (s1, S_HI8 (v##i));

//  One function per generated (k, lo, hi): a loop over 16-coordinate columns,
//  the last one masked (masked loads do not touch memory past d).
#   define S_REG_DEFINE(K, LO, HI) \
static void \
s_reg_##K##_##LO##_##HI (const float *const *in, size_t d, float *out, uint32_t *badp) \
{ \
    const __m512i absmask = _mm512_set1_epi32 (0x7fffffff); \
    const __m512d inv = _mm512_set1_pd (1.0 / (double) ((HI) - (LO) + 1)); \
    __m512i bad = _mm512_setzero_si512 (); \
    for (size_t c = 0; c < d; c += 16) { \
        __mmask16 m = d - c >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (d - c)) - 1); \
        GC_NET_K##K##_##LO##_##HI (S_LOAD, S_CE, S_MN, S_MX) \
        if ((LO) == (HI)) \
            _mm512_mask_storeu_ps (out + c, m, S_PASTE (v, LO)); \
        else { \
            __m512d s0, s1; \
            GC_NET_K##K##_##LO##_##HI##_SUM (S_FIRST, S_NEXT) \
            __m256 o0 = _mm512_cvtpd_ps (_mm512_mul_pd (s0, inv)); \
            __m256 o1 = _mm512_cvtpd_ps (_mm512_mul_pd (s1, inv)); \
            _mm512_mask_storeu_ps (out + c, m, \
                _mm512_insertf32x8 (_mm512_castps256_ps512 (o0), o1, 1)); \
        } \
    } \
    *badp = (uint32_t) _mm512_reduce_max_epu32 (bad); \
}

#   pragma GCC diagnostic push
#   pragma GCC diagnostic ignored "-Wunused-variable"
GC_NET_LIST (S_REG_DEFINE)
#   pragma GCC diagnostic pop

typedef void (*s_reg_fn) (const float *const *in, size_t d, float *out, uint32_t *badp);

#   define S_REG_ENTRY(K, LO, HI) { K, LO, HI, s_reg_##K##_##LO##_##HI },
static const struct {
    uint16_t k, lo, hi;
    s_reg_fn fn;
} s_reg_table [] = { GC_NET_LIST (S_REG_ENTRY) };

static s_reg_fn
s_reg_lookup (size_t k, size_t lo, size_t hi)
{
    if (k > GC_NET_REG_MAX)
        return NULL;
    for (size_t i = 0; i < sizeof s_reg_table / sizeof s_reg_table [0]; i++)
        if (s_reg_table [i].k == k && s_reg_table [i].lo == lo && s_reg_table [i].hi == hi)
            return s_reg_table [i].fn;
    return NULL;
}
#endif

//  --- Tile interpreter --------------------------------------------------------

//  Copy a block of n <= TB coordinates of each input into the tile rows;
//  returns the largest |x| bit pattern. Lanes n..TB keep earlier (finite)
//  values: they are computed on and never stored.
static uint32_t
s_tile_load_portable (float *restrict tile, const float *const *in, size_t k,
                      size_t c0, size_t n)
{
    uint32_t big = 0;
    for (size_t i = 0; i < k; i++) {
        const float *restrict src = in [i] + c0;
        float *restrict row = tile + i * TB;
        for (size_t c = 0; c < n; c++) {
            uint32_t u = s_absbits (src [c]);
            row [c] = src [c];
            big = u > big ? u : big;
        }
    }
    return big;
}

static void
s_tile_net_portable (float *tile, const gc_robust_net_t *net)
{
    for (size_t e = 0; e < net->n_ce; e++) {
        const gc_net_ce_t *ce = &net->ce [e];
        float *restrict a = tile + (size_t) ce->a * TB;
        float *restrict b = tile + (size_t) ce->b * TB;
        for (size_t c = 0; c < TB; c++) {
            float x = a [c], y = b [c];
            if (ce->op != GC_NET_MAX)
                a [c] = x < y ? x : y;
            if (ce->op != GC_NET_MIN)
                b [c] = x > y ? x : y;
        }
    }
}

#ifdef S_W
static uint32_t
s_tile_load_simd (float *restrict tile, const float *const *in, size_t k, size_t c0, size_t n)
{
    if (n < TB)
        return s_tile_load_portable (tile, in, k, c0, n);
    s_vi big = s_vi_zero ();
    for (size_t i = 0; i < k; i++) {
        const float *src = in [i] + c0;
        float *row = tile + i * TB;
        for (size_t c = 0; c < TB; c += S_W) {
            s_vf x = s_loadu (src + c);
            s_store (row + c, x);
            big = s_vi_absmax (big, x);
        }
    }
    return s_vi_reduce (big);
}

static void
s_tile_net_simd (float *tile, const gc_robust_net_t *net)
{
    for (size_t e = 0; e < net->n_ce; e++) {
        const gc_net_ce_t *ce = &net->ce [e];
        float *a = tile + (size_t) ce->a * TB;
        float *b = tile + (size_t) ce->b * TB;
        switch (ce->op) {
            case GC_NET_CE:
                for (size_t c = 0; c < TB; c += S_W) {
                    s_vf x = s_load (a + c), y = s_load (b + c);
                    s_store (a + c, s_min (x, y));
                    s_store (b + c, s_max (x, y));
                }
                break;
            case GC_NET_MIN:
                for (size_t c = 0; c < TB; c += S_W)
                    s_store (a + c, s_min (s_load (a + c), s_load (b + c)));
                break;
            default:
                for (size_t c = 0; c < TB; c += S_W)
                    s_store (b + c, s_max (s_load (a + c), s_load (b + c)));
                break;
        }
    }
}
#endif

//  Mean of rows lo..hi, summed in double in row order (as the register
//  kernels do), for the first n lanes.
static void
s_tile_sum (const float *tile, size_t lo, size_t hi, double *restrict acc,
            float *restrict out, size_t n)
{
    const float *first = tile + lo * TB;
    if (lo == hi) {
        memcpy (out, first, n * sizeof *out);
        return;
    }
    double inv = 1.0 / (double) (hi - lo + 1);
    for (size_t c = 0; c < TB; c++)
        acc [c] = first [c];
    for (size_t r = lo + 1; r <= hi; r++) {
        const float *restrict row = tile + r * TB;
        for (size_t c = 0; c < TB; c++)
            acc [c] += row [c];
    }
    for (size_t c = 0; c < n; c++)
        out [c] = (float) (acc [c] * inv);
}

//  The network for (k, lo, hi), rebuilt only when the shape changes.
static const gc_robust_net_t *
s_net (gc_robust_ws_t *ws, size_t k, size_t lo, size_t hi, bool ordered)
{
    gc_robust_net_t *net = &ws->net;
    if (ws->net_valid && net->n == k && net->lo == lo && net->hi == hi && net->ordered == ordered)
        return net;
    ws->net_valid = gc_robust_net_build (net, k, lo, hi, ordered) == 0;
    return ws->net_valid ? net : NULL;
}

//  Load, check and sort one block into the tile; 1 on a non-finite input.
static int
s_tile_block (gc_robust_ws_t *ws, const gc_robust_net_t *net, const float *const *in,
              size_t k, size_t c0, size_t n)
{
    uint32_t big;
#ifdef S_W
    if (!ws->portable) {
        big = s_tile_load_simd (ws->tile, in, k, c0, n);
        if (big >= GC_ROBUST_NONFINITE_BITS)
            return 1;
        s_tile_net_simd (ws->tile, net);
        return 0;
    }
#endif
    big = s_tile_load_portable (ws->tile, in, k, c0, n);
    if (big >= GC_ROBUST_NONFINITE_BITS)
        return 1;
    s_tile_net_portable (ws->tile, net);
    return 0;
}

int
gc_robust_cw_window (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                     size_t lo, size_t hi, float *out)
{
#ifdef S_HAVE_REG
    s_reg_fn fn = ws->portable ? NULL : s_reg_lookup (k, lo, hi);
    if (fn) {
        uint32_t big;
        fn (in, d, out, &big);
        return big >= GC_ROBUST_NONFINITE_BITS;
    }
#endif
    if (gc_robust_ws_reserve_tile (ws, k))
        return -1;
    const gc_robust_net_t *net = s_net (ws, k, lo, hi, false);
    if (!net)
        return -1;
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
        if (s_tile_block (ws, net, in, k, c0, n))
            return 1;
        s_tile_sum (ws->tile, lo, hi, ws->acc, out + c0, n);
    }
    return 0;
}

//  --- Bulyan's coordinate phase -------------------------------------------

//  Grow a window around the median of the sorted column s[0..k), taking
//  the nearer neighbour each time (the lower one on a tie).
static float
s_closest_mean (const float *s, size_t stride, size_t k, size_t beta)
{
    double med = k % 2 ? (double) s [(k - 1) / 2 * stride]
                       : ((double) s [(k / 2 - 1) * stride] + (double) s [k / 2 * stride]) * 0.5;
    size_t lo = k / 2, hi = k / 2;     /* window [lo, hi) */
    double sum = 0;
    if (k % 2) {
        lo = (k - 1) / 2;
        hi = lo + 1;
        sum = s [lo * stride];
    }
    for (size_t taken = hi - lo; taken < beta; taken++) {
        double below = lo > 0 ? med - (double) s [(lo - 1) * stride] : INFINITY;
        double above = hi < k ? (double) s [hi * stride] - med : INFINITY;
        if (below <= above)
            sum += s [--lo * stride];
        else
            sum += s [hi++ * stride];
    }
    return (float) (sum * (1.0 / (double) beta));
}

int
gc_robust_cw_closest (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                      size_t beta, float *out)
{
    if (gc_robust_ws_reserve_tile (ws, k))
        return -1;
    const gc_robust_net_t *net = s_net (ws, k, 0, k - 1, true);
    if (!net)
        return -1;
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
        if (s_tile_block (ws, net, in, k, c0, n))
            return 1;
        for (size_t c = 0; c < n; c++)
            out [c0 + c] = s_closest_mean (ws->tile + c, TB, k, beta);
    }
    return 0;
}

//  --- Weighted sums ----------------------------------------------------------

//  ||x - y||^2 over n <= TB floats, in double (no overflow for any finite
//  floats), with 8 partial sums so that the loop vectorises without
//  reassociating anything the compiler is not allowed to.
static double
s_dist2_block (const float *restrict x, const float *restrict y, size_t n)
{
    double part [8] = { 0 };
    size_t c = 0;
    for (; c + 8 <= n; c += 8)
        for (size_t j = 0; j < 8; j++) {
            double diff = (double) x [c + j] - (double) y [c + j];
            part [j] += diff * diff;
        }
    for (; c < n; c++) {
        double diff = (double) x [c] - (double) y [c];
        part [c & 7] += diff * diff;
    }
    return ((part [0] + part [4]) + (part [1] + part [5])) + ((part [2] + part [6]) + (part [3] + part [7]));
}

int
gc_robust_combine (gc_robust_ws_t *ws, const float *const *in, const double *coef,
                   size_t k, size_t d, float *out)
{
    double *acc = ws->acc;
    uint32_t big = 0;
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
        for (size_t c = 0; c < n; c++)
            acc [c] = 0;
        for (size_t i = 0; i < k; i++) {
            if (coef [i] == 0)
                continue;
            const float *restrict x = in [i] + c0;
            double a = coef [i];
            for (size_t c = 0; c < n; c++) {
                uint32_t u = s_absbits (x [c]);
                big = u > big ? u : big;
                acc [c] += a * (double) x [c];
            }
        }
        if (big >= GC_ROBUST_NONFINITE_BITS)
            return 1;
        for (size_t c = 0; c < n; c++)
            out [c0 + c] = (float) acc [c];
    }
    return 0;
}

int
gc_robust_step (gc_robust_ws_t *ws, const float *const *in, const double *a,
                size_t k, size_t d, const float *centre, float *out, double *d2)
{
    double *acc = ws->acc;
    uint32_t big = 0;
    if (d2)
        for (size_t i = 0; i < k; i++)
            d2 [i] = 0;
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
        //  centre may be out itself (cclip iterates in place): read the
        //  block before it is written.
        for (size_t c = 0; c < n; c++)
            acc [c] = centre [c0 + c];
        double base [TB];
        memcpy (base, acc, n * sizeof *acc);
        for (size_t i = 0; i < k; i++) {
            const float *restrict x = in [i] + c0;
            double ai = a [i];
            for (size_t c = 0; c < n; c++) {
                uint32_t u = s_absbits (x [c]);
                big = u > big ? u : big;
                acc [c] += ai * ((double) x [c] - base [c]);
            }
        }
        if (big >= GC_ROBUST_NONFINITE_BITS)
            return 1;
        float *restrict o = out + c0;
        for (size_t c = 0; c < n; c++)
            o [c] = (float) acc [c];
        if (!d2)
            continue;
        //  Distances to the new point while the block is still in L1.
        for (size_t i = 0; i < k; i++)
            d2 [i] += s_dist2_block (in [i] + c0, o, n);
    }
    return 0;
}

int
gc_robust_dist_to (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                   const float *z, double *d2)
{
    uint32_t big = 0;
    for (size_t i = 0; i < k; i++)
        d2 [i] = 0;
    //  Blocked over coordinates so that z's block is reused from L1 by all k.
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
        const float *restrict zb = z + c0;
        for (size_t i = 0; i < k; i++) {
            const float *restrict x = in [i] + c0;
            for (size_t c = 0; c < n; c++) {
                uint32_t u = s_absbits (x [c]);
                big = u > big ? u : big;
            }
            d2 [i] += s_dist2_block (x, zb, n);
        }
        if (big >= GC_ROBUST_NONFINITE_BITS)
            return 1;
    }
    return 0;
}
