/*  gossip/ wire codec and replay guard: round trips, every single-bit
    corruption rejected with the reason for the field it hit, each rejection
    reason on its own, the replay window, the receiver, evidence. */
#include "gc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_hex.h"
#include "gc_replay.h"
#include "gc_rng.h"
#include "gc_wire.h"
#include "gc_wire_rx.h"

#define H GC_WIRE_HEADER_SIZE

typedef struct {
    gc_key_t   *alice, *bob, *mallory;     /* mallory is not trusted */
    gc_trust_t *trust;
    uint8_t     net [16], other_net [16];
} s_fix_t;

static s_fix_t s_fix;

static gc_key_t *
s_key (uint8_t tag)
{
    uint8_t seed [32];
    memset (seed, tag, sizeof seed);
    gc_key_t *k = gc_key_from_seed (seed, NULL);
    assert_non_null (k);
    return k;
}

static int
s_setup (void **state)
{
    s_fix.alice = s_key (1);
    s_fix.bob = s_key (2);
    s_fix.mallory = s_key (3);
    s_fix.trust = gc_trust_new ();
    gc_err_t err;
    if (gc_trust_add_raw (s_fix.trust, gc_key_public_raw (s_fix.alice), "alice", &err)
    ||  gc_trust_add_raw (s_fix.trust, gc_key_public_raw (s_fix.bob), "bob", &err)
    ||  gc_wire_network_id ("test-net", s_fix.net, &err)
    ||  gc_wire_network_id ("other-net", s_fix.other_net, &err))
        return -1;
    return 0;
}

static int
s_teardown (void **state)
{
    gc_key_destroy (&s_fix.alice);
    gc_key_destroy (&s_fix.bob);
    gc_key_destroy (&s_fix.mallory);
    gc_trust_destroy (&s_fix.trust);
    return 0;
}

static void
s_encode (gc_key_t *key, const uint8_t net [16], int type, int flags, uint64_t seq,
          uint64_t base, const uint8_t *payload, size_t len, uint8_t header [H])
{
    gc_msg_header_t hdr = { .type = (uint8_t) type, .flags = (uint8_t) flags, .round = 42,
                            .seq = seq, .base_seq = base };
    gc_err_t err = { 0 };
    if (gc_wire_encode (key, net, &hdr, payload, len, header, &err))
        fail_msg ("encode: %s", err.msg);
}

//  Sign header bytes as they are (for headers encode refuses to make), by
//  the documented rule: Ed25519 over domain || network id || header[0..128).
static void
s_resign (gc_key_t *key, const uint8_t net [16], uint8_t header [H])
{
    uint8_t input [160];
    memcpy (input, GC_WIRE_DOMAIN, 16);
    memcpy (input + 16, net, 16);
    memcpy (input + 32, header, 128);
    assert_int_equal (gc_key_sign (key, input, sizeof input, header + 128, NULL), 0);
}

static int
s_decode (const uint8_t *header, size_t hlen, const uint8_t *payload, size_t plen,
          size_t max_payload, gc_msg_header_t *out, gc_err_t *err)
{
    gc_msg_header_t tmp;
    return gc_wire_decode (s_fix.net, s_fix.trust, max_payload, header, hlen, payload, plen,
                           out ? out : &tmp, err);
}

static void
test_round_trip_each_type (void **state)
{
    uint8_t payload [1000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload [i] = (uint8_t) (i * 31);
    static const struct { int type, flags; size_t len; uint64_t base; } cases [] = {
        { GC_MSG_HELLO, 0, 50, 9 },
        { GC_MSG_DELTA, 0, 1000, 9 },
        { GC_MSG_DELTA, GC_WIRE_FLAG_EXACT, 1000, 9 },
        { GC_MSG_DELTA, 0, 0, 9 },
        { GC_MSG_KEYFRAME, 0, 1000, 3 },
        { GC_MSG_KEYFRAME_REQUEST, 0, 8, 500 },     /* base_seq in the target's space */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        uint8_t header [H];
        gc_msg_header_t sent = { .type = (uint8_t) cases [i].type, .flags = (uint8_t) cases [i].flags,
                                 .round = 77 + i, .seq = 10 + i, .base_seq = cases [i].base };
        gc_err_t err = { 0 };
        assert_int_equal (gc_wire_encode (s_fix.alice, s_fix.net, &sent, payload, cases [i].len,
                                          header, &err), 0);
        gc_msg_header_t got;
        int r = s_decode (header, H, payload, cases [i].len, 4096, &got, &err);
        if (r != GC_WIRE_OK)
            fail_msg ("case %zu: %s", i, err.msg);
        assert_int_equal (got.version, GC_WIRE_VERSION);
        assert_int_equal (got.type, cases [i].type);
        assert_int_equal (got.flags, cases [i].flags);
        assert_int_equal (got.round, 77 + i);
        assert_int_equal (got.seq, 10 + i);
        assert_int_equal (got.base_seq, cases [i].base);
        assert_int_equal (got.payload_len, cases [i].len);
        assert_memory_equal (got.sender, gc_key_peer_id (s_fix.alice), 8);
        assert_memory_equal (got.network_id, s_fix.net, 16);
        assert_memory_equal (got.signature, sent.signature, 64);
        uint8_t digest [32];
        gc_sha256 (payload, cases [i].len, digest);
        assert_memory_equal (got.payload_digest, digest, 32);
        //  The header layout of PROTOCOL.md, spot-checked on raw bytes.
        assert_memory_equal (header, "GCNW", 4);
        assert_int_equal (header [40], (uint8_t) (10 + i));   /* seq, little-endian */
        assert_int_equal (header [41], 0);
        assert_memory_equal (header + 64, digest, 32);
    }
}

//  The reasons a single flipped bit at byte `off` may produce (PROTOCOL.md
//  section 7). Test message: DELTA with EXACT, seq 1000, base 999, 64-byte
//  payload, limit 4096, so e.g. a seq bit either breaks base < seq or only
//  the signature, and a length bit either exceeds the limit or the signature.
static int
s_allowed (size_t off, int reason)
{
    static const struct { size_t lo, hi; int reasons [3]; } fields [] = {
        { 0, 4, { GC_WIRE_BAD_MAGIC } },
        { 4, 5, { GC_WIRE_BAD_VERSION } },
        /* DELTA^1 = KEYFRAME: EXACT not allowed; DELTA^4 = WITNESS: 64 bytes are no header */
        { 5, 6, { GC_WIRE_BAD_TYPE, GC_WIRE_BAD_FLAGS, GC_WIRE_BAD_LENGTH } },
        { 6, 7, { GC_WIRE_BAD_FLAGS, GC_WIRE_BAD_SIGNATURE } },    /* EXACT cleared: valid flags */
        { 7, 8, { GC_WIRE_BAD_RESERVED } },
        { 8, 24, { GC_WIRE_WRONG_NETWORK } },
        { 24, 32, { GC_WIRE_UNKNOWN_SENDER } },
        { 32, 40, { GC_WIRE_BAD_SIGNATURE } },
        { 40, 56, { GC_WIRE_BAD_SIGNATURE, GC_WIRE_BAD_FIELD } },
        { 56, 60, { GC_WIRE_BAD_SIGNATURE, GC_WIRE_OVERSIZE } },
        { 60, 64, { GC_WIRE_BAD_RESERVED } },
        { 64, 96, { GC_WIRE_BAD_SIGNATURE } },
        { 96, 128, { GC_WIRE_BAD_RESERVED } },
        { 128, 192, { GC_WIRE_BAD_SIGNATURE } },
        { 192, 1000, { GC_WIRE_DIGEST_MISMATCH } },     /* payload */
    };
    for (size_t f = 0; f < sizeof fields / sizeof fields [0]; f++)
        if (off >= fields [f].lo && off < fields [f].hi)
            for (int k = 0; k < 3; k++)
                if (fields [f].reasons [k] == reason && reason != GC_WIRE_OK)
                    return 1;
    return 0;
}

static void
test_every_bit_flip_rejected_with_its_reason (void **state)
{
    uint8_t msg [H + 64];
    uint8_t *payload = msg + H;
    for (int i = 0; i < 64; i++)
        payload [i] = (uint8_t) (i * 7 + 1);
    s_encode (s_fix.alice, s_fix.net, GC_MSG_DELTA, GC_WIRE_FLAG_EXACT, 1000, 999, payload, 64, msg);
    assert_int_equal (s_decode (msg, H, payload, 64, 4096, NULL, NULL), GC_WIRE_OK);
    int seen [GC_WIRE_NREASONS] = { 0 };
    for (size_t off = 0; off < sizeof msg; off++)
        for (int bit = 0; bit < 8; bit++) {
            msg [off] ^= (uint8_t) (1u << bit);
            gc_err_t err = { 0 };
            int r = s_decode (msg, H, payload, 64, 4096, NULL, &err);
            if (!s_allowed (off, r))
                fail_msg ("bit %d of byte %zu: %s (%s)", bit, off, gc_wire_reason_name (r), err.msg);
            assert_int_equal (err.code, gc_wire_reason_code (r));
            seen [r]++;
            msg [off] ^= (uint8_t) (1u << bit);
        }
    //  Each class of field was actually hit.
    static const int expected [] = {
        GC_WIRE_BAD_MAGIC, GC_WIRE_BAD_VERSION, GC_WIRE_BAD_TYPE, GC_WIRE_BAD_FLAGS,
        GC_WIRE_BAD_RESERVED, GC_WIRE_WRONG_NETWORK, GC_WIRE_UNKNOWN_SENDER, GC_WIRE_BAD_FIELD,
        GC_WIRE_OVERSIZE, GC_WIRE_BAD_SIGNATURE, GC_WIRE_DIGEST_MISMATCH,
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected [0]; i++)
        assert_true (seen [expected [i]] > 0);
    assert_int_equal (seen [GC_WIRE_DIGEST_MISMATCH], 64 * 8);
    assert_int_equal (seen [GC_WIRE_WRONG_NETWORK], 16 * 8);
}

//  One mutation of a good message, re-signed unless `raw`, and its reason.
typedef struct {
    const char *what;
    int         reason;
    const char *needle;         /* in the error text */
} s_case_t;

static void
test_each_rejection_reason (void **state)
{
    uint8_t payload [100], header [H], h [H + 8];
    memset (payload, 0x5a, sizeof payload);
    s_encode (s_fix.alice, s_fix.net, GC_MSG_DELTA, 0, 50, 40, payload, 100, header);
    static const s_case_t cases [] = {
        { "wrong network", GC_WIRE_WRONG_NETWORK, "for network" },
        { "unknown key", GC_WIRE_UNKNOWN_SENDER, "not in the trust store" },
        { "version 2", GC_WIRE_BAD_VERSION, "protocol version 2" },
        { "version 0", GC_WIRE_BAD_VERSION, "protocol version 0" },
        { "type 0", GC_WIRE_BAD_TYPE, "message type 0" },
        { "type 7", GC_WIRE_BAD_TYPE, "message type 7" },
        { "witness of 100 bytes", GC_WIRE_BAD_LENGTH, "witness with a 100-byte payload" },
        { "type 255", GC_WIRE_BAD_TYPE, "message type 255" },
        { "flag 0x80", GC_WIRE_BAD_FLAGS, "flags 0x80" },
        { "reserved byte 61", GC_WIRE_BAD_RESERVED, "reserved" },
        { "seq 0", GC_WIRE_BAD_FIELD, "seq 0" },
        { "base_seq = seq", GC_WIRE_BAD_FIELD, "base_seq 50 >= seq 50" },
        { "header 191 bytes", GC_WIRE_TRUNCATED, "header frame is 191 bytes" },
        { "header 0 bytes", GC_WIRE_TRUNCATED, "header frame is 0 bytes" },
        { "header 193 bytes", GC_WIRE_BAD_LENGTH, "header frame is 193 bytes" },
        { "payload frame short", GC_WIRE_TRUNCATED, "payload frame is 99 bytes" },
        { "payload frame long", GC_WIRE_BAD_LENGTH, "payload frame is 101 bytes" },
        { "payload frame over limit", GC_WIRE_OVERSIZE, "payload frame is 100 bytes, limit 99" },
        { "declared length over limit", GC_WIRE_OVERSIZE, "declares a 100-byte payload" },
        { "payload changed", GC_WIRE_DIGEST_MISMATCH, "does not match its signed SHA-256" },
        { "signature changed", GC_WIRE_BAD_SIGNATURE, "does not verify" },
        { "signed by another trusted key", GC_WIRE_BAD_SIGNATURE, "does not verify" },
        { "hello payload 4097", GC_WIRE_BAD_LENGTH, "hello with a 4097-byte payload" },
        { "request payload 7", GC_WIRE_BAD_LENGTH, "keyframe_request with a 7-byte payload" },
        { "evidence payload 100", GC_WIRE_BAD_LENGTH, "evidence with a 100-byte payload" },
        { "magic", GC_WIRE_BAD_MAGIC, "magic" },
    };
    uint8_t pl [100];
    char alice_hex [17];
    snprintf (alice_hex, sizeof alice_hex, "%s", gc_key_peer_id_hex (s_fix.alice));
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        memcpy (h, header, H);
        memcpy (pl, payload, sizeof pl);
        size_t hlen = H, plen = 100, max = 4096;
        gc_key_t *signer = s_fix.alice;
        const char *w = cases [i].what;
        int resign = 1;
        if (!strcmp (w, "wrong network")) {
            s_encode (s_fix.alice, s_fix.other_net, GC_MSG_DELTA, 0, 50, 40, pl, 100, h);
            resign = 0;
        }
        else if (!strcmp (w, "unknown key")) {
            s_encode (s_fix.mallory, s_fix.net, GC_MSG_DELTA, 0, 50, 40, pl, 100, h);
            resign = 0;
        }
        else if (!strcmp (w, "version 2")) h [4] = 2;
        else if (!strcmp (w, "version 0")) h [4] = 0;
        else if (!strcmp (w, "type 0")) h [5] = 0;
        else if (!strcmp (w, "type 7")) h [5] = 7;
        else if (!strcmp (w, "witness of 100 bytes")) h [5] = GC_MSG_WITNESS;
        else if (!strcmp (w, "type 255")) h [5] = 255;
        else if (!strcmp (w, "flag 0x80")) h [6] = 0x80;
        else if (!strcmp (w, "reserved byte 61")) h [61] = 1;
        else if (!strcmp (w, "seq 0")) { memset (h + 40, 0, 16); }
        else if (!strcmp (w, "base_seq = seq")) h [48] = 50;
        else if (!strcmp (w, "header 191 bytes")) { hlen = 191; resign = 0; }
        else if (!strcmp (w, "header 0 bytes")) { hlen = 0; resign = 0; }
        else if (!strcmp (w, "header 193 bytes")) { hlen = 193; resign = 0; }
        else if (!strcmp (w, "payload frame short")) { plen = 99; resign = 0; }
        else if (!strcmp (w, "payload frame long")) { plen = 101; resign = 0; }
        else if (!strcmp (w, "payload frame over limit")) { max = 99; resign = 0; }
        else if (!strcmp (w, "declared length over limit")) { plen = 0; max = 99; resign = 0; }
        else if (!strcmp (w, "payload changed")) { pl [50] ^= 1; resign = 0; }
        else if (!strcmp (w, "signature changed")) { h [150] ^= 4; resign = 0; }
        else if (!strcmp (w, "signed by another trusted key")) signer = s_fix.bob;
        else if (!strcmp (w, "hello payload 4097")) {
            h [5] = GC_MSG_HELLO;
            h [56] = 0x01;
            h [57] = 0x10;
            max = 8192;
        }
        else if (!strcmp (w, "request payload 7")) { h [5] = GC_MSG_KEYFRAME_REQUEST; h [56] = 7; }
        else if (!strcmp (w, "evidence payload 100")) h [5] = GC_MSG_EVIDENCE;
        else if (!strcmp (w, "magic")) { h [3] = 'X'; resign = 0; }
        else fail_msg ("no mutation for '%s'", w);
        if (resign)
            s_resign (signer, s_fix.net, h);
        gc_err_t err = { 0 };
        gc_msg_header_t out;
        uint8_t big [H + 8] = { 0 };
        const uint8_t *hp = hlen > H ? big : h;
        if (hlen > H)
            memcpy (big, h, H);
        const uint8_t *pp = plen > 100 ? (const uint8_t *) big : pl;
        int r = s_decode (hp, hlen, pp, plen, max, &out, &err);
        if (r != cases [i].reason || err.code != gc_wire_reason_code (r)
        ||  !strstr (err.msg, cases [i].needle)
        ||  !strstr (err.msg, gc_wire_reason_name (r)))
            fail_msg ("%s: got %s '%s', wanted %s '%s'", w, gc_wire_reason_name (r), err.msg,
                      gc_wire_reason_name (cases [i].reason), cases [i].needle);
        //  Messages name the claimed peer once the sender field is there.
        if (hlen >= 32 && strcmp (w, "unknown key"))
            assert_non_null (strstr (err.msg, alice_hex));
    }
}

static void
test_encode_refuses_what_decode_rejects (void **state)
{
    static const struct { int type, flags; uint64_t seq, base; size_t len; } cases [] = {
        { 0, 0, 5, 1, 10 },
        { 6, 0, 5, 1, 10 },
        { GC_MSG_KEYFRAME, GC_WIRE_FLAG_EXACT, 5, 1, 10 },
        { GC_MSG_DELTA, 0x02, 5, 1, 10 },
        { GC_MSG_DELTA, 0, 0, 0, 10 },
        { GC_MSG_DELTA, 0, 5, 5, 10 },
        { GC_MSG_HELLO, 0, 5, 1, GC_WIRE_HELLO_MAX + 1 },
        { GC_MSG_KEYFRAME_REQUEST, 0, 5, 1, 9 },
        { GC_MSG_EVIDENCE, 0, 5, 1, 10 },
    };
    uint8_t payload [GC_WIRE_HELLO_MAX + 1] = { 0 }, header [H];
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_msg_header_t hdr = { .type = (uint8_t) cases [i].type, .flags = (uint8_t) cases [i].flags,
                                .seq = cases [i].seq, .base_seq = cases [i].base };
        gc_err_t err = { 0 };
        if (gc_wire_encode (s_fix.alice, s_fix.net, &hdr, payload, cases [i].len, header, &err) != -1)
            fail_msg ("case %zu encoded", i);
        assert_non_null (strstr (err.msg, "encode: "));
    }
    //  A public-only key cannot sign.
    gc_key_t *pub = gc_key_from_public_raw (gc_key_public_raw (s_fix.alice), NULL);
    gc_msg_header_t hdr = { .type = GC_MSG_DELTA, .seq = 2, .base_seq = 1 };
    assert_int_equal (gc_wire_encode (pub, s_fix.net, &hdr, payload, 4, header, NULL), -1);
    gc_key_destroy (&pub);
}

static void
test_replay_window_rules (void **state)
{
    gc_replay_t *rp = gc_replay_new (4, NULL);
    assert_non_null (rp);
    uint8_t a [8] = "peer-a", b [8] = "peer-b";
    //  Feed (sender, seq) in order: the result and whether it was accepted.
    static const struct { int who; uint64_t seq; int want; } steps [] = {
        { 0, 10, GC_WIRE_OK },
        { 0, 10, GC_WIRE_REPLAY },
        { 0, 12, GC_WIRE_OK },          /* gap: fine */
        { 0, 11, GC_WIRE_OK },          /* reordered, inside the window */
        { 0, 11, GC_WIRE_REPLAY },
        { 0, 8, GC_WIRE_OK },           /* 4 below 12: still inside */
        { 0, 7, GC_WIRE_STALE },        /* 5 below */
        { 1, 3, GC_WIRE_OK },           /* senders are independent */
        { 0, 100, GC_WIRE_OK },         /* a jump clears the old bits */
        { 0, 99, GC_WIRE_OK },
        { 0, 12, GC_WIRE_STALE },
        { 0, 100, GC_WIRE_REPLAY },
        { 1, 3, GC_WIRE_REPLAY },
        { 0, 170, GC_WIRE_OK },         /* shift by >= 64 */
        { 0, 166, GC_WIRE_OK },
        { 0, 165, GC_WIRE_STALE },
        { 0, UINT64_MAX, GC_WIRE_OK },
        { 0, UINT64_MAX - 4, GC_WIRE_OK },
        { 0, UINT64_MAX, GC_WIRE_REPLAY },
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps [0]; i++) {
        const uint8_t *who = steps [i].who ? b : a;
        int r = gc_replay_check (rp, who, steps [i].seq);
        if (r != steps [i].want)
            fail_msg ("step %zu: seq %llu gave %s", i, (unsigned long long) steps [i].seq,
                      gc_wire_reason_name (r));
        if (r == GC_WIRE_OK)
            assert_int_equal (gc_replay_accept (rp, who, steps [i].seq, NULL), GC_WIRE_OK);
        else    /* accept re-checks and refuses */
            assert_int_equal (gc_replay_accept (rp, who, steps [i].seq, NULL), r);
    }
    uint64_t last = 0;
    assert_true (gc_replay_last (rp, a, &last));
    assert_true (last == UINT64_MAX);
    assert_int_equal (gc_replay_drops (rp, a), 7);
    assert_int_equal (gc_replay_drops (rp, b), 1);
    assert_int_equal (gc_replay_size (rp), 2);
    gc_replay_forget (rp, b);
    assert_false (gc_replay_last (rp, b, NULL));
    assert_int_equal (gc_replay_check (rp, b, 3), GC_WIRE_OK);
    gc_replay_destroy (&rp);
    //  Window 0: strictly increasing.
    rp = gc_replay_new (0, NULL);
    assert_int_equal (gc_replay_accept (rp, a, 5, NULL), GC_WIRE_OK);
    assert_int_equal (gc_replay_check (rp, a, 5), GC_WIRE_REPLAY);
    assert_int_equal (gc_replay_check (rp, a, 4), GC_WIRE_STALE);
    assert_int_equal (gc_replay_check (rp, a, 6), GC_WIRE_OK);
    gc_replay_destroy (&rp);
    gc_err_t err;
    assert_null (gc_replay_new (GC_REPLAY_MAX_WINDOW + 1, &err));
}

static void
test_replay_guard_many_senders (void **state)
{
    gc_replay_t *rp = gc_replay_new (8, NULL);
    for (uint32_t i = 0; i < 1000; i++) {
        uint8_t id [8] = { 0 };
        memcpy (id, &i, sizeof i);
        assert_int_equal (gc_replay_accept (rp, id, 1 + i, NULL), GC_WIRE_OK);
    }
    for (uint32_t i = 0; i < 1000; i++) {
        uint8_t id [8] = { 0 };
        memcpy (id, &i, sizeof i);
        uint64_t last;
        assert_true (gc_replay_last (rp, id, &last));
        assert_int_equal (last, 1 + i);
        assert_int_equal (gc_replay_check (rp, id, 1 + i), GC_WIRE_REPLAY);
    }
    assert_int_equal (gc_replay_size (rp), 1000);
    gc_replay_destroy (&rp);
}

static void
test_decode_with_replay_guard (void **state)
{
    gc_replay_t *rp = gc_replay_new (2, NULL);
    uint8_t payload [16] = "sixteen bytes..", h [5][H];
    for (int i = 0; i < 5; i++)
        s_encode (s_fix.alice, s_fix.net, GC_MSG_DELTA, 0, 10 + (uint64_t) i, 1, payload, 16, h [i]);
    gc_msg_header_t out;
    gc_err_t err = { 0 };
#define DEC(hh, pp) gc_wire_decode_ex (s_fix.net, s_fix.trust, rp, 4096, hh, H, pp, 16, &out, &err)
    assert_int_equal (DEC (h [4], payload), GC_WIRE_OK);       /* seq 14 */
    assert_int_equal (DEC (h [4], payload), GC_WIRE_REPLAY);
    assert_non_null (strstr (err.msg, "seq 14 (last accepted 14, window 2)"));
    assert_int_equal (DEC (h [1], payload), GC_WIRE_STALE);    /* 3 below */
    //  A corrupted copy of seq 13 is rejected and does not use up seq 13.
    uint8_t bad [16];
    memcpy (bad, payload, 16);
    bad [0] ^= 1;
    assert_int_equal (DEC (h [3], bad), GC_WIRE_DIGEST_MISMATCH);
    uint8_t forged [H];
    memcpy (forged, h [3], H);
    forged [130] ^= 1;
    assert_int_equal (DEC (forged, payload), GC_WIRE_BAD_SIGNATURE);
    assert_int_equal (DEC (h [3], payload), GC_WIRE_OK);       /* reordered, in window */
    assert_int_equal (DEC (h [3], payload), GC_WIRE_REPLAY);
    //  Replays are checked before the signature: a replayed seq with a bad
    //  signature costs no verification and counts as a replay.
    assert_int_equal (DEC (forged, payload), GC_WIRE_REPLAY);
    assert_int_equal (gc_replay_drops (rp, gc_key_peer_id (s_fix.alice)), 4);
#undef DEC
    gc_replay_destroy (&rp);
}

//  A second header under a used seq is checked on its own (no payload at
//  hand): network, trust store and signature only, each refusal its reason.
static void
test_verify_header_alone (void **state)
{
    static const struct { const char *what; int reason; } cases [] = {
        { "authentic", GC_WIRE_OK },
        { "payload digest changed", GC_WIRE_BAD_SIGNATURE },
        { "signature changed", GC_WIRE_BAD_SIGNATURE },
        { "another network", GC_WIRE_WRONG_NETWORK },
        { "untrusted signer", GC_WIRE_UNKNOWN_SENDER },
    };
    uint8_t payload [32] = { 7 };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        const char *w = cases [i].what;
        uint8_t h [H];
        s_encode (!strcmp (w, "untrusted signer") ? s_fix.mallory : s_fix.alice,
                  !strcmp (w, "another network") ? s_fix.other_net : s_fix.net,
                  GC_MSG_DELTA, 0, 77, 76, payload, sizeof payload, h);
        if (!strcmp (w, "payload digest changed"))
            h [70] ^= 0x04;
        if (!strcmp (w, "signature changed"))
            h [150] ^= 0x01;
        gc_msg_header_t hdr;
        assert_int_equal (gc_wire_parse (h, H, 0, UINT32_MAX, &hdr, NULL), GC_WIRE_OK);
        gc_err_t err = { 0 };
        int r = gc_wire_verify_header (s_fix.net, s_fix.trust, h, &hdr, &err);
        if (r != cases [i].reason)
            fail_msg ("%s: %s, expected %s (%s)", w, gc_wire_reason_name (r),
                      gc_wire_reason_name (cases [i].reason), err.msg);
    }
}

static void
test_receiver_target_evidence_and_counts (void **state)
{
    gc_err_t err = { 0 };
    gc_wire_rx_t *rx = gc_wire_rx_new (s_fix.net, s_fix.trust, 4096, 32, &err);
    assert_non_null (rx);
    gc_wire_rx_set_self (rx, gc_key_peer_id (s_fix.alice));
    gc_msg_header_t out;
    uint8_t h [H], accused [8] = { 0 };
    //  Bob asks alice (us) for a keyframe, then asks mallory through us.
    s_encode (s_fix.bob, s_fix.net, GC_MSG_KEYFRAME_REQUEST, 0, 5, 0, gc_key_peer_id (s_fix.alice), 8, h);
    assert_int_equal (gc_wire_rx_decode (rx, h, H, gc_key_peer_id (s_fix.alice), 8, &out, NULL, &err), GC_WIRE_OK);
    s_encode (s_fix.bob, s_fix.net, GC_MSG_KEYFRAME_REQUEST, 0, 6, 0, gc_key_peer_id (s_fix.mallory), 8, h);
    assert_int_equal (gc_wire_rx_decode (rx, h, H, gc_key_peer_id (s_fix.mallory), 8, &out, NULL, &err),
                      GC_WIRE_WRONG_TARGET);
    assert_non_null (strstr (err.msg, gc_key_peer_id_hex (s_fix.mallory)));

    //  Bob equivocates: two deltas with seq 9. Alice relays the evidence.
    uint8_t p1 [4] = "one", p2 [4] = "two", d1 [H], d2 [H], ev [2 * H];
    s_encode (s_fix.bob, s_fix.net, GC_MSG_DELTA, 0, 9, 8, p1, 4, d1);
    s_encode (s_fix.bob, s_fix.net, GC_MSG_DELTA, 0, 9, 8, p2, 4, d2);
    assert_int_equal (gc_wire_evidence_build (d2, d1, ev, &err), 0);
    uint8_t ev2 [2 * H];
    assert_int_equal (gc_wire_evidence_build (d1, d2, ev2, &err), 0);
    assert_memory_equal (ev, ev2, sizeof ev);                  /* one encoding per pair */
    assert_int_equal (gc_wire_evidence_build (d1, d1, ev2, &err), -1);
    s_encode (s_fix.alice, s_fix.net, GC_MSG_EVIDENCE, 0, 3, 2, ev, sizeof ev, h);
    assert_int_equal (gc_wire_rx_decode (rx, h, H, ev, sizeof ev, &out, accused, &err), GC_WIRE_OK);
    assert_memory_equal (accused, gc_key_peer_id (s_fix.bob), 8);

    //  Evidence that proves nothing, each for its own reason.
    uint8_t other [H], bogus [2 * H];
    s_encode (s_fix.bob, s_fix.net, GC_MSG_DELTA, 0, 10, 8, p1, 4, other);
    static const struct { const char *what; int reason; const char *needle; } cases [] = {
        { "different seq", GC_WIRE_BAD_EVIDENCE, "differ in sender or seq" },
        { "wrong order", GC_WIRE_BAD_EVIDENCE, "byte order" },
        { "same header twice", GC_WIRE_BAD_EVIDENCE, "byte order" },
        { "bad signature", GC_WIRE_BAD_EVIDENCE, "does not verify" },
        { "untrusted accused", GC_WIRE_UNKNOWN_SENDER, "not in the trust store" },
        { "short", GC_WIRE_BAD_EVIDENCE, "evidence is 384" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        const char *w = cases [i].what;
        size_t len = sizeof bogus;
        if (!strcmp (w, "different seq"))
            gc_wire_evidence_build (d1, other, bogus, NULL);
        else if (!strcmp (w, "wrong order")) {
            memcpy (bogus, ev + H, H);
            memcpy (bogus + H, ev, H);
        }
        else if (!strcmp (w, "same header twice")) {
            memcpy (bogus, d1, H);
            memcpy (bogus + H, d1, H);
        }
        else if (!strcmp (w, "bad signature")) {
            memcpy (bogus, ev, sizeof bogus);
            bogus [H + 140] ^= 1;
        }
        else if (!strcmp (w, "untrusted accused")) {
            uint8_t m1 [H], m2 [H];
            s_encode (s_fix.mallory, s_fix.net, GC_MSG_DELTA, 0, 9, 8, p1, 4, m1);
            s_encode (s_fix.mallory, s_fix.net, GC_MSG_DELTA, 0, 9, 8, p2, 4, m2);
            gc_wire_evidence_build (m1, m2, bogus, NULL);
        }
        else
            len = 100;
        gc_err_clear (&err);
        int r = gc_wire_evidence_verify (s_fix.net, s_fix.trust, bogus, len, accused, &err);
        if (r != cases [i].reason || !strstr (err.msg, cases [i].needle))
            fail_msg ("%s: %s '%s'", w, gc_wire_reason_name (r), err.msg);
    }
    //  Through the receiver, bogus evidence is counted as bad_evidence.
    gc_wire_evidence_build (d1, other, bogus, NULL);
    s_encode (s_fix.alice, s_fix.net, GC_MSG_EVIDENCE, 0, 4, 2, bogus, sizeof bogus, h);
    assert_int_equal (gc_wire_rx_decode (rx, h, H, bogus, sizeof bogus, &out, accused, &err),
                      GC_WIRE_BAD_EVIDENCE);
    //  And a replay, an oversize payload, an unknown sender.
    assert_int_equal (gc_wire_rx_decode (rx, h, H, bogus, sizeof bogus, &out, NULL, &err), GC_WIRE_REPLAY);
    gc_wire_rx_set_max_payload (rx, 100);
    assert_int_equal (gc_wire_rx_decode (rx, h, H, bogus, sizeof bogus, &out, NULL, &err), GC_WIRE_OVERSIZE);
    s_encode (s_fix.mallory, s_fix.net, GC_MSG_DELTA, 0, 2, 1, p1, 4, h);
    assert_int_equal (gc_wire_rx_decode (rx, h, H, p1, 4, &out, NULL, &err), GC_WIRE_UNKNOWN_SENDER);

    static const struct { int reason; uint64_t n; } counts [] = {
        { GC_WIRE_OK, 2 }, { GC_WIRE_WRONG_TARGET, 1 }, { GC_WIRE_BAD_EVIDENCE, 1 },
        { GC_WIRE_REPLAY, 1 }, { GC_WIRE_OVERSIZE, 1 }, { GC_WIRE_UNKNOWN_SENDER, 1 },
        { GC_WIRE_BAD_SIGNATURE, 0 }, { -1, 0 }, { GC_WIRE_NREASONS, 0 },
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts [0]; i++)
        assert_int_equal (gc_wire_rx_count (rx, counts [i].reason), counts [i].n);
    gc_wire_rx_destroy (&rx);
    assert_null (rx);
}

static void
test_names_and_network_id (void **state)
{
    static const char *names [GC_WIRE_NREASONS] = {
        "ok", "truncated", "oversize", "bad_length", "bad_magic", "bad_version", "bad_type",
        "bad_flags", "bad_reserved", "bad_field", "wrong_network", "unknown_sender", "replay",
        "stale", "bad_signature", "digest_mismatch", "wrong_target", "bad_evidence", "internal",
    };
    //  Stable: these are metric labels and documented in PROTOCOL.md.
    for (int r = 0; r < GC_WIRE_NREASONS; r++)
        assert_string_equal (gc_wire_reason_name (r), names [r]);
    assert_string_equal (gc_wire_reason_name (GC_WIRE_NREASONS), "invalid");
    assert_string_equal (gc_wire_reason_name (-1), "invalid");
    //  err->code is the project-wide kind of the reason, never the reason.
    static const int kinds [GC_WIRE_NREASONS] = {
        GC_E_OK, GC_E_FORMAT, GC_E_FORMAT, GC_E_FORMAT, GC_E_FORMAT, GC_E_FORMAT, GC_E_FORMAT,
        GC_E_FORMAT, GC_E_FORMAT, GC_E_FORMAT, GC_E_PROTOCOL, GC_E_PROTOCOL, GC_E_PROTOCOL,
        GC_E_PROTOCOL, GC_E_PROTOCOL, GC_E_PROTOCOL, GC_E_PROTOCOL, GC_E_PROTOCOL, GC_E_SYS,
    };
    for (int r = 0; r < GC_WIRE_NREASONS; r++)
        if (gc_wire_reason_code (r) != kinds [r])
            fail_msg ("reason %s: kind %s, wanted %s", gc_wire_reason_name (r),
                      gc_err_name (gc_wire_reason_code (r)), gc_err_name (kinds [r]));
    assert_string_equal (gc_wire_type_name (GC_MSG_KEYFRAME_REQUEST), "keyframe_request");
    assert_string_equal (gc_wire_type_name (0), "unknown");

    uint8_t id [16], want [16];
    assert_int_equal (gc_wire_network_id ("gcnode-test-vectors", id, NULL), 0);
    size_t n;
    gc_hex_decode ("8ceaf09ee6455f49b8e412e870eebf10", want, 16, &n, "id", NULL);
    assert_memory_equal (id, want, 16);
    char longname [300];
    memset (longname, 'n', sizeof longname - 1);
    longname [sizeof longname - 1] = '\0';
    gc_err_t err;
    assert_int_equal (gc_wire_network_id (longname, id, &err), -1);
    assert_int_equal (gc_wire_network_id ("", id, &err), -1);
    longname [255] = '\0';
    assert_int_equal (gc_wire_network_id (longname, id, &err), 0);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_round_trip_each_type),
        cmocka_unit_test (test_every_bit_flip_rejected_with_its_reason),
        cmocka_unit_test (test_each_rejection_reason),
        cmocka_unit_test (test_encode_refuses_what_decode_rejects),
        cmocka_unit_test (test_replay_window_rules),
        cmocka_unit_test (test_replay_guard_many_senders),
        cmocka_unit_test (test_decode_with_replay_guard),
        cmocka_unit_test (test_verify_header_alone),
        cmocka_unit_test (test_receiver_target_evidence_and_counts),
        cmocka_unit_test (test_names_and_network_id),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
