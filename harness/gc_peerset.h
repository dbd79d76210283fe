/*  gc_peerset — a set of peer indices (0 .. GC_PEERSET_MAX - 1), as used by
    scenarios: role groups, timeline targets, partition sides.

    Text form: comma-separated indices and ranges, "0,1,10-11"; what names
    (groups, "all", "honest") mean is up to the scenario (gc_scenario.h). */
#ifndef GC_PEERSET_H
#define GC_PEERSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GC_PEERSET_MAX 256

typedef struct {
    uint64_t bits [GC_PEERSET_MAX / 64];
} gc_peerset_t;

void   gc_peerset_clear (gc_peerset_t *self);
void   gc_peerset_add (gc_peerset_t *self, uint32_t peer);
void   gc_peerset_remove (gc_peerset_t *self, uint32_t peer);
bool   gc_peerset_has (const gc_peerset_t *self, uint32_t peer);
size_t gc_peerset_count (const gc_peerset_t *self);
bool   gc_peerset_empty (const gc_peerset_t *self);
void   gc_peerset_union (gc_peerset_t *self, const gc_peerset_t *other);
bool   gc_peerset_intersects (const gc_peerset_t *a, const gc_peerset_t *b);
/*  Every peer 0 .. n-1. */
void   gc_peerset_all (gc_peerset_t *self, uint32_t n);
/*  Members in ascending order into list (at most max); returns the count. */
size_t gc_peerset_list (const gc_peerset_t *self, uint32_t *list, size_t max);
/*  "0-3,7,10-11" (ranges compressed); "" for the empty set. */
void   gc_peerset_format (const gc_peerset_t *self, char *buf, size_t size);

#endif
