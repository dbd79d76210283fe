/*  One ring neighbour down with cwtm:1 (3 inputs needed, 2 left): the peer
    mixes under cwtm:0 with the neighbour it still has, counts it as a
    fallback, and stays with the network; with gossip/fallback off it skips
    every mix and drifts away (the behaviour before). */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "net_fixture.h"

//  Peer 1 is down for peer 0: nothing of it arrives.
static bool
s_cut (net_t *net, net_msg_t *msg, void *arg)
{
    (void) net;
    (void) arg;
    return !(msg->from == 1 && msg->to == 0);
}

typedef struct {
    uint64_t skipped, fallbacks, round, catchups;
    double   distance, accuracy;
} s_outcome_t;

static s_outcome_t
s_run (bool fallback)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.fallback = fallback;
    cfg.wait_timeout_ns = 1;            /* the lock-step net delivers before the wait */
    net_t *net = net_new (4, "ring", &cfg, NULL);
    assert_non_null (net);
    net->filter = s_cut;
    for (int r = 0; r < 60; r++)
        net_round (net);
    gc_engine_stats_t s;
    gc_engine_stats (net->engines [0], &s);
    s_outcome_t o = { s.mix_skipped, s.mix_fallbacks, s.round, s.catchups, net_consensus_distance (net),
                      net_mean_accuracy (net) };
    //  the others have both of their neighbours: never a fallback
    for (uint32_t i = 1; i < 4; i++) {
        gc_engine_stats (net->engines [i], &s);
        assert_int_equal (s.mix_fallbacks, 0);
        assert_int_equal (s.mix_skipped, 0);
    }
    if (fallback)
        assert_string_equal (gc_engine_fallback_rule (net->engines [0]), "cwtm:0");
    net_destroy (&net);
    return o;
}

static void
test_one_neighbour_down (void **state)
{
    s_outcome_t on = s_run (true), off = s_run (false);
    printf ("fallback on: round %llu, catch-ups %llu, skipped %llu, fallbacks %llu, consensus distance %.4f, "
            "accuracy %.4f\n", (unsigned long long) on.round, (unsigned long long) on.catchups,
            (unsigned long long) on.skipped, (unsigned long long) on.fallbacks, on.distance, on.accuracy);
    printf ("fallback off: round %llu, catch-ups %llu, skipped %llu, fallbacks %llu, consensus distance %.4f, "
            "accuracy %.4f\n", (unsigned long long) off.round, (unsigned long long) off.catchups,
            (unsigned long long) off.skipped, (unsigned long long) off.fallbacks, off.distance, off.accuracy);
    //  peer 1's replica at peer 0 stays the shared initial state of round
    //  0, an input while it is within gossip/staleness (S) rounds: rounds
    //  0..S mix all three, every later one falls back (on) or is skipped
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    uint64_t short_rounds = cfg.rounds - cfg.staleness - 1;
    assert_int_equal (on.round, cfg.rounds);
    assert_int_equal (on.skipped, 0);
    assert_int_equal (on.fallbacks, short_rounds);
    assert_int_equal (off.skipped, short_rounds);
    assert_int_equal (off.fallbacks, 0);
    //  mixing keeps peer 0 with the others; alone it drifts
    assert_true (on.distance < off.distance);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_one_neighbour_down),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
