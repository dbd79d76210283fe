#include "gc_model_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "gc_fs.h"

int
gc_model_file_write (const char *path, const float *params, size_t n, gc_err_t *err)
{
    if (n > (SIZE_MAX - 16) / sizeof (float))
        return gc_err_set (err, GC_E_RANGE, "%s: %zu parameters is too many", path, n);
    size_t size = 16 + n * sizeof (float);
    uint8_t *image = malloc (size);
    if (!image)
        return gc_err_set (err, GC_E_NOMEM, "%s: out of memory for %zu bytes", path, size);
    memcpy (image, GC_MODEL_FILE_MAGIC, 8);
    for (int i = 0; i < 8; i++)
        image [8 + i] = (uint8_t) ((uint64_t) n >> (8 * i));
    //  float32 little-endian is the host layout on every platform we build for
    if (n)
        memcpy (image + 16, params, n * sizeof (float));
    int rc = gc_fs_write_atomic (path, image, size, 0644, err);
    free (image);
    return rc;
}

int
gc_model_file_read (const char *path, float *params, size_t n, gc_err_t *err)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return gc_err_set (err, GC_E_IO, "%s: cannot open (%s)", path, strerror (errno));
    uint8_t head [16];
    int rc = 0;
    if (fread (head, 1, 16, f) != 16 || memcmp (head, GC_MODEL_FILE_MAGIC, 8))
        rc = gc_err_set (err, GC_E_FORMAT, "%s: not a GCMODEL1 file", path);
    uint64_t count = 0;
    for (int i = 0; rc == 0 && i < 8; i++)
        count |= (uint64_t) head [8 + i] << (8 * i);
    if (rc == 0 && count != n)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: holds %llu parameters, expected %zu", path,
                         (unsigned long long) count, n);
    if (rc == 0 && fread (params, sizeof (float), n, f) != n)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: truncated", path);
    uint8_t extra;
    if (rc == 0 && fread (&extra, 1, 1, f) != 0)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: data after the last parameter", path);
    fclose (f);
    return rc;
}
