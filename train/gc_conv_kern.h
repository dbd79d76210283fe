/*  gc_conv_kern — the loops of gc_conv.h and gc_wino.h at one kernel level:
    gc_conv.c and gc_wino.c are compiled once per level (generic, avx2,
    avx512) into one table each, and gc_conv_kern.c calls the table of the
    level gc_cpu_level names. */
#ifndef GC_CONV_KERN_H
#define GC_CONV_KERN_H

#include "gc_conv.h"
#include "gc_wino.h"

typedef struct {
    void   (*taps) (const gc_cnn_op_t *op, float *keep, int32_t *at);
    void   (*im2col) (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0,
                      size_t m, float *col, const float *keep, const int32_t *at);
    void   (*col2im) (const gc_cnn_op_t *op, float *dcol, size_t batch, size_t n0, size_t m,
                      float *dx, bool add, const float *keep, const int32_t *at);
    void   (*maxpool_forward) (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0,
                               size_t m, float *y, int32_t *arg);
    void   (*maxpool_backward) (const gc_cnn_op_t *op, const float *dy, const int32_t *arg,
                                const float *y, size_t batch, size_t n0, size_t m, float *dx,
                                bool add);
    void   (*avgpool_forward) (const gc_cnn_op_t *op, const float *x, size_t batch, float *y);
    void   (*avgpool_backward) (const gc_cnn_op_t *op, const float *dy, size_t batch,
                                float *dx, bool add);
    double (*sum) (const float *x, size_t n);
    void   (*bias) (float *y, size_t n, float b, int mode);
    void   (*gn_forward) (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0,
                          size_t m, const float *gamma, const float *beta, bool relu, float *y,
                          float *stats);
    void   (*gn_backward) (const gc_cnn_op_t *op, const float *x, const float *dy,
                           const float *stats, size_t batch, size_t n0, size_t m,
                           const float *gamma,
                           float *dgamma, float *dbeta, float *dx, bool add, float *scratch);
    size_t (*gn_scratch) (const gc_cnn_op_t *op);
} gc_conv_kern_t;

typedef struct {
    void   (*input) (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
                     float *V, float *scratch);
    void   (*output) (const gc_cnn_op_t *op, const float *M, size_t batch, size_t n0, size_t m,
                      const float *bias, bool relu, bool add, const float *mask, float *y);
    void   (*output_pool) (const gc_cnn_op_t *op, const float *M, size_t batch, size_t n0,
                           size_t m, const float *bias, float *pooled, int32_t *arg);
    void   (*grad_tiles) (const gc_cnn_op_t *op, const float *dy, size_t batch, size_t n0,
                          size_t m, float *Z, float *scratch);
    void   (*kernels) (const float *w, size_t oc, size_t c, size_t k, float *U);
    void   (*kernel_grad) (const float *dU, size_t oc, size_t c, size_t k, float beta,
                           float *dw);
} gc_wino_kern_t;

/*  Whether gc_conv_set_prefetch left prefetching on (gc_conv_kern.c). */
bool gc_conv_prefetch_on (void);

/*  Prefetch the `bytes` at p (for writing when `write`), unless turned off. */
static inline void
gc_conv_prefetch (const void *p, size_t bytes, bool write)
{
    if (!gc_conv_prefetch_on ())
        return;
    for (size_t b = 0; b < bytes; b += 64)
        if (write)
            __builtin_prefetch ((const char *) p + b, 1, 3);
        else
            __builtin_prefetch ((const char *) p + b, 0, 3);
}

/*  The plane after channel c, sample n in the loops' order (channel by
    channel, samples n0 .. n0 + m - 1 in each): its index c' stride + n' in
    *q, stride the planes from one channel to the next (batch; GroupNorm
    steps by groups, cg batch); false after the last of C. */
static inline bool
gc_conv_next_plane (size_t c, size_t n, size_t n0, size_t m, size_t stride, size_t C, size_t *q)
{
    if (++n == n0 + m) {
        n = n0;
        if (++c == C)
            return false;
    }
    *q = c * stride + n;
    return true;
}

/*  gc_conv_prefetch of the plane of hw floats after (c, n) (as above, batch
    planes per channel) in the tensor x. */
static inline void
gc_conv_prefetch_next (const float *x, size_t hw, size_t c, size_t n, size_t n0, size_t m,
                       size_t batch, size_t C, bool write)
{
    size_t q;
    if (gc_conv_next_plane (c, n, n0, m, batch, C, &q))
        gc_conv_prefetch (x + q * hw, hw * sizeof (float), write);
}

extern const gc_conv_kern_t gc_conv_kern_generic;
extern const gc_wino_kern_t gc_wino_kern_generic;
#if GC_X86_LEVELS
extern const gc_conv_kern_t gc_conv_kern_avx2;
extern const gc_conv_kern_t gc_conv_kern_avx512;
extern const gc_wino_kern_t gc_wino_kern_avx2;
extern const gc_wino_kern_t gc_wino_kern_avx512;
#endif

#endif
