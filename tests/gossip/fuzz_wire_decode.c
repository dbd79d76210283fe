/*  libFuzzer target for the gossip message decoder.

    The first input byte picks a mode; the rest is the material:
      0  raw frames: header = the first min(n, 192) bytes, payload = the rest
         (what a hostile network sends: nothing gets past the signature);
      1  the same, but signed by a trusted key for our network after the
         sender and network fields are set: reaches everything after the
         signature check with arbitrary field values;
      2  as 1, with payload_len and the digest fixed up to match the payload:
         reaches acceptance, the keyframe-request target check and evidence
         verification of fuzzed evidence;
      3  a stream: 2-byte length-prefixed chunks, each made into a message as
         in 2, through one receiver (replay window across messages);
      4  raw bytes to the evidence verifier.
    Invariants: every result is a known reason and err.code is its kind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_vectors.h"
#include "gc_wire.h"
#include "gc_wire_rx.h"

#define H GC_WIRE_HEADER_SIZE

//  The keys and network of tests/vectors/wire_v1.txt, so the vectors in the
//  seed corpus are valid messages here: A and B trusted, R is us.
static gc_key_t   *s_keys [2];
static gc_trust_t *s_trust;
static uint8_t     s_net [16];
static uint8_t     s_self [8];

static void
s_init (void)
{
    if (s_trust)
        return;
    s_trust = gc_trust_new ();
    const char *names [2] = { "A", "B" };
    for (int i = 0; i < 2; i++) {
        s_keys [i] = fuzz_vector_key (names [i]);
        if (gc_trust_add_raw (s_trust, gc_key_public_raw (s_keys [i]), names [i], NULL))
            abort ();
    }
    gc_key_t *self = fuzz_vector_key ("R");
    memcpy (s_self, gc_key_peer_id (self), 8);
    gc_key_destroy (&self);
    fuzz_vector_network (s_net);
}

static void
s_check (int r, const gc_err_t *err)
{
    if (r < 0 || r >= GC_WIRE_NREASONS || (r != GC_WIRE_OK && err->code != gc_wire_reason_code (r)))
        __builtin_trap ();
}

//  Make a signed header from up to 192 fuzz bytes; fix the length and
//  digest when asked. Returns the signer.
static void
s_forge (const uint8_t *data, size_t size, const uint8_t *payload, size_t plen, int fix,
         uint8_t h [H])
{
    memset (h, 0, H);
    memcpy (h, data, size < H ? size : H);
    gc_key_t *key = s_keys [h [24] & 1];
    memcpy (h + 8, s_net, 16);
    memcpy (h + 24, gc_key_peer_id (key), 8);
    if (fix) {
        uint32_t n = (uint32_t) plen;
        for (int i = 0; i < 4; i++)
            h [56 + i] = (uint8_t) (n >> (8 * i));
        gc_sha256 (plen ? payload : (const uint8_t *) "", plen, h + 64);
    }
    fuzz_sign_header (key, s_net, h);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    s_init ();
    if (size < 1)
        return 0;
    int mode = data [0] % 5;
    data++;
    size--;
    size_t hl = size < H ? size : H;
    const uint8_t *payload = data + hl;
    size_t plen = size - hl;
    gc_err_t err = { 0 };
    gc_msg_header_t out;
    uint8_t accused [8];
    gc_wire_rx_t *rx = gc_wire_rx_new (s_net, s_trust, 65536, 32, NULL);
    if (!rx)
        abort ();
    gc_wire_rx_set_self (rx, s_self);
    uint8_t h [H];
    if (mode == 0) {
        s_check (gc_wire_decode (s_net, s_trust, 65536, data, hl, payload, plen, &out, &err), &err);
        s_check (gc_wire_rx_decode (rx, data, hl, payload, plen, &out, accused, &err), &err);
    }
    else
    if (mode == 1 || mode == 2) {
        s_forge (data, hl, payload, plen, mode == 2, h);
        s_check (gc_wire_rx_decode (rx, h, H, payload, plen, &out, accused, &err), &err);
        //  A replay of what was just accepted is never accepted again.
        if (err.code == 0 && gc_wire_rx_decode (rx, h, H, payload, plen, &out, accused, &err) == GC_WIRE_OK)
            __builtin_trap ();
    }
    else
    if (mode == 3) {
        while (size >= 2) {
            size_t n = (size_t) data [0] | (size_t) data [1] << 8;
            data += 2;
            size -= 2;
            n = n < size ? n : size;
            size_t chl = n < H ? n : H;
            s_forge (data, chl, data + chl, n - chl, 1, h);
            s_check (gc_wire_rx_decode (rx, h, H, data + chl, n - chl, &out, accused, &err), &err);
            data += n;
            size -= n;
        }
    }
    else {
        int r = gc_wire_evidence_verify (s_net, s_trust, data, size, accused, &err);
        if (r != GC_WIRE_OK && r != GC_WIRE_BAD_EVIDENCE && r != GC_WIRE_UNKNOWN_SENDER)
            __builtin_trap ();
    }
    gc_wire_rx_destroy (&rx);
    return 0;
}
