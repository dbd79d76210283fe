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
    static const gc_compress_kern_t *s_chosen;
    if (!gc_compress_simd)
        return &gc_compress_kern_generic;
    const gc_compress_kern_t *k = __atomic_load_n (&s_chosen, __ATOMIC_ACQUIRE);
    if (!k) {
        gc_cpu_level_t level = gc_cpu_level ();
        k = s_levels [level] ? s_levels [level] : &gc_compress_kern_generic;
        __atomic_store_n (&s_chosen, k, __ATOMIC_RELEASE);
    }
    return k;
}
