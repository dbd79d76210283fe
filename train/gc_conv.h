/*  gc_conv — the kernels of gc_cnn around sgemm: im2col / col2im lowering,
    pooling and group normalisation, NCHW, over chunks of samples.

    Lowering a chunk of m samples gives one matrix col of (c k k) rows and
    m P columns (P = output pixels per sample), so a convolution is one sgemm
    W (out x c k k) * col per chunk rather than one small product per sample.
    Backward functions either overwrite their input gradient or add to it
    (`add`), which is how a tensor read twice (the residual join's input)
    gathers both gradients without an extra pass. */
#ifndef GC_CONV_H
#define GC_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_cnn_net.h"

/*  col (c k k x m P) from m samples of x (each c x h x w). */
void gc_conv_im2col (const gc_cnn_op_t *op, const float *x, size_t m, float *col);
/*  dx (m samples) += col2im (dcol). */
void gc_conv_col2im (const gc_cnn_op_t *op, const float *dcol, size_t m, float *dx);

/*  Max pooling keeps the position of each maximum (within its plane) in
    arg, which backward routes the gradient through. */
void gc_conv_maxpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch,
                              float *y, int32_t *arg);
void gc_conv_maxpool_backward (const gc_cnn_op_t *op, const float *dy, const int32_t *arg,
                               size_t batch, float *dx, bool add);
/*  Average pooling; GC_CNN_GAP is the window of the whole plane. */
void gc_conv_avgpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, float *y);
void gc_conv_avgpool_backward (const gc_cnn_op_t *op, const float *dy, size_t batch,
                               float *dx, bool add);

/*  GroupNorm: stats gets mean and 1/std per sample and group (2 floats). */
void gc_conv_gn_forward (const gc_cnn_op_t *op, const float *x, size_t batch,
                         const float *gamma, const float *beta, float *y, float *stats);
/*  dgamma and dbeta are added to; dx is written or added to (dx NULL: skipped). */
void gc_conv_gn_backward (const gc_cnn_op_t *op, const float *x, const float *dy,
                          const float *stats, size_t batch, const float *gamma,
                          float *dgamma, float *dbeta, float *dx, bool add);

#endif
