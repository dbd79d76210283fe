#include "gc_checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_fs.h"
#include "gc_sha256.h"

#define S_MAGIC       "GCCKPT01"
#define S_HEADER_SIZE 104
#define S_SPEC_SIZE   64

static void
s_put64 (uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p [i] = (uint8_t) (v >> (8 * i));
}

static uint64_t
s_get64 (const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t) p [i] << (8 * i);
    return v;
}

static void
s_put32 (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (uint8_t) (v >> (8 * i));
}

static uint32_t
s_get32 (const uint8_t *p)
{
    return (uint32_t) p [0] | (uint32_t) p [1] << 8 | (uint32_t) p [2] << 16 | (uint32_t) p [3] << 24;
}

//  The whole image: header, x, v, digest.
static uint8_t *
s_serialise (const gc_checkpoint_t *c, size_t *size)
{
    size_t body = S_HEADER_SIZE + 8 * c->n;
    uint8_t *buf = malloc (body + GC_SHA256_SIZE);
    if (!buf)
        return NULL;
    memset (buf, 0, S_HEADER_SIZE);
    memcpy (buf, S_MAGIC, 8);
    s_put32 (buf + 8, GC_CHECKPOINT_VERSION);
    s_put32 (buf + 12, 0);
    s_put64 (buf + 16, c->round);
    s_put64 (buf + 24, c->seq);
    s_put64 (buf + 32, c->n);
    memcpy (buf + 40, c->spec, strnlen (c->spec, S_SPEC_SIZE - 1));
    memcpy (buf + S_HEADER_SIZE, c->x, 4 * c->n);       /* float32 LE: the host layout */
    memcpy (buf + S_HEADER_SIZE + 4 * c->n, c->v, 4 * c->n);
    gc_sha256 (buf, body, buf + body);
    *size = body + GC_SHA256_SIZE;
    return buf;
}

//  Keep the newest GC_CHECKPOINT_KEEP files.
static int s_list (const char *dir, uint64_t **rounds, size_t *count);

static void
s_prune (const char *dir)
{
    uint64_t *rounds;
    size_t count;
    if (s_list (dir, &rounds, &count))
        return;
    for (size_t i = GC_CHECKPOINT_KEEP; i < count; i++) {
        char path [1024];
        snprintf (path, sizeof path, "%s/ckpt-%020llu.gcc", dir, (unsigned long long) rounds [i]);
        unlink (path);
    }
    free (rounds);
}

int
gc_checkpoint_save (const char *dir, const gc_checkpoint_t *ckpt, gc_err_t *err)
{
    if (gc_fs_mkdirs (dir, 0700, err))
        return gc_err_prefix (err, "checkpoint directory: ");
    char path [1024];
    if (snprintf (path, sizeof path, "%s/ckpt-%020llu.gcc", dir, (unsigned long long) ckpt->round)
            >= (int) sizeof path)
        return gc_err_set (err, GC_E_IO, "checkpoint directory %s: path too long", dir);
    size_t size;
    uint8_t *image = s_serialise (ckpt, &size);
    if (!image)
        return gc_err_set (err, GC_E_NOMEM, "checkpoint: out of memory");
    //  A crash leaves the previous checkpoints and, at worst, no new one:
    //  never a torn file that a resume would have to reject.
    int rc = gc_fs_write_atomic (path, image, size, 0600, err);
    free (image);
    if (rc == 0)
        s_prune (dir);
    return rc;
}

int
gc_checkpoint_load_file (const char *path, gc_checkpoint_t *ckpt, gc_err_t *err)
{
    size_t expect = S_HEADER_SIZE + 8 * ckpt->n + GC_SHA256_SIZE;
    FILE *f = fopen (path, "rb");
    if (!f)
        return gc_err_set (err, GC_E_IO, "%s: cannot open (%s)", path, strerror (errno));
    uint8_t *buf = malloc (expect + 1);
    if (!buf) {
        fclose (f);
        return gc_err_set (err, GC_E_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread (buf, 1, expect + 1, f);
    fclose (f);
    int rc = 0;
    uint8_t digest [GC_SHA256_SIZE];
    if (got < S_HEADER_SIZE)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: truncated (%zu bytes, a header is %d)", path, got, S_HEADER_SIZE);
    else if (memcmp (buf, S_MAGIC, 8))
        rc = gc_err_set (err, GC_E_FORMAT, "%s: not a gcnode checkpoint (bad magic)", path);
    else if (s_get32 (buf + 8) != GC_CHECKPOINT_VERSION)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: format version %u, this gcnode reads %d", path,
                         s_get32 (buf + 8), GC_CHECKPOINT_VERSION);
    else if (s_get64 (buf + 32) != ckpt->n || strncmp ((char *) buf + 40, ckpt->spec, S_SPEC_SIZE))
        rc = gc_err_set (err, GC_E_FORMAT, "%s: holds model %.63s with %llu parameters, this peer runs %s (%zu)",
                         path, (char *) buf + 40, (unsigned long long) s_get64 (buf + 32),
                         ckpt->spec, ckpt->n);
    else if (got != expect)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: %s (%zu bytes, expected %zu)", path,
                         got < expect ? "truncated" : "longer than its header says", got, expect);
    else {
        gc_sha256 (buf, expect - GC_SHA256_SIZE, digest);
        if (memcmp (digest, buf + expect - GC_SHA256_SIZE, GC_SHA256_SIZE))
            rc = gc_err_set (err, GC_E_FORMAT, "%s: checksum mismatch (the file is corrupt)", path);
    }
    if (rc == 0) {
        ckpt->round = s_get64 (buf + 16);
        ckpt->seq = s_get64 (buf + 24);
        memcpy (ckpt->x, buf + S_HEADER_SIZE, 4 * ckpt->n);
        memcpy (ckpt->v, buf + S_HEADER_SIZE + 4 * ckpt->n, 4 * ckpt->n);
    }
    free (buf);
    return rc;
}

static int
s_cmp_desc (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return (x < y) - (x > y);
}

//  Rounds of the ckpt-<round>.gcc files in dir, newest first.
static int
s_list (const char *dir, uint64_t **rounds, size_t *count)
{
    *rounds = NULL;
    *count = 0;
    DIR *d = opendir (dir);
    if (!d)
        return -1;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        unsigned long long r;
        char tail [8];
        if (sscanf (e->d_name, "ckpt-%20llu.gc%7s", &r, tail) != 2 || strcmp (tail, "c"))
            continue;
        if (*count == cap) {
            cap = cap ? 2 * cap : 8;
            uint64_t *more = realloc (*rounds, cap * sizeof *more);
            if (!more)
                break;
            *rounds = more;
        }
        (*rounds) [(*count)++] = r;
    }
    closedir (d);
    if (*count)
        qsort (*rounds, *count, sizeof (uint64_t), s_cmp_desc);
    return 0;
}

int
gc_checkpoint_load_newest (const char *dir, gc_checkpoint_t *ckpt,
                           void (*report) (void *ctx, const char *msg), void *ctx,
                           char *loaded_path, size_t path_size, gc_err_t *err)
{
    uint64_t *rounds;
    size_t count;
    if (s_list (dir, &rounds, &count)) {
        if (errno == ENOENT)
            return 1;
        return gc_err_set (err, GC_E_IO, "checkpoint directory %s: cannot read (%s)", dir, strerror (errno));
    }
    int rc = 1;
    for (size_t i = 0; i < count && rc == 1; i++) {
        char path [1024];
        snprintf (path, sizeof path, "%s/ckpt-%020llu.gcc", dir, (unsigned long long) rounds [i]);
        gc_err_t why = { 0 };
        if (gc_checkpoint_load_file (path, ckpt, &why) == 0) {
            rc = 0;
            if (loaded_path)
                snprintf (loaded_path, path_size, "%s", path);
        }
        else
        if (report)
            report (ctx, why.msg);
    }
    free (rounds);
    return rc;
}
