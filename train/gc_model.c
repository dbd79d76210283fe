#include "gc_model.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  The implementations. Adding a model: its own file defining a
    gc_model_ops_t, its declaration here and one entry in s_kinds. Order
    matters only for specs without "KIND:": the first that claims one wins. */
extern const gc_model_ops_t gc_mlp_model;
extern const gc_model_ops_t gc_cnn_model;
extern const gc_model_ops_t gc_external_model;

static const gc_model_ops_t *const s_kinds [] = {
    &gc_mlp_model,
    &gc_cnn_model,
    &gc_external_model,
};
#define S_NKINDS (sizeof s_kinds / sizeof s_kinds [0])

struct gc_model_t {
    const gc_model_ops_t *ops;
    void                 *impl;
};

const gc_model_ops_t *const *
gc_model_kinds (size_t *n)
{
    *n = S_NKINDS;
    return s_kinds;
}

static void
s_known_kinds (char *out, size_t size)
{
    size_t used = 0;
    out [0] = '\0';
    for (size_t i = 0; i < S_NKINDS && used < size; i++)
        used += (size_t) snprintf (out + used, size - used, "%s%s", i ? ", " : "",
                                   s_kinds [i]->kind);
}

/*  The implementation a spec names and the arguments it gets. */
static const gc_model_ops_t *
s_resolve (const char *spec, const char **args, gc_err_t *err)
{
    const char *colon = strchr (spec, ':');
    if (colon) {
        size_t len = (size_t) (colon - spec);
        for (size_t i = 0; i < S_NKINDS; i++)
            if (strlen (s_kinds [i]->kind) == len && !memcmp (s_kinds [i]->kind, spec, len)) {
                *args = colon + 1;
                return s_kinds [i];
            }
    }
    for (size_t i = 0; i < S_NKINDS; i++)
        if (s_kinds [i]->claims && s_kinds [i]->claims (spec)) {
            *args = spec;
            return s_kinds [i];
        }
    char known [256];
    s_known_kinds (known, sizeof known);
    gc_err_set (err, GC_E_SPEC, "model spec '%s': not a model of any known kind "
                "(KIND:ARGS with KIND one of %s; an MLP also as sizes like 784-256-128-10)",
                spec, known);
    return NULL;
}

gc_model_t *
gc_model_new (const char *spec, gc_err_t *err)
{
    if (!spec || !*spec)
        spec = GC_MODEL_DEFAULT_SPEC;
    if (strlen (spec) >= GC_MODEL_SPEC_MAX) {
        gc_err_set (err, GC_E_RANGE, "model spec '%.32s...': longer than %d characters",
                    spec, GC_MODEL_SPEC_MAX - 1);
        return NULL;
    }
    const char *args = NULL;
    const gc_model_ops_t *ops = s_resolve (spec, &args, err);
    if (!ops)
        return NULL;
    gc_model_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "model %s: out of memory", spec);
        return NULL;
    }
    self->ops = ops;
    self->impl = ops->create (args, err);
    if (!self->impl) {
        free (self);
        return NULL;
    }
    return self;
}

void
gc_model_destroy (gc_model_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_model_t *self = *self_p;
    self->ops->destroy (self->impl);
    free (self);
    *self_p = NULL;
}

const gc_layout_t *gc_model_layout (const gc_model_t *self) { return self->ops->layout (self->impl); }
size_t      gc_model_n_params (const gc_model_t *self) { return gc_model_layout (self)->n_params; }
const char *gc_model_spec (const gc_model_t *self) { return self->ops->spec (self->impl); }
const char *gc_model_kind (const gc_model_t *self) { return self->ops->kind; }
gc_shape_t  gc_model_input (const gc_model_t *self) { return self->ops->input (self->impl); }
int         gc_model_n_classes (const gc_model_t *self) { return self->ops->n_classes (self->impl); }
double      gc_model_forward_flops (const gc_model_t *self) { return self->ops->forward_flops (self->impl); }
double      gc_model_train_flops (const gc_model_t *self) { return self->ops->train_flops (self->impl); }

size_t
gc_model_input_dim (const gc_model_t *self)
{
    gc_shape_t s = gc_model_input (self);
    return s.channels * s.height * s.width;
}

int
gc_model_check_data (const gc_model_t *self, const gc_dataset_t *data, const char *what,
                     gc_err_t *err)
{
    if (data->dim != gc_model_input_dim (self))
        return gc_err_set (err, GC_E_CONFIG, "model %s expects %zu features per sample, %s has %zu",
                           gc_model_spec (self), gc_model_input_dim (self), what, data->dim);
    //  a spatial model needs the data's image shape too (the same number of
    //  values as 3x32x32 could be 1x56x56); a flat one takes any shape
    gc_shape_t in = gc_model_input (self);
    if (in.height * in.width > 1 && data->channels
    &&  (data->channels != in.channels || data->height != in.height || data->width != in.width))
        return gc_err_set (err, GC_E_CONFIG, "model %s expects samples of %zux%zux%zu, %s has %zux%zux%zu",
                           gc_model_spec (self), in.channels, in.height, in.width, what,
                           data->channels, data->height, data->width);
    if (data->n_classes > gc_model_n_classes (self))
        return gc_err_set (err, GC_E_CONFIG, "model %s has %d classes, %s has %d",
                           gc_model_spec (self), gc_model_n_classes (self), what, data->n_classes);
    return 0;
}

void
gc_model_init_params (const gc_model_t *self, float *params, uint64_t seed)
{
    self->ops->init (self->impl, params, seed);
}

bool
gc_model_trains (const gc_model_t *self)
{
    return self->ops->loss_grad != NULL;
}

double
gc_model_loss_grad (gc_model_t *self, const float *params, const float *x, const uint8_t *y,
                    size_t batch, float *grad, float alpha, float beta, size_t *correct)
{
    return gc_model_loss_grad_smoothed (self, params, x, y, batch, 0.0f, grad, alpha, beta, correct);
}

double
gc_model_loss_grad_smoothed (gc_model_t *self, const float *params, const float *x,
                             const uint8_t *y, size_t batch, float eps, float *grad,
                             float alpha, float beta, size_t *correct)
{
    assert (params && x && y && gc_model_trains (self));
    assert (eps >= 0.0f && eps < 1.0f);
    return self->ops->loss_grad (self->impl, params, x, y, batch, eps, grad, alpha, beta, correct);
}

const float *
gc_model_forward (gc_model_t *self, const float *params, const float *x, size_t batch)
{
    return self->ops->forward (self->impl, params, x, batch);
}

int
gc_model_evaluate (gc_model_t *self, const float *params, const gc_dataset_t *data,
                   double *accuracy, double *loss, gc_err_t *err)
{
    if (gc_model_n_classes (self) <= 0)
        return gc_err_set (err, GC_E_CONFIG, "model %s has no function to evaluate "
                           "(its embedder evaluates it)", gc_model_spec (self));
    if (gc_model_check_data (self, data, "the evaluation data", err))
        return -1;
    size_t classes = (size_t) gc_model_n_classes (self);
    size_t right = 0;
    double total = 0;
    const size_t chunk = 500;
    for (size_t start = 0; start < data->n; start += chunk) {
        size_t m = data->n - start < chunk ? data->n - start : chunk;
        const float *logits = gc_model_forward (self, params, data->x + start * data->dim, m);
        for (size_t r = 0; r < m; r++) {
            const float *z = logits + r * classes;
            size_t arg = 0;
            for (size_t c = 1; c < classes; c++)
                if (z [c] > z [arg])
                    arg = c;
            uint8_t label = data->y [start + r];
            right += arg == label;
            //  log-sum-exp around the largest logit, in double
            double sum = 0;
            for (size_t c = 0; c < classes; c++)
                sum += exp ((double) z [c] - z [arg]);
            total += log (sum) - ((double) z [label] - z [arg]);
        }
    }
    if (accuracy)
        *accuracy = data->n ? (double) right / (double) data->n : 0;
    if (loss)
        *loss = data->n ? total / (double) data->n : 0;
    return 0;
}
