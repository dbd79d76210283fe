#include "gc_model_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
gc_model_file_write (const char *path, const float *params, size_t n, gc_err_t *err)
{
    char tmp [1024];
    if (snprintf (tmp, sizeof tmp, "%s.tmp", path) >= (int) sizeof tmp)
        return gc_err_set (err, 1, "%s: path too long", path);
    FILE *f = fopen (tmp, "wb");
    if (!f)
        return gc_err_set (err, 1, "%s: cannot create (%s)", tmp, strerror (errno));
    uint8_t head [16];
    memcpy (head, GC_MODEL_FILE_MAGIC, 8);
    for (int i = 0; i < 8; i++)
        head [8 + i] = (uint8_t) ((uint64_t) n >> (8 * i));
    //  float32 little-endian is the host layout on every platform we build for
    bool ok = fwrite (head, 1, 16, f) == 16 && fwrite (params, sizeof (float), n, f) == n
           && fflush (f) == 0 && fsync (fileno (f)) == 0;
    ok = (fclose (f) == 0) && ok;
    if (!ok || rename (tmp, path)) {
        unlink (tmp);
        return gc_err_set (err, 1, "%s: cannot write (%s)", path, strerror (errno));
    }
    return 0;
}

int
gc_model_file_read (const char *path, float *params, size_t n, gc_err_t *err)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return gc_err_set (err, 1, "%s: cannot open (%s)", path, strerror (errno));
    uint8_t head [16];
    int rc = 0;
    if (fread (head, 1, 16, f) != 16 || memcmp (head, GC_MODEL_FILE_MAGIC, 8))
        rc = gc_err_set (err, 1, "%s: not a GCMODEL1 file", path);
    uint64_t count = 0;
    for (int i = 0; rc == 0 && i < 8; i++)
        count |= (uint64_t) head [8 + i] << (8 * i);
    if (rc == 0 && count != n)
        rc = gc_err_set (err, 1, "%s: holds %llu parameters, expected %zu", path,
                         (unsigned long long) count, n);
    if (rc == 0 && fread (params, sizeof (float), n, f) != n)
        rc = gc_err_set (err, 1, "%s: truncated", path);
    uint8_t extra;
    if (rc == 0 && fread (&extra, 1, 1, f) != 0)
        rc = gc_err_set (err, 1, "%s: data after the last parameter", path);
    fclose (f);
    return rc;
}
