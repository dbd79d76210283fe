/*  gc_conv.h at the level gc_cpu_level names: one table lookup and an
    indirect call per pass over a tensor, none per float. */
#include "gc_conv_kern.h"
#include "gc_cpu.h"

static const gc_conv_kern_t *const s_levels [GC_CPU_N_LEVELS] = {
    [GC_CPU_GENERIC] = &gc_conv_kern_generic,
#if GC_X86_LEVELS
    [GC_CPU_AVX2]    = &gc_conv_kern_avx2,
    [GC_CPU_AVX512]  = &gc_conv_kern_avx512,
#endif
};

static const gc_wino_kern_t *const s_wino_levels [GC_CPU_N_LEVELS] = {
    [GC_CPU_GENERIC] = &gc_wino_kern_generic,
#if GC_X86_LEVELS
    [GC_CPU_AVX2]    = &gc_wino_kern_avx2,
    [GC_CPU_AVX512]  = &gc_wino_kern_avx512,
#endif
};

static bool s_prefetch = true;

void
gc_conv_set_prefetch (bool on)
{
    s_prefetch = on;
}

bool
gc_conv_prefetch_on (void)
{
    return s_prefetch;
}

static const gc_conv_kern_t *
s_kern (void)
{
    const gc_conv_kern_t *k = s_levels [gc_cpu_level ()];
    //  a level without kernels in this build (not x86) runs generic
    return k ? k : &gc_conv_kern_generic;
}

static const gc_wino_kern_t *
s_wino (void)
{
    const gc_wino_kern_t *k = s_wino_levels [gc_cpu_level ()];
    return k ? k : &gc_wino_kern_generic;
}

void
gc_conv_taps (const gc_cnn_op_t *op, float *keep, int32_t *at)
{
    s_kern ()->taps (op, keep, at);
}

void
gc_conv_im2col (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
                float *col, const float *keep, const int32_t *at)
{
    s_kern ()->im2col (op, x, batch, n0, m, col, keep, at);
}

void
gc_conv_col2im (const gc_cnn_op_t *op, float *dcol, size_t batch, size_t n0, size_t m,
                float *dx, bool add, const float *keep, const int32_t *at)
{
    s_kern ()->col2im (op, dcol, batch, n0, m, dx, add, keep, at);
}

void
gc_conv_maxpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0,
                         size_t m, float *y, int32_t *arg)
{
    s_kern ()->maxpool_forward (op, x, batch, n0, m, y, arg);
}

void
gc_conv_maxpool_backward (const gc_cnn_op_t *op, const float *dy, const int32_t *arg,
                          const float *y, size_t batch, size_t n0, size_t m, float *dx, bool add)
{
    s_kern ()->maxpool_backward (op, dy, arg, y, batch, n0, m, dx, add);
}

void
gc_conv_avgpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, float *y)
{
    s_kern ()->avgpool_forward (op, x, batch, y);
}

void
gc_conv_avgpool_backward (const gc_cnn_op_t *op, const float *dy, size_t batch, float *dx,
                          bool add)
{
    s_kern ()->avgpool_backward (op, dy, batch, dx, add);
}

double
gc_conv_sum (const float *x, size_t n)
{
    return s_kern ()->sum (x, n);
}

void
gc_conv_bias (float *y, size_t n, float b, int mode)
{
    s_kern ()->bias (y, n, b, mode);
}

void
gc_conv_gn_forward (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
                    const float *gamma, const float *beta, bool relu, float *y, float *stats)
{
    s_kern ()->gn_forward (op, x, batch, n0, m, gamma, beta, relu, y, stats);
}

void
gc_conv_gn_backward (const gc_cnn_op_t *op, const float *x, const float *dy,
                     const float *stats, size_t batch, size_t n0, size_t m, const float *gamma,
                     float *dgamma, float *dbeta, float *dx, bool add, float *scratch)
{
    s_kern ()->gn_backward (op, x, dy, stats, batch, n0, m, gamma, dgamma, dbeta, dx, add,
                            scratch);
}

size_t
gc_conv_gn_scratch (const gc_cnn_op_t *op)
{
    return s_kern ()->gn_scratch (op);
}

void
gc_wino_input (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m, float *V,
               float *scratch)
{
    s_wino ()->input (op, x, batch, n0, m, V, scratch);
}

void
gc_wino_output_pool (const gc_cnn_op_t *op, const float *M, size_t batch, size_t n0, size_t m,
                     const float *bias, float *pooled, int32_t *arg)
{
    s_wino ()->output_pool (op, M, batch, n0, m, bias, pooled, arg);
}

void
gc_wino_output (const gc_cnn_op_t *op, const float *M, size_t batch, size_t n0, size_t m,
                const float *bias, bool relu, bool add, const float *mask, float *y)
{
    s_wino ()->output (op, M, batch, n0, m, bias, relu, add, mask, y);
}

void
gc_wino_grad_tiles (const gc_cnn_op_t *op, const float *dy, size_t batch, size_t n0, size_t m,
                    float *Z, float *scratch)
{
    s_wino ()->grad_tiles (op, dy, batch, n0, m, Z, scratch);
}

void
gc_wino_kernels (const float *w, size_t oc, size_t c, size_t k, float *U)
{
    s_wino ()->kernels (w, oc, c, k, U);
}

void
gc_wino_kernel_grad (const float *dU, size_t oc, size_t c, size_t k, float beta, float *dw)
{
    s_wino ()->kernel_grad (dU, oc, c, k, beta, dw);
}
