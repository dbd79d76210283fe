/*  tests/vectors/wire_v1.txt, made by an independent implementation of
    docs/PROTOCOL.md (gen_vectors.py): every vector decodes to its expected
    result when fed in order to one receiver, and every accepted one is
    re-encoded byte for byte from its fields. */
#include "gc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_hex.h"
#include "gc_wire.h"
#include "gc_wire_rx.h"

#define S_MAX_FIELDS 20
#define S_MAX_KEYS   8

typedef struct {
    const char *name [S_MAX_FIELDS];
    const char *value [S_MAX_FIELDS];
    int         n;
} s_record_t;

static const char *
s_get (const s_record_t *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp (r->name [i], name))
            return r->value [i];
    return NULL;
}

static const char *
s_need (const s_record_t *r, const char *name)
{
    const char *v = s_get (r, name);
    if (!v)
        fail_msg ("vector record without '%s'", name);
    return v;
}

static size_t
s_hex (const char *hex, uint8_t *out, size_t max)
{
    size_t n = 0;
    gc_err_t err;
    if (gc_hex_decode (hex, out, max, &n, "vector", &err))
        fail_msg ("%s", err.msg);
    return n;
}

static uint64_t
s_u64 (const s_record_t *r, const char *name)
{
    return strtoull (s_need (r, name), NULL, 10);
}

//  Split the file in place into records: `name = value` lines, records
//  separated by blank lines, `#` lines are comments. Returns the count.
static int
s_parse (char *text, s_record_t *recs, int max)
{
    int nrec = 0, in_record = 0;
    char *p = text;
    while (*p) {
        char *end = strchr (p, '\n');
        if (end)
            *end = '\0';
        if (!*p)
            in_record = 0;
        else
        if (*p != '#') {
            if (!in_record) {
                assert_true (nrec < max);
                nrec++;
                in_record = 1;
            }
            s_record_t *r = &recs [nrec - 1];
            char *eq = strstr (p, " = ");
            if (!eq || r->n >= S_MAX_FIELDS)
                fail_msg ("bad vector line: %s", p);
            *eq = '\0';
            r->name [r->n] = p;
            r->value [r->n] = eq + 3;
            r->n++;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return nrec;
}

static void
test_wire_vectors (void **state)
{
    char *path = gc_test_source_path ("tests/vectors/wire_v1.txt");
    FILE *f = fopen (path, "rb");
    if (!f)
        fail_msg ("cannot open %s", path);
    fseek (f, 0, SEEK_END);
    long size = ftell (f);
    fseek (f, 0, SEEK_SET);
    char *text = malloc ((size_t) size + 1);
    assert_non_null (text);
    assert_int_equal (fread (text, 1, (size_t) size, f), (size_t) size);
    text [size] = '\0';
    fclose (f);

    s_record_t *recs = calloc (256, sizeof *recs);
    assert_non_null (recs);
    int nrec = s_parse (text, recs, 256);
    assert_true (nrec > 1);

    //  Receiver set-up from the first record and the key records.
    s_record_t *setup = &recs [0];
    uint8_t net [16], want_net [16];
    gc_err_t err = { 0 };
    assert_int_equal (gc_wire_network_id (s_need (setup, "network"), net, &err), 0);
    s_hex (s_need (setup, "network_id"), want_net, 16);
    assert_memory_equal (net, want_net, 16);
    gc_trust_t *trust = gc_trust_new ();
    gc_key_t *keys [S_MAX_KEYS];
    const char *key_names [S_MAX_KEYS];
    int nkeys = 0;
    for (int i = 1; i < nrec; i++) {
        if (!s_get (&recs [i], "key"))
            continue;
        assert_true (nkeys < S_MAX_KEYS);
        uint8_t seed [32], pub [32], id [8];
        s_hex (s_need (&recs [i], "seed"), seed, 32);
        s_hex (s_need (&recs [i], "public"), pub, 32);
        s_hex (s_need (&recs [i], "peer_id"), id, 8);
        gc_key_t *k = gc_key_from_seed (seed, &err);
        assert_non_null (k);
        assert_memory_equal (gc_key_public_raw (k), pub, 32);
        assert_memory_equal (gc_key_peer_id (k), id, 8);
        if (!strcmp (s_need (&recs [i], "trusted"), "yes"))
            assert_int_equal (gc_trust_add_raw (trust, pub, s_get (&recs [i], "key"), &err), 0);
        key_names [nkeys] = s_get (&recs [i], "key");
        keys [nkeys++] = k;
    }
    uint8_t receiver [8];
    s_hex (s_need (setup, "receiver"), receiver, 8);
    gc_wire_rx_t *rx = gc_wire_rx_new (net, trust, s_u64 (setup, "max_payload"),
                                       (unsigned) s_u64 (setup, "window"), &err);
    assert_non_null (rx);
    gc_wire_rx_set_self (rx, receiver);

    size_t max_payload = 70000;
    uint8_t *payload = malloc (max_payload), header [256];
    int nvec = 0, nok = 0, nev = 0;
    for (int i = 1; i < nrec; i++) {
        const s_record_t *r = &recs [i];
        const char *name = s_get (r, "vector");
        if (!name)
            continue;
        nvec++;
        size_t hlen = s_hex (s_need (r, "header"), header, sizeof header);
        size_t plen = s_hex (s_need (r, "payload"), payload, max_payload);
        gc_msg_header_t out;
        uint8_t accused [8];
        gc_err_clear (&err);
        int got = gc_wire_rx_decode (rx, header, hlen, payload, plen, &out, accused, &err);
        const char *expect = s_need (r, "expect");
        if (strcmp (gc_wire_reason_name (got), expect))
            fail_msg ("vector %s: got %s (%s), expected %s", name, gc_wire_reason_name (got),
                      err.msg, expect);
        if (got != GC_WIRE_OK)
            continue;
        nok++;
        //  Re-encode from the fields: Ed25519 is deterministic, so the bytes match.
        const char *signer = s_need (r, "signer");
        gc_key_t *key = NULL;
        for (int k = 0; k < nkeys; k++)
            if (!strcmp (key_names [k], signer))
                key = keys [k];
        assert_non_null (key);
        gc_msg_header_t hdr = { .type = (uint8_t) s_u64 (r, "type"), .flags = (uint8_t) s_u64 (r, "flags"),
                                .round = s_u64 (r, "round"), .seq = s_u64 (r, "seq"),
                                .base_seq = s_u64 (r, "base_seq") };
        uint8_t again [GC_WIRE_HEADER_SIZE];
        assert_int_equal (gc_wire_encode (key, net, &hdr, payload, plen, again, &err), 0);
        if (memcmp (again, header, GC_WIRE_HEADER_SIZE))
            fail_msg ("vector %s: re-encoded header differs", name);
        assert_int_equal (out.seq, hdr.seq);
        assert_int_equal (out.round, hdr.round);
        const char *acc = s_get (r, "accused");
        if (acc) {
            uint8_t want [8];
            s_hex (acc, want, 8);
            assert_memory_equal (accused, want, 8);
            nev++;
        }
    }
    //  The file has what it claims: accepted and rejected messages, evidence.
    assert_true (nvec >= 30);
    assert_true (nok >= 8);
    assert_int_equal (nev, 1);
    assert_int_equal (gc_wire_rx_count (rx, GC_WIRE_OK), (uint64_t) nok);

    gc_wire_rx_destroy (&rx);
    gc_trust_destroy (&trust);
    for (int k = 0; k < nkeys; k++)
        gc_key_destroy (&keys [k]);
    free (payload);
    free (recs);
    free (text);
    free (path);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_wire_vectors),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
