/*  Which copy of the compress/ kernels runs (gc_compress_kern.h). */
#include "gc_compress_internal.h"
#include "gc_compress_kern.h"
#include "gc_cpu.h"

static const gc_compress_kern_t *s_levels [GC_CPU_N_LEVELS] = {
    [GC_CPU_GENERIC] = &gc_compress_kern_generic,
#if GC_X86_LEVELS
    [GC_CPU_AVX2]    = &gc_compress_kern_avx2,
    [GC_CPU_AVX512]  = &gc_compress_kern_avx512,
#endif
};

const gc_compress_kern_t *
gc_compress_kern (void)
{
    const gc_compress_kern_t *k = s_levels [gc_cpu_level ()];
    return gc_compress_simd && k ? k : &gc_compress_kern_generic;
}
