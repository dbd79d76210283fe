/*  compress/ kernels, one copy per level (gc_klevel.h): top-k collection
    and prefix histograms on |x| keys, the fp16 conversions, the sign
    method's bits and their decoding. */
#include "gc_compress_kern.h"

#include "gc_half.h"
#include "gc_klevel.h"

#if GC_KLEVEL == GC_KLEVEL_GENERIC && defined (__SSE2__)
#   include <emmintrin.h>
#endif

static size_t
s_collect_scalar (const float *restrict x, size_t i, size_t m, uint32_t lo,
                  uint32_t *restrict idx, float *restrict val, size_t c, size_t cap,
                  uint32_t *maxkey)
{
    uint32_t mk = *maxkey;
    while (i < m) {
        size_t end = i + 16 < m ? i + 16 : m;
        for (; i < end; i++) {
            uint32_t k = gc_select_key (x [i]);
            mk = k > mk ? k : mk;
            idx [c] = (uint32_t) i;
            val [c] = x [i];
            c += k >= lo;
        }
        if (c > cap)
            break;
    }
    *maxkey = mk;
    return c;
}

//  The lowest set bit j of *hit (of block i) stored at idx/val + c and
//  cleared: the new count, c + 1, or c with nothing taken when *hit is 0 (then
//  the block's last entry, i + 63, is written at c, past the count, which the
//  stores may be).
static inline size_t
s_take_hit (const float *restrict x, size_t i, uint64_t *hit, uint32_t *restrict idx,
            float *restrict val, size_t c, uint32_t *hmax)
{
    uint64_t h = *hit;
    uint32_t j = (uint32_t) __builtin_ctzll (h | (1ull << 63));
    uint32_t any = h != 0;
    float v = x [i + j];
    uint32_t k = gc_select_key (v) & (0u - any);
    *hmax = k > *hmax ? k : *hmax;
    idx [c] = (uint32_t) i + j;
    val [c] = v;
    *hit = h & (h - 1);
    return c + any;
}

//  The hits of block i (bit j: entry i + j passes; blocks of 64), in order:
//  the first two without a branch on them (nothing is counted for a missing
//  one; at a 1 % cut half of the blocks hold a hit, and a branch on it
//  mispredicted every few blocks), a loop for the rest, in about 3 % of the
//  blocks at that cut. Blocks of 32 paid the two stores twice as often: 64
//  ran 1.3 times as fast at the generic level, 1.1 to 1.2 at AVX2 and
//  AVX-512 (docs/RESULTS.md, issue 17, stop 55). *hmax: the largest key taken.
static inline size_t
s_take_hits (const float *restrict x, size_t i, uint64_t hit, uint32_t *restrict idx,
             float *restrict val, size_t c, uint32_t *hmax)
{
    c = s_take_hit (x, i, &hit, idx, val, c, hmax);
    c = s_take_hit (x, i, &hit, idx, val, c, hmax);
    for (; hit; hit &= hit - 1) {
        uint32_t j = (uint32_t) __builtin_ctzll (hit);
        uint32_t kj = gc_select_key (x [i + j]);
        *hmax = kj > *hmax ? kj : *hmax;
        idx [c] = (uint32_t) i + j;
        val [c] = x [i + j];
        c++;
    }
    return c;
}

static size_t
s_collect (const float *restrict x, size_t m, uint32_t lo,
           uint32_t *restrict idx, float *restrict val, size_t cap, uint32_t *maxkey)
{
    size_t i = 0, c = 0;
    *maxkey = 0;
#if GC_KLEVEL >= GC_KLEVEL_AVX512
    //  A 64-bit hit mask per block of 64 (four compares into mask
    //  registers), the hits then read one by one (s_take_hits). Storing
    //  each vector compressed, hit or not, cost more on a Zen 5
    //  (docs/RESULTS.md, issue 17, 2026-12-07).
    const __m512i absmask = _mm512_set1_epi32 (0x7fffffff);
    const __m512i lov = _mm512_set1_epi32 ((int) lo);
    __m512i mx = _mm512_setzero_si512 ();
    uint32_t hmax = 0;          /* unread: mx holds the max of every key (the store is dropped) */
    for (; i + 64 <= m; i += 64) {
        uint64_t h = 0;
        for (int j = 0; j < 4; j++) {
            __m512i k = _mm512_and_si512 (_mm512_loadu_si512 ((const void *) (x + i + 16 * j)), absmask);
            mx = _mm512_max_epu32 (mx, k);
            h |= (uint64_t) _mm512_cmpge_epu32_mask (k, lov) << (16 * j);
        }
        c = s_take_hits (x, i, h, idx, val, c, &hmax);
        if (c > cap)
            break;
    }
    *maxkey = _mm512_reduce_max_epu32 (mx);
    if (c > cap)
        return c;
#elif GC_KLEVEL == GC_KLEVEL_AVX2
    //  No compress instruction: a 64-bit hit mask per block of 64 (eight
    //  compares, a sign mask each), the hits then read one by one as at the
    //  baseline below. (A table of lane permutations per 8-entry mask,
    //  stored hit or not, cost about twice the instructions and ran slower
    //  than the baseline's SSE2 code on a Zen 5.) Keys are below 2^31: a
    //  signed compare tests key > lo - 1, lo clamped as below.
    const __m256i absmask = _mm256_set1_epi32 (0x7fffffff);
    const uint32_t lc = lo > 0x80000000u ? 0x80000000u : lo;
    const __m256i lom1 = _mm256_set1_epi32 ((int) (lc - 1u));
    __m256i mx = _mm256_setzero_si256 ();
    uint32_t hmax = 0;          /* unread, as at AVX-512 */
    for (; i + 64 <= m; i += 64) {
        const __m256i *p = (const __m256i *) (x + i);
        uint64_t h = 0;
        for (int j = 0; j < 8; j++) {
            __m256i k = _mm256_and_si256 (_mm256_loadu_si256 (p + j), absmask);
            mx = _mm256_max_epu32 (mx, k);
            h |= (uint64_t) (uint32_t) _mm256_movemask_ps (
                     _mm256_castsi256_ps (_mm256_cmpgt_epi32 (k, lom1))) << (8 * j);
        }
        c = s_take_hits (x, i, h, idx, val, c, &hmax);
        if (c > cap)
            break;
    }
    *maxkey = gc_kmax_epu32 (mx);
    if (c > cap)
        return c;
#elif defined (__SSE2__)
    //  The x86-64 baseline has no unsigned compare and no 32-bit max. Keys
    //  are below 2^31, so a signed compare tests key > lo - 1 (lo = 0 wraps
    //  to -1: everything passes). The largest key costs no integer max:
    //  every key >= lo is a hit, read one by one, so with a hit the hits'
    //  largest key is the largest of all; without one every key is below
    //  lo, and for lo <= S_KEY_INF they are finite non-negative floats,
    //  whose float max is the key max (a larger lo is no sampled bound:
    //  a scalar pass serves it).
    const __m128i absmask = _mm_set1_epi32 (0x7fffffff);
    const uint32_t lc = lo > 0x80000000u ? 0x80000000u : lo;   /* no key reaches 2^31 */
    const __m128i lom1 = _mm_set1_epi32 ((int) (lc - 1u));
    __m128 mxf = _mm_setzero_ps ();
    uint32_t hmax = 0;
    __m128 mxg = _mm_setzero_ps ();
    for (; i + 64 <= m; i += 64) {
        //  Sixteen compare results narrowed to bytes (two saturating packs
        //  each keep 0 and -1) and read with one byte mask: fewer
        //  instructions than a mask, shift and or per vector, and the loop is
        //  bound by instructions, not by memory.
        const __m128i *p = (const __m128i *) (x + i);
        uint64_t hit = 0;
        for (int j = 0; j < 16; j += 4) {
            __m128i k0 = _mm_and_si128 (_mm_loadu_si128 (p + j), absmask);
            __m128i k1 = _mm_and_si128 (_mm_loadu_si128 (p + j + 1), absmask);
            __m128i k2 = _mm_and_si128 (_mm_loadu_si128 (p + j + 2), absmask);
            __m128i k3 = _mm_and_si128 (_mm_loadu_si128 (p + j + 3), absmask);
            mxf = _mm_max_ps (mxf, _mm_max_ps (_mm_castsi128_ps (k0), _mm_castsi128_ps (k1)));
            mxg = _mm_max_ps (mxg, _mm_max_ps (_mm_castsi128_ps (k2), _mm_castsi128_ps (k3)));
            __m128i e01 = _mm_packs_epi32 (_mm_cmpgt_epi32 (k0, lom1), _mm_cmpgt_epi32 (k1, lom1));
            __m128i e23 = _mm_packs_epi32 (_mm_cmpgt_epi32 (k2, lom1), _mm_cmpgt_epi32 (k3, lom1));
            hit |= (uint64_t) _mm_movemask_epi8 (_mm_packs_epi16 (e01, e23)) << (4 * j);
        }
        c = s_take_hits (x, i, hit, idx, val, c, &hmax);
        if (c > cap)
            break;
    }
    mxf = _mm_max_ps (mxf, mxg);
    if (c > 0)
        *maxkey = hmax;
    else if (lo <= 0x7f800000u) {
        float mx4 [4];
        _mm_storeu_ps (mx4, mxf);
        uint32_t mk = 0;
        for (int j = 0; j < 4; j++) {
            uint32_t u = gc_select_key (mx4 [j]);
            mk = u > mk ? u : mk;
        }
        *maxkey = mk;
    } else {
        uint32_t mk = 0;
        for (size_t j = 0; j < i; j++) {
            uint32_t u = gc_select_key (x [j]);
            mk = u > mk ? u : mk;
        }
        *maxkey = mk;
    }
    if (c > cap)
        return c;
#else
    //  Plain C: skip blocks of 32 with no hit after a test the compiler
    //  vectorises (few entries pass the bound), collect the others.
    uint32_t mk = 0;
    for (; i + 32 <= m; i += 32) {
        uint32_t hit = 0, bm = 0;
        for (size_t j = 0; j < 32; j++) {
            uint32_t k = gc_select_key (x [i + j]);
            hit |= k >= lo;
            bm = k > bm ? k : bm;
        }
        mk = bm > mk ? bm : mk;
        if (hit) {
            for (size_t j = 0; j < 32; j++) {
                idx [c] = (uint32_t) (i + j);
                val [c] = x [i + j];
                c += gc_select_key (x [i + j]) >= lo;
            }
            if (c > cap) {
                *maxkey = mk;
                return c;
            }
        }
    }
    *maxkey = mk;
#endif
    return s_collect_scalar (x, i, m, lo, idx, val, c, cap, maxkey);
}

static void
s_hist_prefix (const float *v, size_t m, uint32_t prefix, uint32_t mask, int shift,
               uint32_t wm, uint32_t *hist)
{
    size_t i = 0;
#if GC_KLEVEL >= GC_KLEVEL_AVX512
    //  Few entries match the prefix: test 16 at a time, count the hits.
    const __m512i absmask = _mm512_set1_epi32 (0x7fffffff);
    const __m512i pm = _mm512_set1_epi32 ((int) mask), pp = _mm512_set1_epi32 ((int) prefix);
    uint32_t lanes [16];
    for (; i + 16 <= m; i += 16) {
        __m512i k = _mm512_and_si512 (_mm512_loadu_si512 ((const void *) (v + i)), absmask);
        __mmask16 hit = _mm512_cmpeq_epi32_mask (_mm512_and_si512 (k, pm), pp);
        if (hit) {
            _mm512_storeu_si512 ((void *) lanes, k);
            for (; hit; hit &= (__mmask16) (hit - 1))
                hist [(lanes [__builtin_ctz (hit)] >> shift) & wm]++;
        }
    }
#elif GC_KLEVEL == GC_KLEVEL_AVX2
    const __m256i absmask = _mm256_set1_epi32 (0x7fffffff);
    const __m256i pm = _mm256_set1_epi32 ((int) mask), pp = _mm256_set1_epi32 ((int) prefix);
    for (; i + 16 <= m; i += 16) {
        const __m256i *p = (const __m256i *) (v + i);
        __m256i k0 = _mm256_and_si256 (_mm256_loadu_si256 (p), absmask);
        __m256i k1 = _mm256_and_si256 (_mm256_loadu_si256 (p + 1), absmask);
        __m256i e0 = _mm256_cmpeq_epi32 (_mm256_and_si256 (k0, pm), pp);
        __m256i e1 = _mm256_cmpeq_epi32 (_mm256_and_si256 (k1, pm), pp);
        uint32_t hit = (uint32_t) _mm256_movemask_ps (_mm256_castsi256_ps (e0))
                     | (uint32_t) _mm256_movemask_ps (_mm256_castsi256_ps (e1)) << 8;
        for (; hit; hit &= hit - 1) {
            uint32_t k = gc_select_key (v [i + (size_t) __builtin_ctz (hit)]);
            hist [(k >> shift) & wm]++;
        }
    }
#elif defined (__SSE2__)
    const __m128i absmask = _mm_set1_epi32 (0x7fffffff);
    const __m128i pm = _mm_set1_epi32 ((int) mask), pp = _mm_set1_epi32 ((int) prefix);
    for (; i + 16 <= m; i += 16) {
        const __m128i *p = (const __m128i *) (v + i);
        uint32_t hit = 0;
        for (int j = 0; j < 4; j++) {
            __m128i k = _mm_and_si128 (_mm_loadu_si128 (p + j), absmask);
            __m128i e = _mm_cmpeq_epi32 (_mm_and_si128 (k, pm), pp);
            hit |= (uint32_t) _mm_movemask_ps (_mm_castsi128_ps (e)) << (4 * j);
        }
        for (; hit; hit &= hit - 1) {
            uint32_t k = gc_select_key (v [i + (size_t) __builtin_ctz (hit)]);
            hist [(k >> shift) & wm]++;
        }
    }
#endif
    for (; i < m; i++) {
        uint32_t k = gc_select_key (v [i]);
        if ((k & mask) == prefix)
            hist [(k >> shift) & wm]++;
    }
}

static size_t
s_half_encode (uint8_t *dst, const float *src, size_t n, float scale)
{
    size_t i = 0;
#if GC_KLEVEL >= GC_KLEVEL_AVX512
    const __m512 s = _mm512_set1_ps (scale);
    const __m512 hi = _mm512_set1_ps (GC_HALF_MAX), lo = _mm512_set1_ps (-GC_HALF_MAX);
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_mul_ps (_mm512_loadu_ps (src + i), s);
        v = _mm512_min_ps (_mm512_max_ps (v, lo), hi);
        __m256i h = _mm512_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_storeu_si256 ((__m256i *) (dst + 2 * i), h);
    }
#elif GC_KLEVEL == GC_KLEVEL_AVX2
    const __m256 s = _mm256_set1_ps (scale);
    const __m256 hi = _mm256_set1_ps (GC_HALF_MAX), lo = _mm256_set1_ps (-GC_HALF_MAX);
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps (_mm256_loadu_ps (src + i), s);
        v = _mm256_min_ps (_mm256_max_ps (v, lo), hi);
        __m128i h = _mm256_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128 ((__m128i *) (dst + 2 * i), h);
    }
#else
    (void) dst, (void) src, (void) n, (void) scale;
#endif
    return i;
}

static size_t
s_half_decode (float *dst, const uint8_t *src, size_t n)
{
    size_t i = 0;
#if GC_KLEVEL >= GC_KLEVEL_AVX512
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm256_loadu_si256 ((const __m256i *) (src + 2 * i));
        _mm512_storeu_ps (dst + i, _mm512_cvtph_ps (h));
    }
#elif GC_KLEVEL == GC_KLEVEL_AVX2
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128 ((const __m128i *) (src + 2 * i));
        _mm256_storeu_ps (dst + i, _mm256_cvtph_ps (h));
    }
#else
    (void) dst, (void) src, (void) n;
#endif
    return i;
}

static size_t
s_sign_bits (uint8_t *bits, const float *x, size_t n)
{
    size_t i = 0;
#if GC_KLEVEL >= GC_KLEVEL_AVX512
    const __m512 zero = _mm512_setzero_ps ();
    for (; i + 16 <= n; i += 16) {
        __mmask16 m = _mm512_cmp_ps_mask (_mm512_loadu_ps (x + i), zero, _CMP_LT_OQ);
        bits [i / 8] = (uint8_t) m;
        bits [i / 8 + 1] = (uint8_t) (m >> 8);
    }
#elif GC_KLEVEL == GC_KLEVEL_AVX2
    const __m256 zero = _mm256_setzero_ps ();
    for (; i + 8 <= n; i += 8)
        bits [i / 8] = (uint8_t) _mm256_movemask_ps (_mm256_cmp_ps (_mm256_loadu_ps (x + i), zero, _CMP_LT_OQ));
#else
    (void) bits, (void) x, (void) n;
#endif
    return i;
}

static size_t
s_sign_add (float *into, const uint8_t *bits, size_t i0, size_t i1, float scale)
{
    size_t i = i0;
#if GC_KLEVEL >= GC_KLEVEL_AVX512
    for (; i < i1 && (i & 15); i++)
        into [i] += (bits [i >> 3] >> (i & 7)) & 1 ? -scale : scale;
    const __m512 pos = _mm512_set1_ps (scale), neg = _mm512_set1_ps (-scale);
    for (; i + 16 <= i1; i += 16) {
        __mmask16 m = (__mmask16) (bits [i / 8] | (unsigned) bits [i / 8 + 1] << 8);
        __m512 v = _mm512_mask_blend_ps (m, pos, neg);
        _mm512_storeu_ps (into + i, _mm512_add_ps (_mm512_loadu_ps (into + i), v));
    }
#elif GC_KLEVEL == GC_KLEVEL_AVX2
    for (; i < i1 && (i & 7); i++)
        into [i] += (bits [i >> 3] >> (i & 7)) & 1 ? -scale : scale;
    const __m256 pos = _mm256_set1_ps (scale), neg = _mm256_set1_ps (-scale);
    const __m256i sel = _mm256_setr_epi32 (1, 2, 4, 8, 16, 32, 64, 128);
    for (; i + 8 <= i1; i += 8) {
        __m256i b = _mm256_and_si256 (_mm256_set1_epi32 (bits [i / 8]), sel);
        __m256 m = _mm256_castsi256_ps (_mm256_cmpeq_epi32 (b, sel));
        __m256 v = _mm256_blendv_ps (pos, neg, m);
        _mm256_storeu_ps (into + i, _mm256_add_ps (_mm256_loadu_ps (into + i), v));
    }
#else
    (void) into, (void) bits, (void) i1, (void) scale;
#endif
    return i;
}

const gc_compress_kern_t GC_KSYM (gc_compress_kern) = {
    .collect = s_collect,
    .hist_prefix = s_hist_prefix,
    .half_encode = s_half_encode,
    .half_decode = s_half_decode,
    .sign_bits = s_sign_bits,
    .sign_add = s_sign_add
};
