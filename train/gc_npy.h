/*  gc_npy — NumPy .npy arrays (format 1.0, 2.0 and 3.0), for images and
    labels people bring without converting to IDX.

    Accepted: little-endian (or byte-sized) float32, uint8 and int64, C
    order, 1 to 4 dimensions. Everything else is refused by name: the file,
    and what is wrong (dtype, byte order, Fortran order, shape, a header or
    data of the wrong length). */
#ifndef GC_NPY_H
#define GC_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_NPY_MAX_DIMS 4

typedef enum { GC_NPY_F32, GC_NPY_U8, GC_NPY_I64 } gc_npy_dtype_t;

typedef struct {
    gc_npy_dtype_t dtype;
    int            ndim;
    size_t         shape [GC_NPY_MAX_DIMS];
    size_t         count;       /* product of the shape */
    void          *data;        /* count values, owned (malloc) */
} gc_npy_t;

/*  Parse an .npy image held in memory (what gc_npy_read does after reading
    the file); name is for messages. */
int  gc_npy_parse (const uint8_t *bytes, size_t size, const char *name, gc_npy_t *out,
                   gc_err_t *err);
int  gc_npy_read (const char *path, gc_npy_t *out, gc_err_t *err);
void gc_npy_free (gc_npy_t *self);

#endif
