/*  gc_robust_simd — the vector layer of the robust kernels.

    S_W lanes of float (AVX-512: 16, AVX2: 8) with the few operations the
    kernels need, chosen by the unit's kernel level (gc_klevel.h); S_W is
    undefined at the generic level, and every kernel has a plain C version
    (also used under gc_robust_set_portable). */
#ifndef GC_ROBUST_SIMD_H
#define GC_ROBUST_SIMD_H

#include <stdint.h>
#include <string.h>

#include "gc_klevel.h"

static inline uint32_t
s_absbits (float x)
{
    uint32_t u;
    memcpy (&u, &x, sizeof u);
    return u & 0x7fffffffu;
}

#if GC_KLEVEL >= GC_KLEVEL_AVX512
#   define S_W 16
typedef __m512 s_vf;
typedef __m512i s_vi;
#   define s_load(p)     _mm512_load_ps (p)
#   define s_loadu(p)    _mm512_loadu_ps (p)
#   define s_store(p, v) _mm512_store_ps (p, v)
#   define s_min(a, b)   _mm512_min_ps (a, b)
#   define s_max(a, b)   _mm512_max_ps (a, b)
#   define s_vi_zero()   _mm512_setzero_si512 ()
#   define s_sub(a, b)   _mm512_sub_ps (a, b)
#   define s_add(a, b)   _mm512_add_ps (a, b)
#   define s_mul(a, b)   _mm512_mul_ps (a, b)
#   define s_zero()      _mm512_setzero_ps ()
#   define s_storeu(p, v) _mm512_storeu_ps (p, v)
#   define s_vi_load(p)  _mm512_loadu_si512 (p)
#   define s_vi_store(p, v) _mm512_storeu_si512 (p, v)
#   define s_vi_absmax(acc, v) \
        _mm512_max_epu32 (acc, _mm512_and_si512 (_mm512_castps_si512 (v), _mm512_set1_epi32 (0x7fffffff)))
#   define s_vi_reduce(acc) ((uint32_t) _mm512_reduce_max_epu32 (acc))
#   define S_WD 8
typedef __m512d s_vd;
#   define s_vd_zero()        _mm512_setzero_pd ()
#   define s_vd_set1(x)       _mm512_set1_pd (x)
#   define s_vd_load(p)       _mm512_load_pd (p)
#   define s_vd_add(a, b)     _mm512_add_pd (a, b)
#   define s_vd_sub(a, b)     _mm512_sub_pd (a, b)
#   define s_vd_mul(a, b)     _mm512_mul_pd (a, b)
#   define s_vd_store_ps(p, v) _mm256_storeu_ps (p, _mm512_cvtpd_ps (v))
#   define s_vd_sum(v)        _mm512_reduce_add_pd (v)
/*  the low and high S_WD floats of an s_vf, widened */
#   define s_vd_lo(v)         _mm512_cvtps_pd (_mm512_castps512_ps256 (v))
#   define s_vd_hi(v)         _mm512_cvtps_pd (_mm256_castsi256_ps ( \
                                  _mm512_extracti64x4_epi64 (_mm512_castps_si512 (v), 1)))
#elif GC_KLEVEL == GC_KLEVEL_AVX2
#   define S_W 8
typedef __m256 s_vf;
typedef __m256i s_vi;
#   define s_load(p)     _mm256_load_ps (p)
#   define s_loadu(p)    _mm256_loadu_ps (p)
#   define s_store(p, v) _mm256_store_ps (p, v)
#   define s_min(a, b)   _mm256_min_ps (a, b)
#   define s_max(a, b)   _mm256_max_ps (a, b)
#   define s_vi_zero()   _mm256_setzero_si256 ()
#   define s_sub(a, b)   _mm256_sub_ps (a, b)
#   define s_add(a, b)   _mm256_add_ps (a, b)
#   define s_mul(a, b)   _mm256_mul_ps (a, b)
#   define s_zero()      _mm256_setzero_ps ()
#   define s_storeu(p, v) _mm256_storeu_ps (p, v)
#   define s_vi_load(p)  _mm256_loadu_si256 ((const __m256i *) (p))
#   define s_vi_store(p, v) _mm256_storeu_si256 ((__m256i *) (p), v)
#   define s_vi_absmax(acc, v) \
        _mm256_max_epu32 (acc, _mm256_and_si256 (_mm256_castps_si256 (v), _mm256_set1_epi32 (0x7fffffff)))
#   define S_WD 4
typedef __m256d s_vd;
#   define s_vd_zero()        _mm256_setzero_pd ()
#   define s_vd_set1(x)       _mm256_set1_pd (x)
#   define s_vd_load(p)       _mm256_load_pd (p)
#   define s_vd_add(a, b)     _mm256_add_pd (a, b)
#   define s_vd_sub(a, b)     _mm256_sub_pd (a, b)
#   define s_vd_mul(a, b)     _mm256_mul_pd (a, b)
#   define s_vd_store_ps(p, v) _mm_storeu_ps (p, _mm256_cvtpd_ps (v))
#   define s_vd_lo(v)         _mm256_cvtps_pd (_mm256_castps256_ps128 (v))
#   define s_vd_hi(v)         _mm256_cvtps_pd (_mm256_extractf128_ps (v, 1))
#   define s_vi_reduce(acc)   gc_kmax_epu32 (acc)
#endif

#endif
