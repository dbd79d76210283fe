/*  gc_model — the seam between the round engine and whatever it trains.

    A model is a function of a flat parameter buffer laid out by its layer
    table (gc_layout_t): the engine, `gcnode train`, gcsim and gcbench see a
    model only through this interface, so compressors, robust rules, the
    wire, checkpoints and replicas never depend on what kind of network it
    is. Parameters are not owned by the model: every call takes a `params`
    buffer, so the same model evaluates a peer's own weights, a replica or an
    average. A model owns only workspace (sized for the largest batch seen),
    so one gc_model_t belongs to one thread.

    Implementations are the entries of the table in gc_model.c (one file
    each: gc_mlp.c is the first; gc_external.c is the one the engine does not
    train: an embedder's model, libgcnode). A spec picks one:
      "KIND:ARGS"   by kind name, e.g. "mlp:784-256-128-10";
      "ARGS"        the first implementation whose `claims` accepts it, e.g.
                    "784-256-128-10" (what HELLO messages, checkpoints and
                    existing configs carry) is claimed by the MLP.
    gc_model_spec is the canonical spec, which peers compare on the wire and
    checkpoints compare on load: two models with the same canonical spec
    have the same layout and compute the same function.

    docs/ARCHITECTURE.md, "How to add a model", walks through adding one. */
#ifndef GC_MODEL_H
#define GC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_dataset.h"
#include "gc_err.h"
#include "gc_layout.h"

#define GC_MODEL_DEFAULT_SPEC "784-256-128-10"
#define GC_MODEL_SPEC_MAX     256

/*  Shape of one input sample: channels x height x width (a flat feature
    vector of d values is d x 1 x 1). */
typedef struct {
    size_t channels, height, width;
} gc_shape_t;

/*  One implementation: an entry of the table in gc_model.c. */
typedef struct {
    const char *kind;       /* the name before ':' in a spec ("mlp") */
    const char *help;       /* one line: the spec grammar */
    const char *example;    /* a spec that builds (tests walk the table with it) */
    /*  Whether a spec without "KIND:" is this implementation's (NULL: never). */
    bool         (*claims) (const char *spec);
    /*  Build from args (the spec without "KIND:"); NULL with err naming what is wrong. */
    void        *(*create) (const char *args, gc_err_t *err);
    void         (*destroy) (void *impl);
    const gc_layout_t *(*layout) (const void *impl);
    /*  Canonical spec (at most GC_MODEL_SPEC_MAX - 1 characters). */
    const char  *(*spec) (const void *impl);
    gc_shape_t   (*input) (const void *impl);
    int          (*n_classes) (const void *impl);
    /*  Floating-point operations per sample (a multiply-add counts 2) of one
        forward pass, and of one training step (forward + backward, without
        the gradient of the input): the basis of the speed figures. */
    double       (*forward_flops) (const void *impl);
    double       (*train_flops) (const void *impl);
    /*  Initial parameters from seed: the same seed gives the same bytes. */
    void         (*init) (const void *impl, float *params, uint64_t seed);
    /*  As gc_model_loss_grad_smoothed below (eps: label smoothing, 0 = none). */
    double       (*loss_grad) (void *impl, const float *params, const float *x,
                               const uint8_t *y, size_t batch, float eps, float *grad,
                               float alpha, float beta, size_t *correct);
    /*  Logits (batch x classes); valid until the next call on impl. */
    const float *(*forward) (void *impl, const float *params, const float *x, size_t batch);
} gc_model_ops_t;

typedef struct gc_model_t gc_model_t;

/*  Build the model a spec names (NULL: GC_MODEL_DEFAULT_SPEC); NULL with err
    naming the spec and what is wrong (an unknown kind lists the known ones). */
gc_model_t        *gc_model_new (const char *spec, gc_err_t *err);
void               gc_model_destroy (gc_model_t **self_p);

const gc_layout_t *gc_model_layout (const gc_model_t *self);
size_t             gc_model_n_params (const gc_model_t *self);
const char        *gc_model_spec (const gc_model_t *self);
const char        *gc_model_kind (const gc_model_t *self);
gc_shape_t         gc_model_input (const gc_model_t *self);
/*  Features per sample: channels x height x width of the input. */
size_t             gc_model_input_dim (const gc_model_t *self);
int                gc_model_n_classes (const gc_model_t *self);
double             gc_model_forward_flops (const gc_model_t *self);
double             gc_model_train_flops (const gc_model_t *self);

/*  Whether data fits the model (features per sample, classes); -1 with err
    naming the model and the data otherwise. what names the data ("the
    training data", a file name). */
int    gc_model_check_data (const gc_model_t *self, const gc_dataset_t *data,
                            const char *what, gc_err_t *err);

void   gc_model_init_params (const gc_model_t *self, float *params, uint64_t seed);

/*  Whether the engine can train it: false for kind external, whose
    embedder trains it (loss_grad must not be called then). */
bool   gc_model_trains (const gc_model_t *self);

/*  An embedder's layer table (packed, as gc_layout_add_* builds it), made
    known to this process: spec gets "external:table:N:HASH", which
    gc_model_new then builds (kind external: the engine gossips and mixes
    it, the embedder trains it). Registering the same table again gives the
    same spec. Thread-safe. */
int    gc_model_external_register (const gc_layout_t *layout, char *spec, size_t size,
                                   gc_err_t *err);

/*  Mean softmax cross-entropy over the batch, and its gradient:
        grad = beta * grad + alpha * dL/dparams
    (beta = 0 overwrites; beta = 1 accumulates, which lets sgemm add straight
    into a momentum buffer without an extra pass; grad = NULL computes the
    loss only). *correct (if not NULL) gets the number of samples whose
    argmax is right. Returns the mean loss. */
double gc_model_loss_grad (gc_model_t *self, const float *params, const float *x,
                           const uint8_t *y, size_t batch, float *grad, float alpha,
                           float beta, size_t *correct);

/*  The same against labels smoothed by eps (0 <= eps < 1): the target is
    (1 - eps) onehot + eps / classes, the loss the mean cross-entropy against
    it (gc_xent.h). eps = 0 is gc_model_loss_grad, byte for byte. Training
    uses it (train/label_smoothing); evaluation and validation score plain
    cross-entropy. */
double gc_model_loss_grad_smoothed (gc_model_t *self, const float *params, const float *x,
                                    const uint8_t *y, size_t batch, float eps, float *grad,
                                    float alpha, float beta, size_t *correct);

/*  Logits (batch x classes) for x; the pointer is valid until the next call. */
const float *gc_model_forward (gc_model_t *self, const float *params, const float *x,
                               size_t batch);

/*  Accuracy and mean loss over a dataset (forward only, in chunks of 500).
    -1 if the data does not fit the model (gc_model_check_data). */
int    gc_model_evaluate (gc_model_t *self, const float *params, const gc_dataset_t *data,
                          double *accuracy, double *loss, gc_err_t *err);

/*  The implementations, for help texts and tests: *n gets their count. */
const gc_model_ops_t *const *gc_model_kinds (size_t *n);

#endif
