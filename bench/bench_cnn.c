/*  gcbench train, CNN figures: training throughput of the CNN presets at
    batch 64 on one thread, on the wall clock and on the thread's CPU clock
    (what survives a shared machine), and the fraction of the step's CPU time
    spent inside sgemm (the rest is lowering, pooling, GroupNorm and the update).

    A step is what scripts/torch_speed.py times in PyTorch on the same
    network: loss and gradient, then plain SGD (params -= lr grad). */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "gc_bench.h"
#include "gc_cnn.h"
#include "gc_mem.h"
#include "gc_rng.h"

int gc_bench_train_cnn (const gc_bench_opts_t *opts);

#define S_BATCHES 4

typedef struct {
    gc_cnn_t *cnn;
    float    *params, *grad, *x;
    uint8_t  *y;
    size_t    n, dim, batch;
    int       steps, next;
} s_ctx_t;

static void
s_steps (void *arg)
{
    s_ctx_t *c = arg;
    for (int i = 0; i < c->steps; i++) {
        int b = c->next++ % S_BATCHES;
        gc_cnn_loss_grad (c->cnn, c->params, c->x + (size_t) b * c->batch * c->dim,
                          c->y + (size_t) b * c->batch, c->batch, c->grad, 1.0f, 0.0f, NULL);
        cblas_saxpy ((int) c->n, -0.01f, c->grad, 1, c->params, 1);
    }
}

static int
s_bench (const gc_bench_opts_t *opts, const char *preset, size_t batch)
{
    s_ctx_t c = { .batch = batch, .steps = opts->quick ? 2 : 5 };
    c.cnn = gc_cnn_new (preset, NULL);
    if (!c.cnn)
        return 1;
    gc_shape_t in = gc_cnn_net (c.cnn)->input;
    c.n = gc_cnn_layout (c.cnn)->n_params;
    c.dim = in.channels * in.height * in.width;
    c.params = gc_falloc (c.n);
    c.grad = gc_falloc (c.n);
    c.x = gc_falloc (S_BATCHES * batch * c.dim);
    c.y = gc_aligned_alloc (S_BATCHES * batch);
    if (!c.params || !c.grad || !c.x || !c.y) {
        fprintf (stderr, "gcbench train: out of memory\n");
        return 1;
    }
    gc_rng_t rng;
    gc_rng_init (&rng, 1, 0xC44);
    gc_rng_fill_normal (&rng, c.x, S_BATCHES * batch * c.dim, 0.0f, 1.0f);
    for (size_t i = 0; i < S_BATCHES * batch; i++)
        c.y [i] = (uint8_t) gc_rng_below (&rng, (uint64_t) gc_cnn_net (c.cnn)->classes);
    gc_cnn_init_params (c.cnn, c.params, 1);
    s_steps (&c);       /* grows the workspace */
    double best = gc_bench_time_best (s_steps, &c, 3, opts->min_time);
    double cpu = gc_bench_cpu_best (s_steps, &c, 3, opts->min_time);
    //  a separate, profiled run: timing every sgemm is not free
    gc_cnn_profile (c.cnn, true);
    double t0 = gc_bench_cpu_best (s_steps, &c, 1, 0);
    double fraction = gc_cnn_sgemm_seconds (c.cnn) / t0;
    gc_cnn_profile (c.cnn, false);
    double samples_per_s = (double) batch * c.steps / best;
    char name [96], extra [384];
    snprintf (extra, sizeof extra, "\"model\":\"%s\",\"batch\":%zu,\"threads\":1",
              gc_cnn_spec (c.cnn), batch);
    snprintf (name, sizeof name, "train_cnn_%s_bs%zu_samples_per_s", preset, batch);
    gc_bench_emit (opts, name, samples_per_s, "samples/s", extra);
    snprintf (name, sizeof name, "train_cnn_%s_bs%zu_cpu_samples_per_s", preset, batch);
    gc_bench_emit (opts, name, (double) batch * c.steps / cpu, "samples/s", extra);
    snprintf (name, sizeof name, "train_cnn_%s_bs%zu_gflops", preset, batch);
    gc_bench_emit (opts, name, samples_per_s * gc_cnn_train_flops (c.cnn) * 1e-9, "GFLOP/s", extra);
    snprintf (name, sizeof name, "train_cnn_%s_bs%zu_sgemm_fraction", preset, batch);
    gc_bench_emit (opts, name, fraction, "ratio", extra);
    gc_mem_free (c.params);
    gc_mem_free (c.grad);
    gc_mem_free (c.x);
    gc_mem_free (c.y);
    gc_cnn_destroy (&c.cnn);
    return 0;
}

int
gc_bench_train_cnn (const gc_bench_opts_t *opts)
{
    static const char *presets [] = { "lenet", "resnet8-gn", "lenet-w", "lenet-w-res" };
    int rc = 0;
    for (size_t i = 0; i < sizeof presets / sizeof presets [0]; i++)
        rc |= s_bench (opts, presets [i], 64);
    return rc;
}
