/*  gc_klevel — naming for translation units compiled once per kernel level
    (gc_add_levels in the top CMakeLists.txt defines GC_KLEVEL and GC_KNAME).

    GC_KSYM (name) is name_generic, name_avx2 or name_avx512, so the copies
    of one source link side by side; gc_cpu_level picks one at run time.
    Code inside such a unit tests GC_KLEVEL (not __AVX2__ and the like), so
    that a -march=native build's generic level stays plain C. */
#ifndef GC_KLEVEL_H
#define GC_KLEVEL_H

#include <stddef.h>

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

/*  Software prefetch of a stream GC_KPREFETCH bytes ahead of p. The kernels
    read k inputs side by side (16 streams and an output for the usual
    neighbourhood), more than the hardware prefetchers of some cores follow:
    on an AMD EPYC Zen 5 the k = 16 coordinate-wise rules read at 0.16-0.30 of the
    single-stream bandwidth without it (docs/RESULTS.md). One call per 64-byte
    line of each input; the address is formed as an integer, since it may lie
    past the end of the array (a prefetch never faults). */
#define GC_KPREFETCH 512
static inline void
gc_kprefetch (const void *p)
{
    __builtin_prefetch ((const void *) ((__UINTPTR_TYPE__) p + GC_KPREFETCH), 0, 3);
}

/*  gc_kprefetch for each line of the n floats at p: before a loop over a
    block of one input, it asks for what follows the block. */
static inline void
gc_kprefetch_run (const float *p, size_t n)
{
    for (size_t c = 0; c < n; c += 16)
        gc_kprefetch (p + c);
}

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
