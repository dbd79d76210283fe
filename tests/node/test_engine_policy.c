/*  Ratio policies in the round engine, over the in-memory network: a lazy
    peer's skips reach its neighbours as empty deltas, so they stay fresh
    and in every mix (no gap, no keyframe request, nothing rejected), while
    the same skips lost on the way are gaps the receivers notice; every
    policy learns. (Which policies a compressor and EC mode refuse:
    tests/compress/test_policy.c.) */
#include "gc_test.h"

#include <string.h>

#include "gc_payload.h"
#include "net_fixture.h"

typedef struct {
    const char *policy, *ec, *compress;
    bool        drop_skips;     /* the transport loses every empty delta */
    bool        skips;          /* sends_skipped > 0 expected */
    bool        gaps;           /* receivers see gaps expected */
} s_case_t;

static bool
s_drop_empty (net_t *net, net_msg_t *msg, void *arg)
{
    (void) net;
    (void) arg;
    return msg->payload_len != GC_PAYLOAD_HEADER_SIZE;
}

static net_t *
s_run (const char *policy, const char *ec, const char *compress, bool drop_skips)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.policy = policy;
    cfg.ec = ec;
    cfg.compress = compress;
    cfg.aggregator = "mean";
    if (!strcmp (ec, "ef"))
        cfg.gamma = 0.5;
    net_t *net = net_new (6, "ring", &cfg, NULL);
    assert_non_null (net);
    if (drop_skips)
        net->filter = s_drop_empty;
    //  bandwidth reads the compute time: a fixed one, not the wall clock's
    for (uint32_t p = 0; p < net->n; p++)
        gc_engine_set_link (net->engines [p], 0.003, 0, 0);
    for (int r = 0; r < 60; r++)
        net_round (net);
    return net;
}

//  Each policy learns within 5 points of fixed on the same compressor and
//  EC mode; skips are counted, delivered and never mistaken for losses.
static void
test_policies_in_the_engine (void **state)
{
    (void) state;
    static const s_case_t cases [] = {
        { "fixed", "liec:20", "topk:0.1", false, false, false },
        { "lazy:theta=2:K=2:window=4", "liec:20", "topk:0.1", false, true, false },
        { "lazy", "ef", "topk:0.1", false, true, false },
        { "lazy:theta=2:K=2:window=4", "liec:20", "topk:0.1", true, true, true },
        { "accordion", "liec:20", "topk:0.1", false, false, false },
        { "bandwidth:rate=1e6", "liec:20", "topk:0.1", false, false, false },
        { "lgreco:every=5", "liec:20", "topk:0.1:layer", false, false, false },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        const s_case_t *k = &cases [c];
        net_t *base = s_run ("fixed", k->ec, k->compress, false);
        double want = net_mean_accuracy (base) - 0.05;
        net_destroy (&base);
        net_t *net = s_run (k->policy, k->ec, k->compress, k->drop_skips);
        double acc = net_mean_accuracy (net);
        uint64_t skipped = 0, gaps = 0, requests = 0, rejected = 0, applied = 0;
        for (uint32_t p = 0; p < net->n; p++) {
            gc_engine_stats_t s;
            gc_engine_stats (net->engines [p], &s);
            assert_int_equal (s.round, 60);
            skipped += s.sends_skipped;
            gaps += s.gaps;
            requests += s.keyframe_requests_sent;
            rejected += s.rejected;
            applied += s.deltas_applied;
            assert_true (s.send_budget >= 0 && s.send_budget <= 1);
            //  every in-neighbour fresh in the last mix: the own model and two
            if (!k->gaps)
                assert_int_equal (s.mixed_inputs, 3);
        }
        print_message ("%-28s %-7s accuracy %.3f (fixed - 0.05: %.3f), skipped %llu, gaps %llu, applied %llu\n",
                       k->policy, k->ec, acc, want, (unsigned long long) skipped,
                       (unsigned long long) gaps, (unsigned long long) applied);
        assert_true (acc >= want);
        assert_int_equal (rejected, 0);
        if ((skipped > 0) != k->skips)
            fail_msg ("%s: %llu skips", k->policy, (unsigned long long) skipped);
        if ((gaps > 0) != k->gaps || (requests > 0) != k->gaps)
            fail_msg ("%s: %llu gaps, %llu keyframe requests", k->policy,
                      (unsigned long long) gaps, (unsigned long long) requests);
        //  a skip is delivered and applied like any delta: 2 in-neighbours x 60 rounds
        if (!k->drop_skips)
            assert_true (applied >= net->n * 2 * 60);
        net_destroy (&net);
    }
}

//  The driver's round time reaches the policy: bandwidth:round=1 budgets
//  against it (ten times the compute time here, so about ten times the
//  entries), round=0 against the compute time.
static void
test_bandwidth_reads_the_round (void **state)
{
    (void) state;
    double budget [2];
    for (int round = 0; round < 2; round++) {
        gc_engine_config_t cfg;
        net_config_defaults (&cfg);
        cfg.policy = round ? "bandwidth:rate=1e6:min=0.0001:max=1:round=1"
                           : "bandwidth:rate=1e6:min=0.0001:max=1";
        cfg.ec = "liec:20";
        cfg.compress = "topk:0.1";
        cfg.aggregator = "mean";
        net_t *net = net_new (4, "ring", &cfg, NULL);
        assert_non_null (net);
        for (int r = 0; r < 12; r++) {
            for (uint32_t p = 0; p < net->n; p++)
                gc_engine_set_link (net->engines [p], 0.001, 0.01, 0);
            net_round (net);
        }
        gc_engine_stats_t s;
        gc_engine_stats (net->engines [0], &s);
        budget [round] = s.send_budget;
        net_destroy (&net);
    }
    print_message ("budget against the compute time %g, against the round %g\n", budget [0], budget [1]);
    assert_true (budget [0] > 0);
    assert_true (budget [1] > 5 * budget [0] && budget [1] < 20 * budget [0]);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_policies_in_the_engine),
        cmocka_unit_test (test_bandwidth_reads_the_round),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
