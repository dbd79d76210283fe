/*  gcbench crypto — what signing and verifying a gossip message costs, next
    to the raw Ed25519 and SHA-256 rates measured in the same run.

    A message costs one SHA-256 pass over the payload plus one Ed25519
    signature (or verification) over a 160-byte input; the alternative,
    Ed25519 over the whole payload, is measured too (its direct sign hashes
    the payload twice with SHA-512). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_bench.h"
#include "gc_key.h"
#include "gc_sha256.h"
#include "gc_wire.h"

typedef struct {
    gc_key_t        *key;       /* signer */
    gc_trust_t      *trust;     /* holds the signer's public key */
    uint8_t          net [16];
    uint8_t         *payload;
    size_t           len;
    uint8_t          header [GC_WIRE_HEADER_SIZE];
    uint8_t          sig [GC_SIG_SIZE];
    uint64_t         seq;
    int              reps;
    int              failed;
} s_ctx_t;

static void
s_raw_sign (void *arg)
{
    s_ctx_t *c = arg;
    for (int i = 0; i < c->reps; i++)
        c->failed |= gc_key_sign (c->key, c->payload, c->len, c->sig, NULL);
}

static void
s_raw_verify (void *arg)
{
    s_ctx_t *c = arg;
    gc_key_t *pub = gc_trust_at (c->trust, 0);
    for (int i = 0; i < c->reps; i++)
        c->failed |= gc_key_verify (pub, c->payload, c->len, c->sig);
}

static void
s_sha (void *arg)
{
    s_ctx_t *c = arg;
    uint8_t d [32];
    for (int i = 0; i < c->reps; i++)
        gc_sha256 (c->payload, c->len, d);
    gc_bench_sink (d [0]);
}

static void
s_encode (void *arg)
{
    s_ctx_t *c = arg;
    for (int i = 0; i < c->reps; i++) {
        gc_msg_header_t hdr = { .type = GC_MSG_DELTA, .round = 1, .seq = ++c->seq,
                                .base_seq = c->seq - 1 };
        c->failed |= gc_wire_encode (c->key, c->net, &hdr, c->payload, c->len, c->header, NULL);
    }
}

static void
s_decode (void *arg)
{
    s_ctx_t *c = arg;
    gc_msg_header_t out;
    for (int i = 0; i < c->reps; i++)
        c->failed |= gc_wire_decode (c->net, c->trust, c->len, c->header, GC_WIRE_HEADER_SIZE,
                                     c->payload, c->len, &out, NULL) != GC_WIRE_OK;
}

//  Seconds per call of fn with reps calls per timing, best of several.
static double
s_time (const gc_bench_opts_t *opts, gc_bench_body_fn fn, s_ctx_t *c, int reps)
{
    c->reps = reps;
    return gc_bench_time_best (fn, c, 3, opts->min_time) / reps;
}

int
gc_bench_crypto (const gc_bench_opts_t *opts)
{
    gc_err_t err = { 0 };
    s_ctx_t c = { .seq = 1 };
    c.key = gc_key_generate (&err);
    c.trust = gc_trust_new ();
    size_t big = 1 << 20;
    c.payload = malloc (big);
    if (!c.key || !c.trust || !c.payload
    ||  gc_trust_add_raw (c.trust, gc_key_public_raw (c.key), "bench", &err)
    ||  gc_wire_network_id ("bench", c.net, &err)) {
        fprintf (stderr, "gcbench crypto: setup failed: %s\n", err.msg);
        return 1;
    }
    for (size_t i = 0; i < big; i++)
        c.payload [i] = (uint8_t) (i * 2654435761u >> 13);
    int q = opts->quick ? 1 : 4;

    //  Raw Ed25519 on the size the wire signs: domain + network + 128 bytes.
    c.len = 160;
    double t_sign = s_time (opts, s_raw_sign, &c, 50 * q);
    double t_verify = s_time (opts, s_raw_verify, &c, 20 * q);
    c.len = big;
    double t_sha = s_time (opts, s_sha, &c, 2 * q);
    double t_direct_sign = s_time (opts, s_raw_sign, &c, q);
    double t_direct_verify = s_time (opts, s_raw_verify, &c, q);

    gc_bench_emit (opts, "ed25519_sign_per_s", 1.0 / t_sign, "1/s", "\"msg_bytes\":160");
    gc_bench_emit (opts, "ed25519_verify_per_s", 1.0 / t_verify, "1/s", "\"msg_bytes\":160");
    gc_bench_emit (opts, "sha256_GBps", (double) big / t_sha * 1e-9, "GB/s", NULL);
    gc_bench_emit (opts, "ed25519_direct_sign_1MiB_ms", t_direct_sign * 1e3, "ms",
                   "\"what\":\"Ed25519 over the whole 1 MiB payload, for comparison\"");
    gc_bench_emit (opts, "ed25519_direct_verify_1MiB_ms", t_direct_verify * 1e3, "ms",
                   "\"what\":\"Ed25519 over the whole 1 MiB payload, for comparison\"");

    static const struct { const char *tag; size_t len; int reps; } sizes [] = {
        { "12KB", 12 * 1024, 40 },
        { "1MiB", 1 << 20, 1 },
    };
    double sign_1m = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes [0]; s++) {
        c.len = sizes [s].len;
        double te = s_time (opts, s_encode, &c, sizes [s].reps * q);
        double td = s_time (opts, s_decode, &c, sizes [s].reps * q);
        char name [64], extra [160];
        snprintf (extra, sizeof extra, "\"payload_bytes\":%zu,\"what\":\"%s\"", sizes [s].len,
                  "SHA-256 of the payload + Ed25519 over the header");
        snprintf (name, sizeof name, "crypto_sign_%s_ms", sizes [s].tag);
        gc_bench_emit (opts, name, te * 1e3, "ms", extra);
        snprintf (extra, sizeof extra, "\"payload_bytes\":%zu,\"what\":\"%s\"", sizes [s].len,
                  "header checks + Ed25519 verify + SHA-256 of the payload");
        snprintf (name, sizeof name, "crypto_verify_%s_ms", sizes [s].tag);
        gc_bench_emit (opts, name, td * 1e3, "ms", extra);
        if (sizes [s].len == big) {
            sign_1m = te;
            gc_bench_emit (opts, "crypto_verify_1MiB_vs_direct", t_direct_verify / td, "ratio",
                           "\"what\":\"direct Ed25519 verify time / per-message verify time\"");
        }
    }
    gc_bench_emit (opts, "crypto_sign_1MiB_vs_direct", t_direct_sign / sign_1m, "ratio",
                   "\"what\":\"direct Ed25519 sign time / per-message sign time\"");
    int rc = c.failed ? 1 : 0;
    if (c.failed)
        fprintf (stderr, "gcbench crypto: a sign or verify failed during the run\n");
    free (c.payload);
    gc_trust_destroy (&c.trust);
    gc_key_destroy (&c.key);
    return rc;
}
