/*  gc_mlp — a multilayer perceptron over a flat parameter buffer.

    The spec "784-256-128-10" means input 784, hidden layers 256 and 128 with
    ReLU, 10 classes with softmax cross-entropy. Parameters are not owned by
    the model: every call takes a `params` buffer laid out as gc_mlp_layout
    says (per layer: fcN.weight as out x in row-major, then fcN.bias), so the
    same model evaluates a peer's own weights, a replica or an average.

    The model owns only workspace (activations for the largest batch seen), so
    one gc_mlp_t belongs to one thread. Matrix products use OpenBLAS sgemm.

    Everything outside train/ uses it through the model seam (gc_model.h,
    kind "mlp"); this header is for the MLP's own tests. */
#ifndef GC_MLP_H
#define GC_MLP_H

#include <stddef.h>
#include <stdint.h>

#include "gc_dataset.h"
#include "gc_err.h"
#include "gc_layout.h"

#define GC_MLP_DEFAULT_SPEC "784-256-128-10"
#define GC_MLP_MAX_LAYERS   16

typedef struct gc_mlp_t gc_mlp_t;

/*  Parse spec; -1 with err naming what is wrong. */
gc_mlp_t          *gc_mlp_new (const char *spec, gc_err_t *err);
void               gc_mlp_destroy (gc_mlp_t **self_p);
const gc_layout_t *gc_mlp_layout (const gc_mlp_t *self);
size_t             gc_mlp_n_params (const gc_mlp_t *self);
size_t             gc_mlp_input_dim (const gc_mlp_t *self);
int                gc_mlp_n_classes (const gc_mlp_t *self);
/*  Canonical spec ("784-256-128-10"). */
const char        *gc_mlp_spec (const gc_mlp_t *self);
/*  Weights and biases used per sample by one forward pass (the FLOP basis). */
size_t             gc_mlp_n_weights (const gc_mlp_t *self);
size_t             gc_mlp_first_layer_weights (const gc_mlp_t *self);

/*  He-uniform weights, zero biases, from seed. */
void   gc_mlp_init_params (const gc_mlp_t *self, float *params, uint64_t seed);

/*  Mean softmax cross-entropy over the batch, and its gradient:
        grad = beta * grad + alpha * dL/dparams
    (beta = 0 overwrites; beta = 1 accumulates, which lets sgemm add straight
    into a momentum buffer without an extra pass; grad = NULL computes the
    loss only). *correct (if not NULL) gets the number of samples whose
    argmax is right. Returns the mean loss. */
double gc_mlp_loss_grad (gc_mlp_t *self, const float *params, const float *x,
                         const uint8_t *y, size_t batch, float *grad, float alpha,
                         float beta, size_t *correct);
/*  The same against labels smoothed by eps (gc_xent.h; 0: gc_mlp_loss_grad). */
double gc_mlp_loss_grad_smoothed (gc_mlp_t *self, const float *params, const float *x,
                                  const uint8_t *y, size_t batch, float eps, float *grad,
                                  float alpha, float beta, size_t *correct);

/*  Logits (batch x classes) for x; the pointer is valid until the next call. */
const float *gc_mlp_forward (gc_mlp_t *self, const float *params, const float *x, size_t batch);

#endif
