/*  gcbench compress — compressor and decoder throughput, wire size, and the
    single-thread memory read bandwidth of the same run (the limit for a
    kernel that streams its input once).

    Throughput is input GB/s: 4 n bytes of dense floats per call, for
    compress and for decompress_add alike (for the decoder that is the
    dense-equivalent output). Inputs are N(0, 1) floats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_bench.h"
#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_lgc_codec.h"
#include "gc_mem.h"
#include "gc_model.h"
#include "gc_optim.h"
#include "gc_policy.h"
#include "gc_rng.h"
#include "gc_sampler.h"

typedef struct {
    gc_compressor_t   *comp;
    const gc_layout_t *layout;
    const float       *x;
    float             *into;
    gc_buf_t           out;
    uint64_t           round;
    int                failed;
} s_ctx_t;

static void
s_compress (void *arg)
{
    s_ctx_t *c = arg;
    if (gc_compressor_compress (c->comp, c->x, c->round++, &c->out, NULL))
        c->failed = 1;
}

static void
s_decompress (void *arg)
{
    s_ctx_t *c = arg;
    if (gc_payload_decompress_add (c->out.data, c->out.len, c->layout, c->into, NULL))
        c->failed = 1;
}

typedef struct {
    double compress_gbs, decompress_gbs;
    size_t bytes;
    size_t kept;            /* non-zero entries the payload decodes to */
} s_result_t;

static int
s_measure (const gc_bench_opts_t *opts, const char *spec, const gc_layout_t *layout,
           const float *x, float *into, s_result_t *r)
{
    gc_err_t err;
    s_ctx_t c = { .layout = layout, .x = x, .into = into };
    gc_buf_init (&c.out);
    c.comp = gc_compressor_new (spec, layout, 42, &err);
    if (!c.comp) {
        fprintf (stderr, "gcbench compress: %s\n", err.msg);
        return 1;
    }
    double bytes_in = 4.0 * (double) layout->n_params;
    double t = gc_bench_time_best (s_compress, &c, 3, opts->min_time);
    r->compress_gbs = bytes_in / t * 1e-9;
    r->bytes = c.out.len;
    double td = gc_bench_time_best (s_decompress, &c, 3, opts->min_time);
    r->decompress_gbs = bytes_in / td * 1e-9;
    memset (into, 0, layout->n_params * sizeof (float));
    if (gc_payload_decompress_add (c.out.data, c.out.len, layout, into, NULL))
        c.failed = 1;
    r->kept = 0;
    for (size_t i = 0; i < layout->n_params; i++)
        r->kept += into [i] != 0.0f;
    int failed = c.failed;
    if (failed)
        fprintf (stderr, "gcbench compress: %s failed\n", spec);
    gc_compressor_destroy (&c.comp);
    gc_buf_free (&c.out);
    return failed;
}

static void
s_size_name (char *buf, size_t size, size_t n)
{
    if (n % 1000000 == 0)
        snprintf (buf, size, "%zuM", n / 1000000);
    else
        snprintf (buf, size, "%zu", n);
}

static int
s_topk (const gc_bench_opts_t *opts, size_t n, const float *x, float *into, bool last)
{
    gc_layout_t layout;
    gc_err_t err;
    if (gc_layout_init_flat (&layout, n, &err))
        return 1;
    char nn [16], name [96], spec [64], extra [160];
    s_size_name (nn, sizeof nn, n);
    static const double ratios [] = { 0.01, 0.001 };
    int rc = 0;
    for (size_t ri = 0; ri < 2; ri++) {
        double ratio = ratios [ri];
        s_result_t rs, re, r16;
        snprintf (spec, sizeof spec, "topk:%g:sampled", ratio);
        rc |= s_measure (opts, spec, &layout, x, into, &rs);
        snprintf (spec, sizeof spec, "topk:%g:exact", ratio);
        rc |= s_measure (opts, spec, &layout, x, into, &re);
        snprintf (spec, sizeof spec, "topk:%g:sampled:fp16", ratio);
        rc |= s_measure (opts, spec, &layout, x, into, &r16);
        snprintf (extra, sizeof extra, "\"n\":%zu,\"ratio\":%g,\"threads\":1", n, ratio);
        snprintf (name, sizeof name, "compress_topk_sampled_n%s_r%g", nn, ratio);
        gc_bench_emit (opts, name, rs.compress_gbs, "GB/s", extra);
        snprintf (name, sizeof name, "compress_topk_exact_n%s_r%g", nn, ratio);
        gc_bench_emit (opts, name, re.compress_gbs, "GB/s", extra);
        snprintf (name, sizeof name, "decompress_add_topk_n%s_r%g", nn, ratio);
        gc_bench_emit (opts, name, rs.decompress_gbs, "GB/s", extra);
        snprintf (name, sizeof name, "decompress_add_topk_n%s_r%g_fp16", nn, ratio);
        gc_bench_emit (opts, name, r16.decompress_gbs, "GB/s", extra);
        //  Bytes per kept entry, header and section overhead included.
        double k = (double) rs.kept, k16 = (double) r16.kept;
        snprintf (name, sizeof name, "compression_ratio_topk_n%s_r%g_fp32", nn, ratio);
        gc_bench_emit (opts, name, 4.0 * (double) n / (double) rs.bytes, "x", extra);
        snprintf (name, sizeof name, "compression_ratio_topk_n%s_r%g_fp16", nn, ratio);
        gc_bench_emit (opts, name, 4.0 * (double) n / (double) r16.bytes, "x", extra);
        snprintf (name, sizeof name, "wire_bytes_per_entry_topk_n%s_r%g_fp32", nn, ratio);
        gc_bench_emit (opts, name, (double) rs.bytes / k, "B", extra);
        snprintf (name, sizeof name, "wire_bytes_per_entry_topk_n%s_r%g_fp16", nn, ratio);
        gc_bench_emit (opts, name, (double) r16.bytes / k16, "B", extra);
        if (last) {
            //  The headline figures without n: from the largest size run.
            snprintf (name, sizeof name, "wire_bytes_per_entry_topk_r%g_fp32", ratio);
            gc_bench_emit (opts, name, (double) rs.bytes / k, "B", extra);
            snprintf (name, sizeof name, "wire_bytes_per_entry_topk_r%g_fp16", ratio);
            gc_bench_emit (opts, name, (double) r16.bytes / k16, "B", extra);
        }
    }
    return rc;
}

//  The other methods at n = 1M on an MLP-like table (matrices and vectors,
//  so PowerSGD and LBS have layers to work on).
static int
s_others (const gc_bench_opts_t *opts, const float *x, float *into)
{
    gc_layout_t layout;
    gc_err_t err;
    gc_layout_init (&layout);
    if (gc_layout_add_matrix (&layout, "fc1.w", 1000, 784, &err)
    ||  gc_layout_add_vector (&layout, "fc1.b", 1000, &err)
    ||  gc_layout_add_matrix (&layout, "fc2.w", 200, 1000, &err)
    ||  gc_layout_add_vector (&layout, "fc2.b", 200, &err)
    ||  gc_layout_add_matrix (&layout, "fc3.w", 10, 1480, &err))
        return 1;
    static const struct {
        const char *tag, *spec;
    } methods [] = {
        { "none", "none" },
        { "fp16", "fp16" },
        { "topk0.01_layer", "topk:0.01:layer" },
        { "randk0.01", "randk:0.01" },
        { "threshold2.576", "threshold:2.576" },
        { "qsgd16", "qsgd:16" },
        { "qsgd4", "qsgd:4" },
        { "sign", "sign" },
        { "powersgd2", "powersgd:2" },
        { "powersgd4", "powersgd:4" },
        { "lbs_topk0.01", "lbs:topk:0.01" },
    };
    int rc = 0;
    char name [96], extra [160];
    for (size_t i = 0; i < sizeof methods / sizeof methods [0]; i++) {
        s_result_t r;
        if (s_measure (opts, methods [i].spec, &layout, x, into, &r)) {
            rc = 1;
            continue;
        }
        snprintf (extra, sizeof extra, "\"n\":%zu,\"spec\":\"%s\",\"threads\":1",
                  layout.n_params, methods [i].spec);
        snprintf (name, sizeof name, "compress_%s_n1M", methods [i].tag);
        gc_bench_emit (opts, name, r.compress_gbs, "GB/s", extra);
        snprintf (name, sizeof name, "decompress_add_%s_n1M", methods [i].tag);
        gc_bench_emit (opts, name, r.decompress_gbs, "GB/s", extra);
        snprintf (name, sizeof name, "compression_ratio_%s_n1M", methods [i].tag);
        gc_bench_emit (opts, name, 4.0 * (double) layout.n_params / (double) r.bytes, "x", extra);
    }
    return rc;
}

//  ---- ratio policies: one round's decision against one training step ----

typedef struct {
    gc_model_t   *model;
    gc_optim_t   *optim;
    gc_sampler_t *sampler;
    float        *params;
} s_step_ctx_t;

static void
s_train_step (void *arg)
{
    s_step_ctx_t *c = arg;
    const float *x;
    const uint8_t *y;
    gc_sampler_next (c->sampler, &x, &y);
    gc_optim_step (c->optim, c->model, c->params, x, y, gc_sampler_batch (c->sampler), 0.01, NULL);
}

typedef struct {
    gc_policy_t *policy;
    const float *u;
    uint64_t     round;
} s_policy_ctx_t;

//  Ten rounds a call: a policy that recomputes every ten rounds (lgreco)
//  is timed with its recomputation, not at its cheapest round.
#define S_POLICY_ROUNDS 10

static void
s_decide (void *arg)
{
    s_policy_ctx_t *c = arg;
    bool skip;
    for (int i = 0; i < S_POLICY_ROUNDS; i++)
        if (gc_policy_decide (c->policy, c->u, c->u, c->round++, &skip, NULL))
            gc_bench_sink (1);
}

//  ---- LGC's codec: one round's encode + decode against one training step ----

typedef struct {
    gc_lgc_codec_t *codec;
    const float    *v;
    size_t          n;
    uint8_t        *scales, *codes;
    float          *out;
} s_lgc_ctx_t;

static void
s_lgc_round (void *arg)
{
    s_lgc_ctx_t *c = arg;
    gc_lgc_codec_encode (c->codec, c->v, c->n, c->scales, c->codes);
    gc_lgc_codec_decode (c->codec, c->scales, c->codes, c->n, c->out);
    gc_bench_sink (c->out [0]);
}

static void
s_lgc_train (void *arg)
{
    s_lgc_ctx_t *c = arg;
    gc_bench_sink (gc_lgc_codec_train (c->codec, c->v, c->n, 1e-3f));
}

//  The values top-k 1 % selects of the MLP (k of n), encoded once and
//  decoded once per round (the sender's own decode for error feedback; each
//  receiver decodes once more), m = 8; and one training step of the codec
//  on them (phase one only).
static int
s_lgc (const gc_bench_opts_t *opts, double step, size_t n_params)
{
    size_t k = (size_t) (0.01 * (double) n_params + 0.5);     /* top-k's k at 1 % */
    s_lgc_ctx_t c = { .codec = gc_lgc_codec_new (8, 1, NULL), .n = k };
    float *v = gc_falloc (k);
    c.out = gc_falloc (k);
    c.scales = malloc (gc_lgc_code_bytes (k, 8));
    c.codes = c.scales ? c.scales + 2 * gc_lgc_chunks (k) : NULL;
    int rc = 0;
    if (c.codec && v && c.out && c.scales) {
        gc_rng_t rng;
        gc_rng_init (&rng, 5, 0);
        gc_rng_fill_normal (&rng, v, k, 0.0f, 1e-2f);
        c.v = v;
        double round = gc_bench_time_best (s_lgc_round, &c, 5, opts->min_time);
        double train = gc_bench_time_best (s_lgc_train, &c, 5, opts->min_time);
        char extra [160];
        snprintf (extra, sizeof extra, "\"values\":%zu,\"m\":8,\"per_round_us\":%.2f,\"step_us\":%.2f",
                  k, round * 1e6, step * 1e6);
        gc_bench_emit (opts, "lgc_encode_fraction_of_step", round / step, "x", extra);
        snprintf (extra, sizeof extra, "\"values\":%zu,\"m\":8,\"per_step_us\":%.2f", k, train * 1e6);
        gc_bench_emit (opts, "lgc_train_fraction_of_step", train / step, "x", extra);
    }
    else {
        fprintf (stderr, "gcbench compress: out of memory for the lgc codec\n");
        rc = 1;
    }
    gc_lgc_codec_destroy (&c.codec);
    gc_mem_free (v);
    gc_mem_free (c.out);
    free (c.scales);
    return rc;
}

//  The default model (MLP 784-256-128-10), a step of batch 32 (a round is
//  4 of them by default); each policy over top-k 1 % decides on N(0, 1)
//  updates of the model's size, per round over ten rounds. lgreco:every=1
//  recomputes every round (its worst case).
static int
s_policies (const gc_bench_opts_t *opts)
{
    gc_model_t *model = gc_model_new (GC_MODEL_DEFAULT_SPEC, NULL);
    gc_dataset_t train, test;
    if (!model || gc_dataset_synthetic (1, 1024, 16, 784, 10, &train, &test, NULL)) {
        fprintf (stderr, "gcbench compress: no model or data for the policies\n");
        gc_model_destroy (&model);
        return 1;
    }
    size_t n = gc_model_n_params (model);
    gc_optim_config_t ocfg;
    gc_optim_config_defaults (&ocfg);
    s_step_ctx_t t = { .model = model, .params = gc_falloc (n) };
    t.optim = gc_optim_new (&ocfg, n, NULL);
    t.sampler = gc_sampler_new (&train, 32, 1, NULL);
    float *u = gc_falloc (n);
    gc_compressor_t *comp = gc_compressor_new ("topk:0.01", gc_model_layout (model), 1, NULL);
    int rc = 0;
    if (!t.params || !t.optim || !t.sampler || !u || !comp) {
        fprintf (stderr, "gcbench compress: out of memory\n");
        rc = 1;
        goto done;
    }
    gc_model_init_params (model, t.params, 1);
    gc_rng_t rng;
    gc_rng_init (&rng, 3, 0);
    gc_rng_fill_normal (&rng, u, n, 0.0f, 1e-3f);
    double step = gc_bench_time_best (s_train_step, &t, 5, opts->min_time);
    gc_bench_emit (opts, "policy_train_step_us", step * 1e6, "us",
                   "\"what\":\"one SGD step, MLP 784-256-128-10, batch 32\"");
    static const char *specs [] = { "lazy", "accordion", "settle", "bandwidth:rate=1e7", "lgreco",
                                    "lgreco:every=1", "settle+bandwidth:rate=1e7" };
    for (size_t i = 0; i < sizeof specs / sizeof specs [0]; i++) {
        s_policy_ctx_t c = { .u = u };
        c.policy = gc_policy_new (specs [i], comp, NULL);
        if (!c.policy) {
            rc = 1;
            continue;
        }
        gc_policy_set_env (c.policy, step * 4, 0);
        double d = gc_bench_time_best (s_decide, &c, 5, opts->min_time) / S_POLICY_ROUNDS;
        char name [80], extra [384];
        snprintf (name, sizeof name, "policy_%.32s_fraction_of_step", specs [i]);
        for (char *q = name; *q; q++)
            if (*q == ':' || *q == '=' || *q == '.' || *q == '+')
                *q = '_';
        snprintf (extra, sizeof extra, "\"policy\":\"%s\",\"per_round_us\":%.2f",
                  gc_policy_name (c.policy), d * 1e6);
        gc_bench_emit (opts, name, d / step, "x", extra);
        gc_policy_destroy (&c.policy);
    }
    rc |= s_lgc (opts, step, n);
done:
    gc_compressor_destroy (&comp);
    gc_mem_free (u);
    gc_mem_free (t.params);
    gc_optim_destroy (&t.optim);
    gc_sampler_destroy (&t.sampler);
    gc_dataset_free (&train);
    gc_dataset_free (&test);
    gc_model_destroy (&model);
    return rc;
}

int
gc_bench_compress (const gc_bench_opts_t *opts)
{
    gc_bench_emit (opts, "mem_read_bandwidth", gc_bench_mem_read_bandwidth (opts), "GB/s",
                   "\"what\":\"single-thread streaming read\"");
    size_t nmax = opts->quick ? 1000000 : 10000000;
    float *x = gc_falloc (nmax), *into = gc_falloc (nmax);
    if (!x || !into) {
        fprintf (stderr, "gcbench compress: out of memory\n");
        return 1;
    }
    gc_rng_t rng;
    gc_rng_init (&rng, 7, 0);
    gc_rng_fill_normal (&rng, x, nmax, 0.0f, 1.0f);
    int rc = s_topk (opts, 1000000, x, into, opts->quick);
    if (!opts->quick)
        rc |= s_topk (opts, 10000000, x, into, true);
    rc |= s_others (opts, x, into);
    rc |= s_policies (opts);
    gc_mem_free (x);
    gc_mem_free (into);
    return rc;
}
