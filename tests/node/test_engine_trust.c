/*  The engine's trust boundary (issue 19): what a peer-supplied header can
    make a receiver spend or believe. A relay costs the author nothing, a
    muted sender costs no verify, a signed round past the run is refused. */
#include "gc_test.h"

#include <stdlib.h>
#include <string.h>

#include "gc_wire.h"
#include "gc_wire_reason.h"
#include "net_fixture.h"

//  Messages one author sent during some rounds, kept to be re-injected.
typedef struct {
    uint32_t  author;
    net_msg_t kept [256];
    size_t    n;
} s_tap_t;

static bool
s_tap (net_t *net, net_msg_t *msg, void *arg)
{
    s_tap_t *tap = arg;
    if (msg->from == tap->author && tap->n < sizeof tap->kept / sizeof tap->kept [0]) {
        net_msg_t *k = &tap->kept [tap->n++];
        *k = *msg;
        k->header = malloc (msg->header_len);
        k->payload = malloc (msg->payload_len ? msg->payload_len : 1);
        assert_non_null (k->header);
        assert_non_null (k->payload);
        memcpy (k->header, msg->header, msg->header_len);
        memcpy (k->payload, msg->payload, msg->payload_len);
    }
    return true;
}

static void
s_tap_free (s_tap_t *tap)
{
    for (size_t i = 0; i < tap->n; i++) {
        free (tap->kept [i].header);
        free (tap->kept [i].payload);
    }
    tap->n = 0;
}

//  A sequence lease kept in memory (gc_engine_seq_lease).
typedef struct {
    uint64_t end;                   /* the "file": last lease end stored */
    int      stores;
    bool     fail;
} s_lease_t;

static int
s_store_lease (void *ctx, uint64_t end, gc_err_t *err)
{
    s_lease_t *l = ctx;
    if (l->fail)
        return gc_err_set (err, GC_E_IO, "disk full");
    assert_true (end > l->end);
    l->end = end;
    l->stores++;
    return 0;
}

static gc_msg_header_t
s_parse (const net_msg_t *m)
{
    gc_msg_header_t h;
    assert_int_equal (gc_wire_parse_frames (m->header, m->header_len, m->payload, m->payload_len,
                                            SIZE_MAX, &h, NULL), GC_WIRE_OK);
    return h;
}

//  A message signed by `author` (its own key: authentic) and handed to `to`.
static gc_deliver_t
s_inject_signed (net_t *net, uint32_t author, uint32_t to, gc_msg_header_t h,
                 const uint8_t *payload, size_t len)
{
    uint8_t network [GC_WIRE_NETWORK_ID_SIZE], header [GC_WIRE_HEADER_SIZE];
    memcpy (network, h.network_id, sizeof network);
    assert_int_equal (gc_wire_encode (net->keys [author], network, &h, payload, len, header, NULL), 0);
    return net_inject (net, to, header, sizeof header, payload, len);
}

//  A net of 4 on topology that ran `rounds` rounds while *tap kept what
//  peer 1 sent; *seq is the largest seq it used.
static net_t *
s_tapped_net (const char *topology, int rounds, s_tap_t **tap, uint64_t *seq)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    net_t *net = net_new (4, topology, &cfg, NULL);
    *tap = calloc (1, sizeof **tap);
    assert_non_null (*tap);
    (*tap)->author = 1;
    net->filter = s_tap;
    net->filter_arg = *tap;
    for (int r = 0; r < rounds; r++)
        net_round (net);
    net->filter = NULL;
    *seq = 0;
    for (size_t i = 0; i < (*tap)->n; i++) {
        uint64_t s = s_parse (&(*tap)->kept [i]).seq;
        *seq = s > *seq ? s : *seq;
    }
    return net;
}

//  Finding 6. 1 sends to 0 and 3, not to 2; 2 sends to 1 (so 1 is 2's
//  contact, an out-neighbour only). A relay (0) forwards 1's authentic deltas
//  to 2: before, each counted not_neighbour against 1 and the twentieth
//  muted it, so 2 then refused 1's legitimate keyframe requests.
static void
test_relay_costs_the_author_nothing (void **state)
{
    s_tap_t *tap;
    uint64_t last_seq;
    net_t *net = s_tapped_net ("edges:0-1,0-2,1-3,2-3,2>1", 30, &tap, &last_seq);
    size_t relayed = 0;
    for (size_t i = 0; i < tap->n; i++) {
        net_msg_t *m = &tap->kept [i];
        gc_msg_header_t h = s_parse (m);
        if (h.type != GC_MSG_DELTA || m->to != 0)
            continue;               /* one copy of each delta */
        assert_int_equal (net_inject (net, 2, m->header, m->header_len, m->payload, m->payload_len),
                          GC_DELIVER_UNAUTHENTICATED);      /* the connection's */
        relayed++;
    }
    assert_true (relayed >= 25);
    gc_engine_t *v = net->engines [2];
    assert_int_equal (gc_engine_rejections (v, 1, GC_REJECT_NOT_NEIGHBOUR), 0);
    assert_int_equal (gc_engine_rejections (v, UINT32_MAX, GC_REJECT_NOT_NEIGHBOUR), relayed);
    //  1 asks 2 (its in-neighbour) for a keyframe: served, not muted
    gc_msg_header_t req = s_parse (&tap->kept [0]);
    req.type = GC_MSG_KEYFRAME_REQUEST;
    req.flags = 0;
    req.seq = last_seq + 1;
    req.base_seq = 0;
    assert_int_equal (s_inject_signed (net, 1, 2, req, net->ids [2], 8), GC_DELIVER_OK);
    assert_int_equal (gc_engine_rejections (v, 1, GC_REJECT_MUTED), 0);
    s_tap_free (tap);
    free (tap);
    net_destroy (&net);
}

//  Finding 5. An in-neighbour signs a delta with round 2^63. Before: applied,
//  the replica held round 2^63, counted fresh for the rest of the run, and
//  its staleness overflowed (UBSan). Now: refused as bad_round, against it.
static void
test_round_past_the_run_is_refused (void **state)
{
    s_tap_t *tap;
    uint64_t seq;
    net_t *net = s_tapped_net ("ring", 5, &tap, &seq);
    static const uint64_t rounds [] = { 1ULL << 63, UINT64_MAX, 61 };     /* node/rounds is 60 */
    for (size_t c = 0; c < sizeof rounds / sizeof rounds [0]; c++) {
        net_msg_t *m = &tap->kept [tap->n - 1];
        for (size_t i = 0; i < tap->n; i++)
            if (tap->kept [i].to == 2 && s_parse (&tap->kept [i]).type == GC_MSG_DELTA)
                m = &tap->kept [i];
        gc_msg_header_t h = s_parse (m);
        assert_int_equal (h.type, GC_MSG_DELTA);
        h.round = rounds [c];
        h.seq = ++seq;
        assert_int_equal (s_inject_signed (net, 1, 2, h, m->payload, m->payload_len),
                          GC_DELIVER_REJECTED);
    }
    gc_engine_t *v = net->engines [2];
    assert_int_equal (gc_engine_rejections (v, 1, GC_REJECT_BAD_ROUND), 3);
    int64_t lag = gc_engine_staleness (v, 1);
    assert_true (lag >= 0 && lag <= 1);
    //  1's key signed those seqs, which 1's counter does not know: its next
    //  deltas under them would be other headers under used seqs, proof of
    //  equivocation (test_engine_equiv). 1 goes on past them, as after a
    //  lease, and its replica stays fresh, 1 not excluded.
    s_lease_t lease = { 0 };
    gc_engine_seq_lease (net->engines [1], seq, s_store_lease, &lease);
    net_round (net);
    lag = gc_engine_staleness (v, 1);
    assert_true (lag >= 0 && lag <= 1);
    assert_false (gc_engine_excluded (v, 1));
    s_tap_free (tap);
    free (tap);
    net_destroy (&net);
}

//  Finding 3, the engine's part. An authentic in-neighbour that keeps
//  failing is muted after mute_after messages; from then on whatever claims
//  its key costs no signature verify and is handed back as the connection's
//  (UNAUTHENTICATED), so the transport can act on the connection or address
//  however often it reconnects. Forgeries under an honest key cost one
//  verify each but never mute that key.
static void
test_muted_sender_costs_no_verify (void **state)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    s_tap_t *tap;
    uint64_t seq;
    net_t *net = s_tapped_net ("ring", 3, &tap, &seq);
    gc_engine_t *v = net->engines [2];
    gc_engine_stats_t s0, s1;
    gc_engine_stats (v, &s0);
    gc_msg_header_t h = s_parse (&tap->kept [0]);
    uint8_t junk [64] = { 0 };
    h.type = GC_MSG_HELLO;
    h.flags = 0;
    h.round = 1ULL << 63;
    h.base_seq = 0;
    const int flood = 1000;
    int muted_verdicts = 0;
    for (int i = 0; i < flood; i++) {
        h.seq = ++seq;
        gc_deliver_t d = s_inject_signed (net, 1, 2, h, junk, sizeof junk);
        muted_verdicts += d == GC_DELIVER_UNAUTHENTICATED;
    }
    gc_engine_stats (v, &s1);
    print_message ("%d messages from a failing key: %llu verifies, %llu muted\n", flood,
                   (unsigned long long) (s1.verifies - s0.verifies),
                   (unsigned long long) gc_engine_rejections (v, 1, GC_REJECT_MUTED));
    //  the budget: mute_after verifies, then none
    assert_int_equal (s1.verifies - s0.verifies, cfg.mute_after);
    assert_int_equal (gc_engine_rejections (v, 1, GC_REJECT_BAD_ROUND), cfg.mute_after);
    assert_int_equal (gc_engine_rejections (v, 1, GC_REJECT_MUTED), flood - (int) cfg.mute_after);
    assert_int_equal (muted_verdicts, flood - (int) cfg.mute_after);
    //  forgeries claiming honest 3: a verify each, counted unattributed,
    //  3 stays unmuted and its deltas still apply
    uint8_t header [GC_WIRE_HEADER_SIZE];
    uint8_t seed [32] = { 0x77 };
    gc_key_t *forger = gc_key_from_seed (seed, NULL);
    h.round = 1;
    //  seqs fresh for 3 (the peers' seqs start from the wall clock in ms,
    //  so 3's may lie far above 1's: below its window they would be stale,
    //  refused without a verify)
    uint64_t round3, seq3;
    const float *x3, *v3;
    gc_engine_snapshot (net->engines [3], &round3, &seq3, &x3, &v3);
    for (int i = 0; i < 50; i++) {
        h.seq = ++seq3;
        assert_int_equal (gc_wire_encode (forger, h.network_id, &h, junk, sizeof junk, header, NULL), 0);
        memcpy (header + 24, net->ids [3], 8);
        assert_int_equal (net_inject (net, 2, header, sizeof header, junk, sizeof junk),
                          GC_DELIVER_UNAUTHENTICATED);
    }
    gc_engine_stats (v, &s0);
    assert_int_equal (s0.verifies - s1.verifies, 50);
    assert_int_equal (gc_engine_rejections (v, 3, GC_WIRE_BAD_SIGNATURE), 0);
    assert_int_equal (gc_engine_rejections (v, UINT32_MAX, GC_WIRE_BAD_SIGNATURE), 50);
    uint64_t applied = s0.deltas_applied;
    net_round (net);
    gc_engine_stats (v, &s1);
    assert_true (s1.deltas_applied >= applied + 1);     /* 3's delta (1 is still muted) */
    assert_int_equal (gc_engine_rejections (v, 3, GC_REJECT_MUTED), 0);
    gc_key_destroy (&forger);
    s_tap_free (tap);
    free (tap);
    net_destroy (&net);
}

//  Finding 8. Seqs came from max(checkpoint seq, wall clock µs): a clock
//  stepped back across a restart made the restarted peer sign under seqs it
//  had used (stale or replays at its neighbours; equivocation evidence
//  against an honest peer). Now they continue past a persisted lease.
//  The largest seq peer 0 signed in the messages kept, and whether every
//  one was covered by the lease stored when it was sent.
typedef struct {
    s_lease_t *lease;
    uint64_t   max_seq, min_seq;
    bool       uncovered;
} s_seq_watch_t;

static bool
s_watch_seqs (net_t *net, net_msg_t *msg, void *arg)
{
    s_seq_watch_t *w = arg;
    gc_msg_header_t h = s_parse (msg);
    if (msg->from == 0 && h.type != GC_MSG_HELLO) {
        w->max_seq = h.seq > w->max_seq ? h.seq : w->max_seq;
        w->min_seq = !w->min_seq || h.seq < w->min_seq ? h.seq : w->min_seq;
        w->uncovered |= h.seq > w->lease->end;
    }
    return true;
}

static void
test_seq_survives_a_clock_stepped_back (void **state)
{
    static const uint64_t clocks [2] = { 1000000000000000ULL, 1000000000000ULL };     /* back */
    s_lease_t lease = { 0 };
    uint64_t last_max = 0;
    for (int run = 0; run < 2; run++) {
        gc_engine_config_t cfg;
        net_config_defaults (&cfg);
        cfg.seq_start = clocks [run];       /* what the wall clock says at this start */
        net_t *net = net_new (4, "ring", &cfg, NULL);
        gc_engine_seq_lease (net->engines [0], lease.end, s_store_lease, &lease);
        s_seq_watch_t w = { .lease = &lease };
        net->filter = s_watch_seqs;
        net->filter_arg = &w;
        for (int r = 0; r < 10; r++)
            net_round (net);
        print_message ("run %d: clock %llu, seqs %llu..%llu, lease %llu (%d stores)\n", run,
                       (unsigned long long) clocks [run], (unsigned long long) w.min_seq,
                       (unsigned long long) w.max_seq, (unsigned long long) lease.end, lease.stores);
        assert_false (w.uncovered);
        if (run == 1)
            assert_true (w.min_seq > last_max);     /* never a seq of the first run */
        last_max = w.max_seq;
        assert_int_equal (gc_engine_rejections (net->engines [1], 0, GC_WIRE_STALE)
                          + gc_engine_rejections (net->engines [1], UINT32_MAX, GC_WIRE_STALE), 0);
        net_destroy (&net);
    }
    assert_int_equal (lease.stores, 2);     /* once per start: a million seqs each */
    //  a lease that cannot be stored: nothing is sent under it
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    net_t *net = net_new (4, "ring", &cfg, NULL);
    lease.fail = true;
    gc_engine_seq_lease (net->engines [0], lease.end, s_store_lease, &lease);
    size_t queued = net->queued;
    gc_engine_train (net->engines [0]);
    gc_err_t err = { 0 };
    assert_int_equal (gc_engine_publish (net->engines [0], net->now, &err), -1);
    assert_non_null (strstr (err.msg, "sequence lease"));
    assert_int_equal (net->queued, queued);
    net_destroy (&net);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_relay_costs_the_author_nothing),
        cmocka_unit_test (test_round_past_the_run_is_refused),
        cmocka_unit_test (test_muted_sender_costs_no_verify),
        cmocka_unit_test (test_seq_survives_a_clock_stepped_back),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
