/*  gcbench robust — throughput of the robust aggregation rules, as input
    GB/s (k * d * 4 bytes per call), next to the single-thread memory read
    bandwidth and the sgemm that forms the Gram matrix of the same inputs,
    measured in the same run.

    Inputs: k vectors of d floats, x_i = base + 0.01 N(0, 1), one contiguous
    k x d buffer (so that one sgemm can form their Gram matrix); the peer's
    own vector is input 0 (self_index 0), as in a gossip round. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_bench.h"
#include "gc_mem.h"
#include "gc_rng.h"
#include "gc_robust.h"
#include "gc_time.h"

typedef struct {
    gc_robust_t  *rule;
    const float **in;
    size_t        k, d;
    float        *out;
    int           rc;
} s_agg_ctx_t;

static void
s_agg (void *arg)
{
    s_agg_ctx_t *c = arg;
    c->rc |= gc_robust_aggregate (c->rule, c->in, NULL, c->k, c->d, 0, c->out, NULL);
}

typedef struct {
    const float *x;
    size_t k, d;
    float *gram;
} s_gemm_ctx_t;

static void
s_gram_sgemm (void *arg)
{
    s_gemm_ctx_t *g = arg;
    cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) g->k, (int) g->k, (int) g->d,
                 1.0f, g->x, (int) g->d, g->x, (int) g->d, 0.0f, g->gram, (int) g->k);
}

//  What the usual Python code does per coordinate (gather the k values,
//  sort, take the middle), in C: the baseline the kernels are compared with.
static void
s_naive_median (void *arg)
{
    s_agg_ctx_t *c = arg;
    float col [64];
    for (size_t j = 0; j < c->d; j++) {
        for (size_t i = 0; i < c->k; i++) {
            float v = c->in [i][j];
            size_t p = i;
            for (; p > 0 && col [p - 1] > v; p--)
                col [p] = col [p - 1];
            col [p] = v;
        }
        c->out [j] = c->k % 2 ? col [c->k / 2] : 0.5f * (col [c->k / 2 - 1] + col [c->k / 2]);
    }
}

//  Best time of `reps` calls, each after streaming a buffer much larger
//  than the last-level cache, so that the inputs come from memory (the
//  repeated calls of gc_bench_time_best find them partly in the 480 MB L3
//  of this machine).
static double
s_time_cold (s_agg_ctx_t *c, const float *flush, size_t n_flush, int reps)
{
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        float acc [16] = { 0 };
        for (size_t i = 0; i + 16 <= n_flush; i += 16)
            for (int j = 0; j < 16; j++)
                acc [j] += flush [i + j];
        gc_bench_sink (acc [0] + acc [15]);
        double t0 = gc_now_s ();
        s_agg (c);
        double t = gc_now_s () - t0;
        best = t < best ? t : best;
    }
    return best;
}

static int
s_bench_cold (const gc_bench_opts_t *opts, const float *const *in, size_t k, size_t d,
              float *out)
{
    static const char *specs [][2] = { { "mean", "mean" }, { "cwmed", "cwmed" },
                                       { "cwtm:1", "cwtm1" }, { "krum:1", "krum1" },
                                       { "nnm+cwtm:1", "nnm_cwtm1" } };
    size_t n_flush = (size_t) 1 << 28;          /* 1 GiB of floats */
    float *flush = gc_falloc (n_flush);
    if (!flush) {
        fprintf (stderr, "gcbench robust: out of memory for the cache flush\n");
        return 1;
    }
    for (size_t i = 0; i < n_flush; i++)
        flush [i] = (float) (i & 7);
    char name [96], extra [128];
    snprintf (extra, sizeof extra, "\"k\":%zu,\"d\":%zu,\"threads\":1,\"cache\":\"cold\"", k, d);
    int rc = 0;
    for (size_t r = 0; r < sizeof specs / sizeof specs [0]; r++) {
        gc_robust_t *rule = gc_robust_new (specs [r][0], NULL);
        s_agg_ctx_t c = { rule, (const float **) in, k, d, out, 0 };
        s_agg (&c);                             /* grow the workspace first */
        double t = s_time_cold (&c, flush, n_flush, 5);
        rc |= c.rc;
        snprintf (name, sizeof name, "robust_%s_k%zu_d1M_cold", specs [r][1], k);
        gc_bench_emit (opts, name, (double) k * (double) d * sizeof (float) / t * 1e-9, "GB/s", extra);
        gc_robust_destroy (&rule);
    }
    gc_mem_free (flush);
    return rc;
}

//  Rules benchmarked: spec and the key fragment robust_<key>_k<k>_d<d>.
static const struct {
    const char *spec, *key;
} s_rules [] = {
    { "mean", "mean" },
    { "cwmed", "cwmed" },
    { "cwtm:1", "cwtm1" },
    { "cwtm:2", "cwtm2" },
    { "krum:1", "krum1" },
    { "mkrum:1:3", "mkrum1m3" },
    { "bulyan:1", "bulyan1" },
    { "gm", "gm" },
    { "cclip:10:3", "cclip" },
    { "scclip", "scclip" },
    { "nnm+cwtm:1", "nnm_cwtm1" },
    { "bucket:2+cwmed", "bucket2_cwmed" },
    { "guard", "guard" },
};
#define S_NRULES (sizeof s_rules / sizeof s_rules [0])

static int
s_bench_shape (const gc_bench_opts_t *opts, size_t k, size_t d, const char *dname)
{
    float *x = gc_falloc (k * d), *out = gc_falloc (d), *gram = gc_falloc (k * k);
    const float **in = calloc (k, sizeof *in);
    if (!x || !out || !gram || !in) {
        fprintf (stderr, "gcbench robust: out of memory for k=%zu d=%zu\n", k, d);
        return 1;
    }
    gc_rng_t rng;
    gc_rng_init (&rng, 42, k);
    gc_rng_fill_normal (&rng, x, d, 0.0f, 1.0f);
    for (size_t i = 1; i < k; i++)
        memcpy (x + i * d, x, d * sizeof *x);
    for (size_t i = 0; i < k; i++) {
        float *row = x + i * d;
        for (size_t j = 0; j < d; j++)
            row [j] += 0.01f * (float) gc_rng_normal (&rng);
        in [i] = row;
    }
    double bytes = (double) k * (double) d * sizeof (float);
    char name [96], extra [96];
    snprintf (extra, sizeof extra, "\"k\":%zu,\"d\":%zu,\"threads\":1", k, d);
    int rc = 0;
    double krum_t = 0;
    for (size_t r = 0; r < S_NRULES; r++) {
        gc_robust_t *rule = gc_robust_new (s_rules [r].spec, NULL);
        if (!rule || k < gc_robust_min_inputs (rule)) {
            gc_robust_destroy (&rule);
            continue;
        }
        s_agg_ctx_t c = { rule, in, k, d, out, 0 };
        double t = gc_bench_time_best (s_agg, &c, 2, opts->min_time);
        if (c.rc) {
            fprintf (stderr, "gcbench robust: %s failed\n", s_rules [r].spec);
            rc = 1;
        }
        if (!strcmp (s_rules [r].key, "krum1"))
            krum_t = t;
        double cpu = gc_bench_cpu_best (s_agg, &c, 2, opts->min_time);
        char extra_cpu [160];
        snprintf (extra_cpu, sizeof extra_cpu, "%s,\"cpu_ms\":%.4g", extra, cpu * 1e3);
        snprintf (name, sizeof name, "robust_%s_k%zu_d%s", s_rules [r].key, k, dname);
        gc_bench_emit (opts, name, bytes / t * 1e-9, "GB/s", extra_cpu);
        gc_robust_destroy (&rule);
    }
    s_gemm_ctx_t g = { x, k, d, gram };
    double tg = gc_bench_time_best (s_gram_sgemm, &g, 2, opts->min_time);
    snprintf (name, sizeof name, "robust_gram_sgemm_k%zu_d%s", k, dname);
    gc_bench_emit (opts, name, bytes / tg * 1e-9, "GB/s", extra);
    if (krum_t > 0) {
        snprintf (name, sizeof name, "robust_krum1_time_over_sgemm_k%zu_d%s", k, dname);
        gc_bench_emit (opts, name, krum_t / tg, "ratio", extra);
    }
    if (k == 16 && d == 1000000)
        rc |= s_bench_cold (opts, in, k, d, out);
    if (k == 16) {
        s_agg_ctx_t c = { NULL, in, k, d, out, 0 };
        double t = gc_bench_time_best (s_naive_median, &c, 1, opts->min_time);
        snprintf (name, sizeof name, "robust_cwmed_naive_sort_k%zu_d%s", k, dname);
        gc_bench_emit (opts, name, bytes / t * 1e-9, "GB/s", extra);
    }
    free (in);
    gc_mem_free (x);
    gc_mem_free (out);
    gc_mem_free (gram);
    return rc;
}

int
gc_bench_robust (const gc_bench_opts_t *opts)
{
    openblas_set_num_threads (1);
    gc_bench_emit (opts, "mem_read_bandwidth", gc_bench_mem_read_bandwidth (opts), "GB/s",
                   "\"threads\":1");
    static const size_t ks [] = { 5, 9, 16, 33 };
    int rc = 0;
    for (size_t i = 0; i < sizeof ks / sizeof ks [0]; i++) {
        rc |= s_bench_shape (opts, ks [i], 250000, "250k");
        if (!opts->quick)
            rc |= s_bench_shape (opts, ks [i], 1000000, "1M");
    }
    return rc;
}
