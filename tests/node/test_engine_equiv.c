/*  Equivocation (issue 19): two different validly signed headers under one
    (author, seq) seen by a peer exclude the author there; the proof goes on
    to the neighbours, who verify it themselves and exclude the author too;
    evidence that proves nothing counts against whoever signed it, never
    against the accused; an honest peer restarted with a clock stepped back
    is never convicted (its seq lease), and would be without it. */
#include "gc_test.h"

#include <stdlib.h>
#include <string.h>

#include "gc_wire.h"
#include "gc_wire_reason.h"
#include "net_fixture.h"

//  A delta of `author` as it went to `to` in the last rounds: its payload.
typedef struct {
    uint32_t author, to;
    uint8_t  payload [2][65536];    /* the last two, to sign other contents */
    size_t   len [2];
    size_t   n;
} s_tap_t;

static bool
s_tap (net_t *net, net_msg_t *msg, void *arg)
{
    (void) net;
    s_tap_t *t = arg;
    if (msg->from == t->author && msg->to == t->to && msg->header [5] == GC_MSG_DELTA
    &&  msg->payload_len <= sizeof t->payload [0]) {
        size_t k = t->n++ % 2;
        memcpy (t->payload [k], msg->payload, msg->payload_len);
        t->len [k] = msg->payload_len;
    }
    return true;
}

//  A sequence lease kept in memory (gc_engine_seq_lease).
typedef struct { uint64_t end; } s_lease_t;

static int
s_store (void *ctx, uint64_t end, gc_err_t *err)
{
    (void) err;
    ((s_lease_t *) ctx)->end = end;
    return 0;
}

static uint64_t
s_last_seq (net_t *net, uint32_t peer)
{
    uint64_t round, seq;
    const float *x, *v;
    gc_engine_snapshot (net->engines [peer], &round, &seq, &x, &v);
    return seq;
}

//  A header of `type` by key, signed for the net's network.
static void
s_sign (net_t *net, gc_key_t *key, int type, uint64_t round, uint64_t seq, uint64_t base,
        const uint8_t *payload, size_t len, uint8_t header [GC_WIRE_HEADER_SIZE])
{
    uint8_t network [GC_WIRE_NETWORK_ID_SIZE];
    assert_int_equal (gc_wire_network_id (net->cfgs [0].network, network, NULL), 0);
    gc_msg_header_t h = { .type = (uint8_t) type, .round = round, .seq = seq, .base_seq = base };
    assert_int_equal (gc_wire_encode (key, network, &h, payload, len, header, NULL), 0);
}

//  A ring of 4 after a few rounds, with two of 1's real delta payloads to 2.
//  The mean mixes whatever is fresh (cwtm:1 would skip a mix of two).
static net_t *
s_ring_with (s_tap_t *tap, bool witness)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.aggregator = "mean";
    cfg.witness = witness;
    net_t *net = net_new (4, "ring", &cfg, NULL);
    tap->author = 1;
    tap->to = 2;
    net->filter = s_tap;
    net->filter_arg = tap;
    for (int r = 0; r < 4; r++)
        net_round (net);
    net->filter = NULL;
    assert_true (tap->n >= 2);
    assert_true (tap->len [0] != tap->len [1] || memcmp (tap->payload [0], tap->payload [1], tap->len [0]));
    return net;
}

static net_t *
s_ring (s_tap_t *tap)
{
    return s_ring_with (tap, false);
}

//  The proof v holds (the i-th) accuses `author` and verifies for anyone.
static void
s_check_proof (net_t *net, gc_engine_t *v, size_t i, uint32_t author)
{
    uint8_t proof [GC_WIRE_EVIDENCE_SIZE], network [GC_WIRE_NETWORK_ID_SIZE], accused [8];
    assert_true (gc_engine_evidence (v, i, proof));
    assert_int_equal (gc_wire_network_id (net->cfgs [0].network, network, NULL), 0);
    assert_int_equal (gc_wire_evidence_verify (network, net->trust, proof, sizeof proof, accused, NULL),
                      GC_WIRE_OK);
    assert_memory_equal (accused, net->ids [author], 8);
}

//  1 sends 2 a delta under a fresh seq S, then a second message under S.
//  Different signed bytes by 1's key: proof, 1 excluded at 2. The same
//  statement again, or a forgery under S: not proof, 1 stays in.
static void
test_second_header_under_a_seq (void **state)
{
    enum { S_OTHER_PAYLOAD, S_OTHER_ROUND, S_OTHER_TYPE, S_SAME, S_SAME_SIGNED, S_FORGED };
    static const struct {
        const char  *what;
        int          second;
        gc_deliver_t verdict;
        bool         excluded;
        int          reason;        /* counted for the second message */
        uint32_t     against;       /* 1 (the author) or UINT32_MAX (unattributed) */
    } cases [] = {
        { "another payload", S_OTHER_PAYLOAD, GC_DELIVER_REJECTED, true, GC_REJECT_EQUIVOCATED, 1 },
        { "another round", S_OTHER_ROUND, GC_DELIVER_REJECTED, true, GC_REJECT_EQUIVOCATED, 1 },
        { "a keyframe request", S_OTHER_TYPE, GC_DELIVER_REJECTED, true, GC_REJECT_EQUIVOCATED, 1 },
        { "the same message", S_SAME, GC_DELIVER_UNAUTHENTICATED, false, GC_WIRE_REPLAY, UINT32_MAX },
        { "other signature bytes", S_SAME_SIGNED, GC_DELIVER_UNAUTHENTICATED, false, GC_WIRE_REPLAY,
          UINT32_MAX },
        { "a forgery", S_FORGED, GC_DELIVER_UNAUTHENTICATED, false, GC_WIRE_BAD_SIGNATURE, UINT32_MAX },
    };
    uint8_t seed [32] = { 0x66 };
    gc_key_t *forger = gc_key_from_seed (seed, NULL);
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        s_tap_t *tap = calloc (1, sizeof *tap);
        net_t *net = s_ring (tap);
        gc_engine_t *v = net->engines [2];
        uint64_t round = gc_engine_round (net->engines [1]), s = s_last_seq (net, 1) + 1;
        uint8_t first [GC_WIRE_HEADER_SIZE], second [GC_WIRE_HEADER_SIZE];
        s_sign (net, net->keys [1], GC_MSG_DELTA, round, s, s - 1, tap->payload [0], tap->len [0], first);
        assert_int_equal (net_inject (net, 2, first, sizeof first, tap->payload [0], tap->len [0]),
                          GC_DELIVER_OK);
        const uint8_t *p = tap->payload [0];
        size_t len = tap->len [0];
        switch (cases [c].second) {
            case S_OTHER_PAYLOAD:
                p = tap->payload [1];
                len = tap->len [1];
                s_sign (net, net->keys [1], GC_MSG_DELTA, round, s, s - 1, p, len, second);
                break;
            case S_OTHER_ROUND:
                s_sign (net, net->keys [1], GC_MSG_DELTA, round + 1, s, s - 1, p, len, second);
                break;
            case S_OTHER_TYPE:
                p = net->ids [2];
                len = 8;
                s_sign (net, net->keys [1], GC_MSG_KEYFRAME_REQUEST, round, s, 0, p, len, second);
                break;
            case S_SAME:
                memcpy (second, first, sizeof second);
                break;
            case S_SAME_SIGNED:
                memcpy (second, first, sizeof second);
                second [GC_WIRE_SIGNED_SIZE + 3] ^= 0x10;
                break;
            case S_FORGED:
                p = tap->payload [1];
                len = tap->len [1];
                s_sign (net, forger, GC_MSG_DELTA, round, s, s - 1, p, len, second);
                memcpy (second + 24, net->ids [1], 8);      /* claims to be 1 */
                break;
        }
        gc_engine_stats_t s0, s1;
        gc_engine_stats (v, &s0);
        uint64_t before = gc_engine_rejections (v, cases [c].against, cases [c].reason);
        gc_deliver_t d = net_inject (net, 2, second, sizeof second, p, len);
        gc_engine_stats (v, &s1);
        //  The test signed under s for 1: 1 goes on after it, as after a
        //  lease (else its own next message would equivocate with ours).
        s_lease_t lease = { 0 };
        gc_engine_seq_lease (net->engines [1], s + 2, s_store, &lease);
        print_message ("%-22s verdict %d, %s +%llu, verifies +%llu, excluded %d\n", cases [c].what, d,
                       gc_engine_reason_name (cases [c].reason),
                       (unsigned long long) (gc_engine_rejections (v, cases [c].against, cases [c].reason) - before),
                       (unsigned long long) (s1.verifies - s0.verifies), gc_engine_excluded (v, 1));
        assert_int_equal (d, cases [c].verdict);
        assert_int_equal (gc_engine_rejections (v, cases [c].against, cases [c].reason), before + 1);
        assert_int_equal (gc_engine_excluded (v, 1), cases [c].excluded);
        assert_int_equal (s1.equivocators, cases [c].excluded);
        assert_int_equal (s1.evidence_found, cases [c].excluded);
        //  a verify only for a header that differs from the one kept
        assert_int_equal (s1.verifies - s0.verifies,
                          cases [c].second != S_SAME && cases [c].second != S_SAME_SIGNED);
        for (uint32_t i = 0; i < 4; i++)
            if (i != 2)
                assert_false (gc_engine_excluded (net->engines [i], 1));   /* not yet told */
        if (cases [c].excluded) {
            s_check_proof (net, v, 0, 1);
            //  1's next authentic message costs no verify and is refused
            uint8_t next [GC_WIRE_HEADER_SIZE];
            s_sign (net, net->keys [1], GC_MSG_DELTA, round, s + 1, s, tap->payload [1], tap->len [1], next);
            gc_engine_stats (v, &s0);
            assert_int_equal (net_inject (net, 2, next, sizeof next, tap->payload [1], tap->len [1]),
                              GC_DELIVER_UNAUTHENTICATED);
            gc_engine_stats (v, &s1);
            assert_int_equal (s1.verifies, s0.verifies);
            assert_int_equal (gc_engine_rejections (v, 1, GC_REJECT_EQUIVOCATED), 2);
        }
        else
            assert_false (gc_engine_evidence (v, 0, (uint8_t [GC_WIRE_EVIDENCE_SIZE]) { 0 }));
        //  the next round: 2 mixes itself and 3 only once 1 is out; 1's
        //  neighbours on the other side (0) are told by 2's proof a round
        //  later, through 3
        net_round (net);
        gc_engine_stats (v, &s1);
        assert_int_equal (s1.mixed_inputs, cases [c].excluded ? 2 : 3);
        net_round (net);
        net_round (net);
        assert_int_equal (gc_engine_excluded (net->engines [0], 1), cases [c].excluded);
        assert_int_equal (gc_engine_excluded (net->engines [3], 1), cases [c].excluded);
        net_destroy (&net);
        free (tap);
    }
    gc_key_destroy (&forger);
}

//  The fork role signs two deltas under one seq each round: its update to 0,
//  negated to 2, both to the seam (0). 0 proves it; 2, which only ever saw
//  one version, learns it from the proof passed round the ring and checks
//  it itself; every honest peer ends with 1 excluded, nobody else.
static void
test_fork_is_excluded_by_every_honest_peer (void **state)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    const char *attacks [6] = { NULL, "fork", NULL, NULL, NULL, NULL };
    net_t *net = net_new (6, "ring", &cfg, attacks);
    for (int r = 0; r < 12; r++)
        net_round (net);
    for (uint32_t i = 0; i < 6; i++) {
        if (i == 1)
            continue;
        gc_engine_t *e = net->engines [i];
        gc_engine_stats_t s;
        gc_engine_stats (e, &s);
        print_message ("peer %u: excluded 1 %d, found %llu, evidence recv %llu sent %llu, "
                       "equivocated %llu\n", i, gc_engine_excluded (e, 1),
                       (unsigned long long) s.evidence_found, (unsigned long long) s.evidence_recv,
                       (unsigned long long) s.evidence_sent,
                       (unsigned long long) gc_engine_rejections (e, 1, GC_REJECT_EQUIVOCATED));
        assert_true (gc_engine_excluded (e, 1));
        assert_int_equal (s.equivocators, 1);
        for (uint32_t j = 0; j < 6; j++)
            assert_int_equal (gc_engine_excluded (e, j), j == 1);
        s_check_proof (net, e, 0, 1);
        assert_int_equal (s.evidence_found, i == 0);        /* only the seam saw both */
        if (i != 0)
            assert_true (s.evidence_recv >= 1);
        assert_true (s.evidence_sent >= 1);                 /* each passes it on once */
    }
    //  the victim that saw one version refuses the fork's deltas from then on
    assert_true (gc_engine_rejections (net->engines [2], 1, GC_REJECT_EQUIVOCATED) >= 1);
    assert_true (net_mean_accuracy (net) > 0.5);
    net_destroy (&net);
}

//  A split view: `equivocate` at peer 5 of a 4x4 torus sends one version to
//  half its neighbours (1, 4) and the other to the rest (6, 9), so no
//  neighbour holds both. With gossip/witness the victims pass the headers
//  on, and a common neighbour of two victims (0, 7, 8, 10, ...) holds both:
//  every honest peer ends up excluding 5 (and no one else). Without it, no
//  one can.
static void
test_split_view_needs_witness (void **state)
{
    (void) state;
    static const struct { bool witness; bool caught; } cases [] = { { true, true }, { false, false } };
    for (size_t k = 0; k < sizeof cases / sizeof cases [0]; k++) {
        gc_engine_config_t cfg;
        net_config_defaults (&cfg);
        cfg.witness = cases [k].witness;
        const char *attacks [16] = { [5] = "equivocate" };
        net_t *net = net_new (16, "torus:4x4", &cfg, attacks);
        for (int r = 0; r < 12; r++)
            net_round (net);
        uint64_t found = 0, witnessed = 0;
        for (uint32_t i = 0; i < 16; i++) {
            if (i == 5)
                continue;
            gc_engine_stats_t s;
            gc_engine_stats (net->engines [i], &s);
            found += s.evidence_found;
            witnessed += s.witness_recv;
            for (uint32_t j = 0; j < 16; j++)
                assert_int_equal (gc_engine_excluded (net->engines [i], j), cases [k].caught && j == 5);
            if (cases [k].caught)
                s_check_proof (net, net->engines [i], 0, 5);
        }
        print_message ("witness %d: %llu proofs found, %llu WITNESS received\n", cases [k].witness,
                       (unsigned long long) found, (unsigned long long) witnessed);
        assert_int_equal (witnessed > 0, cases [k].witness);
        assert_int_equal (found > 0, cases [k].caught);
        net_destroy (&net);
    }
}

//  3 (a neighbour of 2) passes 2 headers of 1 under a fresh seq S in two
//  WITNESS messages. Two authentic different ones convict 1; a forged one
//  is bad_evidence against 3, whichever of the two it is, and 1 stays in;
//  bytes that are no header are too.
static void
test_witness_forgeries_count_against_the_forwarder (void **state)
{
    (void) state;
    enum { S_AUTHENTIC, S_OTHER, S_FORGED, S_GARBAGE, S_FORGED_THEN_OTHER, S_NONE };
    static const struct {
        const char  *what;
        int          first, second;
        gc_deliver_t verdict;       /* of the second (or only) WITNESS */
        bool         excluded;
        uint64_t     bad;           /* bad_evidence against 3 */
    } cases [] = {
        { "two authentic versions", S_AUTHENTIC, S_OTHER, GC_DELIVER_OK, true, 0 },
        { "the same header twice", S_AUTHENTIC, S_AUTHENTIC, GC_DELIVER_OK, false, 0 },
        { "a forged second", S_AUTHENTIC, S_FORGED, GC_DELIVER_REJECTED, false, 1 },
        { "a forged first", S_FORGED, S_OTHER, GC_DELIVER_OK, false, 1 },
        { "no header", S_GARBAGE, S_NONE, GC_DELIVER_REJECTED, false, 1 },
        //  a forgery ends the message: the authentic conflict after it is not read
        { "a forgery, then a proof", S_AUTHENTIC, S_FORGED_THEN_OTHER, GC_DELIVER_REJECTED, false, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        s_tap_t *tap = calloc (1, sizeof *tap);
        net_t *net = s_ring_with (tap, true);
        gc_engine_t *v = net->engines [2];
        uint64_t round = gc_engine_round (net->engines [1]), s = s_last_seq (net, 1) + 10;
        uint8_t h [6][GC_WIRE_HEADER_SIZE];
        s_sign (net, net->keys [1], GC_MSG_DELTA, round, s, s - 1, tap->payload [0], tap->len [0], h [S_AUTHENTIC]);
        s_sign (net, net->keys [1], GC_MSG_DELTA, round, s, s - 1, tap->payload [1], tap->len [1], h [S_OTHER]);
        memcpy (h [S_FORGED], h [S_OTHER], GC_WIRE_HEADER_SIZE);
        h [S_FORGED][70] ^= 0x01;                       /* in the digest: signed bytes of its own */
        memset (h [S_GARBAGE], 0x5a, GC_WIRE_HEADER_SIZE);
        memcpy (h [S_FORGED_THEN_OTHER], h [S_FORGED], GC_WIRE_HEADER_SIZE);    /* two headers: */
        memcpy (h [S_FORGED_THEN_OTHER + 1], h [S_OTHER], GC_WIRE_HEADER_SIZE);  /* h [4], h [5] */
        gc_deliver_t d = GC_DELIVER_OK;
        const int sent [2] = { cases [c].first, cases [c].second };
        for (int k = 0; k < 2 && sent [k] != S_NONE; k++) {
            uint8_t header [GC_WIRE_HEADER_SIZE];
            size_t len = (sent [k] == S_FORGED_THEN_OTHER ? 2 : 1) * GC_WIRE_HEADER_SIZE;
            s_sign (net, net->keys [3], GC_MSG_WITNESS, gc_engine_round (net->engines [3]),
                    s_last_seq (net, 3) + 1 + (uint64_t) k, 0, h [sent [k]], len, header);
            d = net_inject (net, 2, header, sizeof header, h [sent [k]], len);
        }
        uint64_t bad = gc_engine_rejections (v, 3, GC_WIRE_BAD_EVIDENCE);
        print_message ("%-24s verdict %d, 1 excluded %d, bad_evidence against 3: %llu\n", cases [c].what, d,
                       gc_engine_excluded (v, 1), (unsigned long long) bad);
        assert_int_equal (d, cases [c].verdict);
        assert_int_equal (gc_engine_excluded (v, 1), cases [c].excluded);
        assert_int_equal (bad, cases [c].bad);
        if (cases [c].excluded)
            s_check_proof (net, v, 0, 1);
        for (int r = 1; r < GC_REJECT_LAST; r++)      /* 1's counters stay clean */
            if (r < GC_WIRE_NREASONS || r >= GC_REJECT_NOT_NEIGHBOUR)
                assert_int_equal (gc_engine_rejections (v, 1, r), 0);
        net_destroy (&net);
        free (tap);
    }
}

//  3 (a neighbour of 2) signs EVIDENCE messages to 2. Proof of 1's
//  equivocation excludes 1; anything less is bad_evidence against 3, the
//  one who signed it, and costs 1 nothing. An accused the receiver does not
//  trust (a revoked key) is unknown_sender, nobody's fault.
static void
test_bad_evidence_counts_against_the_forwarder (void **state)
{
    enum { S_VALID, S_BAD_SIGNATURE, S_SAME_TWICE, S_TWO_AUTHORS, S_TWO_SEQS, S_UNTRUSTED };
    static const struct {
        const char  *what;
        int          proof;
        gc_deliver_t verdict;
        int          reason;
        uint32_t     against;
    } cases [] = {
        { "a valid proof", S_VALID, GC_DELIVER_OK, GC_WIRE_OK, 3 },
        { "one bad signature", S_BAD_SIGNATURE, GC_DELIVER_REJECTED, GC_WIRE_BAD_EVIDENCE, 3 },
        { "one header twice", S_SAME_TWICE, GC_DELIVER_REJECTED, GC_WIRE_BAD_EVIDENCE, 3 },
        { "two authors", S_TWO_AUTHORS, GC_DELIVER_REJECTED, GC_WIRE_BAD_EVIDENCE, 3 },
        { "two seqs", S_TWO_SEQS, GC_DELIVER_REJECTED, GC_WIRE_BAD_EVIDENCE, 3 },
        { "an untrusted accused", S_UNTRUSTED, GC_DELIVER_UNAUTHENTICATED, GC_WIRE_UNKNOWN_SENDER,
          UINT32_MAX },
    };
    uint8_t seed [32] = { 0x55 };
    gc_key_t *stranger = gc_key_from_seed (seed, NULL);
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        s_tap_t *tap = calloc (1, sizeof *tap);
        net_t *net = s_ring (tap);
        gc_engine_t *v = net->engines [2];
        uint64_t round = gc_engine_round (net->engines [1]), s = s_last_seq (net, 1) + 1;
        uint8_t a [GC_WIRE_HEADER_SIZE], b [GC_WIRE_HEADER_SIZE], proof [GC_WIRE_EVIDENCE_SIZE];
        gc_key_t *author = cases [c].proof == S_UNTRUSTED ? stranger : net->keys [1];
        s_sign (net, author, GC_MSG_DELTA, round, s, s - 1, tap->payload [0], tap->len [0], a);
        switch (cases [c].proof) {
            case S_TWO_AUTHORS:
                s_sign (net, net->keys [0], GC_MSG_DELTA, round, s, s - 1, tap->payload [1], tap->len [1], b);
                break;
            case S_TWO_SEQS:
                s_sign (net, author, GC_MSG_DELTA, round, s + 1, s - 1, tap->payload [1], tap->len [1], b);
                break;
            default:
                s_sign (net, author, GC_MSG_DELTA, round, s, s - 1, tap->payload [1], tap->len [1], b);
                break;
        }
        if (cases [c].proof == S_SAME_TWICE) {
            memcpy (proof, a, sizeof a);
            memcpy (proof + sizeof a, a, sizeof a);
        }
        else
            assert_int_equal (gc_wire_evidence_build (a, b, proof, NULL), 0);
        if (cases [c].proof == S_BAD_SIGNATURE)
            proof [GC_WIRE_HEADER_SIZE + GC_WIRE_SIGNED_SIZE + 9] ^= 0x01;
        uint8_t header [GC_WIRE_HEADER_SIZE];
        uint64_t s3 = s_last_seq (net, 3) + 1;
        s_sign (net, net->keys [3], GC_MSG_EVIDENCE, gc_engine_round (net->engines [3]), s3, 0, proof,
                sizeof proof, header);
        gc_deliver_t d = net_inject (net, 2, header, sizeof header, proof, sizeof proof);
        print_message ("%-20s verdict %d, %s against %s: %llu; 1 excluded %d\n", cases [c].what, d,
                       gc_engine_reason_name (cases [c].reason),
                       cases [c].against == 3 ? "the forwarder" : "nobody",
                       (unsigned long long) gc_engine_rejections (v, cases [c].against, cases [c].reason),
                       gc_engine_excluded (v, 1));
        assert_int_equal (d, cases [c].verdict);
        gc_engine_stats_t st;
        gc_engine_stats (v, &st);
        if (cases [c].proof == S_VALID) {
            assert_true (gc_engine_excluded (v, 1));
            assert_int_equal (st.evidence_recv, 1);
            assert_int_equal (st.evidence_found, 0);
            s_check_proof (net, v, 0, 1);
        }
        else {
            assert_int_equal (gc_engine_rejections (v, cases [c].against, cases [c].reason), 1);
            assert_false (gc_engine_excluded (v, 1));
            assert_int_equal (st.equivocators, 0);
            assert_int_equal (st.evidence_recv, 0);
        }
        //  the accused's own counters stay clean whatever the forwarder sent
        for (int r = 1; r < GC_REJECT_LAST; r++)
            if (r < GC_WIRE_NREASONS || r >= GC_REJECT_NOT_NEIGHBOUR)
                assert_int_equal (gc_engine_rejections (v, 1, r), 0);
        //  and the other peers were told nothing
        assert_false (gc_engine_excluded (net->engines [0], 1));
        net_destroy (&net);
        free (tap);
    }
    gc_key_destroy (&stranger);
}

//  Sequence lease (gc_engine_seq_lease): peer 0 restarts with its clock
//  stepped back into seqs it used. With the lease its seqs continue past
//  every one it used and no neighbour convicts it; without, its HELLO and
//  first deltas reuse seqs its neighbours kept other headers for, which is
//  equivocation by the letter: the lease is what keeps an honest peer safe.
static bool
s_max_seq (net_t *net, net_msg_t *msg, void *arg)
{
    (void) net;
    gc_msg_header_t h;
    if (msg->from == 0 && gc_wire_parse (msg->header, msg->header_len, msg->payload_len, SIZE_MAX,
                                         &h, NULL) == GC_WIRE_OK && h.seq > *(uint64_t *) arg)
        *(uint64_t *) arg = h.seq;
    return true;
}

static void
test_restarted_peer_is_not_convicted (void **state)
{
    static const struct { bool lease; bool convicted; } cases [] = { { true, false }, { false, true } };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_engine_config_t cfg;
        net_config_defaults (&cfg);
        cfg.seq_start = 1000000000000ULL;
        net_t *net = net_new (4, "ring", &cfg, NULL);
        s_lease_t lease = { 0 };
        if (cases [c].lease)
            gc_engine_seq_lease (net->engines [0], 0, s_store, &lease);
        uint64_t max_seq = 0;
        net->filter = s_max_seq;
        net->filter_arg = &max_seq;
        for (int r = 0; r < 6; r++)
            net_round (net);
        //  the clock now reads a little before the last seqs used
        gc_engine_t *e = net_replace (net, 0, max_seq - 8);
        if (cases [c].lease)
            gc_engine_seq_lease (e, lease.end, s_store, &lease);
        assert_int_equal (gc_engine_start (e, net->now), 0);
        for (int r = 0; r < 6; r++)
            net_round (net);
        for (uint32_t i = 1; i < 4; i++) {
            gc_engine_stats_t s;
            gc_engine_stats (net->engines [i], &s);
            print_message ("lease %d: peer %u excluded 0: %d (found %llu)\n", cases [c].lease, i,
                           gc_engine_excluded (net->engines [i], 0), (unsigned long long) s.evidence_found);
            assert_int_equal (gc_engine_excluded (net->engines [i], 0), cases [c].convicted);
        }
        net_destroy (&net);
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_second_header_under_a_seq),
        cmocka_unit_test (test_fork_is_excluded_by_every_honest_peer),
        cmocka_unit_test (test_split_view_needs_witness),
        cmocka_unit_test (test_witness_forgeries_count_against_the_forwarder),
        cmocka_unit_test (test_bad_evidence_counts_against_the_forwarder),
        cmocka_unit_test (test_restarted_peer_is_not_convicted),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
