/*  Method properties: random-k and QSGD are unbiased, sign sends the scaled
    sign, PowerSGD's error falls as the rank grows, LBS sends every layer
    and loses nothing; spec parsing and input checks. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compressor.h"
#include "gc_payload.h"
#include "gc_rng.h"
#include "gc_vec.h"

static float *
s_gauss (size_t n, uint64_t seed, float std)
{
    float *x = malloc (n * sizeof *x);
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0);
    gc_rng_fill_normal (&rng, x, n, 0.0f, std);
    return x;
}

//  Compress x for `round` and decode into q (zeroed first).
static void
s_roundtrip (gc_compressor_t *comp, const float *x, uint64_t round, float *q, gc_buf_t *out)
{
    const gc_layout_t *layout = gc_compressor_layout (comp);
    gc_err_t err;
    if (gc_compressor_compress (comp, x, round, out, &err))
        fail_msg ("%s: %s", gc_compressor_name (comp), err.msg);
    memset (q, 0, layout->n_params * sizeof *q);
    if (gc_payload_decompress_add (out->data, out->len, layout, q, &err))
        fail_msg ("%s: %s", gc_compressor_name (comp), err.msg);
}

static void
test_randk_is_unbiased_and_reproducible (void **state)
{
    gc_layout_t layout;
    gc_layout_init (&layout);
    assert_int_equal (gc_layout_add_matrix (&layout, "w", 10, 15, NULL), 0);
    assert_int_equal (gc_layout_add_vector (&layout, "b", 50, NULL), 0);
    size_t n = layout.n_params;
    float *x = s_gauss (n, 1, 1.0f), *q = malloc (n * sizeof *q);
    double *mean = calloc (n, sizeof *mean);
    gc_compressor_t *comp = gc_compressor_new ("randk:0.1", &layout, 99, NULL);
    gc_buf_t out, again;
    gc_buf_init (&out);
    gc_buf_init (&again);
    const int rounds = 4000;
    for (int r = 0; r < rounds; r++) {
        s_roundtrip (comp, x, (uint64_t) r, q, &out);
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
            mean [i] += q [i];
            kept += q [i] != 0.0f;
        }
        assert_int_equal (kept, 15 + 5);        /* 10 % of 150 and of 50 */
        if (r < 3) {
            //  Same round: same bytes (every receiver regenerates the indices).
            assert_int_equal (gc_compressor_compress (comp, x, (uint64_t) r, &again, NULL), 0);
            assert_int_equal (again.len, out.len);
            assert_memory_equal (again.data, out.data, out.len);
        }
    }
    //  q_i = 10 x_i with probability 0.1, else 0: variance 9 x_i^2, so the
    //  mean of 4000 rounds has sd 3|x_i|/sqrt(4000) = 0.047|x_i|. 5 sd over
    //  200 entries is not reached by chance (and the seed is fixed).
    for (size_t i = 0; i < n; i++) {
        double m = mean [i] / rounds;
        double sd = 3.0 * fabs (x [i]) / sqrt ((double) rounds);
        if (fabs (m - x [i]) > 5.0 * sd + 1e-6)
            fail_msg ("entry %zu: mean %g, x %g (sd %g)", i, m, (double) x [i], sd);
    }
    //  Another sender (seed) draws other indices for the same round.
    gc_compressor_t *other = gc_compressor_new ("randk:0.1", &layout, 100, NULL);
    assert_int_equal (gc_compressor_compress (other, x, 0, &again, NULL), 0);
    assert_int_equal (gc_compressor_compress (comp, x, 0, &out, NULL), 0);
    assert_memory_not_equal (again.data + 16, out.data + 16, 8);
    gc_compressor_destroy (&other);
    gc_compressor_destroy (&comp);
    gc_buf_free (&out);
    gc_buf_free (&again);
    free (x);
    free (q);
    free (mean);
}

static void
test_qsgd_is_unbiased_and_on_levels (void **state)
{
    gc_layout_t layout;
    assert_int_equal (gc_layout_init_flat (&layout, 300, NULL), 0);
    size_t n = 300, bucket = 64;
    uint32_t s = 4;
    float *x = s_gauss (n, 2, 1.0f), *q = malloc (n * sizeof *q);
    double *mean = calloc (n, sizeof *mean);
    gc_compressor_t *comp = gc_compressor_new ("qsgd:4:bucket=64", &layout, 5, NULL);
    assert_string_equal (gc_compressor_name (comp), "qsgd:4:bucket=64");
    gc_buf_t out;
    gc_buf_init (&out);
    const int rounds = 3000;
    for (int r = 0; r < rounds; r++) {
        s_roundtrip (comp, x, (uint64_t) r, q, &out);
        for (size_t i = 0; i < n; i++) {
            mean [i] += q [i];
            //  q_i = norm * l / s with |l| <= s and the sign of x_i.
            double norm = sqrt (gc_vec_norm2sq (x + i / bucket * bucket,
                                                i / bucket * bucket + bucket <= n ? bucket : n % bucket));
            double l = q [i] / norm * s;
            assert_true (fabs (l - round (l)) < 1e-3 && fabs (l) <= s + 1e-3);
            assert_true (q [i] == 0.0f || (q [i] > 0) == (x [i] > 0));
        }
    }
    //  Each q_i takes one of two adjacent levels: variance <= (norm/s)^2 / 4,
    //  sd of the mean <= norm / (2 s sqrt(rounds)); 5 sd, as for random-k.
    for (size_t i = 0; i < n; i++) {
        size_t b0 = i / bucket * bucket, len = b0 + bucket <= n ? bucket : n - b0;
        double norm = sqrt (gc_vec_norm2sq (x + b0, len));
        double sd = norm / (2.0 * s * sqrt ((double) rounds));
        double m = mean [i] / rounds;
        if (fabs (m - x [i]) > 5.0 * sd)
            fail_msg ("entry %zu: mean %g, x %g (sd %g)", i, m, (double) x [i], sd);
    }
    gc_compressor_destroy (&comp);
    gc_buf_free (&out);
    free (x);
    free (q);
    free (mean);
}

static void
test_sign_sends_scaled_sign (void **state)
{
    gc_layout_t layout;
    gc_layout_init (&layout);
    assert_int_equal (gc_layout_add_matrix (&layout, "w", 7, 9, NULL), 0);
    assert_int_equal (gc_layout_add_vector (&layout, "b", 13, NULL), 0);
    size_t n = layout.n_params;
    float *x = s_gauss (n, 3, 2.0f), *q = malloc (n * sizeof *q);
    x [5] = 0.0f;
    static const uint32_t buckets [] = { 0, 1, 10, 1000 };
    for (size_t bi = 0; bi < 4; bi++) {
        char spec [32];
        snprintf (spec, sizeof spec, "sign:bucket=%u", buckets [bi]);
        gc_compressor_t *comp = gc_compressor_new (spec, &layout, 1, NULL);
        gc_buf_t out;
        gc_buf_init (&out);
        s_roundtrip (comp, x, 0, q, &out);
        for (size_t l = 0; l < 2; l++) {
            const gc_layer_t *layer = &layout.layers [l];
            size_t b = buckets [bi] && buckets [bi] < layer->count ? buckets [bi] : layer->count;
            for (size_t i = 0; i < layer->count; i++) {
                size_t b0 = i / b * b, end = b0 + b < layer->count ? b0 + b : layer->count;
                double mabs = 0;
                for (size_t j = b0; j < end; j++)
                    mabs += fabs (x [layer->offset + j]);
                mabs /= (double) (end - b0);
                float xi = x [layer->offset + i], qi = q [layer->offset + i];
                assert_true (fabs (fabs (qi) - mabs) <= 1e-5 * mabs);
                assert_true ((qi < 0) == (xi < 0));     /* zero counts as positive */
            }
        }
        gc_buf_free (&out);
        gc_compressor_destroy (&comp);
    }
    free (x);
    free (q);
}

//  A 48x40 matrix with singular values falling by half, plus a little noise.
static void
s_decaying_matrix (float *m, size_t rows, size_t cols, uint64_t seed)
{
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0);
    memset (m, 0, rows * cols * sizeof *m);
    float *u = malloc (rows * sizeof *u), *v = malloc (cols * sizeof *v);
    for (int j = 0; j < 12; j++) {
        gc_rng_fill_normal (&rng, u, rows, 0, 1);
        gc_rng_fill_normal (&rng, v, cols, 0, 1);
        float sigma = ldexpf (1.0f, -j);
        for (size_t r = 0; r < rows; r++)
            gc_vec_axpy (m + r * cols, sigma * u [r], v, cols);
    }
    for (size_t i = 0; i < rows * cols; i++)
        m [i] += 0.001f * (float) gc_rng_normal (&rng);
    free (u);
    free (v);
}

static void
test_powersgd_error_falls_with_rank (void **state)
{
    gc_layout_t layout;
    gc_layout_init (&layout);
    assert_int_equal (gc_layout_add_matrix (&layout, "w", 48, 40, NULL), 0);
    assert_int_equal (gc_layout_add_vector (&layout, "b", 48, NULL), 0);
    size_t n = layout.n_params;
    float *m = malloc (n * sizeof *m), *q = malloc (n * sizeof *q);
    s_decaying_matrix (m, 48, 40, 1);
    for (size_t i = 0; i < 48; i++)
        m [1920 + i] = (float) i;
    static const uint32_t ranks [] = { 1, 2, 4, 8 };
    double prev = INFINITY, norm = sqrt (gc_vec_norm2sq (m, 1920));
    for (size_t ri = 0; ri < 4; ri++) {
        char spec [32];
        snprintf (spec, sizeof spec, "powersgd:%u", ranks [ri]);
        gc_compressor_t *comp = gc_compressor_new (spec, &layout, 7, NULL);
        gc_buf_t out;
        gc_buf_init (&out);
        double first = 0, err = 0;
        //  The warm start makes repeated rounds on one matrix a power method.
        for (int round = 0; round < 6; round++) {
            s_roundtrip (comp, m, (uint64_t) round, q, &out);
            err = sqrt (gc_vec_dist2sq (m, q, 1920)) / norm;
            if (round == 0)
                first = err;
            //  The vector layer is sent dense and exact.
            assert_memory_equal (q + 1920, m + 1920, 48 * sizeof (float));
        }
        print_message ("powersgd rank %u: relative error %.4f (first round %.4f)\n",
                       ranks [ri], err, first);
        assert_true (err <= first * 1.0001);
        assert_true (err < prev * 0.75);
        prev = err;
        gc_buf_free (&out);
        gc_compressor_destroy (&comp);
    }
    //  Best rank-8 error is about 2^-8 of the top singular value.
    assert_true (prev < 0.02);
    //  Near FLT_MAX the factors could overflow the receiver's bound: the
    //  layer goes dense instead (exactly), and the payload is accepted.
    for (size_t i = 0; i < 1920; i++)
        m [i] = (i % 3 ? 1e37f : -3e37f);
    gc_compressor_t *comp = gc_compressor_new ("powersgd:2", &layout, 7, NULL);
    gc_buf_t out;
    gc_buf_init (&out);
    s_roundtrip (comp, m, 0, q, &out);
    assert_memory_equal (q, m, n * sizeof *q);
    gc_buf_free (&out);
    gc_compressor_destroy (&comp);
    free (m);
    free (q);
}

//  LBS with a lossless inner method: everything sent plus what is deferred
//  equals everything put in, windows are contiguous and within budget, and
//  every layer is sent, even the quiet one.
static void
test_lbs_sends_every_layer_and_loses_nothing (void **state)
{
    gc_layout_t layout;
    gc_layout_init (&layout);
    static const uint32_t sizes [] = { 400, 20, 300, 20, 100, 10, 50 };
    for (int l = 0; l < 7; l++) {
        char name [16];
        snprintf (name, sizeof name, "l%d", l);
        assert_int_equal (gc_layout_add_vector (&layout, name, sizes [l], NULL), 0);
    }
    size_t n = layout.n_params;
    const uint32_t maxage = 5;
    gc_compressor_t *comp = gc_compressor_new ("lbs:budget=0.3:maxage=5:keep=0.5:none", &layout, 1, NULL);
    assert_non_null (comp);
    assert_string_equal (gc_compressor_name (comp), "lbs:budget=0.3:maxage=5:keep=0.5:none");
    float *x = malloc (n * sizeof *x), *q = malloc (n * sizeof *q);
    double *in = calloc (n, sizeof *in), *sent = calloc (n, sizeof *sent);
    uint32_t age [7] = { 0 };
    int times_sent [7] = { 0 };
    gc_rng_t rng;
    gc_rng_init (&rng, 4, 0);
    gc_buf_t out;
    gc_buf_init (&out);
    for (uint64_t round = 0; round < 60; round++) {
        for (size_t l = 0; l < 7; l++) {
            //  Layer 2 hardly moves; layer 4 moves a lot.
            float scale = l == 2 ? 1e-4f : l == 4 ? 10.0f : 1.0f;
            for (size_t i = 0; i < sizes [l]; i++)
                x [layout.layers [l].offset + i] = scale * (float) gc_rng_normal (&rng);
        }
        s_roundtrip (comp, x, round, q, &out);
        gc_payload_info_t info;
        assert_int_equal (gc_payload_inspect (out.data, out.len, &layout, &info, NULL), 0);
        assert_true (info.lbs);
        int first = -1, last = -1;
        size_t window = 0;
        for (size_t l = 0; l < 7; l++) {
            const gc_layer_t *layer = &layout.layers [l];
            bool any = false;
            for (size_t i = 0; i < layer->count; i++)
                any |= q [layer->offset + i] != 0.0f;
            if (any) {
                if (first < 0)
                    first = (int) l;
                assert_true (last < 0 || last == (int) l - 1);     /* contiguous */
                last = (int) l;
                window += layer->count;
                times_sent [l]++;
                age [l] = 0;
            }
            else {
                age [l]++;
                //  A layer waits at most maxage + layers rounds.
                assert_true (age [l] < maxage + 7);
            }
        }
        assert_true (first >= 0);
        assert_true (window <= 0.3 * n || first == last);
        const float *deferred = gc_compressor_deferred (comp);
        assert_non_null (deferred);
        for (size_t i = 0; i < n; i++) {
            in [i] += x [i];
            sent [i] += q [i];
            //  Float tolerance: the deferred sum is kept in float.
            assert_true (fabs (sent [i] + deferred [i] - in [i]) <= 1e-5 * (1.0 + fabs (in [i])));
        }
    }
    for (size_t l = 0; l < 7; l++) {
        print_message ("lbs layer %zu (%u params): sent %d times of 60\n", l, sizes [l], times_sent [l]);
        assert_true (times_sent [l] >= 60 / (int) (maxage + 7));
    }
    //  The busy layer goes more often than the quiet one.
    assert_true (times_sent [4] > times_sent [2]);
    gc_compressor_set_defer (comp, false);
    assert_null (gc_compressor_deferred (comp));
    gc_buf_free (&out);
    gc_compressor_destroy (&comp);
    free (x);
    free (q);
    free (in);
    free (sent);
}

static void
test_specs_parse_or_explain (void **state)
{
    gc_layout_t layout;
    assert_int_equal (gc_layout_init_flat (&layout, 100, NULL), 0);
    static const struct { const char *spec, *name; } good [] = {
        { "none", "none" }, { "fp32", "none" }, { "fp16", "fp16" },
        { "topk", "topk:0.01:global:sampled:fp32" },
        { "topk:0.05:layer:exact:fp16", "topk:0.05:layer:exact:fp16" },
        { "topk:fp16", "topk:0.01:global:sampled:fp16" },
        { "randk", "randk:0.01:scaled:fp32" }, { "randk:0.2:unscaled", "randk:0.2:unscaled:fp32" },
        { "threshold", "threshold:0.001:fp32" }, { "thresh:0.5:fp16", "threshold:0.5:fp16" },
        { "qsgd", "qsgd:16:bucket=512" }, { "qsgd:8:bucket=128", "qsgd:8:bucket=128" },
        { "sign", "sign:bucket=0" }, { "sign:bucket=256", "sign:bucket=256" },
        { "powersgd", "powersgd:2:fp32" }, { "powersgd:4:fp16", "powersgd:4:fp16" },
        { "lbs:topk:0.01", "lbs:budget=0.25:maxage=8:keep=0.5:topk:0.01:global:sampled:fp32" },
        { "lbs:keep=0:budget=1:qsgd:4", "lbs:budget=1:maxage=8:keep=0:qsgd:4:bucket=512" },
    };
    for (size_t i = 0; i < sizeof good / sizeof good [0]; i++) {
        gc_err_t err;
        gc_compressor_t *comp = gc_compressor_new (good [i].spec, &layout, 1, &err);
        if (!comp)
            fail_msg ("'%s': %s", good [i].spec, err.msg);
        assert_string_equal (gc_compressor_name (comp), good [i].name);
        //  The canonical name parses to itself.
        gc_compressor_t *again = gc_compressor_new (gc_compressor_name (comp), &layout, 1, NULL);
        assert_non_null (again);
        assert_string_equal (gc_compressor_name (again), good [i].name);
        gc_compressor_destroy (&again);
        gc_compressor_destroy (&comp);
        assert_null (comp);
    }
    static const struct { const char *spec, *mentions; } bad [] = {
        { "", "unknown method" }, { "zip", "zip" }, { "topk:0", "ratio" }, { "topk:1.5", "ratio" },
        { "topk:0.1:fast", "fast" }, { "topk:0.1x", "0.1x" }, { "randk:0.1:layer", "layer" },
        { "qsgd:0", "qsgd levels" }, { "qsgd:2.5", "not an integer" }, { "qsgd:4:bucket=0", "bucket" },
        { "qsgd:4:fp16", "fp16" }, { "sign:bucket=-1", "bucket" }, { "powersgd:65", "rank" },
        { "powersgd:0", "rank" }, { "lbs", "inner" }, { "lbs:budget=0.5", "inner" },
        { "lbs:lbs:topk", "inner" }, { "lbs:width=3:topk", "width" }, { "lbs:budget=2:topk", "budget" },
        { "none:1", "1" }, { "threshold:-1", "threshold" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_err_t err = { 0 };
        gc_compressor_t *comp = gc_compressor_new (bad [i].spec, &layout, 1, &err);
        if (comp)
            fail_msg ("'%s' was accepted as %s", bad [i].spec, gc_compressor_name (comp));
        assert_int_equal (err.code, GC_E_SPEC);
        if (!strstr (err.msg, bad [i].mentions))
            fail_msg ("'%s': message '%s' does not mention '%s'", bad [i].spec, err.msg, bad [i].mentions);
    }
    gc_layout_t empty;
    gc_layout_init (&empty);
    gc_err_t err;
    assert_null (gc_compressor_new ("none", &empty, 1, &err));
    assert_int_equal (err.code, GC_E_INPUT);
}

static void
test_nonfinite_input_is_refused_by_every_method (void **state)
{
    gc_layout_t layout;
    gc_layout_init (&layout);
    assert_int_equal (gc_layout_add_matrix (&layout, "w", 20, 30, NULL), 0);
    assert_int_equal (gc_layout_add_vector (&layout, "b", 20, NULL), 0);
    static const char *specs [] = { "none", "fp16", "topk:0.1", "topk:0.1:layer:exact", "randk:0.1",
                                    "threshold:0.5", "qsgd", "sign", "powersgd:2", "lbs:topk:0.1" };
    float *x = s_gauss (layout.n_params, 6, 1.0f);
    x [613] = NAN;
    for (size_t i = 0; i < sizeof specs / sizeof specs [0]; i++) {
        gc_compressor_t *comp = gc_compressor_new (specs [i], &layout, 1, NULL);
        gc_buf_t out;
        gc_buf_init (&out);
        gc_err_t err;
        assert_int_equal (gc_compressor_compress (comp, x, 0, &out, &err), -1);
        assert_int_equal (err.code, GC_E_NONFINITE);
        if (!strstr (err.msg, "613"))
            fail_msg ("%s: '%s' does not name the entry", specs [i], err.msg);
        gc_buf_free (&out);
        gc_compressor_destroy (&comp);
    }
    free (x);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_randk_is_unbiased_and_reproducible),
        cmocka_unit_test (test_qsgd_is_unbiased_and_on_levels),
        cmocka_unit_test (test_sign_sends_scaled_sign),
        cmocka_unit_test (test_powersgd_error_falls_with_rank),
        cmocka_unit_test (test_lbs_sends_every_layer_and_loses_nothing),
        cmocka_unit_test (test_specs_parse_or_explain),
        cmocka_unit_test (test_nonfinite_input_is_refused_by_every_method),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
