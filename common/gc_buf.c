#include "gc_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
gc_buf_init (gc_buf_t *self)
{
    self->data = NULL;
    self->len = 0;
    self->cap = 0;
}

int
gc_buf_reserve (gc_buf_t *self, size_t extra, gc_err_t *err)
{
    if (extra > SIZE_MAX - self->len)
        return gc_err_set (err, GC_E_RANGE, "buffer: %zu + %zu bytes overflows", self->len, extra);
    size_t need = self->len + extra;
    if (need <= self->cap)
        return 0;
    //  Grow geometrically so that appending byte by byte stays linear.
    size_t cap = self->cap ? self->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *data = realloc (self->data, cap);
    if (!data)
        return gc_err_set (err, GC_E_NOMEM, "buffer: out of memory for %zu bytes", cap);
    self->data = data;
    self->cap = cap;
    return 0;
}

int
gc_buf_append (gc_buf_t *self, const void *data, size_t n, gc_err_t *err)
{
    if (n == 0)
        return 0;
    if (gc_buf_reserve (self, n, err))
        return -1;
    memcpy (self->data + self->len, data, n);
    self->len += n;
    return 0;
}

uint8_t *
gc_buf_extend (gc_buf_t *self, size_t n, gc_err_t *err)
{
    if (gc_buf_reserve (self, n, err))
        return NULL;
    //  A zero-length extend still returns a valid (end) pointer.
    if (!self->data && gc_buf_reserve (self, 1, err))
        return NULL;
    uint8_t *p = self->data + self->len;
    self->len += n;
    return p;
}

void
gc_buf_reset (gc_buf_t *self)
{
    self->len = 0;
}

void
gc_buf_free (gc_buf_t *self)
{
    free (self->data);
    gc_buf_init (self);
}

int
gc_buf_printf (gc_buf_t *self, gc_err_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (NULL, 0, fmt, ap);
    va_end (ap);
    if (n < 0)
        return gc_err_set (err, GC_E_ARG, "buffer: bad format '%s'", fmt);
    if (gc_buf_reserve (self, (size_t) n + 1, err))
        return -1;
    va_start (ap, fmt);
    vsnprintf ((char *) self->data + self->len, (size_t) n + 1, fmt, ap);
    va_end (ap);
    self->len += (size_t) n;
    return 0;
}
