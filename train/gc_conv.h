/*  gc_conv — the kernels of gc_cnn around sgemm: im2col / col2im lowering,
    pooling and group normalisation, over chunks of samples.

    Tensors are channel-major, CNHW (gc_cnn.c says why): the plane of sample
    n, channel c of a batch is at (c batch + n) h w. Lowering samples
    [n0, n0 + m) gives one matrix col of (c k k) rows and m P columns
    (P = output pixels per sample), so a convolution is one sgemm
    W (out x c k k) * col per chunk, whose product is already the output's
    columns [n0 P, (n0 + m) P) of every channel.
    Backward functions either overwrite their input gradient or add to it
    (`add`), which is how a tensor read twice (the residual join's input)
    gathers both gradients without an extra pass. */
#ifndef GC_CONV_H
#define GC_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_cnn_net.h"

/*  The masks (keep, k k P floats) and read tables (at, k k P) of a
    convolution's taps, for the lowering and gather of small planes: they
    depend on the geometry alone, so a pass makes them once for all its
    chunks (made per chunk, they were a quarter of lenet's lowering, whose
    16 -> 32 convolution lowers one sample at a time). */
void gc_conv_taps (const gc_cnn_op_t *op, float *keep, int32_t *at);
/*  col (c k k x m P) from samples [n0, n0 + m) of x (batch samples); keep,
    at: from gc_conv_taps for op's geometry (NULL: the run-by-run path alone). */
void gc_conv_im2col (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
                     float *col, const float *keep, const int32_t *at);
/*  dx (samples [n0, n0 + m)) = or += col2im (dcol); dcol is scratch (its
    floats that fall in the padding are zeroed on the way); keep, at: as for
    gc_conv_im2col. */
void gc_conv_col2im (const gc_cnn_op_t *op, float *dcol, size_t batch, size_t n0, size_t m,
                     float *dx, bool add, const float *keep, const int32_t *at);

/*  Max pooling of samples [n0, n0 + m) keeps the position of each maximum
    (within its plane) in arg, which backward routes the gradient through. */
void gc_conv_maxpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0,
                              size_t m, float *y, int32_t *arg);
/*  y (the pooled output) not NULL: the gradient of a ReLU's input whose
    output was pooled, the ReLU's mask taken from y (where the maximum is not
    positive the ReLU passes nothing); windows must not overlap (k <= stride),
    so that each input gets at most one term and the result is the same as
    the ReLU's own pass. Samples [n0, n0 + m). */
void gc_conv_maxpool_backward (const gc_cnn_op_t *op, const float *dy, const int32_t *arg,
                               const float *y, size_t batch, size_t n0, size_t m, float *dx,
                               bool add);
/*  Average pooling; GC_CNN_GAP is the window of the whole plane. */
void gc_conv_avgpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, float *y);
void gc_conv_avgpool_backward (const gc_cnn_op_t *op, const float *dy, size_t batch,
                               float *dx, bool add);

/*  Sum of n floats in vectorised lanes, added up in double (GroupNorm's
    statistics, a convolution's bias gradient). */
double gc_conv_sum (const float *x, size_t n);

/*  A convolution's bias over n floats of one output channel, at the
    level's vector width (gc_cnn.c itself is built for the baseline):
    GC_CONV_BIAS_FILL y = b (before a product sgemm adds to), _ADD y += b,
    _RELU y = max (0, y + b). */
enum { GC_CONV_BIAS_FILL, GC_CONV_BIAS_ADD, GC_CONV_BIAS_RELU };
void gc_conv_bias (float *y, size_t n, float b, int mode);

/*  GroupNorm of samples [n0, n0 + m) of a batch (a convolution's chunk,
    while it is in L2, or the whole batch): stats gets mean and 1/std per
    sample and group (2 floats); relu: y is max (0, GroupNorm (x)), the ReLU
    that follows done in the same pass. */
void gc_conv_gn_forward (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0,
                         size_t m, const float *gamma, const float *beta, bool relu, float *y,
                         float *stats);
/*  The backward pass of samples [n0, n0 + m): ranges that cover the batch
    in order, the first with n0 = 0, give the bits of one call for the
    whole batch (scratch carries the parameter gradients' sums between
    them). dgamma and dbeta are added to by the last range; dx is written or
    added to (dx NULL: skipped); scratch holds gc_conv_gn_scratch (op)
    floats (8-byte aligned). */
void gc_conv_gn_backward (const gc_cnn_op_t *op, const float *x, const float *dy,
                          const float *stats, size_t batch, size_t n0, size_t m,
                          const float *gamma, float *dgamma, float *dbeta, float *dx, bool add,
                          float *scratch);
size_t gc_conv_gn_scratch (const gc_cnn_op_t *op);

/*  Software prefetch of the next plane in the loops of gc_conv.h and
    gc_wino.h (on by default). The loops go plane by plane in the order
    channel, sample, and a channel's planes of consecutive samples are far
    apart in CNHW: the hardware prefetchers do not follow from one small
    plane to the next, and a layer's tensor (a few MB) comes from L3. Off
    only to measure what it gives (gcbench train's *_prefetch_speedup);
    process-wide, set it between steps. The same results either way. */
void gc_conv_set_prefetch (bool on);

#endif
