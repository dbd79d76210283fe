#include "gc_optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_parse.h"
#include "gc_vec.h"

struct gc_optim_t {
    gc_optim_config_t cfg;
    size_t            n;
    float            *velocity;     /* heavy ball: u, with v = scale * u */
    float             scale;        /* c; 1 whenever velocity is in true scale */
    float            *grad;         /* plain gradient (Nesterov, no momentum) */
};

//  Renormalise well before 1/c could overflow a float gradient sum.
#define S_MIN_SCALE 1e-4f

void
gc_optim_config_defaults (gc_optim_config_t *cfg)
{
    memset (cfg, 0, sizeof *cfg);
    cfg->lr = 0.03;
    cfg->momentum = 0.9;
    cfg->weight_decay = 5e-3;
    cfg->schedule = GC_LR_COSINE;
    cfg->step_every = 1;
    cfg->step_gamma = 0.1;
}

int
gc_optim_check_label_smoothing (double eps, const char *what, gc_err_t *err)
{
    if (!(eps >= 0.0 && eps < 1.0))
        return gc_err_set (err, GC_E_RANGE, "%s: %g is outside [0, 1) (at 1 the target no "
                           "longer depends on the label)", what, eps);
    return 0;
}

int
gc_optim_schedule_parse (const char *spec, gc_optim_config_t *cfg, gc_err_t *err)
{
    gc_spec_t s;
    if (gc_spec_split (&s, spec, ':', "lr schedule", err))
        return -1;
    if (!strcmp (s.tok [0], "constant") && s.n == 1)
        cfg->schedule = GC_LR_CONSTANT;
    else
    if (!strcmp (s.tok [0], "cosine") && s.n == 1)
        cfg->schedule = GC_LR_COSINE;
    else
    if (!strcmp (s.tok [0], "step") && s.n == 3) {
        if (gc_parse_double (s.tok [1], 1e-9, 1e12, &cfg->step_every, "lr schedule step period", err)
        ||  gc_parse_double (s.tok [2], 0.0, 1.0, &cfg->step_gamma, "lr schedule step factor", err))
            return -1;
        cfg->schedule = GC_LR_STEP;
    }
    else
        return gc_err_set (err, GC_E_SPEC, "lr schedule '%s': expected constant, cosine or step:EVERY:GAMMA", spec);
    return 0;
}

double
gc_optim_lr_at (const gc_optim_config_t *cfg, double t, double total)
{
    double lr = cfg->lr;
    if (cfg->schedule == GC_LR_STEP)
        lr *= pow (cfg->step_gamma, floor (t / cfg->step_every));
    else
    if (cfg->schedule == GC_LR_COSINE && total > 0)
        lr *= 0.5 * (1.0 + cos (M_PI * fmin (t / total, 1.0)));
    if (cfg->warmup > 0 && t < cfg->warmup)
        lr *= (t + 1e-3 * cfg->warmup) / cfg->warmup;
    return lr;
}

gc_optim_t *
gc_optim_new (const gc_optim_config_t *cfg, size_t n_params, gc_err_t *err)
{
    if (gc_optim_check_label_smoothing (cfg->label_smoothing, "label smoothing", err))
        return NULL;
    gc_optim_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "optimizer: out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    self->n = n_params;
    self->velocity = gc_falloc (n_params);
    self->scale = 1.0f;
    if (cfg->momentum == 0 || cfg->nesterov)
        self->grad = gc_falloc (n_params);
    if (!self->velocity || ((cfg->momentum == 0 || cfg->nesterov) && !self->grad)) {
        gc_optim_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "optimizer: out of memory for %zu parameters", n_params);
    }
    return self;
}

void
gc_optim_destroy (gc_optim_t **self_p)
{
    gc_optim_t *self = *self_p;
    if (!self)
        return;
    gc_mem_free (self->velocity);
    gc_mem_free (self->grad);
    free (self);
    *self_p = NULL;
}

//  The heavy-ball pass runs right after the first layer's weight-gradient
//  sgemm: u is in L2, but w was last read by the forward, a step's worth of
//  data (more than a 2 MB L2) earlier, and comes from L3. The L2 streamer
//  stops at every 4 kB page; asking for w 512 bytes ahead keeps the stream
//  going across them (docs/RESULTS.md, branch i17mlp: about 0.7 % of the step).
#define S_LINE_FLOATS 16
#define S_AHEAD_BYTES 512

static void
s_update_heavy_ball (float *restrict w, const float *restrict u, size_t n, float decay, float step)
{
    size_t i = 0;
    for (; i + S_LINE_FLOATS <= n; i += S_LINE_FLOATS) {
        //  formed as an integer: the address may lie past the end (a prefetch never faults)
        __builtin_prefetch ((const void *) ((__UINTPTR_TYPE__) (w + i) + S_AHEAD_BYTES), 1, 3);
        float *restrict wl = w + i;
        const float *restrict ul = u + i;
        for (size_t j = 0; j < S_LINE_FLOATS; j++)
            wl [j] = decay * wl [j] - step * ul [j];
    }
    for (; i < n; i++)
        w [i] = decay * w [i] - step * u [i];
}

static void
s_update_nesterov (float *restrict w, float *restrict v, const float *restrict g,
                   size_t n, float decay, float lr, float mu)
{
    for (size_t i = 0; i < n; i++) {
        float vi = mu * v [i] + g [i];
        v [i] = vi;
        w [i] = decay * w [i] - lr * (g [i] + mu * vi);
    }
}

static void
s_update_plain (float *restrict w, const float *restrict g, size_t n, float decay, float lr)
{
    for (size_t i = 0; i < n; i++)
        w [i] = decay * w [i] - lr * g [i];
}

//  u <- c u, c <- 1: the velocity buffer holds v itself again.
static void
s_normalise (gc_optim_t *self)
{
    if (self->scale != 1.0f) {
        gc_vec_scale (self->velocity, self->scale, self->n);
        self->scale = 1.0f;
    }
}

double
gc_optim_step (gc_optim_t *self, gc_model_t *model, float *params, const float *x,
               const uint8_t *y, size_t batch, double lr, size_t *correct)
{
    float mu = (float) self->cfg.momentum;
    float decay = (float) (1.0 - lr * self->cfg.weight_decay);
    float eps = (float) self->cfg.label_smoothing;
    double loss;
    if (mu != 0.0f && !self->cfg.nesterov) {
        if (self->scale * mu < S_MIN_SCALE)
            s_normalise (self);
        self->scale *= mu;
        loss = gc_model_loss_grad_smoothed (model, params, x, y, batch, eps, self->velocity,
                                            1.0f / self->scale, 1.0f, correct);
        s_update_heavy_ball (params, self->velocity, self->n, decay, (float) lr * self->scale);
    }
    else {
        loss = gc_model_loss_grad_smoothed (model, params, x, y, batch, eps, self->grad, 1.0f, 0.0f,
                                            correct);
        if (mu != 0.0f)
            s_update_nesterov (params, self->velocity, self->grad, self->n, decay, (float) lr, mu);
        else
            s_update_plain (params, self->grad, self->n, decay, (float) lr);
    }
    return loss;
}

float *
gc_optim_velocity (gc_optim_t *self)
{
    s_normalise (self);
    return self->velocity;
}

size_t gc_optim_n_params (const gc_optim_t *self) { return self->n; }
const gc_optim_config_t *gc_optim_config (const gc_optim_t *self) { return &self->cfg; }
