/*  gc_wino — Winograd's minimal filtering F(2x2, 3x3) and F(2x2, 5x5)
    (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks",
    2016) for the 3x3 and 5x5 "same" stride-1 convolutions of gc_cnn. The
    3x3 form is described here; the 5x5 one is the same with 6x6 tiles
    (36 products for a 2x2 block instead of 100, 2.8 times fewer; section
    "F(2x2, 5x5)" below). Each 2x2 block of outputs
    (a tile) comes from a 4x4 block of inputs through 16 products instead of
    36, so a convolution becomes 16 sgemms of (out x in) by (in x tiles),
    2.25 times fewer multiply-adds than the im2col lowering's one sgemm of
    (out x in 9) by (in 9 x pixels), and the transformed input is 4 times
    the input where the lowering is 9 times.

    With U = G g G^T (a kernel, 4x4), V = B^T d B (an input tile, 4x4) and
    Y = A^T (U . V) A, summed over input channels:
      forward           M[xi] = U[xi] V[xi]         (out x in) (in x tiles)
      input gradient    the same, of dY with the kernels flipped and
                        transposed (the transposed convolution is again a
                        3x3 stride-1 padding-1 convolution)
      kernel gradient   dU[xi] = Z[xi] V[xi]^T, Z = A dY_tile A^T,
                        then dg = G^T dU G
    Every matrix of F(2x2, 3x3) holds only 0, +-1 and +-1/2, so the
    transforms are sums of floats and exact halvings: the same bits at every
    kernel level (gc_wino.c is compiled once per level like gc_conv.c).

    F(2x2, 5x5): the same with 6x6 tiles (gc_wino_side) whose input block
    starts two rows and columns up; its B^T, G and A^T are in gc_wino.c and
    docs/ALGORITHMS.md (entries 2, 4, 5 and divisions by 4, 6, 12, 24: not
    exact, but the same operations in the same order at every level).

    Layouts: tensors CNHW as in gc_conv.h; U and dU are gc_wino_planes
    planes of (out x in) (16 or 36); V, M and Z as many planes of (rows x T) with row stride
    gc_wino_ld (T), gc_wino_plane (rows, T) apart, T the tiles of a chunk of m samples, sample-major, then
    tile row, then tile column. The transforms run along a row of tiles
    GC_WINO_LANES at a time, the last group spilling into the next row's
    tiles (written after it) or the row's slack. */
#ifndef GC_WINO_H
#define GC_WINO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_cnn_net.h"

/*  Channels a convolution needs on both sides: its 16 sgemms multiply by
    (out x in) matrices, whose inner dimension is the input channels. 16
    ran as 8 on lenet-w and resnet8-gn, 32 slower (a throwaway driver
    timing their training step); below 8 was not measured, and no preset
    has such a layer but the stems from one channel. */
#define GC_WINO_MIN_CHANNELS 8

/*  Whether op is a convolution gc_wino computes: 3x3 with padding 1 or
    5x5 with padding 2, stride 1 (the output the input's size), enough
    channels both ways. */
static inline bool
gc_wino_fits (const gc_cnn_op_t *op)
{
    return op->kind == GC_CNN_CONV && (op->k == 3 || op->k == 5) && op->stride == 1
        && 2 * op->pad + 1 == op->k && op->oh == op->h && op->ow == op->w
        && op->c >= GC_WINO_MIN_CHANNELS && op->oc >= GC_WINO_MIN_CHANNELS;
}

/*  A tile's side: 2 outputs and k - 1 more inputs (4 for 3x3, 6 for 5x5). */
static inline size_t
gc_wino_side (size_t k)
{
    return k + 1;
}

/*  Planes of U, V, M and Z: a tile's entries, one sgemm each (16 or 36). */
static inline size_t
gc_wino_planes (size_t k)
{
    return gc_wino_side (k) * gc_wino_side (k);
}

/*  Tiles of one sample of op's output. */
static inline size_t
gc_wino_tiles (const gc_cnn_op_t *op)
{
    return ((op->oh + 1) / 2) * ((op->ow + 1) / 2);
}

#define GC_WINO_LANES 8

/*  Row stride of V, M and Z for T tiles: room for a last group of lanes. */
static inline size_t
gc_wino_ld (size_t T)
{
    return (T + GC_WINO_LANES + 15) / 16 * 16;
}

/*  Stride between the 16 planes of V, M or Z (rows of them, T tiles): 16
    floats more than the rows need, so that the 16 rows one tile reads or
    writes do not all fall at the same offset modulo 4 kB (64 rows of 208
    floats are 13 pages: every stream in one L1 set; a throwaway driver
    timing the transforms alone saw them run 1.3 to 2.2 times as fast with
    the offset). */
static inline size_t
gc_wino_plane (size_t rows, size_t T)
{
    return rows * gc_wino_ld (T) + 16;
}

/*  A plane's row of W columns split into its even or odd ones, for the
    transforms: a row of tiles rounded up to the lanes, and the tile after. */
static inline size_t
gc_wino_split_len (size_t W)
{
    size_t tw = (W + 1) / 2;
    return (tw + GC_WINO_LANES - 1) / GC_WINO_LANES * GC_WINO_LANES + GC_WINO_LANES;
}

/*  Floats of the scratch gc_wino_input and gc_wino_grad_tiles take: a
    plane's even and odd columns, and the plane padded. */
static inline size_t
gc_wino_scratch (const gc_cnn_op_t *op)
{
    return 4 * (2 * ((op->h + 1) / 2) + op->k - 1) * gc_wino_split_len (op->w);
}

/*  U (planes x oc x c) from the kernels w (oc x c x k x k), k 3 or 5. */
void gc_wino_kernels (const float *w, size_t oc, size_t c, size_t k, float *U);

/*  V (planes x c x T) from samples [n0, n0 + m) of x (batch samples, CNHW);
    scratch: gc_wino_scratch (op) floats. */
void gc_wino_input (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
                    float *V, float *scratch);

/*  Samples [n0, n0 + m) of y = (or += when add) A^T M A, plus bias [o]
    when bias is not NULL, then max (0, .) when relu; with a mask (a
    tensor of y's shape: a ReLU's output), each value is first kept where
    the mask's is > 0 and +0 elsewhere (y is then the ReLU's input
    gradient, A^T M A its output gradient). */
void gc_wino_output (const gc_cnn_op_t *op, const float *M, size_t batch, size_t n0, size_t m,
                     const float *bias, bool relu, bool add, const float *mask, float *y);

/*  Whether op's output, after its ReLU, can go straight into pool, a
    pooling that reads it (gc_wino_output_pool): a 2x2 max pooling of
    stride 2 (no padding: the grammar has none, so it outputs H/2 x W/2),
    on even sides, so that each tile's 2x2 block of outputs is one window. */
static inline bool
gc_wino_pools (const gc_cnn_op_t *op, const gc_cnn_op_t *pool)
{
    return op->oh % 2 == 0 && op->ow % 2 == 0 && pool->kind == GC_CNN_MAXPOOL && pool->k == 2
        && pool->stride == 2;
}

/*  Samples [n0, n0 + m) of gc_wino_output's y with the bias and the ReLU,
    max-pooled 2x2 with stride 2 (gc_wino_pools) into pooled (C x batch x
    H/2 x W/2), arg the index in its H x W plane of each window's maximum:
    what gc_conv_maxpool_forward gives on y, bit for bit (the same
    comparisons: a tie keeps the left, then the top), without y. */
void gc_wino_output_pool (const gc_cnn_op_t *op, const float *M, size_t batch, size_t n0,
                          size_t m, const float *bias, float *pooled, int32_t *arg);

/*  Z (planes x oc x T) = A dY A^T of samples [n0, n0 + m) of dy; scratch as
    for gc_wino_input. */
void gc_wino_grad_tiles (const gc_cnn_op_t *op, const float *dy, size_t batch, size_t n0,
                         size_t m, float *Z, float *scratch);

/*  dw (oc x c x k x k) = G^T dU G, plus beta dw unless beta is 0. */
void gc_wino_kernel_grad (const float *dU, size_t oc, size_t c, size_t k, float beta,
                          float *dw);

#endif
