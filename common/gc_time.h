/*  gc_time — monotonic clock for durations and rates. */
#ifndef GC_TIME_H
#define GC_TIME_H

#include <stdint.h>

int64_t gc_now_ns (void);      /* CLOCK_MONOTONIC in nanoseconds */
double  gc_now_s (void);       /* the same in seconds */
int64_t gc_wall_ms (void);     /* CLOCK_REALTIME in milliseconds (for logs) */
double  gc_thread_cpu_s (void);  /* CPU time of the calling thread, seconds (benchmarks) */

#endif
