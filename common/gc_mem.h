/*  gc_mem — aligned, zeroed, overflow-checked allocation of numeric buffers,
    and the wipe of secrets. */
#ifndef GC_MEM_H
#define GC_MEM_H

#include <stddef.h>

#define GC_ALIGN 64

/*  n floats, 64-byte aligned, zeroed; NULL on overflow or out of memory.
    Release with gc_mem_free. From 2 MB up the buffer is placed on 2 MB
    boundaries and offered to the kernel for transparent huge pages
    (madvise MADV_HUGEPAGE, which the default THP setting "madvise" waits
    for; elsewhere, or with GC_HUGEPAGES=0 in the environment, it is only
    aligned). The kernels stream through such
    buffers, many side by side (16 inputs of the robust rules) or a few rows
    at a time in random order (a dataset, by the sampler): on 4 kB pages each
    stream takes a TLB miss per page and the hardware prefetchers stop at
    every page boundary. On an AMD EPYC Zen 4 the k = 16 median of 1M
    coordinates fell from 3.35 to 2.90 ms (avx2, CPU time) and the MLP's
    64-row batch gather from about 43 to 31 us (docs/RESULTS.md). */
float *gc_falloc (size_t n);
/*  n bytes, aligned and zeroed as gc_falloc's. */
void  *gc_aligned_alloc (size_t n);
void   gc_mem_free (void *p);

/*  Zero n bytes of a secret (key, seed, key file text) in a way the
    compiler may not drop as a dead store, as it may a memset of a buffer
    that is freed or goes out of scope next. */
void   gc_wipe (void *p, size_t n);

/*  Ask glibc's malloc to back the heap with transparent huge pages (tunable
    glibc.malloc.hugetlb=1) by re-executing the program once with the tunable
    set; returns only when it did not (already set, either way, by the user;
    GC_HUGEPAGES=0; or exec failed). For programs that stream through many
    model-sized buffers every round (gcsim): with 4 kB pages each pass takes a
    TLB miss per page, which under a hypervisor costs more than the copy. */
void   gc_mem_hugepages_reexec (char **argv);

#endif
