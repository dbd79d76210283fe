#include "gc_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *
gc_aligned_alloc (size_t n)
{
    if (n > SIZE_MAX - GC_ALIGN)
        return NULL;
    size_t rounded = (n + GC_ALIGN - 1) / GC_ALIGN * GC_ALIGN;
    if (rounded == 0)
        rounded = GC_ALIGN;
    void *p = aligned_alloc (GC_ALIGN, rounded);
    if (p)
        memset (p, 0, rounded);
    return p;
}

float *
gc_falloc (size_t n)
{
    if (n > SIZE_MAX / sizeof (float))
        return NULL;
    return (float *) gc_aligned_alloc (n * sizeof (float));
}

void
gc_mem_free (void *p)
{
    free (p);
}
