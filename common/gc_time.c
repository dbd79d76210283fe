#include "gc_time.h"

#include <time.h>

int64_t
gc_now_ns (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double
gc_now_s (void)
{
    return (double) gc_now_ns () * 1e-9;
}

int64_t
gc_wall_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double
gc_thread_cpu_s (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}
