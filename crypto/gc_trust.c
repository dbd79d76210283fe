#include "gc_trust.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gc_trust_t {
    gc_key_t **keys;        /* insertion order */
    char     **origins;
    size_t     n, cap;
    //  Open addressing with linear probing over peer ids: slot holds
    //  (key index + 1), 0 = empty. Kept at most half full.
    uint32_t  *index;
    size_t     index_cap;   /* power of two */
};

gc_trust_t *
gc_trust_new (void)
{
    return calloc (1, sizeof (gc_trust_t));
}

static size_t
s_hash (const uint8_t id [GC_PEER_ID_SIZE], size_t mask)
{
    uint64_t x;
    memcpy (&x, id, sizeof x);
    //  Honest ids are SHA-256 output already; the multiply just spreads any
    //  structure a hand-made key could have over the high bits we keep.
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t) (x >> 32) & mask;
}

static gc_key_t *
s_find (const gc_trust_t *self, const uint8_t id [GC_PEER_ID_SIZE])
{
    if (!self->index_cap)
        return NULL;
    size_t mask = self->index_cap - 1;
    for (size_t s = s_hash (id, mask);; s = (s + 1) & mask) {
        uint32_t e = self->index [s];
        if (!e)
            return NULL;
        gc_key_t *k = self->keys [e - 1];
        if (!memcmp (gc_key_peer_id (k), id, GC_PEER_ID_SIZE))
            return k;
    }
}

static void
s_fill_index (gc_trust_t *self)
{
    size_t mask = self->index_cap - 1;
    memset (self->index, 0, self->index_cap * sizeof *self->index);
    for (size_t i = 0; i < self->n; i++) {
        size_t s = s_hash (gc_key_peer_id (self->keys [i]), mask);
        while (self->index [s])
            s = (s + 1) & mask;
        self->index [s] = (uint32_t) (i + 1);
    }
}

static int
s_reindex (gc_trust_t *self, size_t want_cap)
{
    uint32_t *index = calloc (want_cap, sizeof *index);
    if (!index)
        return -1;
    free (self->index);
    self->index = index;
    self->index_cap = want_cap;
    s_fill_index (self);
    return 0;
}

static int
s_grow (gc_trust_t *self)
{
    if (self->n == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : 16;
        gc_key_t **keys = realloc (self->keys, cap * sizeof *keys);
        if (keys)
            self->keys = keys;
        char **origins = realloc (self->origins, cap * sizeof *origins);
        if (origins)
            self->origins = origins;
        if (!keys || !origins)
            return -1;
        self->cap = cap;
    }
    if (2 * (self->n + 1) > self->index_cap)
        return s_reindex (self, self->index_cap ? 2 * self->index_cap : 32);
    return 0;
}

//  Takes ownership of key in every case.
static int
s_insert (gc_trust_t *self, gc_key_t *key, const char *origin, gc_err_t *err)
{
    const uint8_t *id = gc_key_peer_id (key);
    gc_key_t *old = s_find (self, id);
    if (old) {
        int same = !memcmp (gc_key_public_raw (old), gc_key_public_raw (key), GC_KEY_PUBLIC_SIZE);
        const char *old_origin = "?";
        for (size_t i = 0; i < self->n; i++)
            if (self->keys [i] == old)
                old_origin = self->origins [i];
        if (!same)
            gc_err_set (err, GC_E_COLLISION, "%s: peer id %s is also the id of a "
                        "different key (from %s); refusing the second key",
                        origin, gc_key_peer_id_hex (key), old_origin);
        gc_key_destroy (&key);
        return same ? 0 : -1;
    }
    if (self->n >= GC_TRUST_MAX_KEYS) {
        gc_key_destroy (&key);
        return gc_err_set (err, GC_E_RANGE, "%s: the trust store is full (%d keys)",
                           origin, GC_TRUST_MAX_KEYS);
    }
    char *copy = strdup (origin);
    if (!copy || s_grow (self) != 0) {
        free (copy);
        gc_key_destroy (&key);
        return gc_err_set (err, GC_E_NOMEM, "%s: out of memory", origin);
    }
    self->keys [self->n] = key;
    self->origins [self->n] = copy;
    self->n++;
    size_t mask = self->index_cap - 1;
    size_t s = s_hash (id, mask);
    while (self->index [s])
        s = (s + 1) & mask;
    self->index [s] = (uint32_t) self->n;
    return 0;
}

int
gc_trust_add_file (gc_trust_t *self, const char *path, gc_err_t *err)
{
    gc_key_t *key = gc_key_load_public (path, err);
    return key ? s_insert (self, key, path, err) : -1;
}

int
gc_trust_add_raw (gc_trust_t *self, const uint8_t pub [GC_KEY_PUBLIC_SIZE],
                  const char *origin, gc_err_t *err)
{
    gc_key_t *key = gc_key_from_public_raw (pub, err);
    if (!key)
        return gc_err_prefix (err, "%s: ", origin);
    return s_insert (self, key, origin, err);
}

static void
s_truncate (gc_trust_t *self, size_t n)
{
    while (self->n > n) {
        self->n--;
        gc_key_destroy (&self->keys [self->n]);
        free (self->origins [self->n]);
    }
    //  Rebuilt in place (no allocation), so a rollback cannot fail.
    if (self->index_cap)
        s_fill_index (self);
}

static int
s_cmp_names (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static int
s_is_pub_name (const char *name)
{
    size_t len = strlen (name);
    return name [0] != '.' && len > 4 && !strcmp (name + len - 4, ".pub");
}

int
gc_trust_add_dir (gc_trust_t *self, const char *dir, gc_err_t *err)
{
    DIR *d = opendir (dir);
    if (!d)
        return gc_err_set (err, GC_E_IO, "trust directory %s: %s", dir, strerror (errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir (d))) {
        if (!s_is_pub_name (e->d_name))
            continue;
        if (n >= GC_TRUST_MAX_KEYS) {
            rc = gc_err_set (err, GC_E_RANGE, "trust directory %s: more than %d .pub files",
                             dir, GC_TRUST_MAX_KEYS);
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc (names, cap * sizeof *names);
            if (!grown) {
                rc = gc_err_set (err, GC_E_NOMEM, "trust directory %s: out of memory", dir);
                break;
            }
            names = grown;
        }
        if (!(names [n] = strdup (e->d_name)))
            rc = gc_err_set (err, GC_E_NOMEM, "trust directory %s: out of memory", dir);
        else
            n++;
    }
    closedir (d);
    if (n)
        qsort (names, n, sizeof *names, s_cmp_names);
    size_t before = self->n;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char path [4096];
        if ((size_t) snprintf (path, sizeof path, "%s/%s", dir, names [i]) >= sizeof path)
            rc = gc_err_set (err, GC_E_IO, "%s/%s: path too long", dir, names [i]);
        else
            rc = gc_trust_add_file (self, path, err);
    }
    if (rc != 0)
        s_truncate (self, before);
    for (size_t i = 0; i < n; i++)
        free (names [i]);
    free (names);
    return rc;
}

gc_key_t *
gc_trust_lookup (gc_trust_t *self, const uint8_t peer_id [GC_PEER_ID_SIZE])
{
    return s_find (self, peer_id);
}

size_t
gc_trust_size (const gc_trust_t *self)
{
    return self->n;
}

gc_key_t *
gc_trust_at (gc_trust_t *self, size_t i)
{
    return i < self->n ? self->keys [i] : NULL;
}

const char *
gc_trust_origin (const gc_trust_t *self, size_t i)
{
    return i < self->n ? self->origins [i] : NULL;
}

void
gc_trust_destroy (gc_trust_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_trust_t *self = *self_p;
    for (size_t i = 0; i < self->n; i++) {
        gc_key_destroy (&self->keys [i]);
        free (self->origins [i]);
    }
    free (self->keys);
    free (self->origins);
    free (self->index);
    free (self);
    *self_p = NULL;
}
