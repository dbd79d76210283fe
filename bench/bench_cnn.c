/*  gcbench train, CNN figures: training throughput of the CNN presets at
    batch 64 on one thread, on the wall clock and on the thread's CPU clock
    (what survives a shared machine), the fraction of the step's CPU time
    spent inside sgemm (the rest is lowering, pooling, GroupNorm and the
    update), and Winograd's speed-up: the step's CPU time with every
    convolution lowered (GC_CONV=im2col) over its time as it runs, measured
    alternately in the same run; and the speed-up of the loops' software
    prefetch (gc_conv_set_prefetch), the median over pairs of steps with it
    off and on, back to back.

    A step is what scripts/torch_speed.py times in PyTorch on the same
    network: loss and gradient, then plain SGD (params -= lr grad). */
#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gc_bench.h"
#include "gc_cnn.h"
#include "gc_conv.h"
#include "gc_mem.h"
#include "gc_rng.h"
#include "gc_time.h"

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

/*  The lowering's best CPU time for c's steps over Winograd's, each the
    best of its own runs and of `cpu` (Winograd's, just measured), taken
    in turns (lowering, Winograd, lowering) so that a machine that speeds up
    or slows down during the run moves both. */
static double
s_winograd_speedup (s_ctx_t *c, const gc_bench_opts_t *opts, double cpu)
{
    double lowered = 0;
    for (int turn = 0; turn < 3; turn++) {
        bool on = turn % 2 == 1;
        gc_cnn_set_winograd (c->cnn, on);
        if (turn == 0)
            s_steps (c);        /* grows the lowering's workspace */
        double t = gc_bench_cpu_best (s_steps, c, 2, opts->min_time / 2);
        if (on)
            cpu = t < cpu ? t : cpu;
        else
            lowered = turn == 0 || t < lowered ? t : lowered;
    }
    gc_cnn_set_winograd (c->cnn, true);
    return lowered / cpu;
}

/*  The step's CPU time with the prefetch off over its time with it on: the
    median over `pairs` pairs of back-to-back measurements, the order
    alternating (a shared machine's speed moved 15 % between whole runs a
    minute apart; adjacent halves of a pair see the same load). */
#define S_PAIRS_MAX 15

static double
s_prefetch_speedup (s_ctx_t *c, int pairs)
{
    double ratio [S_PAIRS_MAX];
    pairs = pairs < S_PAIRS_MAX ? pairs : S_PAIRS_MAX;
    for (int r = 0; r < pairs; r++) {
        double t [2];
        for (int h = 0; h < 2; h++) {
            bool on = (r + h) % 2 == 1;
            gc_conv_set_prefetch (on);
            double t0 = gc_thread_cpu_s ();
            s_steps (c);
            t [on] = gc_thread_cpu_s () - t0;
        }
        ratio [r] = t [0] / t [1];
    }
    gc_conv_set_prefetch (true);
    return gc_bench_quantile (ratio, pairs, 0.5);
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
    double speedup = s_winograd_speedup (&c, opts, cpu);
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
    snprintf (name, sizeof name, "train_cnn_%s_bs%zu_winograd_speedup", preset, batch);
    gc_bench_emit (opts, name, speedup, "ratio", extra);
    snprintf (name, sizeof name, "train_cnn_%s_bs%zu_prefetch_speedup", preset, batch);
    gc_bench_emit (opts, name, s_prefetch_speedup (&c, opts->quick ? 3 : S_PAIRS_MAX), "ratio", extra);
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
    static const char *presets [] = { "lenet", "resnet8-gn", "lenet-w", "lenet-w-res", "resnet20-gn" };
    int rc = 0;
    for (size_t i = 0; i < sizeof presets / sizeof presets [0]; i++)
        rc |= s_bench (opts, presets [i], 64);
    return rc;
}
