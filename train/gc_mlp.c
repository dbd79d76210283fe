#include "gc_mlp.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_model.h"
#include "gc_parse.h"
#include "gc_rng.h"
#include "gc_xent.h"

struct gc_mlp_t {
    int          n_layers;                      /* weight layers */
    size_t       dims [GC_MLP_MAX_LAYERS + 1];  /* dims[0] = input, dims[L] = classes */
    size_t       max_dim;
    gc_layout_t  layout;
    char         spec [128];
    size_t       capacity;                      /* batch the workspace holds */
    float       *act [GC_MLP_MAX_LAYERS + 1];   /* act[l]: batch x dims[l], l >= 1 */
    float       *delta [2];                     /* ping-pong batch x max_dim */
};

static int
s_parse_spec (gc_mlp_t *self, const char *spec, gc_err_t *err)
{
    gc_spec_t parts;
    if (gc_spec_split (&parts, spec, '-', "model spec", err))
        return -1;
    if (parts.n < 2 || parts.n > GC_MLP_MAX_LAYERS + 1)
        return gc_err_set (err, GC_E_SPEC, "model spec '%s': need 2 to %d sizes separated by '-'",
                           spec, GC_MLP_MAX_LAYERS + 1);
    for (int i = 0; i < parts.n; i++) {
        long v;
        char what [64];
        snprintf (what, sizeof what, "model spec '%s' size %d", spec, i + 1);
        if (gc_parse_long (parts.tok [i], 1, 1 << 16, &v, what, err))
            return -1;
        self->dims [i] = (size_t) v;
    }
    if (self->dims [parts.n - 1] < 2 || self->dims [parts.n - 1] > 256)
        return gc_err_set (err, GC_E_SPEC, "model spec '%s': the last size (classes) must be in [2, 256]", spec);
    self->n_layers = parts.n - 1;
    return 0;
}

gc_mlp_t *
gc_mlp_new (const char *spec, gc_err_t *err)
{
    gc_mlp_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "model: out of memory");
        return NULL;
    }
    if (s_parse_spec (self, spec ? spec : GC_MLP_DEFAULT_SPEC, err)) {
        free (self);
        return NULL;
    }
    gc_layout_init (&self->layout);
    for (int l = 0; l < self->n_layers; l++) {
        char name [GC_LAYER_NAME_MAX];
        snprintf (name, sizeof name, "fc%d.weight", l + 1);
        if (gc_layout_add_matrix (&self->layout, name, (uint32_t) self->dims [l + 1],
                                  (uint32_t) self->dims [l], err)) {
            free (self);
            return NULL;
        }
        snprintf (name, sizeof name, "fc%d.bias", l + 1);
        gc_layout_add_vector (&self->layout, name, (uint32_t) self->dims [l + 1], NULL);
    }
    //  canonical spec: at most 17 sizes of at most 5 digits fit in 128 bytes
    size_t used = 0;
    for (int l = 0; l <= self->n_layers; l++)
        used += (size_t) snprintf (self->spec + used, sizeof self->spec - used,
                                   l ? "-%zu" : "%zu", self->dims [l]);
    for (int l = 0; l <= self->n_layers; l++)
        if (self->dims [l] > self->max_dim)
            self->max_dim = self->dims [l];
    return self;
}

void
gc_mlp_destroy (gc_mlp_t **self_p)
{
    gc_mlp_t *self = *self_p;
    if (!self)
        return;
    for (int l = 0; l <= GC_MLP_MAX_LAYERS; l++)
        gc_mem_free (self->act [l]);
    gc_mem_free (self->delta [0]);
    gc_mem_free (self->delta [1]);
    free (self);
    *self_p = NULL;
}

const gc_layout_t *gc_mlp_layout (const gc_mlp_t *self) { return &self->layout; }
size_t gc_mlp_n_params (const gc_mlp_t *self) { return self->layout.n_params; }
size_t gc_mlp_input_dim (const gc_mlp_t *self) { return self->dims [0]; }
int gc_mlp_n_classes (const gc_mlp_t *self) { return (int) self->dims [self->n_layers]; }
const char *gc_mlp_spec (const gc_mlp_t *self) { return self->spec; }

size_t
gc_mlp_n_weights (const gc_mlp_t *self)
{
    size_t n = 0;
    for (int l = 0; l < self->n_layers; l++)
        n += self->dims [l] * self->dims [l + 1];
    return n;
}

size_t
gc_mlp_first_layer_weights (const gc_mlp_t *self)
{
    return self->dims [0] * self->dims [1];
}

void
gc_mlp_init_params (const gc_mlp_t *self, float *params, uint64_t seed)
{
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0x1417);
    for (int l = 0; l < self->n_layers; l++) {
        const gc_layer_t *w = &self->layout.layers [2 * l];
        const gc_layer_t *b = &self->layout.layers [2 * l + 1];
        float bound = sqrtf (6.0f / (float) self->dims [l]);
        for (size_t i = 0; i < w->count; i++)
            params [w->offset + i] = bound * (2.0f * gc_rng_float (&rng) - 1.0f);
        memset (params + b->offset, 0, b->count * sizeof (float));
    }
}

//  Grow the activation workspace to hold `batch` rows (amortised: only when a
//  larger batch than ever before arrives, never on the steady-state path).
static void
s_reserve (gc_mlp_t *self, size_t batch)
{
    if (batch <= self->capacity)
        return;
    for (int l = 1; l <= self->n_layers; l++) {
        gc_mem_free (self->act [l]);
        self->act [l] = gc_falloc (batch * self->dims [l]);
    }
    for (int i = 0; i < 2; i++) {
        gc_mem_free (self->delta [i]);
        self->delta [i] = gc_falloc (batch * self->max_dim);
    }
    for (int l = 1; l <= self->n_layers; l++)
        if (!self->act [l]) {
            fprintf (stderr, "gc_mlp: out of memory for a batch of %zu\n", batch);
            abort ();
        }
    if (!self->delta [0] || !self->delta [1]) {
        fprintf (stderr, "gc_mlp: out of memory for a batch of %zu\n", batch);
        abort ();
    }
    self->capacity = batch;
}

//  out (batch x dout) = relu? (in (batch x din) * W^T + b)
static void
s_dense_forward (const float *in, size_t batch, size_t din, size_t dout,
                 const float *w, const float *b, float *out, int relu)
{
    for (size_t r = 0; r < batch; r++)
        memcpy (out + r * dout, b, dout * sizeof (float));
    cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) batch, (int) dout, (int) din,
                 1.0f, in, (int) din, w, (int) din, 1.0f, out, (int) dout);
    if (relu)
        for (size_t i = 0; i < batch * dout; i++)
            out [i] = out [i] > 0.0f ? out [i] : 0.0f;
}

const float *
gc_mlp_forward (gc_mlp_t *self, const float *params, const float *x, size_t batch)
{
    s_reserve (self, batch);
    const float *in = x;
    for (int l = 0; l < self->n_layers; l++) {
        const gc_layer_t *w = &self->layout.layers [2 * l];
        const gc_layer_t *b = &self->layout.layers [2 * l + 1];
        s_dense_forward (in, batch, self->dims [l], self->dims [l + 1],
                         params + w->offset, params + b->offset, self->act [l + 1],
                         l + 1 < self->n_layers);
        in = self->act [l + 1];
    }
    return in;
}

//  db = beta db + the column sums of dz (batch x dout), rows in order; the
//  first row's addition starts from beta db (0 + dz when beta is 0, so a
//  -0 sum stays +0 as it did after clearing db).
static inline float
s_bias_start (float db, float beta)
{
    return beta == 0.0f ? 0.0f : beta == 1.0f ? db : db * beta;
}

static void
s_bias_grad (float *restrict db, const float *restrict dz, size_t batch, size_t dout, float beta)
{
    for (size_t j = 0; j < dout; j++)
        db [j] = s_bias_start (db [j], beta) + dz [j];
    for (size_t r = 1; r < batch; r++)
        for (size_t j = 0; j < dout; j++)
            db [j] += dz [r * dout + j];
}

//  The ReLU's backward and the next layer's bias gradient in one pass over
//  the delta: dz = a > 0 ? dz : 0, then db as s_bias_grad sums it.
static void
s_relu_back_bias (float *restrict dz, const float *restrict a, size_t batch, size_t n,
                  float *restrict db, float beta)
{
    for (size_t j = 0; j < n; j++) {
        float v = a [j] > 0.0f ? dz [j] : 0.0f;
        dz [j] = v;
        db [j] = s_bias_start (db [j], beta) + v;
    }
    for (size_t r = 1; r < batch; r++) {
        float *restrict z = dz + r * n;
        const float *restrict ar = a + r * n;
        for (size_t j = 0; j < n; j++) {
            float v = ar [j] > 0.0f ? z [j] : 0.0f;
            z [j] = v;
            db [j] += v;
        }
    }
}

double
gc_mlp_loss_grad (gc_mlp_t *self, const float *params, const float *x,
                  const uint8_t *y, size_t batch, float *grad, float alpha, float beta,
                  size_t *correct)
{
    return gc_mlp_loss_grad_smoothed (self, params, x, y, batch, 0.0f, grad, alpha, beta, correct);
}

double
gc_mlp_loss_grad_smoothed (gc_mlp_t *self, const float *params, const float *x,
                           const uint8_t *y, size_t batch, float eps, float *grad, float alpha,
                           float beta, size_t *correct)
{
    int L = self->n_layers;
    gc_mlp_forward (self, params, x, batch);
    //  The logits buffer becomes the output delta.
    double loss = gc_softmax_xent (self->act [L], y, batch, self->dims [L], eps, alpha, correct);
    if (!grad)
        return loss / (double) batch;
    float *dz = self->act [L];
    int ping = 0;
    //  Each layer's bias gradient is summed before its weight gradient (they
    //  are independent): below the top layer, in the pass that applies the
    //  ReLU to the delta.
    s_bias_grad (grad + self->layout.layers [2 * L - 1].offset, dz, batch, self->dims [L], beta);
    for (int l = L - 1; l >= 0; l--) {
        size_t din = self->dims [l], dout = self->dims [l + 1];
        const gc_layer_t *w = &self->layout.layers [2 * l];
        const float *in = l ? self->act [l] : x;
        //  dW = beta dW + dz^T in
        cblas_sgemm (CblasRowMajor, CblasTrans, CblasNoTrans, (int) dout, (int) din, (int) batch,
                     1.0f, dz, (int) dout, in, (int) din, beta, grad + w->offset, (int) din);
        if (l == 0)
            break;      /* the input needs no gradient */
        //  din-delta = dz W, masked by the ReLU of layer l
        float *dprev = self->delta [ping];
        ping ^= 1;
        cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) batch, (int) din, (int) dout,
                     1.0f, dz, (int) dout, params + w->offset, (int) din, 0.0f, dprev, (int) din);
        s_relu_back_bias (dprev, self->act [l], batch, din,
                          grad + self->layout.layers [2 * l - 1].offset, beta);
        dz = dprev;
    }
    return loss / (double) batch;
}

/*  The MLP as a model kind (gc_model.h): "mlp:784-256-128-10", or the sizes
    alone, which is how every MLP spec was written before models had kinds
    (and how HELLO messages and checkpoints name it). */

//  A spec that starts with a digit is meant as sizes: the MLP claims it, so
//  that its parser names what is wrong with it ("size 2 ...").
static bool
s_claims (const char *spec)
{
    return *spec >= '0' && *spec <= '9';
}

static void *s_create (const char *args, gc_err_t *err) { return gc_mlp_new (args, err); }
static void  s_destroy (void *impl) { gc_mlp_t *self = impl; gc_mlp_destroy (&self); }
static const gc_layout_t *s_layout (const void *impl) { return gc_mlp_layout (impl); }
static const char *s_spec (const void *impl) { return gc_mlp_spec (impl); }
static int   s_n_classes (const void *impl) { return gc_mlp_n_classes (impl); }

static gc_shape_t
s_input (const void *impl)
{
    return (gc_shape_t) { .channels = gc_mlp_input_dim (impl), .height = 1, .width = 1 };
}

static double
s_forward_flops (const void *impl)
{
    return 2.0 * (double) gc_mlp_n_weights (impl);
}

//  forward 2W, weight gradients 2W, input gradients 2W except the first layer's
static double
s_train_flops (const void *impl)
{
    return 6.0 * (double) gc_mlp_n_weights (impl) - 2.0 * (double) gc_mlp_first_layer_weights (impl);
}

static void
s_init (const void *impl, float *params, uint64_t seed)
{
    gc_mlp_init_params (impl, params, seed);
}

static double
s_loss_grad (void *impl, const float *params, const float *x, const uint8_t *y, size_t batch,
             float eps, float *grad, float alpha, float beta, size_t *correct)
{
    return gc_mlp_loss_grad_smoothed (impl, params, x, y, batch, eps, grad, alpha, beta, correct);
}

static const float *
s_forward (void *impl, const float *params, const float *x, size_t batch)
{
    return gc_mlp_forward (impl, params, x, batch);
}

const gc_model_ops_t gc_mlp_model = {
    .kind = "mlp",
    .help = "mlp:IN-H1-...-CLASSES: fully connected layers with ReLU between them; "
            "the sizes alone (784-256-128-10) name an MLP too",
    .example = "mlp:784-256-128-10",
    .claims = s_claims, .create = s_create, .destroy = s_destroy, .layout = s_layout,
    .spec = s_spec, .input = s_input, .n_classes = s_n_classes,
    .forward_flops = s_forward_flops, .train_flops = s_train_flops, .init = s_init,
    .loss_grad = s_loss_grad, .forward = s_forward,
};
