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
#define S_HEADER_SIZE 144
#define S_SPEC_SIZE   64
#define S_OFF_NETWORK 104
#define S_OFF_PEER    120
#define S_OFF_RUN     128

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
    memcpy (buf + S_OFF_NETWORK, c->network, sizeof c->network);
    memcpy (buf + S_OFF_PEER, c->peer, sizeof c->peer);
    memcpy (buf + S_OFF_RUN, c->run, sizeof c->run);
    memcpy (buf + S_HEADER_SIZE, c->x, 4 * c->n);       /* float32 LE: the host layout */
    memcpy (buf + S_HEADER_SIZE + 4 * c->n, c->v, 4 * c->n);
    gc_sha256 (buf, body, buf + body);
    *size = body + GC_SHA256_SIZE;
    return buf;
}

static int s_list (const char *dir, uint64_t **rounds, size_t *count);

static int
s_path (char *path, size_t size, const char *dir, uint64_t round)
{
    int n = snprintf (path, size, "%s/ckpt-%020llu.gcc", dir, (unsigned long long) round);
    return n >= 0 && (size_t) n < size ? 0 : -1;
}

//  The header of one file, if it is long enough and of this format.
static bool
s_read_header (const char *path, uint8_t head [S_HEADER_SIZE])
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return false;
    size_t got = fread (head, 1, S_HEADER_SIZE, f);
    fclose (f);
    return got == S_HEADER_SIZE && !memcmp (head, S_MAGIC, 8)
        && s_get32 (head + 8) == GC_CHECKPOINT_VERSION;
}

//  The file was written by this network's peer (any model, any run).
static bool
s_same_writer (const uint8_t head [S_HEADER_SIZE], const gc_checkpoint_t *c)
{
    return !memcmp (head + S_OFF_NETWORK, c->network, sizeof c->network)
        && !memcmp (head + S_OFF_PEER, c->peer, sizeof c->peer);
}

//  After saving `saved`: of this run's files (same writer, model and run),
//  keep the newest GC_CHECKPOINT_KEEP by round and always the one just
//  written; every other file (another run, peer, model, an older format, a
//  damaged header) is not this run's to delete.
static void
s_prune (const char *dir, const gc_checkpoint_t *saved)
{
    uint64_t *rounds;
    size_t count;
    if (s_list (dir, &rounds, &count))
        return;
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        char path [1024];
        uint8_t head [S_HEADER_SIZE];
        if (s_path (path, sizeof path, dir, rounds [i]) || !s_read_header (path, head))
            continue;
        bool ours = s_same_writer (head, saved)
                 && !memcmp (head + S_OFF_RUN, saved->run, sizeof saved->run)
                 && s_get64 (head + 32) == saved->n
                 && !strncmp ((char *) head + 40, saved->spec, S_SPEC_SIZE);
        if (!ours)
            continue;
        if (rounds [i] == saved->round || kept < GC_CHECKPOINT_KEEP - 1)
            kept += rounds [i] != saved->round;
        else
            unlink (path);
    }
    free (rounds);
}

int
gc_checkpoint_new_run (uint8_t run [GC_CHECKPOINT_RUN_SIZE], gc_err_t *err)
{
    FILE *f = fopen ("/dev/urandom", "rb");
    size_t got = f ? fread (run, 1, GC_CHECKPOINT_RUN_SIZE, f) : 0;
    if (f)
        fclose (f);
    if (got != GC_CHECKPOINT_RUN_SIZE)
        return gc_err_set (err, GC_E_IO, "checkpoint run id: cannot read /dev/urandom");
    return 0;
}

int
gc_checkpoint_open (const char *dir, const gc_checkpoint_t *ckpt, bool resume, gc_err_t *err)
{
    if (gc_fs_mkdirs (dir, 0700, err))
        return gc_err_prefix (err, "node/checkpoint_dir: ");
    //  the longest name a save will use, and a real write of the same kind
    char probe [1024];
    int n = snprintf (probe, sizeof probe, "%s/.gcnode-probe", dir);
    if (n < 0 || (size_t) n >= sizeof probe || s_path (probe, sizeof probe, dir, UINT64_MAX))
        return gc_err_set (err, GC_E_IO, "node/checkpoint_dir %.200s: path too long", dir);
    snprintf (probe, sizeof probe, "%s/.gcnode-probe", dir);
    if (gc_fs_write_atomic (probe, "", 0, 0600, err))
        return gc_err_prefix (err, "node/checkpoint_dir: cannot write a checkpoint: ");
    unlink (probe);
    if (resume)
        return 0;
    uint64_t *rounds;
    size_t count;
    if (s_list (dir, &rounds, &count))
        return gc_err_set (err, GC_E_IO, "node/checkpoint_dir %s: cannot read (%s)", dir, strerror (errno));
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        char path [1024];
        uint8_t head [S_HEADER_SIZE];
        if (s_path (path, sizeof path, dir, rounds [i]) == 0 && s_read_header (path, head)
        &&  s_same_writer (head, ckpt))
            rc = gc_err_set (err, GC_E_CONFIG, "node/checkpoint_dir %s already holds this peer's "
                             "checkpoints of an earlier run (newest %s, model %.63s): run with "
                             "--resume to continue it, or remove them or choose another directory",
                             dir, path, (char *) head + 40);
    }
    free (rounds);
    return rc;
}

//  seq.lease: magic, the lease end (u64 LE), SHA-256 of both.
#define S_LEASE_MAGIC "GCSEQL01"
#define S_LEASE_SIZE  (16 + GC_SHA256_SIZE)

static int
s_lease_path (char *path, size_t size, const char *dir)
{
    int n = snprintf (path, size, "%s/seq.lease", dir);
    return n >= 0 && (size_t) n < size ? 0 : -1;
}

int
gc_checkpoint_lease_write (const char *dir, uint64_t end, gc_err_t *err)
{
    char path [1024];
    if (s_lease_path (path, sizeof path, dir))
        return gc_err_set (err, GC_E_IO, "node/checkpoint_dir %.200s: path too long", dir);
    uint8_t image [S_LEASE_SIZE];
    memcpy (image, S_LEASE_MAGIC, 8);
    s_put64 (image + 8, end);
    gc_sha256 (image, 16, image + 16);
    return gc_fs_write_atomic (path, image, sizeof image, 0600, err);
}

int
gc_checkpoint_lease_read (const char *dir, uint64_t *end, gc_err_t *err)
{
    char path [1024];
    if (s_lease_path (path, sizeof path, dir))
        return gc_err_set (err, GC_E_IO, "node/checkpoint_dir %.200s: path too long", dir);
    FILE *f = fopen (path, "rb");
    if (!f) {
        if (errno == ENOENT)
            return 1;
        return gc_err_set (err, GC_E_IO, "%s: cannot open (%s)", path, strerror (errno));
    }
    uint8_t image [S_LEASE_SIZE + 1], digest [GC_SHA256_SIZE];
    size_t got = fread (image, 1, sizeof image, f);
    fclose (f);
    if (got == S_LEASE_SIZE && !memcmp (image, S_LEASE_MAGIC, 8))
        gc_sha256 (image, 16, digest);
    if (got != S_LEASE_SIZE || memcmp (image, S_LEASE_MAGIC, 8) || memcmp (digest, image + 16, sizeof digest))
        return gc_err_set (err, GC_E_FORMAT, "%s: damaged sequence lease: the seqs this peer "
                           "used before are unknown (remove it only if no other process of "
                           "this peer ran since, then the wall clock sets the start)", path);
    *end = s_get64 (image + 8);
    return 0;
}

int
gc_checkpoint_save (const char *dir, const gc_checkpoint_t *ckpt, gc_err_t *err)
{
    if (gc_fs_mkdirs (dir, 0700, err))
        return gc_err_prefix (err, "checkpoint directory: ");
    char path [1024];
    if (s_path (path, sizeof path, dir, ckpt->round))
        return gc_err_set (err, GC_E_IO, "checkpoint directory %.200s: path too long", dir);
    size_t size;
    uint8_t *image = s_serialise (ckpt, &size);
    if (!image)
        return gc_err_set (err, GC_E_NOMEM, "checkpoint: out of memory");
    //  A crash leaves the previous checkpoints and, at worst, no new one:
    //  never a torn file that a resume would have to reject.
    int rc = gc_fs_write_atomic (path, image, size, 0600, err);
    free (image);
    if (rc == 0)
        s_prune (dir, ckpt);
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
        rc = gc_err_set (err, GC_E_FORMAT, "%s: format version %u, this gcnode reads %d%s", path,
                         s_get32 (buf + 8), GC_CHECKPOINT_VERSION, s_get32 (buf + 8) == 1
                         ? " (version 1 names no network, peer or run: start without --resume "
                           "in an empty directory)" : "");
    else if (!s_same_writer (buf, ckpt))
        rc = gc_err_set (err, GC_E_FORMAT, "%s: written by another %s", path,
                         memcmp (buf + S_OFF_NETWORK, ckpt->network, sizeof ckpt->network)
                         ? "network (gossip/network)" : "peer (its key differs from ours)");
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
        memcpy (ckpt->run, buf + S_OFF_RUN, sizeof ckpt->run);
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
        gc_err_t why = { 0 };
        if (s_path (path, sizeof path, dir, rounds [i]))
            gc_err_set (&why, GC_E_IO, "%.200s...: path too long", dir);
        else
        if (gc_checkpoint_load_file (path, ckpt, &why) == 0) {
            if (loaded_path && path_size
            &&  snprintf (loaded_path, path_size, "%s", path) >= (int) path_size)
                loaded_path [0] = '\0';     /* a cut path would name another file */
            rc = 0;
            continue;
        }
        if (report)
            report (ctx, why.msg);
    }
    free (rounds);
    return rc;
}
