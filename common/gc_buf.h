/*  gc_buf — a growable byte buffer.

    Encoders append into one of these and the wire code sends its bytes; a
    buffer kept across rounds reaches its working size once and then stops
    allocating. All sizes are checked for overflow. */
#ifndef GC_BUF_H
#define GC_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

typedef struct {
    uint8_t *data;      /* NULL until the first reserve */
    size_t   len;       /* bytes in use */
    size_t   cap;       /* bytes allocated */
} gc_buf_t;

/*  An empty buffer that owns nothing. */
void     gc_buf_init (gc_buf_t *self);
/*  Make room for at least `extra` more bytes after len. -1 on overflow or
    out of memory (the buffer is unchanged). */
int      gc_buf_reserve (gc_buf_t *self, size_t extra, gc_err_t *err);
/*  Append n bytes (data may be NULL only when n is 0). */
int      gc_buf_append (gc_buf_t *self, const void *data, size_t n, gc_err_t *err);
/*  Grow len by n and return a pointer to the n new (uninitialised) bytes,
    or NULL with err set. The pointer is valid until the next call that
    grows the buffer. */
uint8_t *gc_buf_extend (gc_buf_t *self, size_t n, gc_err_t *err);
/*  Append printf-formatted text (no NUL is counted in len; one is kept
    after it, so the text can be read as a string). */
int      gc_buf_printf (gc_buf_t *self, gc_err_t *err, const char *fmt, ...)
        __attribute__ ((format (printf, 3, 4)));
/*  len = 0; keeps the allocation. */
void     gc_buf_reset (gc_buf_t *self);
/*  Release the allocation and return to the empty state. */
void     gc_buf_free (gc_buf_t *self);

#endif
