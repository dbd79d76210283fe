/*  gc_layout — the layer table of a flat parameter buffer.

    A model's parameters live in one contiguous float buffer; the layout says
    which range belongs to which layer and, for weight matrices, its shape.
    Compressors (per-layer top-k, PowerSGD, layer-based sparsification),
    checkpoints and the wire all work from this table. It lives in common/
    because compress/ and gossip/ need the type but not the training code. */
#ifndef GC_LAYOUT_H
#define GC_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_LAYER_NAME_MAX 32
#define GC_LAYOUT_MAX_LAYERS 256

typedef enum {
    GC_LAYER_VECTOR = 0,    /* biases and other 1-D parameters */
    GC_LAYER_MATRIX = 1     /* rows x cols, row-major */
} gc_layer_kind_t;

typedef struct {
    char            name [GC_LAYER_NAME_MAX];
    size_t          offset;     /* first float of the layer in the buffer */
    size_t          count;      /* number of floats */
    uint32_t        rows;       /* matrix: rows x cols == count; vector: count x 1 */
    uint32_t        cols;
    gc_layer_kind_t kind;
} gc_layer_t;

typedef struct {
    size_t      n_layers;
    size_t      n_params;       /* sum of counts; layers are packed back to back */
    gc_layer_t  layers [GC_LAYOUT_MAX_LAYERS];
} gc_layout_t;

/*  An empty table (n_layers = 0). */
void gc_layout_init (gc_layout_t *self);
/*  Append a layer at offset n_params. -1 with err on overflow or a bad shape. */
int  gc_layout_add_matrix (gc_layout_t *self, const char *name,
                           uint32_t rows, uint32_t cols, gc_err_t *err);
int  gc_layout_add_vector (gc_layout_t *self, const char *name,
                           uint32_t count, gc_err_t *err);
/*  A single vector layer covering n floats: for code that has no real table. */
int  gc_layout_init_flat (gc_layout_t *self, size_t n, gc_err_t *err);
bool gc_layout_equal (const gc_layout_t *a, const gc_layout_t *b);
/*  Index of the layer that holds parameter i (binary search), or -1. */
int  gc_layout_find (const gc_layout_t *self, size_t i);

#endif
