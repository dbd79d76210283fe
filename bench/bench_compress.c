/*  gcbench compress — compressor and decoder throughput, wire size, and the
    single-thread memory read bandwidth of the same run (the limit for a
    kernel that streams its input once).

    Throughput is input GB/s: 4 n bytes of dense floats per call, for
    compress and for decompress_add alike (for the decoder that is the
    dense-equivalent output). Inputs are N(0, 1) floats. */
#include <stdio.h>
#include <string.h>

#include "gc_bench.h"
#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_mem.h"
#include "gc_rng.h"

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
    gc_mem_free (x);
    gc_mem_free (into);
    return rc;
}
