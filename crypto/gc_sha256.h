/*  gc_sha256 — SHA-256, the digest that every signed gossip header carries.

    OpenSSL's EVP interface; each thread keeps one digest context and reuses
    it, so hashing a payload does not build a context per call. */
#ifndef GC_SHA256_H
#define GC_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GC_SHA256_SIZE 32

/*  out = SHA-256(data[0..len)). Aborts only if OpenSSL cannot provide
    SHA-256 at all (a broken installation or no memory for one context). */
void gc_sha256 (const void *data, size_t len, uint8_t out [GC_SHA256_SIZE]);

#endif
