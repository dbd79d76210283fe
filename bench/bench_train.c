/*  gcbench train — training throughput of the default model, and the sgemm
    rate OpenBLAS reaches on exactly the matrix products one training step
    makes (same shapes, same run), so the ratio says how close the step is to
    the BLAS limit.

    FLOPs per sample: 2 x weights (forward) + 2 x weights (weight gradients)
    + 2 x weights of every layer but the first (input gradients). */
#include <cblas.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gc_bench.h"
#include "gc_dataset.h"
#include "gc_mem.h"
#include "gc_model.h"
#include "gc_optim.h"
#include "gc_sampler.h"
#include "gc_time.h"

typedef struct {
    gc_model_t   *model;
    gc_optim_t   *optim;
    gc_sampler_t *sampler;
    float        *params;
    size_t        batch;
    int           steps;
} s_train_ctx_t;

static void
s_train_steps (void *arg)
{
    s_train_ctx_t *c = arg;
    for (int i = 0; i < c->steps; i++) {
        const float *x;
        const uint8_t *y;
        gc_sampler_next (c->sampler, &x, &y);
        gc_optim_step (c->optim, c->model, c->params, x, y, c->batch, 0.01, NULL);
    }
}

//  The sgemm calls of one step on buffers of the same shapes as the real
//  ones (a weight matrix, its gradient, the layer's input and output), with
//  the step's beta: 1 where the step accumulates (the forward into the
//  bias-filled output, the weight gradient into the velocity), 0 for the
//  input gradient. OpenBLAS clears C in a pass of its own before a beta = 0
//  product, so timing C = A B there instead counted a pass the step does not
//  make (0.8 MB for the first layer's gradient) as sgemm time, about 6 % of
//  the reference. The buffers stay zero, so beta = 1 cannot overflow.
typedef struct {
    const gc_layout_t *layout;
    size_t  batch;
    int     steps;
    float  *w, *dw;             /* parameters, gradient: the layout's shapes */
    float  *act, *dact;         /* per layer: batch x max_dim, activation and delta */
    size_t  max_dim;
} s_gemm_ctx_t;

static void
s_gemm_steps (void *arg)
{
    s_gemm_ctx_t *g = arg;
    int B = (int) g->batch;
    size_t n_mat = g->layout->n_layers / 2;
    for (int s = 0; s < g->steps; s++) {
        for (size_t l = 0; l < n_mat; l++) {
            const gc_layer_t *w = &g->layout->layers [2 * l];
            int out = (int) w->rows, in = (int) w->cols;
            float *x = g->act + l * B * g->max_dim, *y = g->act + (l + 1) * B * g->max_dim;
            cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in,
                         1.0f, x, in, g->w + w->offset, in, 1.0f, y, out);
        }
        for (size_t l = n_mat; l-- > 0; ) {
            const gc_layer_t *w = &g->layout->layers [2 * l];
            int out = (int) w->rows, in = (int) w->cols;
            float *x = g->act + l * B * g->max_dim;
            float *dy = g->dact + (l + 1) * B * g->max_dim, *dx = g->dact + l * B * g->max_dim;
            cblas_sgemm (CblasRowMajor, CblasTrans, CblasNoTrans, out, in, B,
                         1.0f, dy, out, x, in, 1.0f, g->dw + w->offset, in);
            if (l > 0)
                cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, B, in, out,
                             1.0f, dy, out, g->w + w->offset, in, 0.0f, dx, in);
        }
    }
}

//  CPU time of this thread spent in one call of fn.
static double
s_cpu_time (void (*fn) (void *), void *ctx)
{
    double t0 = gc_thread_cpu_s ();
    fn (ctx);
    return gc_thread_cpu_s () - t0;
}

static int
s_bench_batch (const gc_bench_opts_t *opts, gc_model_t *model, const gc_dataset_t *train,
               size_t batch, double *gemm_gflops_out)
{
    gc_optim_config_t cfg;
    gc_optim_config_defaults (&cfg);
    size_t n = gc_model_n_params (model);
    s_train_ctx_t t = { .model = model, .batch = batch, .steps = 20 };
    t.params = gc_falloc (n);
    t.optim = gc_optim_new (&cfg, n, NULL);
    t.sampler = gc_sampler_new (train, batch, 1, NULL);
    s_gemm_ctx_t g = { .layout = gc_model_layout (model), .batch = batch, .steps = 20,
                       .max_dim = gc_model_input_dim (model) > 1024 ? gc_model_input_dim (model) : 1024 };
    size_t layers = g.layout->n_layers / 2 + 1;
    g.w = gc_falloc (n);
    g.dw = gc_falloc (n);
    g.act = gc_falloc (layers * batch * g.max_dim);
    g.dact = gc_falloc (layers * batch * g.max_dim);
    if (!t.params || !t.optim || !t.sampler || !g.w || !g.dw || !g.act || !g.dact) {
        fprintf (stderr, "gcbench train: out of memory\n");
        return 1;
    }
    gc_model_init_params (model, t.params, 1);
    gc_model_init_params (model, g.w, 1);
    double flops_per_sample = gc_model_train_flops (model);
    double flops = flops_per_sample * (double) batch * t.steps;
    //  The fraction from pairs of adjacent measurements, one of each, on the
    //  thread's CPU clock (time the scheduler gives other processes on a
    //  shared machine is not counted), the order alternating within pairs:
    //  both halves of a pair see the same load, and the median over the
    //  pairs is what the fraction reports, with its quartiles as the spread.
    //  (Best-of-each taken separately swung 0.8-1.4 between runs: the two
    //  bests came from different moments.)
    int pairs = opts->quick ? 7 : 41;
    double ratio [41], tt_all [41], tg_all [41];
    s_train_steps (&t);                         /* warm both up */
    s_gemm_steps (&g);
    for (int r = 0; r < pairs; r++) {
        double tt, tg;
        if (r % 2) {
            tg = s_cpu_time (s_gemm_steps, &g);
            tt = s_cpu_time (s_train_steps, &t);
        } else {
            tt = s_cpu_time (s_train_steps, &t);
            tg = s_cpu_time (s_gemm_steps, &g);
        }
        ratio [r] = tg / tt;
        tt_all [r] = tt;
        tg_all [r] = tg;
    }
    double frac = gc_bench_quantile (ratio, pairs, 0.5), frac_lo = gc_bench_quantile (ratio, pairs, 0.25),
           frac_hi = gc_bench_quantile (ratio, pairs, 0.75);
    double med_train = gc_bench_quantile (tt_all, pairs, 0.5), med_gemm = gc_bench_quantile (tg_all, pairs, 0.5);
    double samples_per_s = (double) batch * t.steps / med_train;
    double gemm_gflops = flops / med_gemm * 1e-9;
    double train_gflops = flops / med_train * 1e-9;
    char name [64], extra [128];
    snprintf (extra, sizeof extra, "\"model\":\"%s\",\"batch\":%zu,\"threads\":1", gc_model_spec (model), batch);
    snprintf (name, sizeof name, "train_bs%zu_samples_per_s", batch);
    gc_bench_emit (opts, name, samples_per_s, "samples/s", extra);
    snprintf (name, sizeof name, "train_bs%zu_gflops", batch);
    gc_bench_emit (opts, name, train_gflops, "GFLOP/s", extra);
    snprintf (name, sizeof name, "sgemm_bs%zu_gflops", batch);
    gc_bench_emit (opts, name, gemm_gflops, "GFLOP/s", extra);
    snprintf (name, sizeof name, "train_bs%zu_sgemm_fraction", batch);
    char fextra [256];
    snprintf (fextra, sizeof fextra, "%s,\"pairs\":%d,\"clock\":\"thread_cpu\",\"p25\":%.4f,\"p75\":%.4f",
              extra, pairs, frac_lo, frac_hi);
    gc_bench_emit (opts, name, frac, "ratio", fextra);
    *gemm_gflops_out = gemm_gflops;
    gc_sampler_destroy (&t.sampler);
    gc_optim_destroy (&t.optim);
    gc_mem_free (t.params);
    gc_mem_free (g.w);
    gc_mem_free (g.dw);
    gc_mem_free (g.act);
    gc_mem_free (g.dact);
    return 0;
}

int gc_bench_train_cnn (const gc_bench_opts_t *opts);     /* bench_cnn.c */

int
gc_bench_train (const gc_bench_opts_t *opts)
{
    openblas_set_num_threads (1);
    gc_model_t *model = gc_model_new (GC_MODEL_DEFAULT_SPEC, NULL);
    gc_dataset_t train, test;
    if (!model || gc_dataset_synthetic (1, 4096, 16, 784, 10, &train, &test, NULL)) {
        fprintf (stderr, "gcbench train: setup failed\n");
        return 1;
    }
    double g32 = 0, g64 = 0;
    int rc = s_bench_batch (opts, model, &train, 32, &g32);
    rc |= s_bench_batch (opts, model, &train, 64, &g64);
    //  The headline sgemm rate: the better of the two shape sets.
    gc_bench_emit (opts, "sgemm_gflops", g32 > g64 ? g32 : g64, "GFLOP/s",
                   "\"what\":\"OpenBLAS sgemm on the training step's shapes, 1 thread\"");
    gc_dataset_free (&train);
    gc_dataset_free (&test);
    gc_model_destroy (&model);
    return rc | gc_bench_train_cnn (opts);
}
