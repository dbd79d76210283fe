#include "gc_mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#   include <sys/mman.h>
#endif

void
gc_wipe (void *p, size_t n)
{
    if (p && n)
        explicit_bzero (p, n);
}

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

#define S_HUGE (2u << 20)

float *
gc_falloc_rows (size_t n)
{
    if (n > (SIZE_MAX - S_HUGE) / sizeof (float))
        return NULL;
    size_t bytes = n * sizeof (float);
    if (bytes < S_HUGE)
        return gc_falloc (n);
    size_t rounded = (bytes + S_HUGE - 1) / S_HUGE * S_HUGE;
    float *p = aligned_alloc (S_HUGE, rounded);
    if (!p)
        return NULL;
#if defined(MADV_HUGEPAGE)
    //  Advice only: without THP (or another OS) the pages stay 4 kB.
    (void) madvise (p, rounded, MADV_HUGEPAGE);
#endif
    memset (p, 0, rounded);
    return p;
}

void
gc_mem_free (void *p)
{
    free (p);
}

void
gc_mem_hugepages_reexec (char **argv)
{
    const char *tunables = getenv ("GLIBC_TUNABLES");
    const char *wanted = getenv ("GC_HUGEPAGES");
    if ((tunables && strstr (tunables, "glibc.malloc.hugetlb")) || (wanted && !strcmp (wanted, "0")))
        return;
    char value [1024];
    int len = snprintf (value, sizeof value, "%s%sglibc.malloc.hugetlb=1", tunables ? tunables : "",
                        tunables && *tunables ? ":" : "");
    if (len < 0 || (size_t) len >= sizeof value || setenv ("GLIBC_TUNABLES", value, 1))
        return;
    execv ("/proc/self/exe", argv);
    //  no /proc (or no exec): run on ordinary pages, with the tunable left
    //  set so that a child does not try again
}
