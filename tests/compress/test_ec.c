/*  Error compensation: after T rounds, everything sent plus the residual is
    everything put in (ef, liec; every method); liec synchronises exactly
    every H rounds; none keeps no residual; errors leave the state alone. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_payload.h"
#include "gc_rng.h"

static void
s_layout (gc_layout_t *l)
{
    gc_layout_init (l);
    assert_int_equal (gc_layout_add_matrix (l, "fc1.w", 30, 20, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "fc1.b", 30, NULL), 0);
    assert_int_equal (gc_layout_add_matrix (l, "fc2.w", 10, 30, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "fc2.b", 10, NULL), 0);
}

typedef struct {
    const char *spec, *mode;
} s_case_t;

//  Runs T rounds and checks sum(sent) + e == sum(u) after each one.
static void
s_run_invariant (const s_case_t *c, int rounds)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_err_t err;
    gc_compressor_t *comp = gc_compressor_new (c->spec, &layout, 3, &err);
    if (!comp)
        fail_msg ("%s: %s", c->spec, err.msg);
    gc_ec_t *ec = gc_ec_new (c->mode, comp, &err);
    if (!ec)
        fail_msg ("%s: %s", c->mode, err.msg);
    float *u = malloc (n * sizeof *u), *sent = malloc (n * sizeof *sent), *q = malloc (n * sizeof *q);
    double *in = calloc (n, sizeof *in), *out_sum = calloc (n, sizeof *out_sum);
    const float *e = gc_ec_residual (ec);
    gc_rng_t rng;
    gc_rng_init (&rng, 11, 0);
    gc_buf_t out;
    gc_buf_init (&out);
    int exact_rounds = 0;
    for (int t = 0; t < rounds; t++) {
        //  Updates with a drift, so that the residual carries something.
        for (size_t i = 0; i < n; i++)
            u [i] = 0.1f * (float) gc_rng_normal (&rng) + 0.01f * (float) (i % 7);
        bool exact = true;
        if (gc_ec_step (ec, u, (uint64_t) t, &out, sent, &exact, &err))
            fail_msg ("%s/%s round %d: %s", c->spec, c->mode, t, err.msg);
        assert_ptr_equal (gc_ec_residual (ec), e);
        //  sent is exactly what the payload decodes to.
        memset (q, 0, n * sizeof *q);
        assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, q, NULL), 0);
        assert_memory_equal (q, sent, n * sizeof *q);
        gc_payload_info_t info;
        assert_int_equal (gc_payload_inspect (out.data, out.len, &layout, &info, NULL), 0);
        assert_int_equal (info.exact, exact);
        exact_rounds += exact;
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            in [i] += u [i];
            out_sum [i] += sent [i];
            double gap = fabs (out_sum [i] + e [i] - in [i]);
            worst = gap > worst ? gap : worst;
            if (exact)
                assert_true (e [i] == 0.0f);
        }
        //  Each round rounds u + e and v - q once (2^-24 relative, |v| < 10):
        //  2e-5 covers 30 rounds with room to spare.
        if (worst > 2e-5)
            fail_msg ("%s/%s round %d: sent + residual misses the inputs by %g", c->spec, c->mode, t, worst);
    }
    if (!strncmp (c->mode, "liec", 4)) {
        long h = c->mode [4] ? strtol (c->mode + 5, NULL, 10) : GC_EC_DEFAULT_H;
        assert_int_equal (exact_rounds, rounds / h);
    }
    else
        assert_int_equal (exact_rounds, 0);
    gc_buf_free (&out);
    gc_ec_destroy (&ec);
    assert_null (ec);
    gc_compressor_destroy (&comp);
    free (u);
    free (sent);
    free (q);
    free (in);
    free (out_sum);
}

static void
test_ef_and_liec_lose_nothing (void **state)
{
    static const s_case_t cases [] = {
        { "topk:0.05", "ef" }, { "topk:0.05:layer:exact:fp16", "ef" }, { "randk:0.1:unscaled", "ef" },
        { "threshold:0.15", "ef" }, { "qsgd:4:bucket=64", "ef" }, { "sign", "ef" },
        { "powersgd:2", "ef" }, { "fp16", "ef" }, { "lbs:topk:0.1", "ef" }, { "lbs:budget=0.5:sign", "ef" },
        { "topk:0.05", "liec:4" }, { "sign", "liec" }, { "lbs:topk:0.1", "liec:5" },
        { "none", "ef" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++)
        s_run_invariant (&cases [i], 30);
}

static void
test_none_keeps_no_residual (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_compressor_t *comp = gc_compressor_new ("topk:0.1", &layout, 3, NULL);
    gc_ec_t *ec = gc_ec_new ("none", comp, NULL);
    assert_string_equal (gc_ec_name (ec), "none");
    float *u = malloc (n * sizeof *u), *sent = malloc (n * sizeof *sent);
    for (size_t i = 0; i < n; i++)
        u [i] = sinf ((float) i);
    gc_buf_t out;
    gc_buf_init (&out);
    for (int t = 0; t < 3; t++) {
        assert_int_equal (gc_ec_step (ec, u, (uint64_t) t, &out, sent, NULL, NULL), 0);
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
            assert_true (gc_ec_residual (ec) [i] == 0.0f);
            assert_true (sent [i] == 0.0f || sent [i] == u [i]);
            kept += sent [i] != 0.0f;
        }
        //  Without a residual the same input gives the same top 10 % every time.
        assert_int_equal (kept, 94);
    }
    //  Without `sent` the step still works.
    assert_int_equal (gc_ec_step (ec, u, 9, &out, NULL, NULL, NULL), 0);
    gc_buf_free (&out);
    gc_ec_destroy (&ec);
    gc_compressor_destroy (&comp);
    free (u);
    free (sent);
}

//  Without EC, `sent` is what the payload decodes to, bit for bit, and for
//  plain fp32 (passes through) that is 0 + update, negative zeros included:
//  what the engine's publish uses instead of sent.
static void
test_none_sends_what_decodes (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    static const char *specs [] = { "none", "fp16", "topk:0.1", "lbs:budget=0.5:none" };
    float *u = malloc (n * sizeof *u), *sent = malloc (n * sizeof *sent), *q = malloc (n * sizeof *q);
    for (size_t i = 0; i < n; i++)
        u [i] = i % 5 == 0 ? -0.0f : sinf ((float) i);
    for (size_t c = 0; c < sizeof specs / sizeof specs [0]; c++) {
        gc_compressor_t *comp = gc_compressor_new (specs [c], &layout, 3, NULL);
        gc_ec_t *ec = gc_ec_new ("none", comp, NULL);
        assert_int_equal (gc_compressor_lossless (comp), c == 0);
        assert_int_equal (gc_ec_passes_through (ec), c == 0);
        gc_buf_t out;
        gc_buf_init (&out);
        assert_int_equal (gc_ec_step (ec, u, 1, &out, sent, NULL, NULL), 0);
        memset (q, 0, n * sizeof *q);
        assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, q, NULL), 0);
        if (memcmp (q, sent, n * sizeof *q))
            fail_msg ("%s: sent differs from the decoded payload", specs [c]);
        //  What passing through promises the engine: the decode is 0 + update.
        for (size_t i = 0; gc_ec_passes_through (ec) && i < n; i++) {
            float want = 0.0f + u [i];
            if (memcmp (&q [i], &want, sizeof want))
                fail_msg ("%s: entry %zu decodes to %g, not 0 + %g", specs [c], i, (double) q [i], (double) u [i]);
        }
        gc_buf_free (&out);
        gc_ec_destroy (&ec);
        gc_compressor_destroy (&comp);
    }
    free (u);
    free (sent);
    free (q);
}

//  ef owns what LBS would defer: the compressor's own deferral is off.
static void
test_ef_turns_lbs_deferral_off (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    gc_compressor_t *comp = gc_compressor_new ("lbs:topk:0.1", &layout, 3, NULL);
    assert_non_null (gc_compressor_deferred (comp));
    gc_ec_t *none = gc_ec_new ("none", comp, NULL);
    assert_non_null (gc_compressor_deferred (comp));
    gc_ec_t *ef = gc_ec_new ("ef", comp, NULL);
    assert_null (gc_compressor_deferred (comp));
    gc_ec_destroy (&ef);
    gc_ec_destroy (&none);
    gc_compressor_destroy (&comp);
}

static void
test_modes_parse_or_explain (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    gc_compressor_t *comp = gc_compressor_new ("topk", &layout, 3, NULL);
    static const struct { const char *mode, *name; } good [] = {
        { "none", "none" }, { "ef", "ef" }, { "liec", "liec:8" }, { "liec:3", "liec:3" },
    };
    for (size_t i = 0; i < sizeof good / sizeof good [0]; i++) {
        gc_ec_t *ec = gc_ec_new (good [i].mode, comp, NULL);
        assert_non_null (ec);
        assert_string_equal (gc_ec_name (ec), good [i].name);
        gc_ec_destroy (&ec);
    }
    static const char *bad [] = { "", "EF", "ef:2", "liec:0", "liec:x", "liec:3:4", "choco" };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_err_t err = { 0 };
        assert_null (gc_ec_new (bad [i], comp, &err));
        assert_int_equal (err.code, GC_E_SPEC);
    }
    gc_err_t err;
    assert_null (gc_ec_new ("ef", NULL, &err));
    assert_int_equal (err.code, GC_E_ARG);
    gc_compressor_destroy (&comp);
}

static void
test_failed_step_changes_nothing (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_compressor_t *comp = gc_compressor_new ("topk:0.05", &layout, 3, NULL);
    gc_ec_t *ec = gc_ec_new ("liec:2", comp, NULL);
    float *u = malloc (n * sizeof *u), *before = malloc (n * sizeof *before);
    for (size_t i = 0; i < n; i++)
        u [i] = cosf ((float) i);
    gc_buf_t out;
    gc_buf_init (&out);
    assert_int_equal (gc_ec_step (ec, u, 0, &out, NULL, NULL, NULL), 0);
    memcpy (before, gc_ec_residual (ec), n * sizeof *before);
    u [17] = INFINITY;
    for (uint64_t round = 0; round < 2; round++) {     /* a compressed and a sync round */
        gc_err_t err;
        bool exact = true;
        assert_int_equal (gc_ec_step (ec, u, round, &out, NULL, &exact, &err), -1);
        assert_int_equal (err.code, GC_E_NONFINITE);
        assert_false (exact);
        assert_memory_equal (gc_ec_residual (ec), before, n * sizeof *before);
    }
    gc_buf_free (&out);
    gc_ec_destroy (&ec);
    gc_compressor_destroy (&comp);
    free (u);
    free (before);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_ef_and_liec_lose_nothing),
        cmocka_unit_test (test_none_keeps_no_residual),
        cmocka_unit_test (test_none_sends_what_decodes),
        cmocka_unit_test (test_ef_turns_lbs_deferral_off),
        cmocka_unit_test (test_modes_parse_or_explain),
        cmocka_unit_test (test_failed_step_changes_nothing),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
