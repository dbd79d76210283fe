/*  Coordinate-wise kernels: order statistics by compare-exchange networks
    applied across coordinates, and the weighted sums the other rules use.
    Compiled once per kernel level (gc_klevel.h); gc_robust_kern.c picks one.

    Three implementations of a network window, bit-identical (same network,
    same min/max operand order, same summation order, per lane):
    - register kernels (AVX-512 and AVX2): for k <= GC_NET_REG_MAX and the
      common windows, straight-line code generated at build time keeps the
      k vectors of 16 coordinates in zmm registers (AVX2: two columns of 8
      in ymm registers, partly spilled to L1);
    - tile interpreter: copies a block of GC_ROBUST_TB coordinates of the k
      inputs into a k x TB tile in L1 and runs the network row pair by row
      pair with vector min/max (AVX-512 or AVX2 levels);
    - portable: the same tile loops in plain C, used at the generic level
      or when gc_robust_set_portable asks for it (tests compare).
    On x86-64 (every level), cwtm:1 takes a shortcut with the same bits
    where its sums are exact (s_trim1: the sum minus the min and max).
    Every kernel checks its inputs for NaN/Inf in the same pass (the largest
    |x| bit pattern), so no separate pre-pass reads memory. */
#include "gc_robust_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gc_robust_simd.h"
#include "gc_vec.h"

#define TB GC_ROBUST_TB

//  --- Register kernels --------------------------------------------------------

#if GC_KLEVEL >= GC_KLEVEL_AVX512
#   include "gc_robust_networks.h"
#   define S_HAVE_REG 1

#   define S_PASTE_(a, b) a##b
#   define S_PASTE(a, b) S_PASTE_ (a, b)
#   define S_LOAD(i) \
        gc_kprefetch (in [i] + c); \
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

#   define S_REG_MAX GC_NET_REG_MAX
#endif

//  Narrower registers (AVX2: ymm, the generic level on x86-64: SSE2's xmm,
//  part of the x86-64 baseline): two columns of S_RW coordinates (v, w) go
//  through the network side by side. The networks are long dependency
//  chains (extraction networks and the sum in wire order especially), and
//  one narrow chain leaves most of the core idle; two independent ones give
//  it the parallelism a 16-lane register has, at the price of spilling some
//  of the 2k values to L1. The level supplies the primitives below, and
//  S_RPAIR: SSE2 runs the median (one or two output wires: an even k's
//  median is the mean of two) one column at a time: with 16 xmm registers
//  the pair spilled so much that the k = 16 median took 5.5 ms per 1M
//  coordinates against 4.3 ms single (AMD EPYC Zen 4, CPU time); longer
//  sums keep the pair, whose second chain of double additions is worth the
//  spills (cwtm:1 single 6.4 ms, paired 5.5).
#if GC_KLEVEL == GC_KLEVEL_AVX2
#   define S_RW 8
#   define S_RPAIR 1
typedef __m256  s_rv;
typedef __m256i s_rbad;
typedef __m256d s_rd;
#   define S_RCONSTS const __m256i absmask = _mm256_set1_epi32 (0x7fffffff);
#   define S_RLOAD(p)      _mm256_loadu_ps (p)
#   define S_RSTORE(p, v)  _mm256_storeu_ps (p, v)
#   define S_RMIN(a, b)    _mm256_min_ps (a, b)
#   define S_RMAX(a, b)    _mm256_max_ps (a, b)
#   define S_RABS(x)       _mm256_and_si256 (_mm256_castps_si256 (x), absmask)
#   define S_RBAD(bad, x)  _mm256_max_epu32 (bad, S_RABS (x))
#   define S_RBAD_ZERO()   _mm256_setzero_si256 ()
#   define S_RBAD_BITS(b)  s_vi_reduce (b)
#   define S_RLO(v)        _mm256_cvtps_pd (_mm256_castps256_ps128 (v))
#   define S_RHI(v)        _mm256_cvtps_pd (_mm256_extractf128_ps (v, 1))
#   define S_RDADD(a, b)   _mm256_add_pd (a, b)
#   define S_RDSET1(x)     _mm256_set1_pd (x)
#   define S_RBAD2(bad, sum, v, w) bad = S_RBAD (S_RBAD (bad, v), w);
typedef s_rbad s_rsum;
#   define S_RSUM_ZERO()   S_RBAD_ZERO ()
#   define S_RSUM_BAD(sum) 0
#   define S_RMEAN(a, b) \
        _mm256_set_m128 (_mm256_cvtpd_ps (_mm256_mul_pd (b, inv)), _mm256_cvtpd_ps (_mm256_mul_pd (a, inv)))
#elif GC_KLEVEL == GC_KLEVEL_GENERIC && defined (__SSE2__)
//  No unsigned 32-bit max before SSE4.1, but a signed 16-bit one: the high
//  halves of |x| (the low halves masked to 0) keep their largest value in
//  each lane, two operations per input where a 32-bit compare and an or
//  took three and a second constant register. x is non-finite exactly when
//  the high half of |x| is at least 0x7f80 (reported as
//  GC_ROBUST_NONFINITE_BITS). The upper pair of lanes goes to double
//  through pshufd, which (unlike movhlps) needs no copy of its operand.
#   include <emmintrin.h>
#   define S_RW 4
#   define S_RPAIR 0
typedef __m128  s_rv;
typedef __m128i s_rbad;
typedef __m128d s_rd;
#   define S_RCONSTS const __m128i abshi = _mm_set1_epi32 (0x7fff0000);
#   define S_RLOAD(p)      _mm_loadu_ps (p)
#   define S_RSTORE(p, v)  _mm_storeu_ps (p, v)
#   define S_RMIN(a, b)    _mm_min_ps (a, b)
#   define S_RMAX(a, b)    _mm_max_ps (a, b)
#   define S_RBAD(bad, x)  _mm_max_epi16 (bad, _mm_and_si128 (_mm_castps_si128 (x), abshi))
#   define S_RBAD_ZERO()   _mm_setzero_si128 ()
#   define S_RBAD_BITS(b) \
        (_mm_movemask_epi8 (_mm_cmpgt_epi16 (b, _mm_set1_epi16 (0x7f7f))) ? GC_ROBUST_NONFINITE_BITS : 0)
//  The paired columns' check is cheaper still: one float sum of all their
//  inputs (v + w, then into the sum: 1.5 instructions per input where the
//  mask, the max and SSE's register copy took 3, and no mask register), not
//  finite exactly when some input is not, or when finite inputs overflow it;
//  then one scan of the inputs decides (rare: an error, or |x| near FLT_MAX).
#   define S_RBAD2(bad, sum, v, w) sum = _mm_add_ps (sum, _mm_add_ps (v, w));
typedef __m128 s_rsum;
#   define S_RSUM_ZERO()   _mm_setzero_ps ()
#   define S_RSUM_BAD(sum) \
        (_mm_movemask_ps (_mm_cmpneq_ps (_mm_sub_ps (sum, sum), _mm_setzero_ps ())) != 0)
#   define S_RLO(v)        _mm_cvtps_pd (v)
#   define S_RHI(v)        _mm_cvtps_pd (_mm_castsi128_ps (_mm_shuffle_epi32 (_mm_castps_si128 (v), 0xee)))
#   define S_RDADD(a, b)   _mm_add_pd (a, b)
#   define S_RDSET1(x)     _mm_set1_pd (x)
#   define S_RMEAN(a, b) \
        _mm_movelh_ps (_mm_cvtpd_ps (_mm_mul_pd (a, inv)), _mm_cvtpd_ps (_mm_mul_pd (b, inv)))
#endif

#ifdef S_RW
#   include "gc_robust_networks.h"
#   define S_HAVE_REG 1

#   define S_PASTE_(a, b) a##b
#   define S_PASTE(a, b) S_PASTE_ (a, b)
#   define S_LOAD(i) \
        gc_kprefetch (base [i] + off); \
        s_rv v##i = S_RLOAD (base [i] + off); \
        bad = S_RBAD (bad, v##i);
#   define S_LOAD2(i) \
        gc_kprefetch (base [i] + off); \
        s_rv v##i = S_RLOAD (base [i] + off), w##i = S_RLOAD (base [i] + off + S_RW); \
        S_RBAD2 (bad, sum, v##i, w##i)
#   define S_CE(a, b) { s_rv t_ = v##a; v##a = S_RMIN (t_, v##b); v##b = S_RMAX (t_, v##b); }
#   define S_MN(a, b) v##a = S_RMIN (v##a, v##b);
#   define S_MX(a, b) v##b = S_RMAX (v##a, v##b);
#   define S_CE2(a, b) S_CE (a, b) { s_rv u_ = w##a; w##a = S_RMIN (u_, w##b); w##b = S_RMAX (u_, w##b); }
#   define S_MN2(a, b) S_MN (a, b) w##a = S_RMIN (w##a, w##b);
#   define S_MX2(a, b) S_MX (a, b) w##b = S_RMAX (w##a, w##b);
#   define S_FIRST(i) s0 = S_RLO (v##i); s1 = S_RHI (v##i);
#   define S_NEXT(i) s0 = S_RDADD (s0, S_RLO (v##i)); s1 = S_RDADD (s1, S_RHI (v##i));
#   define S_FIRST2(i) S_FIRST (i) s2 = S_RLO (w##i); s3 = S_RHI (w##i);
#   define S_NEXT2(i) S_NEXT (i) s2 = S_RDADD (s2, S_RLO (w##i)); s3 = S_RDADD (s3, S_RHI (w##i));

static uint32_t
s_scan_nonfinite (const float *const *in, size_t k, size_t d)
{
    for (size_t i = 0; i < k; i++)
        if (!gc_vec_all_finite (in [i], d))
            return GC_ROBUST_NONFINITE_BITS;
    return 0;
}

//  One function per generated (k, lo, hi): the network over two columns
//  (base[i] + off, 2 S_RW coordinates) or one, inlined into a loop over the
//  whole columns; the last partial column runs on a zero-padded copy
//  (masked loads are slow or missing, and this is once per call).
#   define S_REG_DEFINE(K, LO, HI) \
static inline __attribute__ ((always_inline)) void \
s_col2_##K##_##LO##_##HI (const float *const *base, size_t off, float *dst, s_rbad *badp, \
                          s_rsum *sump) \
{ \
    S_RCONSTS \
    s_rbad bad = *badp; \
    s_rsum sum = *sump; \
    GC_NET_K##K##_##LO##_##HI (S_LOAD2, S_CE2, S_MN2, S_MX2) \
    if ((LO) == (HI)) { \
        S_RSTORE (dst, S_PASTE (v, LO)); \
        S_RSTORE (dst + S_RW, S_PASTE (w, LO)); \
    } else { \
        const s_rd inv = S_RDSET1 (1.0 / (double) ((HI) - (LO) + 1)); \
        s_rd s0, s1, s2, s3; \
        GC_NET_K##K##_##LO##_##HI##_SUM (S_FIRST2, S_NEXT2) \
        S_RSTORE (dst, S_RMEAN (s0, s1)); \
        S_RSTORE (dst + S_RW, S_RMEAN (s2, s3)); \
    } \
    *badp = bad; \
    *sump = sum; \
} \
static inline __attribute__ ((always_inline)) void \
s_col_##K##_##LO##_##HI (const float *const *base, size_t off, float *dst, s_rbad *badp) \
{ \
    S_RCONSTS \
    s_rbad bad = *badp; \
    GC_NET_K##K##_##LO##_##HI (S_LOAD, S_CE, S_MN, S_MX) \
    if ((LO) == (HI)) \
        S_RSTORE (dst, S_PASTE (v, LO)); \
    else { \
        const s_rd inv = S_RDSET1 (1.0 / (double) ((HI) - (LO) + 1)); \
        s_rd s0, s1; \
        GC_NET_K##K##_##LO##_##HI##_SUM (S_FIRST, S_NEXT) \
        S_RSTORE (dst, S_RMEAN (s0, s1)); \
    } \
    *badp = bad; \
} \
static void \
s_reg_##K##_##LO##_##HI (const float *const *in, size_t d, float *out, uint32_t *badp) \
{ \
    s_rbad bad = S_RBAD_ZERO (); \
    s_rsum sum = S_RSUM_ZERO (); \
    size_t c = 0; \
    for (; (S_RPAIR || (HI) - (LO) > 1) && c + 2 * S_RW <= d; c += 2 * S_RW) \
        s_col2_##K##_##LO##_##HI (in, c, out + c, &bad, &sum); \
    for (; c + S_RW <= d; c += S_RW) \
        s_col_##K##_##LO##_##HI (in, c, out + c, &bad); \
    if (c < d) { \
        float pad [(K) * S_RW], obuf [S_RW]; \
        const float *rows [K]; \
        memset (pad, 0, sizeof pad); \
        for (size_t i = 0; i < (K); i++) { \
            memcpy (pad + i * S_RW, in [i] + c, (d - c) * sizeof *pad); \
            rows [i] = pad + i * S_RW; \
        } \
        s_col_##K##_##LO##_##HI (rows, 0, obuf, &bad); \
        memcpy (out + c, obuf, (d - c) * sizeof *out); \
    } \
    uint32_t bits_ = S_RBAD_BITS (bad); \
    if (!bits_ && S_RSUM_BAD (sum)) \
        bits_ = s_scan_nonfinite (in, (K), d); \
    *badp = bits_; \
}

#   pragma GCC diagnostic push
#   pragma GCC diagnostic ignored "-Wunused-variable"
GC_NET_LIST (S_REG_DEFINE)
#   pragma GCC diagnostic pop

//  ymm (xmm) registers hold 2k values only for small k, yet up to k = 24
//  the spilling register kernels still beat the tile interpreter (k = 24
//  median: 1.35x with AVX2, 1.7x with SSE2 on an AMD EPYC, in L2).
#   define S_REG_MAX 24
#endif

#ifdef S_HAVE_REG
typedef void (*s_reg_fn) (const float *const *in, size_t d, float *out, uint32_t *badp);

#   define S_REG_ENTRY(K, LO, HI) { K, LO, HI, s_reg_##K##_##LO##_##HI },
static const struct {
    uint16_t k, lo, hi;
    s_reg_fn fn;
} s_reg_table [] = { GC_NET_LIST (S_REG_ENTRY) };

static s_reg_fn
s_reg_lookup (size_t k, size_t lo, size_t hi)
{
    if (k > S_REG_MAX)
        return NULL;
    for (size_t i = 0; i < sizeof s_reg_table / sizeof s_reg_table [0]; i++)
        if (s_reg_table [i].k == k && s_reg_table [i].lo == lo && s_reg_table [i].hi == hi)
            return s_reg_table [i].fn;
    return NULL;
}
#endif

#if defined (S_HAVE_REG) && defined (__SSE2__)
//  The window [1, k - 2] (cwtm:1) without the network, at every x86 level:
//  per column of S_TW lanes one running min and max, the smallest |x|, and
//  the sum of all k inputs in double; the mean is (S - min - max) / (k - 2).
//  Only where that is the network's result bit for bit: when the inputs'
//  exponents span at most 29 - ceil(log2 k) (max |x| < min |x| * 2^that; no
//  zero), every input is a multiple of the smallest one's ulp and every
//  partial sum of them fits 53 bits, so S, S - min - max and the network's
//  sum of its kept wires in wire order are all the exact sum: the same
//  double. A column where some lane fails (a zero, a wide range, NaN/Inf:
//  then S is not finite) takes the register network. Why: the k = 16
//  window is a 29-deep compare chain (SSE2: its 2 x 15 live values spill
//  from 16 xmm registers, 615 instructions per 8 coordinates); this is about
//  10 per input and column, no spills, and at AVX-512 leaves the cold k = 16
//  call waiting on memory instead of on the chain (docs/RESULTS.md).
#   define S_TRIM1 1
#   if GC_KLEVEL >= GC_KLEVEL_AVX512
#       define S_TW 16
typedef __m512    s_tv;
typedef __m512d   s_td;
typedef __mmask16 s_tm;
#       define S_TLOAD(p)     _mm512_loadu_ps (p)
#       define S_TSTORE(p, v) _mm512_storeu_ps (p, v)
#       define S_TMIN(a, b)   _mm512_min_ps (a, b)
#       define S_TMAX(a, b)   _mm512_max_ps (a, b)
#       define S_TMUL(a, b)   _mm512_mul_ps (a, b)
#       define S_TABS(x)      _mm512_abs_ps (x)
#       define S_TNEG(x)      _mm512_castsi512_ps (_mm512_xor_si512 (_mm512_castps_si512 (x), \
                                                    _mm512_set1_epi32 (INT32_MIN)))
#       define S_TSET1(x)     _mm512_set1_ps (x)
#       define S_TLT(a, b)    _mm512_cmp_ps_mask (a, b, _CMP_LT_OQ)
#       define S_TAND(a, b)   ((s_tm) ((a) & (b)))
#       define S_TOR(a, b)    ((s_tm) ((a) | (b)))
#       define S_TALL(m)      ((m) == 0xffff)
#       define S_TLO(v)       S_LO8 (v)
#       define S_THI(v)       S_HI8 (v)
//  The upper half into double straight from memory (no shuffle).
#       define S_THIM(p)      _mm512_cvtps_pd (_mm256_loadu_ps ((p) + 8))
#       define S_TDADD(a, b)  _mm512_add_pd (a, b)
#       define S_TDSUB(a, b)  _mm512_sub_pd (a, b)
#       define S_TDSET1(x)    _mm512_set1_pd (x)
#       define S_TDFINITE(s)  (_mm512_cmp_pd_mask (_mm512_sub_pd (s, s), _mm512_setzero_pd (), \
                                                   _CMP_EQ_OQ) == 0xff)
#       define S_TMEAN(a, b)  _mm512_insertf32x8 (_mm512_castps256_ps512 ( \
                                  _mm512_cvtpd_ps (_mm512_mul_pd (a, inv))), \
                                  _mm512_cvtpd_ps (_mm512_mul_pd (b, inv)), 1)
#   else
//  AVX2 (8 lanes) and SSE2 (4 lanes): compare results are vectors.
#       if GC_KLEVEL == GC_KLEVEL_AVX2
#           define S_TW 8
typedef __m256  s_tv;
typedef __m256d s_td;
typedef __m256  s_tm;
#           define S_TLOAD(p)     _mm256_loadu_ps (p)
#           define S_TSTORE(p, v) _mm256_storeu_ps (p, v)
#           define S_TMIN(a, b)   _mm256_min_ps (a, b)
#           define S_TMAX(a, b)   _mm256_max_ps (a, b)
#           define S_TMUL(a, b)   _mm256_mul_ps (a, b)
#           define S_TABS(x)      _mm256_andnot_ps (_mm256_set1_ps (-0.0f), x)
#           define S_TAND(a, b)   _mm256_and_ps (a, b)
#           define S_TOR(a, b)    _mm256_or_ps (a, b)
#           define S_TXOR(a, b)   _mm256_xor_ps (a, b)
#           define S_TSET1(x)     _mm256_set1_ps (x)
#           define S_TLT(a, b)    _mm256_cmp_ps (a, b, _CMP_LT_OQ)
#           define S_TALL(m)      (_mm256_movemask_ps (m) == 0xff)
#           define S_THIM(p)      _mm256_cvtps_pd (_mm_loadu_ps ((p) + 4))
#           define S_TDADD(a, b)  _mm256_add_pd (a, b)
#           define S_TDSUB(a, b)  _mm256_sub_pd (a, b)
#           define S_TDSET1(x)    _mm256_set1_pd (x)
#           define S_TDFINITE(s)  (_mm256_movemask_pd (_mm256_cmp_pd (_mm256_sub_pd (s, s), \
                                       _mm256_setzero_pd (), _CMP_EQ_OQ)) == 0xf)
#       else
#           define S_TW 4
typedef __m128  s_tv;
typedef __m128d s_td;
typedef __m128  s_tm;
#           define S_TLOAD(p)     _mm_loadu_ps (p)
#           define S_TSTORE(p, v) _mm_storeu_ps (p, v)
#           define S_TMIN(a, b)   _mm_min_ps (a, b)
#           define S_TMAX(a, b)   _mm_max_ps (a, b)
#           define S_TMUL(a, b)   _mm_mul_ps (a, b)
#           define S_TABS(x)      _mm_andnot_ps (_mm_set1_ps (-0.0f), x)
#           define S_TAND(a, b)   _mm_and_ps (a, b)
#           define S_TOR(a, b)    _mm_or_ps (a, b)
#           define S_TXOR(a, b)   _mm_xor_ps (a, b)
#           define S_TSET1(x)     _mm_set1_ps (x)
#           define S_TLT(a, b)    _mm_cmplt_ps (a, b)
#           define S_TALL(m)      (_mm_movemask_ps (m) == 0xf)
//  The upper two floats into double straight from memory (cvtps2pd m64).
#           define S_THIM(p)      _mm_cvtps_pd (_mm_castpd_ps (_mm_load_sd ((const double *) (p) + 1)))
#           define S_TDADD(a, b)  _mm_add_pd (a, b)
#           define S_TDSUB(a, b)  _mm_sub_pd (a, b)
#           define S_TDSET1(x)    _mm_set1_pd (x)
#           define S_TDFINITE(s)  (_mm_movemask_pd (_mm_cmpeq_pd (_mm_sub_pd (s, s), _mm_setzero_pd ())) == 3)
#       endif
#       define S_TNEG(x)      S_TXOR (x, S_TSET1 (-0.0f))
#       define S_TLO(v)       S_RLO (v)
#       define S_THI(v)       S_RHI (v)
#       define S_TMEAN(a, b)  S_RMEAN (a, b)
#   endif

//  Whether every lane's inputs, all non-zero, span at most lim in exponent:
//  max |x| < min |x| * lim. A lane of one sign has min |x| = min or -max
//  (from the running min and max); a column with a lane of both signs reads
//  its inputs again (from L1) for min |x|.
static inline __attribute__ ((always_inline)) int
s_trim1_span_ok (const float *const *in, size_t k, size_t off, s_tv mn, s_tv mx, s_tv lim)
{
    const s_tv zero = S_TSET1 (0.0f);
    s_tm pos = S_TAND (S_TLT (zero, mn), S_TLT (mx, S_TMUL (mn, lim)));
    s_tm neg = S_TAND (S_TLT (mx, zero), S_TLT (S_TMUL (mx, lim), mn));
    if (S_TALL (S_TOR (pos, neg)))
        return 1;
    s_tv amn = S_TABS (S_TLOAD (in [0] + off));
    for (size_t i = 1; i < k; i++)
        amn = S_TMIN (amn, S_TABS (S_TLOAD (in [i] + off)));
    //  max |x| = max (mx, -mn), since mn <= mx
    s_tv amx = S_TMAX (mx, S_TNEG (mn));
    return S_TALL (S_TLT (amx, S_TMUL (amn, lim)));
}

//  1 when every lane of the column passed and its S_TW means are stored. The
//  sums are exact where they are used, so their order is free: two chains
//  of double additions per half (even and odd inputs), half as deep.
static inline __attribute__ ((always_inline)) int
s_trim1_col (const float *const *in, size_t k, size_t off, s_tv lim, s_td inv, float *dst)
{
    const float *p = in [0] + off, *q = in [1] + off;
    s_tv x = S_TLOAD (p), y = S_TLOAD (q);
    s_tv mn = S_TMIN (x, y), mx = S_TMAX (x, y);
    s_td s0 = S_TLO (x), s1 = S_THIM (p), t0 = S_TLO (y), t1 = S_THIM (q);
    size_t i = 2;
    for (; i + 2 <= k; i += 2) {
        p = in [i] + off;
        q = in [i + 1] + off;
        x = S_TLOAD (p);
        y = S_TLOAD (q);
        mn = S_TMIN (mn, S_TMIN (x, y));
        mx = S_TMAX (mx, S_TMAX (x, y));
        s0 = S_TDADD (s0, S_TLO (x));
        s1 = S_TDADD (s1, S_THIM (p));
        t0 = S_TDADD (t0, S_TLO (y));
        t1 = S_TDADD (t1, S_THIM (q));
    }
    if (i < k) {
        p = in [i] + off;
        x = S_TLOAD (p);
        mn = S_TMIN (mn, x);
        mx = S_TMAX (mx, x);
        s0 = S_TDADD (s0, S_TLO (x));
        s1 = S_TDADD (s1, S_THIM (p));
    }
    s0 = S_TDADD (s0, t0);
    s1 = S_TDADD (s1, t1);
    //  S not finite: an input is NaN or Inf (the network reports it)
    if (!(S_TDFINITE (s0) && S_TDFINITE (s1)) || !s_trim1_span_ok (in, k, off, mn, mx, lim))
        return 0;
    s0 = S_TDSUB (S_TDSUB (s0, S_TLO (mn)), S_TLO (mx));
    s1 = S_TDSUB (S_TDSUB (s1, S_THI (mn)), S_THI (mx));
    S_TSTORE (dst, S_TMEAN (s0, s1));
    return 1;
}

//  The register network fn on n coordinates from c (a failed column, the
//  tail): its reports are the network's.
static uint32_t
s_trim1_net (s_reg_fn fn, const float *const *in, size_t k, size_t c, size_t n, float *out)
{
    const float *rows [S_REG_MAX];
    for (size_t i = 0; i < k; i++)
        rows [i] = in [i] + c;
    uint32_t bits;
    fn (rows, n, out + c, &bits);
    return bits;
}

static inline __attribute__ ((always_inline)) uint32_t
s_trim1_k (s_reg_fn fn, const float *const *in, size_t k, size_t d, float *out)
{
    int span = 29;
    while ((size_t) 1 << (29 - span) < k)
        span--;
    const s_tv lim = S_TSET1 (ldexpf (1.0f, span));
    const s_td inv = S_TDSET1 (1.0 / (double) (k - 2));
    uint32_t bits = 0;
    size_t c = 0;
    for (; c + S_TW <= d; c += S_TW) {
        if (!(c & 15))
            for (size_t i = 0; i < k; i++)
                gc_kprefetch (in [i] + c);
        if (!s_trim1_col (in, k, c, lim, inv, out + c)) {
            uint32_t b = s_trim1_net (fn, in, k, c, S_TW, out);
            bits = b > bits ? b : bits;
        }
    }
    if (c < d) {
        uint32_t b = s_trim1_net (fn, in, k, c, d - c, out);
        bits = b > bits ? b : bits;
    }
    return bits;
}

//  k = 16 (the common shape) with its loops unrolled.
static uint32_t
s_trim1 (s_reg_fn fn, const float *const *in, size_t k, size_t d, float *out)
{
    return k == 16 ? s_trim1_k (fn, in, 16, d, out) : s_trim1_k (fn, in, k, d, out);
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
        gc_kprefetch_run (src, n);
        for (size_t c = 0; c < n; c++) {
            uint32_t u = s_absbits (src [c]);
            row [c] = src [c];
            big = u > big ? u : big;
        }
    }
    return big;
}

//  One loop per operation kind, each simple enough for the vectoriser
//  (x < y ? x : y is exactly SSE's minps, NEON's fmin on finite values).
static void
s_tile_net_portable (float *tile, const gc_robust_net_t *net)
{
    for (size_t e = 0; e < net->n_ce; e++) {
        const gc_net_ce_t *ce = &net->ce [e];
        float *restrict a = tile + (size_t) ce->a * TB;
        float *restrict b = tile + (size_t) ce->b * TB;
        switch (ce->op) {
            case GC_NET_CE:
                for (size_t c = 0; c < TB; c++) {
                    float x = a [c], y = b [c];
                    a [c] = x < y ? x : y;
                    b [c] = x > y ? x : y;
                }
                break;
            case GC_NET_MIN:
                for (size_t c = 0; c < TB; c++)
                    a [c] = a [c] < b [c] ? a [c] : b [c];
                break;
            default:
                for (size_t c = 0; c < TB; c++)
                    b [c] = a [c] > b [c] ? a [c] : b [c];
                break;
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
        gc_kprefetch_run (src, TB);
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

//  Copy a block into the tile by the level's loader (or the portable one).
static uint32_t
s_tile_load (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t c0, size_t n)
{
#ifdef S_W
    if (!ws->portable)
        return s_tile_load_simd (ws->tile, in, k, c0, n);
#endif
    return s_tile_load_portable (ws->tile, in, k, c0, n);
}

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

static int
s_k_cw_window (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
               size_t lo, size_t hi, float *out)
{
#ifdef S_HAVE_REG
    s_reg_fn fn = ws->portable ? NULL : s_reg_lookup (k, lo, hi);
#   ifdef S_TRIM1
    if (fn && k >= 4 && lo == 1 && hi == k - 2)
        return s_trim1 (fn, in, k, d, out) >= GC_ROBUST_NONFINITE_BITS;
#   endif
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

//  On each sorted column s[0..k) the mean of the beta values closest to the
//  median m, defined by growing a window from the median and taking the
//  nearer neighbour each time, the lower one on a tie. That greedy merge of
//  two sorted distance lists takes j values below and n - j above for the
//  unique j with
//      j == 0      or  m - s[L] <= s[R] - m      (the last one below won)
//      j == n      or  s[R-1] - m < m - s[L-1]   (the last one above won)
//  where [L, R) is the window (s[-1] = -inf, s[k] = +inf, kept in two spare
//  tile rows), so every lane tests the 2f+1 candidate windows branch-free.
static void
s_closest_block (float *tile, size_t k, size_t beta, double *restrict acc,
                 float *restrict out, size_t n)
{
    size_t lo0 = k / 2, hi0 = k / 2;
    if (k % 2) {
        lo0 = (k - 1) / 2;
        hi0 = lo0 + 1;
    }
    size_t take = beta - (hi0 - lo0);
    float *plus_inf = tile + k * TB, *minus_inf = tile + (k + 1) * TB;
    double med [TB], found [TB], wsum [TB];
    for (size_t c = 0; c < TB; c++) {
        plus_inf [c] = INFINITY;
        minus_inf [c] = -INFINITY;
        med [c] = k % 2 ? (double) tile [lo0 * TB + c]
                        : ((double) tile [(lo0 - 1) * TB + c] + (double) tile [lo0 * TB + c]) * 0.5;
        acc [c] = 0;
        found [c] = 0;
    }
    for (size_t j = 0; j <= take; j++) {
        if (j > lo0 || hi0 + take - j > k)
            continue;
        size_t L = lo0 - j, R = hi0 + take - j;
        const float *restrict sl = tile + L * TB, *restrict last = tile + (R - 1) * TB;
        const float *restrict next_above = R < k ? tile + R * TB : plus_inf;
        const float *restrict next_below = L > 0 ? tile + (L - 1) * TB : minus_inf;
        bool first = j == 0, final = j == take;
        for (size_t c = 0; c < TB; c++)
            wsum [c] = 0;
        for (size_t r = L; r < R; r++) {
            const float *restrict row = tile + r * TB;
            for (size_t c = 0; c < TB; c++)
                wsum [c] += (double) row [c];
        }
        for (size_t c = 0; c < TB; c++) {
            bool ok1 = first || med [c] - (double) sl [c] <= (double) next_above [c] - med [c];
            bool ok2 = final || (double) last [c] - med [c] < med [c] - (double) next_below [c];
            double hit = ok1 && ok2 ? 1.0 - found [c] : 0.0;
            found [c] += hit;
            acc [c] += hit * wsum [c];
        }
    }
    double inv = 1.0 / (double) beta;
    for (size_t c = 0; c < n; c++)
        out [c] = (float) (acc [c] * inv);
}

static int
s_k_cw_closest (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                size_t beta, float *out)
{
    if (gc_robust_ws_reserve_tile (ws, k + 2))
        return -1;
    const gc_robust_net_t *net = s_net (ws, k, 0, k - 1, true);
    if (!net)
        return -1;
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
        if (s_tile_block (ws, net, in, k, c0, n))
            return 1;
        s_closest_block (ws->tile, k, beta, ws->acc, out + c0, n);
    }
    return 0;
}

//  --- Mixing -------------------------------------------------------------------

//  One row of a weighted sum over a block of the double tile (the clipping
//  step): over the non-zero coefficients in double, multiply then add (no
//  FMA) in both versions so they agree bit for bit.
static void
s_mix_row (const double *m, const double *dt, size_t k, float *out, size_t n, bool portable)
{
    float obuf [TB];
#ifdef S_WD
    if (!portable) {
        //  Four vector accumulators stay in registers across the k rows.
        for (size_t c = 0; c < TB; c += 4 * S_WD) {
            s_vd a0 = s_vd_zero (), a1 = s_vd_zero (), a2 = s_vd_zero (), a3 = s_vd_zero ();
            for (size_t j = 0; j < k; j++) {
                if (m [j] == 0)
                    continue;
                s_vd mj = s_vd_set1 (m [j]);
                const double *x = dt + j * TB + c;
                a0 = s_vd_add (a0, s_vd_mul (mj, s_vd_load (x)));
                a1 = s_vd_add (a1, s_vd_mul (mj, s_vd_load (x + S_WD)));
                a2 = s_vd_add (a2, s_vd_mul (mj, s_vd_load (x + 2 * S_WD)));
                a3 = s_vd_add (a3, s_vd_mul (mj, s_vd_load (x + 3 * S_WD)));
            }
            s_vd_store_ps (obuf + c, a0);
            s_vd_store_ps (obuf + c + S_WD, a1);
            s_vd_store_ps (obuf + c + 2 * S_WD, a2);
            s_vd_store_ps (obuf + c + 3 * S_WD, a3);
        }
        memcpy (out, obuf, n * sizeof *out);
        return;
    }
#endif
    double acc [TB];
    for (size_t c = 0; c < TB; c++)
        acc [c] = 0;
    for (size_t j = 0; j < k; j++) {
        if (m [j] == 0)
            continue;
        const double *restrict x = dt + j * TB;
        for (size_t c = 0; c < TB; c++)
            acc [c] += m [j] * x [c];
    }
    for (size_t c = 0; c < n; c++)
        obuf [c] = (float) acc [c];
    memcpy (out, obuf, n * sizeof *out);
}

//  How every mixing kernel forms one block of a mixed row, the same
//  operations per lane at every level (plain loops; no contraction):
//  - a "complement" row, whose non-zero coefficients all equal c and which
//    leaves out fewer inputs than it keeps (NNM's rows: the mean of all but
//    the f farthest): c * (S - x_o1 - x_o2 ...), S the block's sum of all k
//    inputs in index order, the left-out inputs subtracted in index order.
//    That is k + f additions per row instead of k - f - 1, and S is shared
//    by every row. It is used only where the left-out inputs of the block
//    are at most 2^8 times larger (by exponent) than the largest kept one:
//    then S's rounding error stays below 2^-37 of the kept values, far
//    below the float the row is rounded to; an outlier (what NNM is there
//    to leave out) would cancel the kept values away, so its blocks take
//    the direct sum;
//  - any other row (and those blocks): sum over the non-zero m_j in index
//    order of m_j * x_j, in double.
#define S_COMPLEMENT_EXP 8

//  mixc[a] = the value shared by the non-zero coefficients of row a, or 0
//  when they differ or when the row keeps no more inputs than it leaves out;
//  list[a * k ...] = row a's inputs with a non-zero coefficient, in index
//  order, then those with a zero one, in index order; nz[a] counts the
//  first. Formed once per call, so that a block only reads it.
static void
s_mix_plan (const double *mix, size_t kv, size_t k, double *mixc, size_t *list, size_t *nz)
{
    for (size_t a = 0; a < kv; a++) {
        const double *m = mix + a * k;
        size_t *l = list + a * k;
        double c = 0;
        size_t kept = 0;
        bool same = true;
        for (size_t j = 0; j < k; j++) {
            if (m [j] == 0)
                continue;
            same = same && (kept == 0 || m [j] == c);
            c = m [j];
            l [kept++] = j;
        }
        for (size_t j = 0, left = kept; j < k; j++)
            if (m [j] == 0)
                l [left++] = j;
        nz [a] = kept;
        mixc [a] = same && k - kept < kept ? c : 0;
    }
}

//  dup[a] = the first row equal to row a (a itself when none is).
static void
s_mix_dups (const double *mix, size_t kv, size_t k, size_t *dup)
{
    for (size_t a = 0; a < kv; a++) {
        dup [a] = a;
        for (size_t b = 0; b < a; b++)
            if (dup [b] == b && !memcmp (mix + a * k, mix + b * k, k * sizeof *mix)) {
                dup [a] = b;
                break;
            }
    }
}

//  Whether a complement row must take the direct sum in this block: one of
//  the inputs it leaves out is more than 2^S_COMPLEMENT_EXP larger (by
//  exponent) than every input it keeps. When the block's exponents span
//  less than that, no row can, and the rows are not looked at.
static bool
s_complement_unsafe (const uint32_t *rowmax, const size_t *l, size_t nz, size_t k)
{
    uint32_t kept = 0, left = 0;
    for (size_t e = 0; e < nz; e++)
        kept = rowmax [l [e]] > kept ? rowmax [l [e]] : kept;
    for (size_t e = nz; e < k; e++)
        left = rowmax [l [e]] > left ? rowmax [l [e]] : left;
    return (left >> 23) > (kept >> 23) + S_COMPLEMENT_EXP;
}

//  Copy a block of n <= TB coordinates of each input into the tile rows,
//  with each row's largest |x| bit pattern (the NaN/Inf check and the
//  complement rows' magnitude test). (Reading the rows in lockstep, 16
//  floats at a time, as gc_robust_dist.c's packing does, was no faster
//  here: 512-byte runs per row already stream.)
static void
s_tile_load_rows (float *restrict tile, const float *const *in, size_t k, size_t c0,
                  size_t n, uint32_t *restrict rowmax)
{
    for (size_t i = 0; i < k; i++) {
        const float *restrict src = in [i] + c0;
        float *restrict row = tile + i * TB;
        uint32_t big = 0;
        gc_kprefetch_run (src, n);
        for (size_t c = 0; c < n; c++) {
            uint32_t u = s_absbits (src [c]);
            row [c] = src [c];
            big = u > big ? u : big;
        }
        rowmax [i] = big;
    }
}

//  Lanes per chunk of the block loops below: small and fixed, so that the
//  compiler keeps a chunk's sums in registers across the rows it adds.
#define S_MC 16

//  One block of the kv mixed rows from the tile (k rows) into dst[a] + off,
//  n lanes. rowmax: the tile rows' largest |x| bits. Per row, the inputs it
//  adds (or subtracts) are listed first, then each chunk of lanes runs
//  through the list.
static void
s_mix_block (const float *tile, const uint32_t *rowmax, size_t k, const double *mix,
             const double *mixc, const size_t *plan, const size_t *nz, const size_t *dup,
             size_t kv, float *const *dst, size_t off, size_t n)
{
    double sum [TB];
    bool have_sum = false;
    uint32_t emin = UINT32_MAX, emax = 0;
    for (size_t j = 0; j < k; j++) {
        uint32_t e = rowmax [j] >> 23;
        emin = e < emin ? e : emin;
        emax = e > emax ? e : emax;
    }
    bool spread = emax > emin + S_COMPLEMENT_EXP;
    for (size_t a = 0; a < kv; a++) {
        if (dup && dup [a] != a)
            continue;               /* the same row as an earlier one: dst[a] aliases it */
        const double *m = mix + a * k;
        const size_t *l = plan + a * k;
        double c = mixc [a];
        if (c != 0 && spread && s_complement_unsafe (rowmax, l, nz [a], k))
            c = 0;
        //  The inputs the row subtracts (complement) or adds (direct).
        const size_t *list = c != 0 ? l + nz [a] : l;
        size_t cnt = c != 0 ? k - nz [a] : nz [a];
        float *restrict out = dst [a] + off;
        float obuf [S_MC];
        if (c != 0 && !have_sum) {
            for (size_t t0 = 0; t0 < TB; t0 += S_MC) {
                double v [S_MC];
                for (size_t u = 0; u < S_MC; u++)
                    v [u] = 0;
                for (size_t j = 0; j < k; j++) {
                    const float *restrict x = tile + j * TB + t0;
                    for (size_t u = 0; u < S_MC; u++)
                        v [u] += (double) x [u];
                }
                for (size_t u = 0; u < S_MC; u++)
                    sum [t0 + u] = v [u];
            }
            have_sum = true;
        }
        for (size_t t0 = 0; t0 < n; t0 += S_MC) {
            double v [S_MC];
            if (c != 0) {
                for (size_t u = 0; u < S_MC; u++)
                    v [u] = sum [t0 + u];
                for (size_t e = 0; e < cnt; e++) {
                    const float *restrict x = tile + list [e] * TB + t0;
                    for (size_t u = 0; u < S_MC; u++)
                        v [u] -= (double) x [u];
                }
                for (size_t u = 0; u < S_MC; u++)
                    v [u] *= c;
            } else {
                for (size_t u = 0; u < S_MC; u++)
                    v [u] = 0;
                for (size_t e = 0; e < cnt; e++) {
                    const float *restrict x = tile + list [e] * TB + t0;
                    double mj = m [list [e]];
                    for (size_t u = 0; u < S_MC; u++)
                        v [u] += mj * (double) x [u];
                }
            }
            //  A whole chunk straight to out (a memcpy of a variable length
            //  here cost more than the sums); the last, partial one by copy.
            if (t0 + S_MC <= n)
                for (size_t u = 0; u < S_MC; u++)
                    out [t0 + u] = (float) v [u];
            else {
                for (size_t u = 0; u < S_MC; u++)
                    obuf [u] = (float) v [u];
                memcpy (out + t0, obuf, (n - t0) * sizeof *out);
            }
        }
    }
}

//  Load and check the block at c0 of the k inputs, then mix it into
//  dst[a] + off (ws->mixc holds s_mix_plan's plan); 1 on a NaN or Inf.
static int
s_mix_tile (gc_robust_ws_t *ws, const float *const *in, size_t k, const double *mix,
            const size_t *dup, size_t kv, size_t c0, size_t n, float *const *dst, size_t off)
{
    uint32_t *rowmax = ws->lanes;
    s_tile_load_rows (ws->tile, in, k, c0, n, rowmax);
    for (size_t j = 0; j < k; j++)
        if (rowmax [j] >= GC_ROBUST_NONFINITE_BITS)
            return 1;
    s_mix_block (ws->tile, rowmax, k, mix, ws->mixc, ws->mixlist, ws->mixnz, dup, kv, dst, off, n);
    return 0;
}

static int
s_k_mix (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
         const double *mix, size_t kv, float *const *rows)
{
    if (gc_robust_ws_reserve_tile (ws, k))
        return -1;
    s_mix_plan (mix, kv, k, ws->mixc, ws->mixlist, ws->mixnz);
    for (size_t c0 = 0; c0 < d; c0 += TB)
        if (s_mix_tile (ws, in, k, mix, NULL, kv, c0, d - c0 < TB ? d - c0 : TB, rows, c0))
            return 1;
    return 0;
}

//  --- Windows over NNM's rows, by groups ------------------------------------

//  When every mixed row is a complement row with one coefficient c > 0 and
//  the same number f of left-out inputs (NNM's rows), row a's value at a
//  coordinate is c (S - L_a), S the sum of all k inputs, L_a that of the
//  inputs row a leaves out: a decreasing function of L_a. Rows that leave
//  out the same inputs are equal; with m distinct left-out sets (groups
//  g < m of w_g rows each; with f = 1, m is 5 of 16 on gcbench's inputs,
//  2 when one attacker is everyone's farthest) a window of
//  the sorted mixed rows is a window of the groups sorted by L_g
//  descending, group g taking the w_g ranks after the groups with a larger
//  L (ties: the lower g first). The window's mean is then
//      c (S - (sum_g n_g L_g) / (hi - lo + 1)),
//  n_g = how many of g's ranks fall in [lo, hi]: m (m - 1) / 2 compares per
//  coordinate instead of forming kv rows and sorting them; S, L and the
//  sum in double, in index and group order. It differs from sorting the
//  rounded rows only in the last bits (no row is rounded to float before
//  the mean), and is the same at every level (below). A block
//  whose left-out inputs are far larger than the kept ones (the complement
//  test of s_mix_block) or the partial last block takes the row path.
#define S_GMAX 6

//  The per-lane double operations of s_group_block, as vectors where the
//  level has them (each one IEEE operation per lane, so every width gives
//  the same bits): GCC left the plain loops scalar and branchy. Chunks of
//  S_GC coordinates: one float vector of the level.
#if GC_KLEVEL >= GC_KLEVEL_AVX512
#   define S_GC 16
#   define S_GV 8
typedef __m512d s_gv;
#   define S_GV_LOADF(p)     _mm512_cvtps_pd (_mm256_loadu_ps (p))
#   define S_GV_STOREF(p, v) _mm256_storeu_ps (p, _mm512_cvtpd_ps (v))
#   define S_GV_SET1(x)      _mm512_set1_pd (x)
#   define S_GV_LOADF_D(p)   _mm512_loadu_pd (p)
#   define S_GV_ADD(a, b)    _mm512_add_pd (a, b)
#   define S_GV_SUB(a, b)    _mm512_sub_pd (a, b)
#   define S_GV_MUL(a, b)    _mm512_mul_pd (a, b)
#   define S_GV_MIN(a, b)    _mm512_min_pd (a, b)
#   define S_GV_MAX(a, b)    _mm512_max_pd (a, b)
#   define S_GV_GE_AND(a, b, w) _mm512_maskz_mov_pd (_mm512_cmp_pd_mask (a, b, _CMP_GE_OQ), w)
#   define S_GV_GT_AND(a, b, w) _mm512_maskz_mov_pd (_mm512_cmp_pd_mask (a, b, _CMP_GT_OQ), w)
#elif GC_KLEVEL >= GC_KLEVEL_AVX2
#   define S_GC 8
#   define S_GV 4
typedef __m256d s_gv;
#   define S_GV_LOADF(p)     _mm256_cvtps_pd (_mm_loadu_ps (p))
#   define S_GV_STOREF(p, v) _mm_storeu_ps (p, _mm256_cvtpd_ps (v))
#   define S_GV_SET1(x)      _mm256_set1_pd (x)
#   define S_GV_LOADF_D(p)   _mm256_loadu_pd (p)
#   define S_GV_ADD(a, b)    _mm256_add_pd (a, b)
#   define S_GV_SUB(a, b)    _mm256_sub_pd (a, b)
#   define S_GV_MUL(a, b)    _mm256_mul_pd (a, b)
#   define S_GV_MIN(a, b)    _mm256_min_pd (a, b)
#   define S_GV_MAX(a, b)    _mm256_max_pd (a, b)
#   define S_GV_GE_AND(a, b, w) _mm256_and_pd (_mm256_cmp_pd (a, b, _CMP_GE_OQ), w)
#   define S_GV_GT_AND(a, b, w) _mm256_and_pd (_mm256_cmp_pd (a, b, _CMP_GT_OQ), w)
#elif defined (__SSE2__)
#   define S_GC 8
#   define S_GV 2
typedef __m128d s_gv;
#   define S_GV_LOADF(p)     _mm_cvtps_pd (_mm_castsi128_ps (_mm_loadl_epi64 ((const __m128i *) (const void *) (p))))
#   define S_GV_STOREF(p, v) _mm_storel_epi64 ((__m128i *) (void *) (p), _mm_castps_si128 (_mm_cvtpd_ps (v)))
#   define S_GV_SET1(x)      _mm_set1_pd (x)
#   define S_GV_LOADF_D(p)   _mm_loadu_pd (p)
#   define S_GV_ADD(a, b)    _mm_add_pd (a, b)
#   define S_GV_SUB(a, b)    _mm_sub_pd (a, b)
#   define S_GV_MUL(a, b)    _mm_mul_pd (a, b)
#   define S_GV_MIN(a, b)    _mm_min_pd (a, b)
#   define S_GV_MAX(a, b)    _mm_max_pd (a, b)
#   define S_GV_GE_AND(a, b, w) _mm_and_pd (_mm_cmpge_pd (a, b), w)
#   define S_GV_GT_AND(a, b, w) _mm_and_pd (_mm_cmpgt_pd (a, b), w)
#else
#   define S_GC 8
#   define S_GV 1
typedef double s_gv;
#   define S_GV_LOADF(p)     ((double) *(p))
#   define S_GV_STOREF(p, v) (*(p) = (float) (v))
#   define S_GV_SET1(x)      (x)
#   define S_GV_LOADF_D(p)   (*(p))
#   define S_GV_ADD(a, b)    ((a) + (b))
#   define S_GV_SUB(a, b)    ((a) - (b))
#   define S_GV_MUL(a, b)    ((a) * (b))
#   define S_GV_MIN(a, b)    ((a) < (b) ? (a) : (b))
#   define S_GV_MAX(a, b)    ((a) > (b) ? (a) : (b))
#   define S_GV_GE_AND(a, b, w) ((a) >= (b) ? (w) : 0.0)
#   define S_GV_GT_AND(a, b, w) ((a) > (b) ? (w) : 0.0)
#endif
#define S_GN (S_GC / S_GV)

//  The same for the ranks, in float: counts of rows, small integers, so
//  every sum of them is exact.
#if GC_KLEVEL >= GC_KLEVEL_AVX512
#   define S_FV 16
typedef __m512 s_fv;
typedef __mmask16 s_fmask;
#   define S_FV_LOAD(p)      _mm512_loadu_ps (p)
#   define S_FV_STORE(p, v)  _mm512_storeu_ps (p, v)
#   define S_FV_SET1(x)      _mm512_set1_ps (x)
#   define S_FV_ADD(a, b)    _mm512_add_ps (a, b)
#   define S_FV_SUB(a, b)    _mm512_sub_ps (a, b)
#   define S_FV_MIN(a, b)    _mm512_min_ps (a, b)
#   define S_FV_MAX(a, b)    _mm512_max_ps (a, b)
#   define S_FV_GE(a, b)     _mm512_cmp_ps_mask (a, b, _CMP_GE_OQ)
#   define S_FV_AND(m, w)    _mm512_maskz_mov_ps (m, w)
#   define S_FV_ANDNOT(m, w) _mm512_maskz_mov_ps ((__mmask16) ~(m), w)
#elif GC_KLEVEL >= GC_KLEVEL_AVX2
#   define S_FV 8
typedef __m256 s_fv;
typedef __m256 s_fmask;
#   define S_FV_LOAD(p)      _mm256_loadu_ps (p)
#   define S_FV_STORE(p, v)  _mm256_storeu_ps (p, v)
#   define S_FV_SET1(x)      _mm256_set1_ps (x)
#   define S_FV_ADD(a, b)    _mm256_add_ps (a, b)
#   define S_FV_SUB(a, b)    _mm256_sub_ps (a, b)
#   define S_FV_MIN(a, b)    _mm256_min_ps (a, b)
#   define S_FV_MAX(a, b)    _mm256_max_ps (a, b)
#   define S_FV_GE(a, b)     _mm256_cmp_ps (a, b, _CMP_GE_OQ)
#   define S_FV_AND(m, w)    _mm256_and_ps (m, w)
#   define S_FV_ANDNOT(m, w) _mm256_andnot_ps (m, w)
#elif defined (__SSE2__)
#   define S_FV 4
typedef __m128 s_fv;
typedef __m128 s_fmask;
#   define S_FV_LOAD(p)      _mm_loadu_ps (p)
#   define S_FV_STORE(p, v)  _mm_storeu_ps (p, v)
#   define S_FV_SET1(x)      _mm_set1_ps (x)
#   define S_FV_ADD(a, b)    _mm_add_ps (a, b)
#   define S_FV_SUB(a, b)    _mm_sub_ps (a, b)
#   define S_FV_MIN(a, b)    _mm_min_ps (a, b)
#   define S_FV_MAX(a, b)    _mm_max_ps (a, b)
#   define S_FV_GE(a, b)     _mm_cmpge_ps (a, b)
#   define S_FV_AND(m, w)    _mm_and_ps (m, w)
#   define S_FV_ANDNOT(m, w) _mm_andnot_ps (m, w)
#else
#   define S_FV 1
typedef float s_fv;
typedef bool s_fmask;
#   define S_FV_LOAD(p)      (*(p))
#   define S_FV_STORE(p, v)  (*(p) = (v))
#   define S_FV_SET1(x)      (x)
#   define S_FV_ADD(a, b)    ((a) + (b))
#   define S_FV_SUB(a, b)    ((a) - (b))
#   define S_FV_MIN(a, b)    ((a) < (b) ? (a) : (b))
#   define S_FV_MAX(a, b)    ((a) > (b) ? (a) : (b))
#   define S_FV_GE(a, b)     ((a) >= (b))
#   define S_FV_AND(m, w)    ((m) ? (w) : 0.0f)
#   define S_FV_ANDNOT(m, w) ((m) ? 0.0f : (w))
#endif
#define S_FN (S_GC / S_FV)

typedef struct {
    size_t m, f, nz;            /* groups, left-out inputs per row, kept ones */
    size_t kv;                  /* rows: the sum of w */
    double c;                   /* the rows' coefficient */
    double w [S_GMAX];          /* rows per group */
    const size_t *plan [S_GMAX];    /* a row of the group: its s_mix_plan list */
} s_groups_t;

//  Whether the kv rows form at most S_GMAX groups as above (dup: s_mix_dups).
static bool
s_groups_make (const double *mixc, const size_t *plan, const size_t *nz, const size_t *dup,
               size_t kv, size_t k, s_groups_t *gr)
{
    gr->m = 0;
    gr->nz = nz [0];
    gr->f = k - nz [0];
    gr->c = mixc [0];
    if (!(gr->c > 0) || gr->f == 0)
        return false;
    for (size_t a = 0; a < kv; a++) {
        if (mixc [a] != gr->c || nz [a] != gr->nz)
            return false;
        if (dup [a] == a) {
            if (gr->m == S_GMAX)
                return false;
            gr->plan [gr->m] = plan + a * k;
            gr->w [gr->m++] = 0;
        }
    }
    //  Each row to its group (groups are numbered in order of first rows).
    gr->kv = kv;
    for (size_t a = 0; a < kv; a++)
        for (size_t g = 0; g < gr->m; g++)
            if (gr->plan [g] == plan + dup [a] * k) {
                gr->w [g] += 1;
                break;
            }
    return true;
}

//  The chunks of one block (s_group_block) when every row leaves out one
//  input (f = 1, L_g an input's value): ranks and counts in float, each
//  pair of groups compared once, then T in double.
static inline __attribute__ ((always_inline)) void
s_group_chunks1 (const s_groups_t *gr, const float *const *in, size_t c0, size_t lo,
                 size_t hi, const double *sum, float *out, size_t m)
{
    const float *src [S_GMAX];
    s_fv fw [S_GMAX];
    _Pragma ("GCC unroll 8")
    for (size_t g = 0; g < m; g++) {
        src [g] = in [gr->plan [g][gr->nz]] + c0;
        fw [g] = S_FV_SET1 ((float) gr->w [g]);
    }
    const s_fv flo = S_FV_SET1 ((float) lo), fhi = S_FV_SET1 ((float) hi + 1.0f),
               fzero = S_FV_SET1 (0.0f);
    const s_gv vc = S_GV_SET1 (gr->c), vinv = S_GV_SET1 (1.0 / (double) (hi - lo + 1)),
               zero = S_GV_SET1 (0.0);
    for (size_t t0 = 0; t0 < TB; t0 += S_GC) {
        float cnt [S_GMAX][S_GC];
        _Pragma ("GCC unroll 8")
        for (size_t q = 0; q < S_FN; q++) {
            s_fv lv [S_GMAX], rank [S_GMAX];
            _Pragma ("GCC unroll 8")
            for (size_t g = 0; g < m; g++) {
                lv [g] = S_FV_LOAD (src [g] + t0 + q * S_FV);
                rank [g] = fzero;
            }
            //  Group h's rows come before g's (h < g) when L_h >= L_g.
            _Pragma ("GCC unroll 8")
            for (size_t g = 1; g < m; g++)
                _Pragma ("GCC unroll 8")
                for (size_t h = 0; h < g; h++) {
                    s_fmask before = S_FV_GE (lv [h], lv [g]);
                    rank [g] = S_FV_ADD (rank [g], S_FV_AND (before, fw [h]));
                    rank [h] = S_FV_ADD (rank [h], S_FV_ANDNOT (before, fw [g]));
                }
            _Pragma ("GCC unroll 8")
            for (size_t g = 0; g < m; g++) {
                s_fv top = S_FV_MIN (S_FV_ADD (rank [g], fw [g]), fhi);
                s_fv bot = S_FV_MAX (rank [g], flo);
                S_FV_STORE (cnt [g] + q * S_FV, S_FV_MAX (S_FV_SUB (top, bot), fzero));
            }
        }
        _Pragma ("GCC unroll 8")
        for (size_t q = 0; q < S_GN; q++) {
            s_gv t = zero;
            _Pragma ("GCC unroll 8")
            for (size_t g = 0; g < m; g++)
                t = S_GV_ADD (t, S_GV_MUL (S_GV_LOADF (cnt [g] + q * S_GV),
                                           S_GV_LOADF (src [g] + t0 + q * S_GV)));
            s_gv sq = S_GV_LOADF_D (sum + t0 + q * S_GV);
            S_GV_STOREF (out + c0 + t0 + q * S_GV, S_GV_MUL (vc, S_GV_SUB (sq, S_GV_MUL (t, vinv))));
        }
    }
}

//  The chunks of one block (s_group_block) for cwtm:1 on rows that each
//  leave out one input (f = 1, the window [1, kv - 2] of kv rows): the
//  window drops one row at each end, the one with the largest L and the
//  one with the smallest, so its mean is c (S - (sum_g w_g L_g - L_max -
//  L_min) / (kv - 2)): a max and a min per group instead of ranking every
//  pair of groups (m (m - 1) / 2 compares and counts). L_max and L_min are
//  exact (floats); the sum in double in group order, then less L_max, then
//  less L_min. The same at every level; it differs from the ranked form only
//  in the last bits (the same terms, summed in another order).
static inline __attribute__ ((always_inline)) void
s_group_chunks_trim1 (const s_groups_t *gr, const float *const *in, size_t c0,
                      const double *sum, float *out, size_t m)
{
    const float *src [S_GMAX];
    s_gv gw [S_GMAX];
    _Pragma ("GCC unroll 8")
    for (size_t g = 0; g < m; g++) {
        src [g] = in [gr->plan [g][gr->nz]] + c0;
        gw [g] = S_GV_SET1 (gr->w [g]);
    }
    const s_gv vc = S_GV_SET1 (gr->c), vinv = S_GV_SET1 (1.0 / (double) (gr->kv - 2)),
               zero = S_GV_SET1 (0.0);
    for (size_t t0 = 0; t0 < TB; t0 += S_GC) {
        float lmax [S_GC], lmin [S_GC];
        _Pragma ("GCC unroll 8")
        for (size_t q = 0; q < S_FN; q++) {
            s_fv hi = S_FV_LOAD (src [0] + t0 + q * S_FV), lo = hi;
            _Pragma ("GCC unroll 8")
            for (size_t g = 1; g < m; g++) {
                s_fv v = S_FV_LOAD (src [g] + t0 + q * S_FV);
                hi = S_FV_MAX (hi, v);
                lo = S_FV_MIN (lo, v);
            }
            S_FV_STORE (lmax + q * S_FV, hi);
            S_FV_STORE (lmin + q * S_FV, lo);
        }
        _Pragma ("GCC unroll 8")
        for (size_t q = 0; q < S_GN; q++) {
            s_gv t = zero;
            _Pragma ("GCC unroll 8")
            for (size_t g = 0; g < m; g++)
                t = S_GV_ADD (t, S_GV_MUL (gw [g], S_GV_LOADF (src [g] + t0 + q * S_GV)));
            t = S_GV_SUB (S_GV_SUB (t, S_GV_LOADF (lmax + q * S_GV)), S_GV_LOADF (lmin + q * S_GV));
            s_gv sq = S_GV_LOADF_D (sum + t0 + q * S_GV);
            S_GV_STOREF (out + c0 + t0 + q * S_GV, S_GV_MUL (vc, S_GV_SUB (sq, S_GV_MUL (t, vinv))));
        }
    }
}

//  The chunks of one block (s_group_block), m groups: inlined for each m,
//  so that the loops over groups unroll and the values stay in registers.
static inline __attribute__ ((always_inline)) void
s_group_chunks (const s_groups_t *gr, const float *const *in, size_t c0, size_t lo,
                size_t hi, const double *sum, float *out, size_t m)
{
    size_t f = gr->f, nz = gr->nz;
    double c = gr->c, inv = 1.0 / (double) (hi - lo + 1), dlo = (double) lo,
           dhi = (double) hi + 1;
    const s_gv vc = S_GV_SET1 (c), vinv = S_GV_SET1 (inv), vlo = S_GV_SET1 (dlo),
               vhi = S_GV_SET1 (dhi), zero = S_GV_SET1 (0.0);
    s_gv vw [S_GMAX];
    _Pragma ("GCC unroll 8")
    for (size_t g = 0; g < m; g++)
        vw [g] = S_GV_SET1 (gr->w [g]);
    for (size_t t0 = 0; t0 < TB; t0 += S_GC) {
        s_gv lv [S_GMAX][S_GN], t [S_GN];
        _Pragma ("GCC unroll 8")
        for (size_t g = 0; g < m; g++) {
            const size_t *left = gr->plan [g] + nz;
            _Pragma ("GCC unroll 8")
            for (size_t q = 0; q < S_GN; q++)
                lv [g][q] = S_GV_LOADF (in [left [0]] + c0 + t0 + q * S_GV);
            for (size_t e = 1; e < f; e++)
                _Pragma ("GCC unroll 8")
                for (size_t q = 0; q < S_GN; q++)
                    lv [g][q] = S_GV_ADD (lv [g][q], S_GV_LOADF (in [left [e]] + c0 + t0 + q * S_GV));
        }
        _Pragma ("GCC unroll 8")
        for (size_t q = 0; q < S_GN; q++)
            t [q] = zero;
        _Pragma ("GCC unroll 8")
        for (size_t g = 0; g < m; g++)
            _Pragma ("GCC unroll 8")
            for (size_t q = 0; q < S_GN; q++) {
                //  The rows ranked before group g's: a larger L, or an
                //  equal L in a lower group.
                s_gv rank = zero;
                _Pragma ("GCC unroll 8")
                for (size_t h = 0; h < g; h++)
                    rank = S_GV_ADD (rank, S_GV_GE_AND (lv [h][q], lv [g][q], vw [h]));
                _Pragma ("GCC unroll 8")
                for (size_t h = g + 1; h < m; h++)
                    rank = S_GV_ADD (rank, S_GV_GT_AND (lv [h][q], lv [g][q], vw [h]));
                s_gv top = S_GV_MIN (S_GV_ADD (rank, vw [g]), vhi);
                s_gv bot = S_GV_MAX (rank, vlo);
                s_gv n = S_GV_MAX (S_GV_SUB (top, bot), zero);
                t [q] = S_GV_ADD (t [q], S_GV_MUL (n, lv [g][q]));
            }
        //  No check of the result: a mean of finite floats, formed in
        //  double, rounds to a finite float.
        _Pragma ("GCC unroll 8")
        for (size_t q = 0; q < S_GN; q++) {
            s_gv sq = S_GV_LOADF_D (sum + t0 + q * S_GV);
            S_GV_STOREF (out + c0 + t0 + q * S_GV,
                         S_GV_MUL (vc, S_GV_SUB (sq, S_GV_MUL (t [q], vinv))));
        }
    }
}

//  One whole block (TB coordinates at c0) by groups into out + c0. Returns
//  1 on a NaN or Inf, 0 with *row_path set when the block must take the row
//  path instead (nothing written then).
static int
s_group_block (const s_groups_t *gr, const float *const *in, size_t k, size_t c0,
               size_t lo, size_t hi, uint32_t *rowmax, float *out, bool *row_path)
{
    double sum [TB];
    for (size_t j = 0; j < k; j++) {
        const float *restrict x = in [j] + c0;
        uint32_t big = 0;
        gc_kprefetch_run (x, TB);
        if (j == 0)
            for (size_t c = 0; c < TB; c++) {
                uint32_t u = s_absbits (x [c]);
                sum [c] = (double) x [c];
                big = u > big ? u : big;
            }
        else
            for (size_t c = 0; c < TB; c++) {
                uint32_t u = s_absbits (x [c]);
                sum [c] += (double) x [c];
                big = u > big ? u : big;
            }
        rowmax [j] = big;
    }
    uint32_t emin = UINT32_MAX, emax = 0;
    for (size_t j = 0; j < k; j++) {
        if (rowmax [j] >= GC_ROBUST_NONFINITE_BITS)
            return 1;
        uint32_t e = rowmax [j] >> 23;
        emin = e < emin ? e : emin;
        emax = e > emax ? e : emax;
    }
    *row_path = false;
    if (emax > emin + S_COMPLEMENT_EXP)
        for (size_t g = 0; g < gr->m; g++)
            if (s_complement_unsafe (rowmax, gr->plan [g], gr->nz, k)) {
                *row_path = true;
                return 0;
            }
    if (gr->f == 1 && lo == 1 && gr->kv >= 3 && hi == gr->kv - 2)
        switch (gr->m) {
            case 1: s_group_chunks_trim1 (gr, in, c0, sum, out, 1); break;
            case 2: s_group_chunks_trim1 (gr, in, c0, sum, out, 2); break;
            case 3: s_group_chunks_trim1 (gr, in, c0, sum, out, 3); break;
            case 4: s_group_chunks_trim1 (gr, in, c0, sum, out, 4); break;
            case 5: s_group_chunks_trim1 (gr, in, c0, sum, out, 5); break;
            default: s_group_chunks_trim1 (gr, in, c0, sum, out, 6); break;
        }
    else
    if (gr->f == 1)
        switch (gr->m) {
            case 1: s_group_chunks1 (gr, in, c0, lo, hi, sum, out, 1); break;
            case 2: s_group_chunks1 (gr, in, c0, lo, hi, sum, out, 2); break;
            case 3: s_group_chunks1 (gr, in, c0, lo, hi, sum, out, 3); break;
            case 4: s_group_chunks1 (gr, in, c0, lo, hi, sum, out, 4); break;
            case 5: s_group_chunks1 (gr, in, c0, lo, hi, sum, out, 5); break;
            default: s_group_chunks1 (gr, in, c0, lo, hi, sum, out, 6); break;
        }
    else
        switch (gr->m) {
            case 1: s_group_chunks (gr, in, c0, lo, hi, sum, out, 1); break;
            case 2: s_group_chunks (gr, in, c0, lo, hi, sum, out, 2); break;
            case 3: s_group_chunks (gr, in, c0, lo, hi, sum, out, 3); break;
            case 4: s_group_chunks (gr, in, c0, lo, hi, sum, out, 4); break;
            case 5: s_group_chunks (gr, in, c0, lo, hi, sum, out, 5); break;
            default: s_group_chunks (gr, in, c0, lo, hi, sum, out, 6); break;
        }
    return 0;
}

//  The window kernel on the mixed rows, block by block in L1: the mixed
//  vectors are never written to memory (the same values as s_k_mix, then
//  s_k_cw_window, would give), or by groups (above) where the rows allow.
static int
s_k_mix_window (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                const double *mix, size_t kv, size_t lo, size_t hi, float *out)
{
    if (gc_robust_ws_reserve_tile (ws, k) || gc_robust_ws_reserve_vbuf (ws, kv * TB))
        return -1;
    float **mrows = ws->rows;
    for (size_t a = 0; a < kv; a++)
        mrows [a] = ws->vbuf + a * TB;
    s_mix_plan (mix, kv, k, ws->mixc, ws->mixlist, ws->mixnz);
    s_groups_t gr;
    s_mix_dups (mix, kv, k, ws->idx2);
    bool grouped = s_groups_make (ws->mixc, ws->mixlist, ws->mixnz, ws->idx2, kv, k, &gr);
    const gc_robust_net_t *net = NULL;
    const size_t *dup = NULL;
#ifdef S_HAVE_REG
    s_reg_fn fn = ws->portable ? NULL : s_reg_lookup (kv, lo, hi);
    //  The register kernels only read the rows: equal rows (NNM's, when the
    //  same inputs are the farthest from several, e.g. an attacker's) are
    //  formed once and read through one pointer. The tile sorts in place.
    if (fn) {
        for (size_t a = 0; a < kv; a++)
            mrows [a] = mrows [ws->idx2 [a]];
        dup = ws->idx2;
    }
#endif
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
        if (grouped && n == TB) {
            bool row_path;
            if (s_group_block (&gr, in, k, c0, lo, hi, ws->lanes, out, &row_path))
                return 1;
            if (!row_path)
                continue;
        }
        if (s_mix_tile (ws, in, k, mix, dup, kv, c0, n, mrows, 0))
            return 1;
#ifdef S_HAVE_REG
        if (fn) {
            uint32_t big;
            fn ((const float *const *) mrows, n, out + c0, &big);
            if (big >= GC_ROBUST_NONFINITE_BITS)
                return 1;
            continue;
        }
#endif
        if (!net && !(net = s_net (ws, kv, lo, hi, false)))
            return -1;
        uint32_t big = 0;
        for (size_t a = 0; a < kv; a++)
            for (size_t t = 0; t < n; t++) {
                uint32_t u = s_absbits (ws->vbuf [a * TB + t]);
                big = u > big ? u : big;
            }
        if (big >= GC_ROBUST_NONFINITE_BITS)
            return 1;
#ifdef S_W
        if (!ws->portable)
            s_tile_net_simd (ws->vbuf, net);
        else
#endif
            s_tile_net_portable (ws->vbuf, net);
        s_tile_sum (ws->vbuf, lo, hi, ws->acc, out + c0, n);
    }
    return 0;
}

//  --- Weighted sums ----------------------------------------------------------

/*  out = sum of coef[i] * x_i over the inputs with a non-zero coefficient,
    per coordinate in double, in index order from +0, rounded once (every
    level and the scalar tail the same operations, so the same bits). One
    64-byte column of every input at a time, its sums in registers (the
    block form before kept them in a block of doubles that every input
    loaded and stored again: mean ran slower than the median). A non-finite
    input makes its lane's sum non-finite, so no check per value: the
    column sums are summed into `chk`, and only when that is not finite are
    the inputs scanned (it may be an overflow of finite values instead).
    S_CW doubles fill one register; S_CWIDEN (p) widens the S_CW floats at p. */
#if GC_KLEVEL >= GC_KLEVEL_AVX512
#   define S_CW 8
#   define S_CWIDEN(p) ((s_cwd) _mm512_cvtps_pd (_mm256_loadu_ps (p)))
#   define S_CSET1(x)  ((s_cwd) _mm512_set1_pd (x))
#elif GC_KLEVEL >= GC_KLEVEL_AVX2
#   define S_CW 4
#   define S_CWIDEN(p) ((s_cwd) _mm256_cvtps_pd (_mm_loadu_ps (p)))
#   define S_CSET1(x)  ((s_cwd) _mm256_set1_pd (x))
#elif defined (__SSE2__)
#   define S_CW 2
#   define S_CWIDEN(p) \
        ((s_cwd) _mm_cvtps_pd (_mm_castsi128_ps (_mm_loadl_epi64 ((const __m128i *) (p)))))
#   define S_CSET1(x)  ((s_cwd) _mm_set1_pd (x))
#else
#   define S_CW 2
#   define S_CWIDEN(p) s_cwiden (p)
#   define S_CSET1(x)  ((s_cwd) { (x), (x) })
#endif
typedef float  s_cwf __attribute__ ((vector_size (S_CW * sizeof (float))));
typedef double s_cwd __attribute__ ((vector_size (S_CW * sizeof (double))));

#if GC_KLEVEL == GC_KLEVEL_GENERIC && !defined (__SSE2__)
static inline s_cwd
s_cwiden (const float *p)
{
    s_cwf f;
    memcpy (&f, p, sizeof f);
    return __builtin_convertvector (f, s_cwd);
}
#endif

//  Input j's term of a column: s += coef * widened floats. Where registers
//  are few (16: SSE2 at the generic level, AVX2) the term is pinned in
//  place: each sum passes through an empty asm (S_CPIN) and no load of the
//  next input moves above the term (S_CFENCE). Unpinned, GCC widened the
//  whole column's floats first (128 vectors at SSE2), spilled them, and read
//  them back for the products: half the generic pass's instructions were
//  such moves, in a pass bound by instructions there. The same operations
//  in the same order, so the same bits.
#if (GC_KLEVEL == GC_KLEVEL_GENERIC && defined (__SSE2__)) || GC_KLEVEL == GC_KLEVEL_AVX2
#   define S_CPIN(s) __asm__ volatile ("" : "+x" (s))
#   define S_CFENCE() __asm__ volatile ("" ::: "memory")
#else
#   define S_CPIN(s) ((void) 0)
#   define S_CFENCE() ((void) 0)
#endif
#define S_CTERM(j) { \
        const float *x_ = in [j] + c; \
        gc_kprefetch (x_); \
        s_cwd a_ = S_CSET1 (coef [j]); \
        for (size_t v = 0; v < 16 / S_CW; v++) { \
            s [v] += a_ * S_CWIDEN (x_ + v * S_CW); \
            S_CPIN (s [v]); \
        } \
        S_CFENCE (); \
    }

/*  The columns of the n inputs (all with a non-zero coefficient). With
    n known at compile time (S_CFIXED below) the terms are straight-line
    code and the coefficients stay in registers; a loop over the terms,
    even four at a time, read 0.5-0.6 of the bandwidth from memory where
    the straight-line form reads what the median's networks read, about
    0.9 (RESULTS, "mean and Krum's output"). */
static inline __attribute__ ((always_inline)) void
s_combine_n (const float *const *in, const double *coef, size_t n, size_t d, float *out,
             s_cwd *chk)
{
    //  The check sum in a register: through *chk every column's adds waited
    //  on the store of the one before (perf at the generic level: a tenth
    //  of the pass on those stores and the conversions behind them).
    s_cwd ck = *chk;
    for (size_t c = 0; c + 16 <= d; c += 16) {
        s_cwd s [16 / S_CW];
        for (size_t v = 0; v < 16 / S_CW; v++)
            s [v] = (s_cwd) { 0 };
#pragma GCC unroll 32
        for (size_t j = 0; j < n; j++)
            S_CTERM (j)
        for (size_t v = 0; v < 16 / S_CW; v++) {
            ck += s [v];
            s_cwf f = __builtin_convertvector (s [v], s_cwf);
            memcpy (out + c + v * S_CW, &f, sizeof f);
        }
    }
    *chk = ck;
}

typedef void (*s_combine_fn) (const float *const *in, const double *coef, size_t d, float *out,
                              s_cwd *chk);
#define S_CFIXED_MAX 24
#define S_CFIXED(N) \
static void \
s_combine_##N (const float *const *in, const double *coef, size_t d, float *out, s_cwd *chk) \
{ \
    s_combine_n (in, coef, N, d, out, chk); \
}
S_CFIXED (0)
S_CFIXED (1)  S_CFIXED (2)  S_CFIXED (3)  S_CFIXED (4)  S_CFIXED (5)  S_CFIXED (6)
S_CFIXED (7)  S_CFIXED (8)  S_CFIXED (9)  S_CFIXED (10) S_CFIXED (11) S_CFIXED (12)
S_CFIXED (13) S_CFIXED (14) S_CFIXED (15) S_CFIXED (16) S_CFIXED (17) S_CFIXED (18)
S_CFIXED (19) S_CFIXED (20) S_CFIXED (21) S_CFIXED (22) S_CFIXED (23) S_CFIXED (24)
static const s_combine_fn s_combine_fixed [S_CFIXED_MAX + 1] = {
    s_combine_0,
    s_combine_1, s_combine_2, s_combine_3, s_combine_4, s_combine_5, s_combine_6,
    s_combine_7, s_combine_8, s_combine_9, s_combine_10, s_combine_11, s_combine_12,
    s_combine_13, s_combine_14, s_combine_15, s_combine_16, s_combine_17, s_combine_18,
    s_combine_19, s_combine_20, s_combine_21, s_combine_22, s_combine_23, s_combine_24,
};

static void
s_combine_cols (const float *const *in, const double *coef, size_t n, size_t d, float *out,
                s_cwd *chk)
{
    if (n <= S_CFIXED_MAX)
        s_combine_fixed [n] (in, coef, d, out, chk);
    else
        s_combine_n (in, coef, n, d, out, chk);
}

static int
s_k_combine (gc_robust_ws_t *ws, const float *const *in, const double *coef,
             size_t k, size_t d, float *out)
{
    //  Not grown here: a caller may pass one of ws's own arrays as coef.
    if (k > ws->k_cap)
        return -1;
    const float **x = ws->wsum_in;
    double *a = ws->wsum_coef;
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        if (coef [i] != 0) {
            x [n] = in [i];
            a [n++] = coef [i];
        }
    s_cwd chk = { 0 };
    s_combine_cols (x, a, n, d, out, &chk);
    double tail = 0;
    for (size_t c = d / 16 * 16; c < d; c++) {
        double s = 0;
        for (size_t j = 0; j < n; j++)
            s += a [j] * (double) x [j][c];
        tail += s;
        out [c] = (float) s;
    }
    for (size_t v = 0; v < S_CW; v++)
        tail += chk [v];
    if (isfinite (tail))
        return 0;
    for (size_t j = 0; j < n; j++)
        if (!gc_vec_all_finite (x [j], d))
            return 1;
    return 0;
}

//  Copy, check and widen one block of the k inputs (rows 0..k-1 of the
//  double tile); the rows of one block sit at the same offsets modulo 4 KB
//  when the inputs are large allocations, so they are read once, in place.
static int
s_dtile_block (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t c0, size_t n)
{
    if (s_tile_load (ws, in, k, c0, n) >= GC_ROBUST_NONFINITE_BITS)
        return 1;
    for (size_t i = 0; i < k * TB; i++)
        ws->dtile [i] = ws->tile [i];
    return 0;
}

//  ||x - y||^2 over a block (x, y widened to double: no overflow for any
//  finite floats), with independent partial sums in a fixed order. A whole
//  block sums in 16 lanes (lane l takes the coordinates = l mod 16), then
//  folds them as the AVX-512 reduction does (lanes l and l + 8, then l + 4,
//  then l + 2, then the last two), at every level: the same bits from each.
//  A partial block, and the portable path, sum in coordinate order.
#if GC_KLEVEL == GC_KLEVEL_GENERIC
static inline double
s_fold16 (const double *lane)
{
    double t [8], u [4];
    for (int i = 0; i < 8; i++)
        t [i] = lane [i] + lane [i + 8];
    for (int i = 0; i < 4; i++)
        u [i] = t [i + 4] + t [i];
    return (u [2] + u [0]) + (u [3] + u [1]);
}
#endif

#if GC_KLEVEL == GC_KLEVEL_AVX2
//  The 16 lanes as four ymm (q0 = lanes 0..3, ..., q3 = lanes 12..15), folded.
static inline double
s_fold16_avx2 (__m256d q0, __m256d q1, __m256d q2, __m256d q3)
{
    __m256d t_lo = _mm256_add_pd (q0, q2), t_hi = _mm256_add_pd (q1, q3);
    __m256d u = _mm256_add_pd (t_hi, t_lo);
    __m128d w = _mm_add_pd (_mm256_extractf128_pd (u, 1), _mm256_castpd256_pd128 (u));
    return _mm_cvtsd_f64 (w) + _mm_cvtsd_f64 (_mm_unpackhi_pd (w, w));
}
#endif

static double
s_dist2_block (const double *x, const double *y, size_t n, bool portable)
{
#if GC_KLEVEL >= GC_KLEVEL_AVX512
    if (!portable && n == TB) {
        s_vd a0 = s_vd_zero (), a1 = s_vd_zero ();
        for (size_t c = 0; c < TB; c += 2 * S_WD) {
            s_vd d0 = s_vd_sub (s_vd_load (x + c), s_vd_load (y + c));
            s_vd d1 = s_vd_sub (s_vd_load (x + c + S_WD), s_vd_load (y + c + S_WD));
            a0 = s_vd_add (a0, s_vd_mul (d0, d0));
            a1 = s_vd_add (a1, s_vd_mul (d1, d1));
        }
        return s_vd_sum (s_vd_add (a0, a1));
    }
#elif GC_KLEVEL == GC_KLEVEL_AVX2
    if (!portable && n == TB) {
        __m256d q [4] = { _mm256_setzero_pd (), _mm256_setzero_pd (),
                          _mm256_setzero_pd (), _mm256_setzero_pd () };
        for (size_t c = 0; c < TB; c += 16)
            for (int g = 0; g < 4; g++) {
                __m256d dd = _mm256_sub_pd (_mm256_load_pd (x + c + 4 * g), _mm256_load_pd (y + c + 4 * g));
                q [g] = _mm256_add_pd (q [g], _mm256_mul_pd (dd, dd));
            }
        return s_fold16_avx2 (q [0], q [1], q [2], q [3]);
    }
#else
    if (!portable && n == TB) {
        double lane [16] = { 0 };
        for (size_t c = 0; c < TB; c += 16)
            for (size_t l = 0; l < 16; l++)
                lane [l] += (x [c + l] - y [c + l]) * (x [c + l] - y [c + l]);
        return s_fold16 (lane);
    }
#endif
    double sum = 0;
    for (size_t c = 0; c < n; c++)
        sum += (x [c] - y [c]) * (x [c] - y [c]);
    return sum;
}

#ifdef S_WD
//  Whole blocks straight from the inputs, for the two passes of the
//  clipping rules: the same operations in the same order as the tile
//  kernels (s_dtile_block, then s_dist2_block or s_mix_row), without copying
//  the block into the tile and widening it there first.

//  s_dist2_block of input x (floats) against zrow (doubles); x's |bits| into big.
static double
s_dist2_direct (const float *x, const double *zrow, s_vi *big)
{
#   if GC_KLEVEL >= GC_KLEVEL_AVX512
    s_vd a0 = s_vd_zero (), a1 = s_vd_zero ();
    for (size_t c = 0; c < TB; c += 2 * S_WD) {
        s_vf v = s_loadu (x + c);
        *big = s_vi_absmax (*big, v);
        s_vd d0 = s_vd_sub (s_vd_lo (v), s_vd_load (zrow + c));
        s_vd d1 = s_vd_sub (s_vd_hi (v), s_vd_load (zrow + c + S_WD));
        a0 = s_vd_add (a0, s_vd_mul (d0, d0));
        a1 = s_vd_add (a1, s_vd_mul (d1, d1));
    }
    return s_vd_sum (s_vd_add (a0, a1));
#   else
    __m256d q0 = _mm256_setzero_pd (), q1 = q0, q2 = q0, q3 = q0;
    for (size_t c = 0; c < TB; c += 16) {
        s_vf v0 = s_loadu (x + c), v1 = s_loadu (x + c + 8);
        *big = s_vi_absmax (*big, v0);
        *big = s_vi_absmax (*big, v1);
        __m256d d0 = _mm256_sub_pd (s_vd_lo (v0), _mm256_load_pd (zrow + c));
        __m256d d1 = _mm256_sub_pd (s_vd_hi (v0), _mm256_load_pd (zrow + c + 4));
        __m256d d2 = _mm256_sub_pd (s_vd_lo (v1), _mm256_load_pd (zrow + c + 8));
        __m256d d3 = _mm256_sub_pd (s_vd_hi (v1), _mm256_load_pd (zrow + c + 12));
        q0 = _mm256_add_pd (q0, _mm256_mul_pd (d0, d0));
        q1 = _mm256_add_pd (q1, _mm256_mul_pd (d1, d1));
        q2 = _mm256_add_pd (q2, _mm256_mul_pd (d2, d2));
        q3 = _mm256_add_pd (q3, _mm256_mul_pd (d3, d3));
    }
    return s_fold16_avx2 (q0, q1, q2, q3);
#   endif
}

//  s_mix_row over rows x_0 .. x_k-1 (the inputs at c0) and x_k = centre, with
//  every input checked (those with a zero coefficient too). out is written
//  only when the block is finite, after every row is read (out may be centre).
static int
s_step_direct (const float *const *in, size_t c0, const double *m, size_t k,
               const float *centre, float *out)
{
    float obuf [TB];
    s_vi big = s_vi_zero ();
    for (size_t j = 0; j < k; j++)
        if (m [j] == 0)
            for (size_t c = 0; c < TB; c += S_W)
                big = s_vi_absmax (big, s_loadu (in [j] + c0 + c));
    for (size_t c = 0; c < TB; c += 2 * S_W) {
        s_vd a0 = s_vd_zero (), a1 = s_vd_zero (), a2 = s_vd_zero (), a3 = s_vd_zero ();
        for (size_t j = 0; j <= k; j++) {
            if (m [j] == 0)
                continue;
            const float *x = (j < k ? in [j] + c0 : centre) + c;
            s_vf v0 = s_loadu (x), v1 = s_loadu (x + S_W);
            if (j < k) {
                big = s_vi_absmax (big, v0);
                big = s_vi_absmax (big, v1);
            }
            s_vd mj = s_vd_set1 (m [j]);
            a0 = s_vd_add (a0, s_vd_mul (mj, s_vd_lo (v0)));
            a1 = s_vd_add (a1, s_vd_mul (mj, s_vd_hi (v0)));
            a2 = s_vd_add (a2, s_vd_mul (mj, s_vd_lo (v1)));
            a3 = s_vd_add (a3, s_vd_mul (mj, s_vd_hi (v1)));
        }
        s_vd_store_ps (obuf + c, a0);
        s_vd_store_ps (obuf + c + S_WD, a1);
        s_vd_store_ps (obuf + c + 2 * S_WD, a2);
        s_vd_store_ps (obuf + c + 3 * S_WD, a3);
    }
    if (s_vi_reduce (big) >= GC_ROBUST_NONFINITE_BITS)
        return 1;
    memcpy (out, obuf, sizeof obuf);
    return 0;
}
#endif

//  One block of centre + sum_i a_i (x_i - centre), written as the mixture
//  sum_i a_i x_i + (1 - sum_i a_i) centre so that it runs on the mixing
//  kernel (register accumulators); both forms are exact to double rounding.
static int
s_k_step (gc_robust_ws_t *ws, const float *const *in, const double *a,
          size_t k, size_t d, const float *centre, float *out, double *d2)
{
    if (gc_robust_ws_reserve_tile (ws, k + 1) || gc_robust_ws_reserve_dtile (ws, k + 2))
        return -1;
    double *coef = ws->coef, rest = 1;
    for (size_t i = 0; i < k; i++) {
        coef [i] = a [i];
        rest -= a [i];
    }
    coef [k] = rest;
    double *dt = ws->dtile, *centre_row = dt + k * TB, *new_row = dt + (k + 1) * TB;
    if (d2)
        for (size_t i = 0; i < k; i++)
            d2 [i] = 0;
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
#ifdef S_WD
        if (!d2 && !ws->portable && n == TB) {
            if (s_step_direct (in, c0, coef, k, centre + c0, out + c0))
                return 1;
            continue;
        }
#endif
        if (s_dtile_block (ws, in, k, c0, n))
            return 1;
        //  centre may be out itself (cclip iterates in place): copied
        //  before the block is written.
        for (size_t c = 0; c < n; c++)
            centre_row [c] = centre [c0 + c];
        s_mix_row (coef, dt, k + 1, out + c0, n, ws->portable);
        if (!d2)
            continue;
        //  Distances to the new point while the block is in L1.
        for (size_t c = 0; c < n; c++)
            new_row [c] = out [c0 + c];
        for (size_t i = 0; i < k; i++)
            d2 [i] += s_dist2_block (dt + i * TB, new_row, n, ws->portable);
    }
    return 0;
}

static int
s_k_dist_to (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
             const float *z, double *d2)
{
    if (gc_robust_ws_reserve_tile (ws, k) || gc_robust_ws_reserve_dtile (ws, k + 1))
        return -1;
    double *zrow = ws->dtile + k * TB;
    for (size_t i = 0; i < k; i++)
        d2 [i] = 0;
    for (size_t c0 = 0; c0 < d; c0 += TB) {
        size_t n = d - c0 < TB ? d - c0 : TB;
        for (size_t c = 0; c < n; c++)
            zrow [c] = z [c0 + c];
#ifdef S_WD
        if (!ws->portable && n == TB) {
            s_vi big = s_vi_zero ();
            for (size_t i = 0; i < k; i++)
                d2 [i] += s_dist2_direct (in [i] + c0, zrow, &big);
            if (s_vi_reduce (big) >= GC_ROBUST_NONFINITE_BITS)
                return 1;
            continue;
        }
#endif
        if (s_dtile_block (ws, in, k, c0, n))
            return 1;
        for (size_t i = 0; i < k; i++)
            d2 [i] += s_dist2_block (ws->dtile + i * TB, zrow, n, ws->portable);
    }
    return 0;
}

const gc_robust_cw_kern_t GC_KSYM (gc_robust_cw_kern) = {
    .window = s_k_cw_window,
    .closest = s_k_cw_closest,
    .mix = s_k_mix,
    .mix_window = s_k_mix_window,
    .combine = s_k_combine,
    .step = s_k_step,
    .dist_to = s_k_dist_to
};
