/*  The kernels of the level gc_cpu_level names: each entry point costs one
    table lookup and indirect call per pass over the data, none per element. */
#include "gc_cpu.h"
#include "gc_robust_internal.h"

typedef struct {
    const gc_robust_cw_kern_t *cw;
    gc_robust_distances_fn     distances;
    const gc_robust_guard_kern_t *guard;
} s_kern_t;

static const s_kern_t s_levels [GC_CPU_N_LEVELS] = {
    [GC_CPU_GENERIC] = { &gc_robust_cw_kern_generic, gc_robust_distances_generic,
                         &gc_robust_guard_kern_generic },
#if GC_X86_LEVELS
    [GC_CPU_AVX2]    = { &gc_robust_cw_kern_avx2, gc_robust_distances_avx2,
                         &gc_robust_guard_kern_avx2 },
    [GC_CPU_AVX512]  = { &gc_robust_cw_kern_avx512, gc_robust_distances_avx512,
                         &gc_robust_guard_kern_avx512 },
#endif
};

static const s_kern_t *
s_kern (void)
{
    const s_kern_t *k = &s_levels [gc_cpu_level ()];
    //  A level without kernels in this build (not x86) runs generic.
    return k->cw ? k : &s_levels [GC_CPU_GENERIC];
}

int
gc_robust_cw_window (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                     size_t lo, size_t hi, float *out)
{
    return s_kern ()->cw->window (ws, in, k, d, lo, hi, out);
}

int
gc_robust_cw_closest (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                      size_t beta, float *out)
{
    return s_kern ()->cw->closest (ws, in, k, d, beta, out);
}

int
gc_robust_mix (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
               const double *mix, size_t kv, float *const *rows)
{
    return s_kern ()->cw->mix (ws, in, k, d, mix, kv, rows);
}

int
gc_robust_mix_window (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                      const double *mix, size_t kv, size_t lo, size_t hi, float *out)
{
    return s_kern ()->cw->mix_window (ws, in, k, d, mix, kv, lo, hi, out);
}

int
gc_robust_combine (gc_robust_ws_t *ws, const float *const *in, const double *coef,
                   size_t k, size_t d, float *out)
{
    return s_kern ()->cw->combine (ws, in, coef, k, d, out);
}

int
gc_robust_step (gc_robust_ws_t *ws, const float *const *in, const double *a,
                size_t k, size_t d, const float *centre, float *out, double *d2)
{
    return s_kern ()->cw->step (ws, in, a, k, d, centre, out, d2);
}

int
gc_robust_dist_to (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                   const float *z, double *d2)
{
    return s_kern ()->cw->dist_to (ws, in, k, d, z, d2);
}

int
gc_robust_distances (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                     const float *centre, double *dist, int *passes)
{
    return s_kern ()->distances (ws, in, k, d, centre, dist, passes);
}

const gc_robust_guard_kern_t *
gc_robust_guard_kern (void)
{
    return s_kern ()->guard;
}
