/*  gc_optim — SGD with momentum (heavy ball or Nesterov), decoupled weight
    decay and a learning-rate schedule, over a flat parameter buffer.

    Update (dampening 0; weight decay decoupled as in SGDW, Loshchilov and
    Hutter, so it does not pass through the momentum):
        v  = mu * v + g
        w  = (1 - lr * wd) * w - lr * v                (heavy ball)
        w  = (1 - lr * wd) * w - lr * (g + mu * v)     (Nesterov)

    Speed: a training step of a small MLP is a handful of sgemm calls plus
    passes over the parameters, and those passes decide how close the step
    gets to the BLAS limit. Heavy ball therefore keeps v in scaled form,
    v = c * u: then v = mu v + g becomes c <- mu c, u <- u + g / c, which
    sgemm performs itself while computing the gradient (alpha = 1/c, beta = 1,
    no separate scaling pass), and the update reads u and w and writes w: three
    passes in all. u is renormalised (u <- c u, c <- 1) before c underflows. */
#ifndef GC_OPTIM_H
#define GC_OPTIM_H

#include <stdbool.h>
#include <stddef.h>

#include "gc_err.h"
#include "gc_model.h"

typedef enum {
    GC_LR_CONSTANT = 0,
    GC_LR_STEP,         /* lr * gamma^floor(t / every) */
    GC_LR_COSINE        /* lr * (1 + cos(pi t / total)) / 2 */
} gc_lr_kind_t;

typedef struct {
    double        lr;           /* base learning rate */
    double        momentum;     /* 0 disables momentum */
    bool          nesterov;
    double        weight_decay; /* decoupled: w <- (1 - lr wd) w each step */
    gc_lr_kind_t  schedule;
    double        step_every;   /* GC_LR_STEP: period, in the caller's time unit */
    double        step_gamma;   /* GC_LR_STEP: factor */
    double        warmup;       /* linear warm-up length, same unit; 0 = none */
    double        label_smoothing;  /* eps of the training loss (gc_xent.h); 0 = none */
} gc_optim_config_t;

/*  lr 0.03, momentum 0.9, heavy ball, weight decay 5e-3 (decoupled), cosine,
    no warm-up, no label smoothing. */
void   gc_optim_config_defaults (gc_optim_config_t *cfg);
/*  Whether eps is a label smoothing (0 <= eps < 1: at 1 the target no
    longer depends on the label); -1 with err naming what (the flag or key). */
int    gc_optim_check_label_smoothing (double eps, const char *what, gc_err_t *err);
/*  "constant", "cosine", "step:EVERY:GAMMA" */
int    gc_optim_schedule_parse (const char *spec, gc_optim_config_t *cfg, gc_err_t *err);
/*  Learning rate at time t of total (epochs, rounds: any unit, the same for
    t, total, step_every and warmup). */
double gc_optim_lr_at (const gc_optim_config_t *cfg, double t, double total);

typedef struct gc_optim_t gc_optim_t;

/*  NULL with err if cfg->label_smoothing is out of range or memory is short. */
gc_optim_t *gc_optim_new (const gc_optim_config_t *cfg, size_t n_params, gc_err_t *err);
void        gc_optim_destroy (gc_optim_t **self_p);
/*  One minibatch step on params with learning rate lr; returns the mean
    training loss (against labels smoothed by cfg->label_smoothing). */
double      gc_optim_step (gc_optim_t *self, gc_model_t *model, float *params, const float *x,
                           const uint8_t *y, size_t batch, double lr, size_t *correct);
/*  The momentum buffer v (n_params floats), in true scale: checkpointed with
    the model, or written before resuming. Not a plain getter: it folds the
    pending scale into the buffer (u <- c u), which rounds, so the steps
    after it differ in the last bits from those of a run that did not call
    it. Call it only where that is meant (checkpoints, resume). */
float      *gc_optim_velocity (gc_optim_t *self);
size_t      gc_optim_n_params (const gc_optim_t *self);
const gc_optim_config_t *gc_optim_config (const gc_optim_t *self);

#endif
