/*  gc_cpu — which kernel level this process runs: detected once from the
    CPU's features, or forced with the environment variable GC_CPU.

    Levels, lowest first:
      generic  plain C (the x86-64 baseline, or any other architecture)
      avx2     AVX2 + FMA + F16C
      avx512   AVX-512 F, BW, DQ and VL (with everything avx2 has)
    GC_CPU=generic|avx2|avx512 forces a level (tests, benchmarks, bug
    reports). A value that is not a level name, or a level this CPU lacks,
    is reported once on stderr and the best level the CPU has (not above
    the one asked for) is used instead: a forced run never executes an
    instruction the CPU does not have, and never silently claims a level
    it did not run (gc_cpu_level says which one it ran). */
#ifndef GC_CPU_H
#define GC_CPU_H

#include <stdbool.h>

typedef enum {
    GC_CPU_GENERIC = 0,
    GC_CPU_AVX2    = 1,
    GC_CPU_AVX512  = 2,
    GC_CPU_N_LEVELS
} gc_cpu_level_t;

/*  The level in use, resolved on the first call (thread-safe). Kernel
    dispatchers read it on every call (one load, per pass over the data). */
gc_cpu_level_t gc_cpu_level (void);
/*  Switch the level at run time (tests comparing levels in one process;
    not while other threads run kernels). -1 when the CPU lacks it. */
int            gc_cpu_set_level (gc_cpu_level_t level);
/*  The best level the CPU supports, whatever GC_CPU says. */
gc_cpu_level_t gc_cpu_detected (void);
/*  "generic", "avx2", "avx512". */
const char    *gc_cpu_name (gc_cpu_level_t level);
/*  The level of a name; -1 when it names none. */
int            gc_cpu_parse (const char *name);

#endif
