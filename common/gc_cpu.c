#include "gc_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined (__x86_64__) || defined (__i386__)
#   include <cpuid.h>

//  F16C from CPUID leaf 1 (ECX bit 29): clang's __builtin_cpu_supports does
//  not know it. It needs the same OS-saved YMM state as AVX2, checked there.
static int
s_has_f16c (void)
{
    unsigned a, b, c, d;
    return __get_cpuid (1, &a, &b, &c, &d) && (c & (1u << 29));
}
#endif

static const char *s_names [GC_CPU_N_LEVELS] = { "generic", "avx2", "avx512" };

const char *
gc_cpu_name (gc_cpu_level_t level)
{
    return level >= 0 && level < GC_CPU_N_LEVELS ? s_names [level] : "unknown";
}

int
gc_cpu_parse (const char *name)
{
    for (int i = 0; i < GC_CPU_N_LEVELS; i++)
        if (name && !strcmp (name, s_names [i]))
            return i;
    return -1;
}

gc_cpu_level_t
gc_cpu_detected (void)
{
#if defined (__x86_64__) || defined (__i386__)
    //  The compiler runtime's feature bits include the OS check (XGETBV): a
    //  feature whose registers the kernel does not save reads as absent.
    __builtin_cpu_init ();
    if (__builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512bw")
     && __builtin_cpu_supports ("avx512dq") && __builtin_cpu_supports ("avx512vl")
     && __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma") && s_has_f16c ())
        return GC_CPU_AVX512;
    if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma")
     && s_has_f16c ())
        return GC_CPU_AVX2;
#endif
    return GC_CPU_GENERIC;
}

static gc_cpu_level_t
s_resolve (void)
{
    gc_cpu_level_t have = gc_cpu_detected ();
    const char *want = getenv ("GC_CPU");
    if (!want || !*want)
        return have;
    int level = gc_cpu_parse (want);
    if (level < 0) {
        fprintf (stderr, "gc_cpu: GC_CPU=%s is not a level (generic, avx2, avx512): using %s\n",
                 want, gc_cpu_name (have));
        return have;
    }
    if ((gc_cpu_level_t) level > have) {
        fprintf (stderr, "gc_cpu: GC_CPU=%s but this CPU supports at most %s: using %s\n",
                 want, gc_cpu_name (have), gc_cpu_name (have));
        return have;
    }
    return (gc_cpu_level_t) level;
}

//  -1 until resolved; resolving twice (two threads at once) gives the
//  same answer, so the race is harmless (at worst one more warning).
static int s_level = -1;

int
gc_cpu_set_level (gc_cpu_level_t level)
{
    if (level < 0 || level >= GC_CPU_N_LEVELS || level > gc_cpu_detected ())
        return -1;
    __atomic_store_n (&s_level, (int) level, __ATOMIC_RELEASE);
    return 0;
}

gc_cpu_level_t
gc_cpu_level (void)
{
    int level = __atomic_load_n (&s_level, __ATOMIC_ACQUIRE);
    if (level < 0) {
        level = (int) s_resolve ();
        __atomic_store_n (&s_level, level, __ATOMIC_RELEASE);
    }
    return (gc_cpu_level_t) level;
}
