/*  LGC in the round engine, over the in-memory network: peers that receive
    every message decode each other's lgc deltas with the decoders those
    carried (no gap, nothing rejected) and learn like top-k; when every
    delta that carries a decoder is lost, receivers never decode with a
    codec they do not hold: the next deltas are gaps, they ask for
    keyframes, the keyframes bring the decoders, and deltas apply again. */
#include "gc_test.h"

#include <string.h>

#include "gc_payload.h"
#include "net_fixture.h"

//  Loses every lgc delta that carries a decoder (keyframes, method none, pass).
static bool
s_drop_codecs (net_t *net, net_msg_t *msg, void *arg)
{
    (void) net;
    uint64_t *dropped = arg;
    bool announce = msg->payload_len >= GC_PAYLOAD_HEADER_SIZE && msg->payload [4] == GC_METHOD_LGC
                 && (msg->payload [5] & GC_PAYLOAD_FLAG_CODEC);
    *dropped += announce;
    return !announce;
}

static net_t *
s_run (const char *compress, uint64_t *dropped, int rounds)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.compress = compress;
    cfg.ec = "liec:20";
    cfg.aggregator = "mean";
    net_t *net = net_new (6, "ring", &cfg, NULL);
    assert_non_null (net);
    if (dropped) {
        net->filter = s_drop_codecs;
        net->filter_arg = dropped;
    }
    for (int r = 0; r < rounds; r++)
        net_round (net);
    return net;
}

typedef struct {
    uint64_t gaps, requests, rejected, applied, kf_recv;
    uint32_t min_mixed;
} s_totals_t;

static s_totals_t
s_totals (net_t *net, int rounds)
{
    s_totals_t t = { .min_mixed = UINT32_MAX };
    for (uint32_t p = 0; p < net->n; p++) {
        gc_engine_stats_t s;
        gc_engine_stats (net->engines [p], &s);
        assert_int_equal (s.round, rounds);
        t.gaps += s.gaps;
        t.requests += s.keyframe_requests_sent;
        t.rejected += s.rejected;
        t.applied += s.deltas_applied;
        t.kf_recv += s.keyframes_recv;
        t.min_mixed = s.mixed_inputs < t.min_mixed ? (uint32_t) s.mixed_inputs : t.min_mixed;
    }
    return t;
}

static void
test_lgc_in_the_engine (void **state)
{
    (void) state;
    net_t *base = s_run ("topk:0.1", NULL, 60);
    double want = net_mean_accuracy (base) - 0.05;
    net_destroy (&base);
    net_t *net = s_run ("lgc:0.1:8:warmup=10", NULL, 60);
    double acc = net_mean_accuracy (net);
    s_totals_t t = s_totals (net, 60);
    print_message ("lgc accuracy %.3f (top-k - 0.05: %.3f), applied %llu, gaps %llu\n", acc, want,
                   (unsigned long long) t.applied, (unsigned long long) t.gaps);
    assert_true (acc >= want);
    assert_int_equal (t.rejected, 0);
    assert_int_equal (t.gaps, 0);
    assert_true (t.applied >= net->n * 2 * 60);
    assert_int_equal (t.min_mixed, 3);
    net_destroy (&net);
}

static void
test_lost_decoders_are_gaps_mended_by_keyframes (void **state)
{
    (void) state;
    uint64_t dropped = 0;
    net_t *net = s_run ("lgc:0.1:8:warmup=10", &dropped, 60);
    double acc = net_mean_accuracy (net);
    s_totals_t t = s_totals (net, 60);
    print_message ("decoders lost: %llu deltas dropped, gaps %llu, keyframe requests %llu, "
                   "keyframes %llu, applied %llu, accuracy %.3f\n", (unsigned long long) dropped,
                   (unsigned long long) t.gaps, (unsigned long long) t.requests,
                   (unsigned long long) t.kf_recv, (unsigned long long) t.applied, acc);
    //  3 announcing deltas from each of 6 peers to 2 neighbours
    assert_int_equal (dropped, 6 * 2 * 3);
    assert_true (t.gaps > 0);
    assert_true (t.requests > 0 && t.kf_recv > 0);
    assert_int_equal (t.rejected, 0);
    //  Later deltas apply again: most of the 2 x 60 per peer arrive and are used.
    assert_true (t.applied >= net->n * 2 * 40);
    assert_int_equal (t.min_mixed, 3);
    assert_true (acc > 0.5);
    net_destroy (&net);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_lgc_in_the_engine),
        cmocka_unit_test (test_lost_decoders_are_gaps_mended_by_keyframes),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
