/*  gossip/keep_unsent: under liec the mix leaves the peer's own training
    progress that no payload carried yet where it is (docs/ALGORITHMS.md,
    "Error compensation modes"). Without it, each mix pulls x towards
    replicas that lack that progress and undoes the fraction 1 - w_ii of it. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net_fixture.h"

static net_t *
s_net (const char *ec, double keep, double gamma)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.compress = "topk:0.01";
    cfg.ec = ec;
    cfg.aggregator = "mean";
    cfg.gamma = gamma;
    cfg.keep_unsent = keep;
    net_t *net = net_new (6, "ring", &cfg, NULL);
    assert_non_null (net);
    return net;
}

//  Peer 0's model after `rounds` rounds (a copy).
static float *
s_model_after (const char *ec, double keep, double gamma, int rounds, float **x0, size_t *n)
{
    net_t *net = s_net (ec, keep, gamma);
    *n = gc_engine_n_params (net->engines [0]);
    if (x0) {
        *x0 = malloc (*n * sizeof **x0);
        memcpy (*x0, gc_engine_params (net->engines [0]), *n * sizeof **x0);
    }
    for (int r = 0; r < rounds; r++)
        net_round (net);
    float *x = malloc (*n * sizeof *x);
    memcpy (x, gc_engine_params (net->engines [0]), *n * sizeof *x);
    net_destroy (&net);
    return x;
}

//  The fraction of the coordinates training changed in which the mixed
//  model still holds (within 1 %) what training gave it.
static double
s_kept (const float *x0, const float *trained, const float *mixed, size_t n)
{
    size_t changed = 0, kept = 0;
    for (size_t i = 0; i < n; i++) {
        double g = (double) trained [i] - x0 [i];
        if (fabs (g) < 1e-6)
            continue;
        changed++;
        if (fabs ((double) mixed [i] - trained [i]) <= 0.01 * fabs (g))
            kept++;
    }
    assert_true (changed > n / 2);
    return (double) kept / (double) changed;
}

//  Round one: every replica starts at x⁰, top-k 1 % sends few coordinates,
//  so in almost every coordinate neither the peer nor its neighbours sent
//  anything. γ = 0 gives the trained model without a mix (the same training,
//  deterministic). keep_unsent 1 keeps all of it; 0 (liec as it was) keeps
//  w_00 = 1/3 of it on the ring, so almost no coordinate stays within 1 %.
static void
test_unsent_progress_survives_the_mix (void **state)
{
    (void) state;
    size_t n;
    float *x0;
    float *trained = s_model_after ("liec:20", 0, 0.0, 1, &x0, &n);
    float *keep = s_model_after ("liec:20", 1, 1.0, 1, NULL, &n);
    float *drop = s_model_after ("liec:20", 0, 1.0, 1, NULL, &n);
    double with = s_kept (x0, trained, keep, n), without = s_kept (x0, trained, drop, n);
    print_message ("kept within 1 %%: keep_unsent 1 %.3f, 0 %.3f\n", with, without);
    assert_true (with >= 0.9);
    assert_true (without <= 0.1);
    //  half of it: the centre x - g / 2, so x keeps g (1 - (1 - 1/3) / 2) = 2/3 g
    float *half = s_model_after ("liec:20", 0.5, 1.0, 1, NULL, &n);
    size_t close = 0, changed = 0;
    for (size_t i = 0; i < n; i++) {
        double g = (double) trained [i] - x0 [i];
        if (fabs (g) < 1e-6)
            continue;
        changed++;
        close += fabs ((double) half [i] - x0 [i] - 2.0 / 3.0 * g) <= 0.01 * fabs (g);
    }
    assert_true (close >= 0.9 * changed);
    free (x0);
    free (trained);
    free (keep);
    free (drop);
    free (half);
}

//  An exact round sends everything: with liec:1 no progress is ever unsent
//  and keep_unsent changes nothing, bit for bit.
static void
test_exact_rounds_leave_nothing_unsent (void **state)
{
    (void) state;
    size_t n;
    float *a = s_model_after ("liec:1", 1, 1.0, 5, NULL, &n);
    float *b = s_model_after ("liec:1", 0, 1.0, 5, NULL, &n);
    assert_memory_equal (a, b, n * sizeof *a);
    free (a);
    free (b);
}

//  Learning: over 60 rounds a network with it does not do worse than
//  without (5 points of slack: the synthetic task is easy for both).
static void
test_learns (void **state)
{
    (void) state;
    net_t *with = s_net ("liec:20", 0.7, 1.0), *without = s_net ("liec:20", 0, 1.0);
    for (int r = 0; r < 60; r++) {
        net_round (with);
        net_round (without);
    }
    double a = net_mean_accuracy (with), b = net_mean_accuracy (without);
    print_message ("accuracy after 60 rounds: keep_unsent 0.7 %.3f, 0 %.3f\n", a, b);
    assert_true (a >= b - 0.05);
    assert_true (net_consensus_distance (with) < 0.5);
    net_destroy (&with);
    net_destroy (&without);
}

//  Only liec: ef mixes around x̂ already, none sends nothing of e ever.
static void
test_refused_without_liec (void **state)
{
    (void) state;
    net_t *net = s_net ("liec:20", 1, 1.0);
    const char *modes [] = { "ef", "none", "liecx" };
    for (size_t m = 0; m < 3; m++) {
        gc_engine_config_t c = net->cfgs [0];
        c.ec = modes [m];
        gc_engine_io_t io = { 0 };
        gc_err_t err = { 0 };
        gc_engine_t *e = gc_engine_new (&c, &io, &err);
        assert_null (e);
        print_message ("%s: %s\n", modes [m], err.msg);
        assert_non_null (strstr (err.msg, m < 2 ? "keep_unsent" : "liecx"));
    }
    gc_engine_config_t c = net->cfgs [0];
    c.keep_unsent = 1.5;
    gc_engine_io_t io = { 0 };
    gc_err_t err = { 0 };
    assert_null (gc_engine_new (&c, &io, &err));
    assert_non_null (strstr (err.msg, "keep_unsent"));
    net_destroy (&net);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_unsent_progress_survives_the_mix),
        cmocka_unit_test (test_exact_rounds_leave_nothing_unsent),
        cmocka_unit_test (test_learns),
        cmocka_unit_test (test_refused_without_liec),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
