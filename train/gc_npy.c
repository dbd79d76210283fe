#include "gc_npy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_HEADER (1u << 16)
#define S_MAX_BYTES  ((size_t) 1 << 34)

//  The value text after 'key': in the header dict, or NULL.
static const char *
s_value (const char *hdr, const char *key)
{
    char quoted [32];
    snprintf (quoted, sizeof quoted, "'%s'", key);
    const char *p = strstr (hdr, quoted);
    if (!p)
        return NULL;
    p += strlen (quoted);
    while (*p == ' ')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

static int
s_header (const char *hdr, const char *name, gc_npy_t *out, size_t *itemsize, gc_err_t *err)
{
    const char *d = s_value (hdr, "descr"), *f = s_value (hdr, "fortran_order"),
               *s = s_value (hdr, "shape");
    if (!d || !f || !s)
        return gc_err_set (err, GC_E_FORMAT, "%s: the .npy header lacks descr, fortran_order or shape", name);
    static const struct { const char *descr; gc_npy_dtype_t dtype; size_t size; } types [] = {
        { "'<f4'", GC_NPY_F32, 4 }, { "'|u1'", GC_NPY_U8, 1 }, { "'<u1'", GC_NPY_U8, 1 },
        { "'<i8'", GC_NPY_I64, 8 },
    };
    size_t t = 0;
    while (t < sizeof types / sizeof types [0] && strncmp (d, types [t].descr, strlen (types [t].descr)))
        t++;
    if (t == sizeof types / sizeof types [0]) {
        if (d [0] == '\'' && d [1] == '>')
            return gc_err_set (err, GC_E_FORMAT, "%s: big-endian data (descr %.6s); save it little-endian "
                               "(array.astype('<f4'))", name, d);
        return gc_err_set (err, GC_E_FORMAT, "%s: dtype %.8s is not float32 ('<f4'), uint8 ('|u1') or "
                           "int64 ('<i8')", name, d);
    }
    out->dtype = types [t].dtype;
    *itemsize = types [t].size;
    if (strncmp (f, "False", 5))
        return gc_err_set (err, GC_E_FORMAT, "%s: Fortran-ordered array; save it in C order "
                           "(numpy.ascontiguousarray)", name);
    if (*s != '(')
        return gc_err_set (err, GC_E_FORMAT, "%s: shape is not a tuple", name);
    s++;
    out->ndim = 0;
    out->count = 1;
    for (;;) {
        while (*s == ' ')
            s++;
        if (*s == ')')
            break;
        if (!isdigit ((unsigned char) *s) || out->ndim == GC_NPY_MAX_DIMS)
            return gc_err_set (err, GC_E_FORMAT, "%s: shape must be 1 to %d whole numbers", name, GC_NPY_MAX_DIMS);
        char *end;
        unsigned long long v = strtoull (s, &end, 10);
        if (v == 0 || v > S_MAX_BYTES || out->count > S_MAX_BYTES / v)
            return gc_err_set (err, GC_E_FORMAT, "%s: shape has an empty or too large dimension", name);
        out->shape [out->ndim++] = (size_t) v;
        out->count *= (size_t) v;
        s = end;
        while (*s == ' ')
            s++;
        if (*s == ',')
            s++;
        else
        if (*s != ')')
            return gc_err_set (err, GC_E_FORMAT, "%s: shape is not a tuple of numbers", name);
    }
    if (out->ndim == 0)
        return gc_err_set (err, GC_E_FORMAT, "%s: a scalar, not an array", name);
    if (out->count > S_MAX_BYTES / *itemsize)
        return gc_err_set (err, GC_E_FORMAT, "%s: larger than %zu bytes", name, S_MAX_BYTES);
    return 0;
}

int
gc_npy_parse (const uint8_t *bytes, size_t size, const char *name, gc_npy_t *out, gc_err_t *err)
{
    memset (out, 0, sizeof *out);
    if (size < 10 || memcmp (bytes, "\x93NUMPY", 6))
        return gc_err_set (err, GC_E_FORMAT, "%s: not a .npy file (no \\x93NUMPY magic)", name);
    int major = bytes [6];
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t) bytes [8] | (size_t) bytes [9] << 8;
        start = 10;
    }
    else
    if (major == 2 || major == 3) {
        if (size < 12)
            return gc_err_set (err, GC_E_FORMAT, "%s: truncated .npy header", name);
        hlen = (size_t) bytes [8] | (size_t) bytes [9] << 8 | (size_t) bytes [10] << 16
             | (size_t) bytes [11] << 24;
        start = 12;
    }
    else
        return gc_err_set (err, GC_E_FORMAT, "%s: .npy format version %d is not 1, 2 or 3", name, major);
    if (hlen > S_MAX_HEADER || start + hlen > size)
        return gc_err_set (err, GC_E_FORMAT, "%s: truncated or oversized .npy header (%zu bytes)", name, hlen);
    char *hdr = malloc (hlen + 1);
    if (!hdr)
        return gc_err_set (err, GC_E_NOMEM, "%s: out of memory", name);
    memcpy (hdr, bytes + start, hlen);
    hdr [hlen] = '\0';
    size_t itemsize = 0;
    int rc = strlen (hdr) != hlen ? gc_err_set (err, GC_E_FORMAT, "%s: NUL byte in the .npy header", name)
                                  : s_header (hdr, name, out, &itemsize, err);
    free (hdr);
    if (rc)
        return -1;
    size_t have = size - start - hlen, want = out->count * itemsize;
    if (have != want)
        return gc_err_set (err, GC_E_FORMAT, "%s: %s: the shape needs %zu bytes of data, the file has %zu",
                           name, have < want ? "truncated" : "trailing bytes", want, have);
    out->data = malloc (want);
    if (!out->data)
        return gc_err_set (err, GC_E_NOMEM, "%s: out of memory for %zu bytes", name, want);
    memcpy (out->data, bytes + start + hlen, want);
    return 0;
}

int
gc_npy_read (const char *path, gc_npy_t *out, gc_err_t *err)
{
    memset (out, 0, sizeof *out);
    FILE *f = fopen (path, "rb");
    if (!f)
        return gc_err_set (err, GC_E_IO, "%s: cannot open", path);
    uint8_t *bytes = NULL;
    long size = -1;
    if (fseek (f, 0, SEEK_END) == 0)
        size = ftell (f);
    int rc = 0;
    if (size < 0 || (size_t) size > S_MAX_BYTES + S_MAX_HEADER || fseek (f, 0, SEEK_SET))
        rc = gc_err_set (err, GC_E_IO, "%s: cannot read it, or larger than %zu bytes", path, S_MAX_BYTES);
    else
    if (!(bytes = malloc ((size_t) size + 1)))
        rc = gc_err_set (err, GC_E_NOMEM, "%s: out of memory", path);
    else
    if (fread (bytes, 1, (size_t) size, f) != (size_t) size)
        rc = gc_err_set (err, GC_E_IO, "%s: read error", path);
    fclose (f);
    if (rc == 0)
        rc = gc_npy_parse (bytes, (size_t) size, path, out, err);
    free (bytes);
    return rc;
}

void
gc_npy_free (gc_npy_t *self)
{
    free (self->data);
    memset (self, 0, sizeof *self);
}
