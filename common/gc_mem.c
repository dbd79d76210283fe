#include "gc_mem.h"

#include <stdatomic.h>
#include <stdbool.h>
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

#define S_HUGE ((size_t) 2 << 20)

//  GC_HUGEPAGES=0 in the environment: no huge-page advice (as gcsim's
//  re-execution honours it), read once.
static bool
s_huge_wanted (void)
{
    static _Atomic int wanted = -1;
    int w = atomic_load_explicit (&wanted, memory_order_relaxed);
    if (w < 0) {
        const char *v = getenv ("GC_HUGEPAGES");
        w = !(v && !strcmp (v, "0"));
        atomic_store_explicit (&wanted, w, memory_order_relaxed);
    }
    return w;
}

void *
gc_aligned_alloc (size_t n)
{
    if (n > SIZE_MAX - S_HUGE)
        return NULL;
    //  From 2 MB up: on 2 MB boundaries, offered for transparent huge pages
    //  (gc_mem.h says why).
    size_t align = n >= S_HUGE ? S_HUGE : GC_ALIGN;
    size_t rounded = (n + align - 1) / align * align;
    if (rounded == 0)
        rounded = GC_ALIGN;
    //  Zeroed to the next 64 bytes (what vector tails may read), not to the
    //  next 2 MB, which would make the kernel commit pages nobody uses.
    size_t used = (n + GC_ALIGN - 1) / GC_ALIGN * GC_ALIGN;
    void *p = aligned_alloc (align, rounded);
    if (!p)
        return NULL;
#if defined(MADV_HUGEPAGE)
    //  Advice only: without THP (or where it is off) the pages stay 4 kB.
    if (align == S_HUGE && s_huge_wanted ())
        (void) madvise (p, rounded, MADV_HUGEPAGE);
#endif
    memset (p, 0, used ? used : GC_ALIGN);
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
