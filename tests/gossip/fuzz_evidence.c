/*  libFuzzer target for equivocation evidence (gc_wire_evidence_verify,
    gc_wire_evidence_build): what a forwarder hands a third party, who must
    convict an author only on two of the author's own signatures.

    The first input byte picks a mode; the rest is the material:
      0  raw bytes as an EVIDENCE payload (what a hostile forwarder sends);
      1  two headers made from the material (two 2-byte length-prefixed
         chunks, up to 128 signed bytes each), the control byte after the
         chunks choosing per header the signer (trusted A or B, or an
         untrusted key), whether the network and sender fields are set to
         the signer's, and whether the pair goes through build; an oracle
         computed from what was signed says whether the pair proves
         anything, and the verifier must agree;
      2  a valid proof (B signs two DELTA headers with one seq; byte 1 and
         2 pick the seq and contents) with the material XORed onto it: the
         verifier may accept only bytes that are still exactly a proof
         (no flip in signed bytes or signatures survives).
    Invariants: every result is ok, bad_evidence or unknown_sender with a
    matching err.code; an accepted proof names an author whose key signed
    both halves, its halves are in canonical order, and build gives back
    the same bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_vectors.h"
#include "gc_wire.h"

#define H GC_WIRE_HEADER_SIZE
#define SIGNED GC_WIRE_SIGNED_SIZE

//  The keys and network of tests/vectors/wire_v1.txt (the evidence vector
//  is a valid proof here): A and B trusted, U not.
static gc_key_t   *s_keys [3];
static gc_trust_t *s_trust;
static uint8_t     s_net [GC_WIRE_NETWORK_ID_SIZE];

static void
s_init (void)
{
    if (s_trust)
        return;
    s_trust = gc_trust_new ();
    const char *names [3] = { "A", "B", "U" };
    for (int i = 0; i < 3; i++) {
        s_keys [i] = fuzz_vector_key (names [i]);
        if (i < 2 && gc_trust_add_raw (s_trust, gc_key_public_raw (s_keys [i]), names [i], NULL))
            abort ();
    }
    fuzz_vector_network (s_net);
}

//  Verify, check the invariants; the result.
static int
s_verify (const uint8_t *p, size_t len)
{
    gc_err_t err = { 0 };
    uint8_t accused [GC_PEER_ID_SIZE];
    int r = gc_wire_evidence_verify (s_net, s_trust, p, len, accused, &err);
    if (r != GC_WIRE_OK && r != GC_WIRE_BAD_EVIDENCE && r != GC_WIRE_UNKNOWN_SENDER)
        __builtin_trap ();
    if (r != GC_WIRE_OK) {
        if (err.code != gc_wire_reason_code (r))
            __builtin_trap ();
        return r;
    }
    if (len != GC_WIRE_EVIDENCE_SIZE || memcmp (p, p + H, SIGNED) >= 0
    ||  memcmp (p + 24, accused, GC_PEER_ID_SIZE) || memcmp (p + H + 24, accused, GC_PEER_ID_SIZE)
    ||  memcmp (p + 40, p + H + 40, 8) || !gc_trust_lookup (s_trust, accused))
        __builtin_trap ();
    uint8_t again [GC_WIRE_EVIDENCE_SIZE];
    if (gc_wire_evidence_build (p + H, p, again, NULL) || memcmp (again, p, sizeof again))
        __builtin_trap ();
    return r;
}

//  Mode 1: chunk -> header; returns the signer index (0, 1 trusted; 2 not).
static int
s_header (const uint8_t *chunk, size_t n, uint8_t ctl, uint8_t h [H])
{
    memset (h, 0, H);
    memcpy (h, chunk, n < SIGNED ? n : SIGNED);
    int signer = (ctl & 3) % 3;
    if (ctl & 4)
        memcpy (h + 8, s_net, GC_WIRE_NETWORK_ID_SIZE);
    if (ctl & 8)
        memcpy (h + 24, gc_key_peer_id (s_keys [signer]), GC_PEER_ID_SIZE);
    fuzz_sign_header (s_keys [signer], s_net, h);
    return signer;
}

//  What the pair proves, from what was signed: the verifier's oracle.
static int
s_expected (const uint8_t a [H], int sa, const uint8_t b [H], int sb)
{
    gc_msg_header_t ha, hb;
    const uint8_t *h [2] = { a, b };
    gc_msg_header_t *out [2] = { &ha, &hb };
    int signer [2] = { sa, sb };
    for (int i = 0; i < 2; i++) {
        //  each half must be a well-formed header for our network, naming a
        //  trusted key, signed by that very key
        if (gc_wire_parse (h [i], H, 0, UINT32_MAX, out [i], NULL) != GC_WIRE_OK
        ||  memcmp (out [i]->network_id, s_net, GC_WIRE_NETWORK_ID_SIZE))
            return GC_WIRE_BAD_EVIDENCE;
        gc_key_t *named = gc_trust_lookup (s_trust, out [i]->sender);
        if (!named)
            return GC_WIRE_UNKNOWN_SENDER;
        if (memcmp (out [i]->sender, gc_key_peer_id (s_keys [signer [i]]), GC_PEER_ID_SIZE))
            return GC_WIRE_BAD_EVIDENCE;
    }
    if (memcmp (ha.sender, hb.sender, GC_PEER_ID_SIZE) || ha.seq != hb.seq
    ||  memcmp (a, b, SIGNED) >= 0)
        return GC_WIRE_BAD_EVIDENCE;
    return GC_WIRE_OK;
}

static void
s_pair (const uint8_t *data, size_t size)
{
    const uint8_t *chunk [2];
    size_t n [2];
    for (int i = 0; i < 2; i++) {
        if (size < 2)
            return;
        size_t len = (size_t) data [0] | (size_t) data [1] << 8;
        data += 2;
        size -= 2;
        n [i] = len < size ? len : size;
        chunk [i] = data;
        data += n [i];
        size -= n [i];
    }
    uint8_t ctl = size ? data [0] : 0x0c;
    uint8_t a [H], b [H], p [GC_WIRE_EVIDENCE_SIZE];
    int sa = s_header (chunk [0], n [0], ctl, a);
    int sb = s_header (chunk [1], n [1], (uint8_t) (ctl >> 4), b);
    if (ctl & 0x80) {
        if (gc_wire_evidence_build (a, b, p, NULL)) {
            if (memcmp (a, b, SIGNED))
                __builtin_trap ();          /* refused a pair that differs */
            return;
        }
        //  build orders the pair
        if (memcmp (a, b, SIGNED) > 0) {
            uint8_t t [H];
            memcpy (t, a, H);
            memcpy (a, b, H);
            memcpy (b, t, H);
            int s = sa;
            sa = sb;
            sb = s;
        }
    }
    else {
        memcpy (p, a, H);
        memcpy (p + H, b, H);
    }
    int want = s_expected (a, sa, b, sb), got = s_verify (p, sizeof p);
    //  unknown_sender may come from either half before the other fails: the
    //  oracle's first failing half decides only between ok and not ok
    if ((want == GC_WIRE_OK) != (got == GC_WIRE_OK))
        __builtin_trap ();
}

static void
s_mutated (const uint8_t *data, size_t size)
{
    uint8_t seed = size ? data [0] : 0, fill = size > 1 ? data [1] : 0;
    if (size > 2) {
        data += 2;
        size -= 2;
    }
    else
        size = 0;
    uint8_t a [H] = { 0 }, b [H] = { 0 }, p [GC_WIRE_EVIDENCE_SIZE], orig [GC_WIRE_EVIDENCE_SIZE];
    gc_msg_header_t hdr = { .type = GC_MSG_DELTA, .round = seed, .seq = 1000u + seed, .base_seq = seed };
    uint8_t one = fill, two = (uint8_t) (fill + 1);
    if (gc_wire_encode (s_keys [1], s_net, &hdr, &one, 1, a, NULL)
    ||  gc_wire_encode (s_keys [1], s_net, &hdr, &two, 1, b, NULL)
    ||  gc_wire_evidence_build (a, b, p, NULL))
        abort ();
    memcpy (orig, p, sizeof p);
    for (size_t i = 0; i < size && i < sizeof p; i++)
        p [i] ^= data [i];
    if (s_verify (p, sizeof p) == GC_WIRE_OK && memcmp (p, orig, sizeof p))
        __builtin_trap ();                  /* a changed proof convicted someone */
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    s_init ();
    if (size < 1)
        return 0;
    int mode = data [0] % 3;
    data++;
    size--;
    if (mode == 0)
        s_verify (data, size);
    else
    if (mode == 1)
        s_pair (data, size);
    else
        s_mutated (data, size);
    return 0;
}
