/*  gc_evq — the simulator's event queue: a binary min-heap of events ordered
    by (time, sequence number). The sequence number is assigned at push, so
    events due at the same virtual time come out in the order they were
    pushed: the order of a run is a function of its inputs only. */
#ifndef GC_EVQ_H
#define GC_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t   t;            /* virtual time, ns */
    uint64_t  seq;          /* push order */
    uint32_t  kind;
    uint32_t  peer;
    uint64_t  arg;
    void     *ptr;
} gc_evq_item_t;

typedef struct gc_evq_t gc_evq_t;

gc_evq_t *gc_evq_new (void);
void      gc_evq_destroy (gc_evq_t **self_p);
/*  -1 when out of memory. */
int       gc_evq_push (gc_evq_t *self, int64_t t, uint32_t kind, uint32_t peer, uint64_t arg,
                       void *ptr);
bool      gc_evq_empty (const gc_evq_t *self);
/*  The earliest event (undefined when empty). */
const gc_evq_item_t *gc_evq_top (const gc_evq_t *self);
void      gc_evq_pop (gc_evq_t *self, gc_evq_item_t *out);
size_t    gc_evq_size (const gc_evq_t *self);

#endif
