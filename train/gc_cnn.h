/*  gc_cnn — a convolutional network over a flat parameter buffer.

    The spec (gc_cnn_spec.c, docs/CONFIG.md "Model specs") is a preset name
    ("lenet", "lenet-w", "lenet-w-res", "resnet8-gn", "resnet20-gn") or a list of layers
    ("1x28x28/c16k5,relu,mp2,f10"); the canonical spec spells out every
    layer. Like the MLP the model owns only workspace, grown to the largest
    batch seen and reused after that (no allocation per step), so one
    gc_cnn_t belongs to one thread.

    Everything outside train/ uses it through the model seam (gc_model.h,
    kind "cnn"); this header is for its tests and gcbench. */
#ifndef GC_CNN_H
#define GC_CNN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_cnn_net.h"
#include "gc_err.h"
#include "gc_layout.h"

typedef struct gc_cnn_t gc_cnn_t;

gc_cnn_t          *gc_cnn_new (const char *spec, gc_err_t *err);
void               gc_cnn_destroy (gc_cnn_t **self_p);
const gc_cnn_net_t *gc_cnn_net (const gc_cnn_t *self);
const gc_layout_t *gc_cnn_layout (const gc_cnn_t *self);
const char        *gc_cnn_spec (const gc_cnn_t *self);
double             gc_cnn_forward_flops (const gc_cnn_t *self);
double             gc_cnn_train_flops (const gc_cnn_t *self);

/*  He-uniform kernels and linear weights, zero biases, GroupNorm scale 1 and
    shift 0, from seed. */
void   gc_cnn_init_params (const gc_cnn_t *self, float *params, uint64_t seed);

/*  As gc_model_loss_grad. */
double gc_cnn_loss_grad (gc_cnn_t *self, const float *params, const float *x,
                         const uint8_t *y, size_t batch, float *grad, float alpha,
                         float beta, size_t *correct);
/*  As gc_model_loss_grad_smoothed (label smoothing eps; 0: gc_cnn_loss_grad). */
double gc_cnn_loss_grad_smoothed (gc_cnn_t *self, const float *params, const float *x,
                                  const uint8_t *y, size_t batch, float eps, float *grad,
                                  float alpha, float beta, size_t *correct);
const float *gc_cnn_forward (gc_cnn_t *self, const float *params, const float *x, size_t batch);

/*  Dropout layers (dropP) drop in a call that computes a gradient and are
    the identity in forward and loss-only calls. With fix on, every call
    drops, with the same masks each time (for tests: a finite-difference
    check needs the loss of one fixed network). */
void   gc_cnn_dropout_fix (gc_cnn_t *self, bool on);

/*  Time spent inside sgemm since profiling was switched on (gcbench's
    "sgemm fraction"); off by default, as timing every call costs. */
void   gc_cnn_profile (gc_cnn_t *self, bool on);
/*  Whether the 3x3 stride-1 convolutions with 8 channels or more each way
    run as Winograd's F(2x2, 3x3) (gc_wino.h; the default) or through the
    im2col lowering, as a model new with GC_CONV=im2col in the environment
    does. The two agree to rounding, not to the bit. */
void   gc_cnn_set_winograd (gc_cnn_t *self, bool on);
/*  GC_CONV's value (NULL: unset): winograd (the default) or im2col, into
    *winograd; anything else is -1 with err naming it (*winograd true). */
int    gc_cnn_lowering_parse (const char *value, bool *winograd, gc_err_t *err);
double gc_cnn_sgemm_seconds (const gc_cnn_t *self);

#endif
