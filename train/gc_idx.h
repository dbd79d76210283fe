/*  gc_idx — reader for IDX files (the MNIST format), plain or gzip.

    Only unsigned-byte element type (0x08) is accepted: it is what MNIST-style
    datasets ship. Every header field is checked against the file's actual
    length before any element is read. */
#ifndef GC_IDX_H
#define GC_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_IDX_MAX_DIMS 4
/*  A refusal bound on element count: larger than any dataset we use, small
    enough that a hostile header cannot make us allocate gigabytes. */
#define GC_IDX_MAX_ELEMENTS (1ull << 31)

typedef struct {
    int       ndims;
    uint32_t  dims [GC_IDX_MAX_DIMS];
    size_t    count;            /* product of dims */
    uint8_t  *data;             /* count bytes, owned */
} gc_idx_t;

/*  Read path (gzip or plain, detected from content). On failure returns -1
    and err says "PATH: what is wrong"; out is left empty. */
int  gc_idx_read (const char *path, gc_idx_t *out, gc_err_t *err);
void gc_idx_free (gc_idx_t *self);

#endif
