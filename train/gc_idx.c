#include "gc_idx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

//  Read exactly n bytes; distinguishes a clean short file from a corrupt stream.
static int
s_read_exact (gzFile f, void *buf, size_t n, const char *path, const char *what, gc_err_t *err)
{
    uint8_t *p = buf;
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned) n;
        int got = gzread (f, p, chunk);
        if (got < 0) {
            int zerr;
            const char *msg = gzerror (f, &zerr);
            return gc_err_set (err, GC_E_FORMAT, "%s: corrupt data while reading %s (%s)", path, what, msg);
        }
        if (got == 0) {
            int zerr;
            const char *msg = gzerror (f, &zerr);
            if (zerr != Z_OK && zerr != Z_BUF_ERROR)
                return gc_err_set (err, GC_E_FORMAT, "%s: corrupt data while reading %s (%s)", path, what, msg);
            return gc_err_set (err, GC_E_FORMAT, "%s: truncated: file ends inside the %s", path, what);
        }
        p += got;
        n -= (size_t) got;
    }
    return 0;
}

static uint32_t
s_be32 (const uint8_t *b)
{
    return (uint32_t) b [0] << 24 | (uint32_t) b [1] << 16 | (uint32_t) b [2] << 8 | b [3];
}

static int
s_read_header (gzFile f, gc_idx_t *out, const char *path, gc_err_t *err)
{
    uint8_t magic [4];
    if (s_read_exact (f, magic, 4, path, "header", err))
        return -1;
    if (magic [0] != 0 || magic [1] != 0)
        return gc_err_set (err, GC_E_FORMAT, "%s: not an IDX file (bad magic %02x%02x%02x%02x)",
                           path, magic [0], magic [1], magic [2], magic [3]);
    if (magic [2] != 0x08)
        return gc_err_set (err, GC_E_FORMAT, "%s: unsupported IDX element type 0x%02x (only unsigned byte 0x08)",
                           path, magic [2]);
    if (magic [3] < 1 || magic [3] > GC_IDX_MAX_DIMS)
        return gc_err_set (err, GC_E_FORMAT, "%s: IDX dimension count %u outside [1, %d]",
                           path, magic [3], GC_IDX_MAX_DIMS);
    out->ndims = magic [3];
    uint8_t dims [4 * GC_IDX_MAX_DIMS];
    if (s_read_exact (f, dims, 4 * (size_t) out->ndims, path, "header", err))
        return -1;
    out->count = 1;
    for (int i = 0; i < out->ndims; i++) {
        out->dims [i] = s_be32 (dims + 4 * i);
        if (out->dims [i] == 0)
            return gc_err_set (err, GC_E_FORMAT, "%s: dimension %d is zero", path, i);
        out->count *= out->dims [i];
        if (out->count > GC_IDX_MAX_ELEMENTS)
            return gc_err_set (err, GC_E_FORMAT, "%s: header claims more than %llu elements",
                               path, (unsigned long long) GC_IDX_MAX_ELEMENTS);
    }
    return 0;
}

int
gc_idx_read (const char *path, gc_idx_t *out, gc_err_t *err)
{
    memset (out, 0, sizeof *out);
    gzFile f = gzopen (path, "rb");
    if (!f)
        return gc_err_set (err, GC_E_IO, "%s: cannot open (%s)", path, strerror (errno ? errno : ENOENT));
    gzbuffer (f, 1 << 17);
    int rc = s_read_header (f, out, path, err);
    if (rc == 0) {
        out->data = malloc (out->count);
        if (!out->data)
            rc = gc_err_set (err, GC_E_NOMEM, "%s: out of memory for %zu bytes", path, out->count);
    }
    if (rc == 0)
        rc = s_read_exact (f, out->data, out->count, path, "data", err);
    if (rc == 0) {
        //  Trailing bytes mean the header and the content disagree.
        uint8_t extra;
        int got = gzread (f, &extra, 1);
        if (got != 0)
            rc = gc_err_set (err, GC_E_FORMAT, "%s: %s after the %zu elements the header declares",
                             path, got > 0 ? "extra data" : "corrupt data", out->count);
    }
    gzclose (f);
    if (rc)
        gc_idx_free (out);
    return rc;
}

void
gc_idx_free (gc_idx_t *self)
{
    free (self->data);
    memset (self, 0, sizeof *self);
}
