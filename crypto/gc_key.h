/*  gc_key — an Ed25519 identity: a keypair (a peer's own key) or a public key
    only (a peer it trusts), with reusable OpenSSL contexts for sign / verify.

    Key files are PEM, readable by `openssl pkey`: the private key as PKCS#8
    ("BEGIN PRIVATE KEY", unencrypted), the public key as SubjectPublicKeyInfo
    ("BEGIN PUBLIC KEY"). A private key file must not be accessible by group or
    others (mode & 077 == 0): loading refuses it, like ssh does.

    The peer id is the first 8 bytes of SHA-256 over the 32-byte raw public
    key, printed as 16 lowercase hex digits; it names the peer in logs,
    metrics and message headers. Verification always uses the full key.

    A gc_key_t keeps its EVP_PKEY and its signing and verifying contexts
    between calls (re-initialised in place, no EVP_PKEY_CTX rebuilt), so one
    key must not be used by two threads at once. What still allocates per
    call is inside OpenSSL 3.0's Ed25519 (a SHA-512 context per operation):
    5 allocations per sign and 3 per verify, against 13 and 11 with a fresh
    context (tests/crypto/test_key_allocs.c). */
#ifndef GC_KEY_H
#define GC_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_KEY_PUBLIC_SIZE  32      /* raw Ed25519 public key */
#define GC_KEY_SEED_SIZE    32      /* raw Ed25519 private key (RFC 8032 seed) */
#define GC_SIG_SIZE         64
#define GC_PEER_ID_SIZE     8
#define GC_PEER_ID_HEX_LEN  16
#define GC_KEY_FILE_MAX     16384   /* larger files are not key files */

/*  err->code (gc_err.h): GC_E_IO (cannot open / read / write the file),
    GC_E_PERMS (private key accessible by group or others), GC_E_FORMAT (not
    a PEM Ed25519 key of the expected kind), GC_E_ARG (e.g. signing with a
    public-only key), GC_E_CRYPTO (OpenSSL failed), GC_E_NOMEM. */

typedef struct gc_key_t gc_key_t;

gc_key_t *gc_key_generate (gc_err_t *err);
/*  Deterministic keypair from a 32-byte RFC 8032 private key (test vectors). */
gc_key_t *gc_key_from_seed (const uint8_t seed [GC_KEY_SEED_SIZE], gc_err_t *err);
gc_key_t *gc_key_from_public_raw (const uint8_t pub [GC_KEY_PUBLIC_SIZE], gc_err_t *err);

/*  PEM PKCS#8 private key; refuses a file with any group/other permission
    bit set (code GC_E_PERMS), encrypted keys and non-Ed25519 keys. */
gc_key_t *gc_key_load_private (const char *path, gc_err_t *err);
/*  PEM SubjectPublicKeyInfo public key. */
gc_key_t *gc_key_load_public (const char *path, gc_err_t *err);
/*  Either kind, told apart by the PEM label (the private-key checks apply). */
gc_key_t *gc_key_load (const char *path, gc_err_t *err);

/*  Write atomically (temporary file in the same directory, fsync, rename):
    the private key with mode 0600, the public key with mode 0644.
    An existing file at path is replaced. */
int  gc_key_save_private (const gc_key_t *self, const char *path, gc_err_t *err);
int  gc_key_save_public (const gc_key_t *self, const char *path, gc_err_t *err);

bool           gc_key_has_private (const gc_key_t *self);
const uint8_t *gc_key_public_raw (const gc_key_t *self);   /* 32 bytes */
const uint8_t *gc_key_peer_id (const gc_key_t *self);      /* 8 bytes */
const char    *gc_key_peer_id_hex (const gc_key_t *self);  /* 16 hex chars */

/*  Pure Ed25519 (RFC 8032) over msg. Needs the private part. */
int  gc_key_sign (gc_key_t *self, const uint8_t *msg, size_t len,
                  uint8_t sig [GC_SIG_SIZE], gc_err_t *err);
/*  0 when sig is a valid signature of msg by this key, -1 otherwise. */
int  gc_key_verify (gc_key_t *self, const uint8_t *msg, size_t len,
                    const uint8_t sig [GC_SIG_SIZE]);

void gc_key_destroy (gc_key_t **self_p);

/*  The peer id of a raw public key, and its hex form (17 bytes with NUL). */
void gc_peer_id_of (const uint8_t pub [GC_KEY_PUBLIC_SIZE], uint8_t id [GC_PEER_ID_SIZE]);
void gc_peer_id_hex (const uint8_t id [GC_PEER_ID_SIZE], char out [GC_PEER_ID_HEX_LEN + 1]);

#endif
