#include "gc_layout.h"

#include <stdio.h>
#include <string.h>

void
gc_layout_init (gc_layout_t *self)
{
    memset (self, 0, sizeof *self);
}

static int
s_add (gc_layout_t *self, const char *name, uint32_t rows, uint32_t cols,
       gc_layer_kind_t kind, gc_err_t *err)
{
    if (self->n_layers >= GC_LAYOUT_MAX_LAYERS)
        return gc_err_set (err, GC_E_RANGE, "layer table full (%d layers)", GC_LAYOUT_MAX_LAYERS);
    if (rows == 0 || cols == 0)
        return gc_err_set (err, GC_E_RANGE, "layer '%s' has an empty shape %ux%u", name, rows, cols);
    size_t count = (size_t) rows * cols;
    if (self->n_params + count > (size_t) UINT32_MAX)
        return gc_err_set (err, GC_E_RANGE, "layer '%s' makes the model larger than 2^32 floats", name);
    gc_layer_t *layer = &self->layers [self->n_layers++];
    snprintf (layer->name, sizeof layer->name, "%s", name);
    layer->offset = self->n_params;
    layer->count = count;
    layer->rows = rows;
    layer->cols = cols;
    layer->kind = kind;
    self->n_params += count;
    return 0;
}

int
gc_layout_add_matrix (gc_layout_t *self, const char *name,
                      uint32_t rows, uint32_t cols, gc_err_t *err)
{
    return s_add (self, name, rows, cols, GC_LAYER_MATRIX, err);
}

int
gc_layout_add_vector (gc_layout_t *self, const char *name, uint32_t count, gc_err_t *err)
{
    return s_add (self, name, count, 1, GC_LAYER_VECTOR, err);
}

int
gc_layout_init_flat (gc_layout_t *self, size_t n, gc_err_t *err)
{
    gc_layout_init (self);
    if (n > UINT32_MAX)
        return gc_err_set (err, GC_E_RANGE, "flat layout of %zu floats exceeds 2^32", n);
    return gc_layout_add_vector (self, "flat", (uint32_t) n, err);
}

bool
gc_layout_equal (const gc_layout_t *a, const gc_layout_t *b)
{
    if (a->n_layers != b->n_layers || a->n_params != b->n_params)
        return false;
    for (size_t i = 0; i < a->n_layers; i++) {
        const gc_layer_t *x = &a->layers [i], *y = &b->layers [i];
        if (x->offset != y->offset || x->count != y->count || x->rows != y->rows
        ||  x->cols != y->cols || x->kind != y->kind || strcmp (x->name, y->name))
            return false;
    }
    return true;
}

int
gc_layout_find (const gc_layout_t *self, size_t i)
{
    if (i >= self->n_params)
        return -1;
    size_t lo = 0, hi = self->n_layers;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (self->layers [mid].offset <= i)
            lo = mid;
        else
            hi = mid;
    }
    return (int) lo;
}
