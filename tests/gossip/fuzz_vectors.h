/*  What the gossip fuzz targets share: the keys and network of
    tests/vectors/wire_v1.txt (so the vectors in their seed corpora are valid
    messages), and signing header bytes as they are. Header-only. */
#ifndef FUZZ_VECTORS_H
#define FUZZ_VECTORS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_wire.h"

//  Test vector key NAME: seed = SHA-256("gcnode test vector key NAME").
static inline gc_key_t *
fuzz_vector_key (const char *name)
{
    char text [64];
    uint8_t seed [32];
    snprintf (text, sizeof text, "gcnode test vector key %s", name);
    gc_sha256 (text, strlen (text), seed);
    gc_key_t *key = gc_key_from_seed (seed, NULL);
    if (!key)
        abort ();
    return key;
}

//  The vectors' network id.
static inline void
fuzz_vector_network (uint8_t net [GC_WIRE_NETWORK_ID_SIZE])
{
    if (gc_wire_network_id ("gcnode-test-vectors", net, NULL))
        abort ();
}

//  Sign h's first 128 bytes as they are, by the documented rule (Ed25519
//  over domain || network id || signed part), into its signature field:
//  for headers gc_wire_encode would refuse to make.
static inline void
fuzz_sign_header (gc_key_t *key, const uint8_t net [GC_WIRE_NETWORK_ID_SIZE],
                  uint8_t h [GC_WIRE_HEADER_SIZE])
{
    uint8_t input [GC_WIRE_DOMAIN_SIZE + GC_WIRE_NETWORK_ID_SIZE + GC_WIRE_SIGNED_SIZE];
    memcpy (input, GC_WIRE_DOMAIN, GC_WIRE_DOMAIN_SIZE);
    memcpy (input + GC_WIRE_DOMAIN_SIZE, net, GC_WIRE_NETWORK_ID_SIZE);
    memcpy (input + GC_WIRE_DOMAIN_SIZE + GC_WIRE_NETWORK_ID_SIZE, h, GC_WIRE_SIGNED_SIZE);
    if (gc_key_sign (key, input, sizeof input, h + GC_WIRE_SIGNED_SIZE, NULL))
        abort ();
}

#endif
