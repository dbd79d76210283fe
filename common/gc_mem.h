/*  gc_mem — aligned, zeroed, overflow-checked allocation of numeric buffers. */
#ifndef GC_MEM_H
#define GC_MEM_H

#include <stddef.h>

#define GC_ALIGN 64

/*  n floats, 64-byte aligned, zeroed; NULL on overflow or out of memory.
    Release with gc_mem_free. */
float *gc_falloc (size_t n);
/*  n bytes, 64-byte aligned, zeroed. */
void  *gc_aligned_alloc (size_t n);
void   gc_mem_free (void *p);

#endif
