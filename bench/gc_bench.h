/*  gc_bench — what every gcbench suite shares: options, timing, JSON output,
    and the reference rates (memory bandwidth) that figures are compared with.

    Speed is reported as ratios measured in the same run (against memory
    bandwidth, against the sgemm rate, against the plain alternative), because
    the machines are shared and noisy. */
#ifndef GC_BENCH_H
#define GC_BENCH_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    bool   json;        /* one JSON object per line instead of a table */
    bool   quick;       /* smaller sizes / fewer repetitions (smoke runs) */
    double min_time;    /* seconds each measurement runs at least */
} gc_bench_opts_t;

/*  A suite prints its figures; returns 0, or 1 when it could not measure. */
typedef int (*gc_bench_suite_fn) (const gc_bench_opts_t *opts);

/*  Print one figure: {"name":..., "value":..., "unit":...} (+ extra JSON
    members, already formatted as `"key":value,...`, or NULL). */
void   gc_bench_emit (const gc_bench_opts_t *opts, const char *name, double value,
                      const char *unit, const char *extra_json);

/*  Run fn(ctx) repeatedly for at least min_time seconds (and at least
    min_reps times); return the best (smallest) seconds per call. */
typedef void (*gc_bench_body_fn) (void *ctx);
double gc_bench_time_best (gc_bench_body_fn fn, void *ctx, int min_reps, double min_time);
/*  The same on the calling thread's CPU clock: what the scheduler gives other
    processes is not counted, so it survives a loaded machine. */
double gc_bench_cpu_best (gc_bench_body_fn fn, void *ctx, int min_reps, double min_time);

/*  Single-thread memory read bandwidth in GB/s (1e9 bytes/s), streaming a
    buffer much larger than the last-level cache once per repetition. */
double gc_bench_mem_read_bandwidth (const gc_bench_opts_t *opts);

/*  Keep the compiler from discarding a computed value. */
void   gc_bench_sink (double v);

/*  The q-quantile of v [0 .. n) by nearest rank; sorts v in place (small n:
    the pairs of an interleaved measurement). */
double gc_bench_quantile (double *v, int n, double q);

#endif
