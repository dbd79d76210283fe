#include "gc_peerset.h"

#include <stdio.h>
#include <string.h>

void
gc_peerset_clear (gc_peerset_t *self)
{
    memset (self, 0, sizeof *self);
}

void
gc_peerset_add (gc_peerset_t *self, uint32_t peer)
{
    if (peer < GC_PEERSET_MAX)
        self->bits [peer / 64] |= 1ull << (peer % 64);
}

void
gc_peerset_remove (gc_peerset_t *self, uint32_t peer)
{
    if (peer < GC_PEERSET_MAX)
        self->bits [peer / 64] &= ~(1ull << (peer % 64));
}

bool
gc_peerset_has (const gc_peerset_t *self, uint32_t peer)
{
    return peer < GC_PEERSET_MAX && (self->bits [peer / 64] >> (peer % 64)) & 1;
}

size_t
gc_peerset_count (const gc_peerset_t *self)
{
    size_t n = 0;
    for (size_t i = 0; i < GC_PEERSET_MAX / 64; i++)
        n += (size_t) __builtin_popcountll (self->bits [i]);
    return n;
}

bool
gc_peerset_empty (const gc_peerset_t *self)
{
    return gc_peerset_count (self) == 0;
}

void
gc_peerset_union (gc_peerset_t *self, const gc_peerset_t *other)
{
    for (size_t i = 0; i < GC_PEERSET_MAX / 64; i++)
        self->bits [i] |= other->bits [i];
}

bool
gc_peerset_intersects (const gc_peerset_t *a, const gc_peerset_t *b)
{
    for (size_t i = 0; i < GC_PEERSET_MAX / 64; i++)
        if (a->bits [i] & b->bits [i])
            return true;
    return false;
}

void
gc_peerset_all (gc_peerset_t *self, uint32_t n)
{
    gc_peerset_clear (self);
    for (uint32_t i = 0; i < n && i < GC_PEERSET_MAX; i++)
        gc_peerset_add (self, i);
}

size_t
gc_peerset_list (const gc_peerset_t *self, uint32_t *list, size_t max)
{
    size_t n = 0;
    for (uint32_t i = 0; i < GC_PEERSET_MAX && n < max; i++)
        if (gc_peerset_has (self, i))
            list [n++] = i;
    return n;
}

void
gc_peerset_format (const gc_peerset_t *self, char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf [0] = '\0';
    for (uint32_t i = 0; i < GC_PEERSET_MAX; i++) {
        if (!gc_peerset_has (self, i))
            continue;
        uint32_t j = i;
        while (j + 1 < GC_PEERSET_MAX && gc_peerset_has (self, j + 1))
            j++;
        int n = j == i ? snprintf (buf + used, size - used, "%s%u", used ? "," : "", i)
              : snprintf (buf + used, size - used, "%s%u-%u", used ? "," : "", i, j);
        if (n < 0 || (size_t) n >= size - used)
            return;                     /* truncated: what fits */
        used += (size_t) n;
        i = j;
    }
}
