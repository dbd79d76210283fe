/*  gc_trust — the set of public keys a peer accepts messages from.

    Keys come from a directory of *.pub files, single files, or raw keys (a
    list in the config). Lookup is by the 8-byte peer id carried in message
    headers; the key found is then used with its full 32 bytes, so an id
    alone proves nothing. Two different keys with the same peer id cannot be
    loaded (the second is refused with an error naming both origins); adding
    the same key twice is harmless.

    The store owns its keys; gc_trust_lookup lends them. Keys hold reusable
    verify contexts, so a store serves one thread at a time. */
#ifndef GC_TRUST_H
#define GC_TRUST_H

#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_key.h"

#define GC_TRUST_MAX_KEYS 65536

//  err->code: GC_E_COLLISION for a peer-id collision, else as gc_key.h.

typedef struct gc_trust_t gc_trust_t;

gc_trust_t *gc_trust_new (void);

/*  Add every DIR/<name>.pub (names not starting with '.', in sorted order).
    All or nothing: on any bad file nothing from dir is added. */
int  gc_trust_add_dir (gc_trust_t *self, const char *dir, gc_err_t *err);
/*  Add one public key file (PEM SubjectPublicKeyInfo). */
int  gc_trust_add_file (gc_trust_t *self, const char *path, gc_err_t *err);
/*  Add a raw 32-byte public key; origin names it in error messages. */
int  gc_trust_add_raw (gc_trust_t *self, const uint8_t pub [GC_KEY_PUBLIC_SIZE],
                       const char *origin, gc_err_t *err);

/*  The key with this peer id, or NULL. Borrowed: valid while the store lives. */
gc_key_t   *gc_trust_lookup (gc_trust_t *self, const uint8_t peer_id [GC_PEER_ID_SIZE]);
size_t      gc_trust_size (const gc_trust_t *self);
/*  The i-th key in insertion order (i < size), and where it came from. */
gc_key_t   *gc_trust_at (gc_trust_t *self, size_t i);
const char *gc_trust_origin (const gc_trust_t *self, size_t i);

void gc_trust_destroy (gc_trust_t **self_p);

#endif
