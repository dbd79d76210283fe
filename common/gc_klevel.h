/*  gc_klevel — naming for translation units compiled once per kernel level
    (gc_add_levels in the top CMakeLists.txt defines GC_KLEVEL and GC_KNAME).

    GC_KSYM (name) is name_generic, name_avx2 or name_avx512, so the copies
    of one source link side by side; gc_cpu_level picks one at run time.
    Code inside such a unit tests GC_KLEVEL (not __AVX2__ and the like), so
    that a -march=native build's generic level stays plain C. */
#ifndef GC_KLEVEL_H
#define GC_KLEVEL_H

#ifndef GC_KLEVEL
#   error "compile this unit through gc_add_levels (GC_KLEVEL undefined)"
#endif

#define GC_KLEVEL_GENERIC 0
#define GC_KLEVEL_AVX2    1
#define GC_KLEVEL_AVX512  2

#define GC_KPASTE_(a, b) a##_##b
#define GC_KPASTE(a, b) GC_KPASTE_ (a, b)
#define GC_KSYM(name) GC_KPASTE (name, GC_KNAME)

#if GC_KLEVEL >= GC_KLEVEL_AVX2
#   include <immintrin.h>
#   include <stdint.h>
#endif

#if GC_KLEVEL == GC_KLEVEL_AVX2
/*  The largest of the 8 unsigned lanes (AVX2 has no reduction instruction). */
static inline uint32_t
gc_kmax_epu32 (__m256i v)
{
    __m128i m = _mm_max_epu32 (_mm256_castsi256_si128 (v), _mm256_extracti128_si256 (v, 1));
    m = _mm_max_epu32 (m, _mm_shuffle_epi32 (m, 0x4e));
    m = _mm_max_epu32 (m, _mm_shuffle_epi32 (m, 0xb1));
    return (uint32_t) _mm_cvtsi128_si32 (m);
}
#endif

#endif
