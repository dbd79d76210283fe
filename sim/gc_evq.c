#include "gc_evq.h"

#include <stdlib.h>

struct gc_evq_t {
    gc_evq_item_t *heap;
    size_t         n, cap;
    uint64_t       next_seq;
};

gc_evq_t *
gc_evq_new (void)
{
    return calloc (1, sizeof (gc_evq_t));
}

void
gc_evq_destroy (gc_evq_t **self_p)
{
    gc_evq_t *self = *self_p;
    if (!self)
        return;
    free (self->heap);
    free (self);
    *self_p = NULL;
}

static bool
s_before (const gc_evq_item_t *a, const gc_evq_item_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int
gc_evq_push (gc_evq_t *self, int64_t t, uint32_t kind, uint32_t peer, uint64_t arg, void *ptr)
{
    if (self->n == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : 1024;
        gc_evq_item_t *grown = realloc (self->heap, cap * sizeof *grown);
        if (!grown)
            return -1;
        self->heap = grown;
        self->cap = cap;
    }
    gc_evq_item_t ev = { .t = t, .seq = self->next_seq++, .kind = kind, .peer = peer, .arg = arg,
                         .ptr = ptr };
    size_t i = self->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!s_before (&ev, &self->heap [parent]))
            break;
        self->heap [i] = self->heap [parent];
        i = parent;
    }
    self->heap [i] = ev;
    return 0;
}

bool
gc_evq_empty (const gc_evq_t *self)
{
    return self->n == 0;
}

const gc_evq_item_t *
gc_evq_top (const gc_evq_t *self)
{
    return &self->heap [0];
}

size_t
gc_evq_size (const gc_evq_t *self)
{
    return self->n;
}

void
gc_evq_pop (gc_evq_t *self, gc_evq_item_t *out)
{
    *out = self->heap [0];
    gc_evq_item_t last = self->heap [--self->n];
    size_t i = 0;
    while (true) {
        size_t child = 2 * i + 1;
        if (child >= self->n)
            break;
        if (child + 1 < self->n && s_before (&self->heap [child + 1], &self->heap [child]))
            child++;
        if (!s_before (&self->heap [child], &last))
            break;
        self->heap [i] = self->heap [child];
        i = child;
    }
    if (self->n)
        self->heap [i] = last;
}
