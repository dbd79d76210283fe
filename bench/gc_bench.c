#include "gc_bench.h"

#include <stdio.h>
#include <stdlib.h>

#include "gc_cpu.h"
#include "gc_mem.h"
#include "gc_time.h"

static volatile double s_sink;

void
gc_bench_sink (double v)
{
    s_sink += v;
}

void
gc_bench_emit (const gc_bench_opts_t *opts, const char *name, double value,
               const char *unit, const char *extra_json)
{
    //  Every line names the kernel level it ran (gc_cpu.h): figures from
    //  different levels must not be mixed up.
    if (opts->json)
        printf ("{\"name\":\"%s\",\"value\":%.6g,\"unit\":\"%s\",\"cpu\":\"%s\"%s%s}\n",
                name, value, unit, gc_cpu_name (gc_cpu_level ()),
                extra_json ? "," : "", extra_json ? extra_json : "");
    else
        printf ("%-44s %14.4f %s\n", name, value, unit);
    fflush (stdout);
}

//  The best call of fn on the given clock, over at least min_reps calls
//  and min_time seconds of wall time.
static double
s_best (gc_bench_body_fn fn, void *ctx, int min_reps, double min_time, double (*clock) (void))
{
    double best = 1e300, start = gc_now_s ();
    for (int rep = 0; rep < min_reps || gc_now_s () - start < min_time; rep++) {
        double t0 = clock ();
        fn (ctx);
        double dt = clock () - t0;
        if (dt < best)
            best = dt;
    }
    return best;
}

double
gc_bench_time_best (gc_bench_body_fn fn, void *ctx, int min_reps, double min_time)
{
    return s_best (fn, ctx, min_reps, min_time, gc_now_s);
}

double
gc_bench_cpu_best (gc_bench_body_fn fn, void *ctx, int min_reps, double min_time)
{
    return s_best (fn, ctx, min_reps, min_time, gc_thread_cpu_s);
}

typedef struct {
    const float *buf;
    size_t n;
} s_stream_t;

static void
s_stream_read (void *arg)
{
    s_stream_t *s = arg;
    //  Eight independent accumulators so the sum is not latency bound.
    float acc [16] = { 0 };
    for (size_t i = 0; i + 16 <= s->n; i += 16)
        for (int j = 0; j < 16; j++)
            acc [j] += s->buf [i + j];
    double total = 0;
    for (int j = 0; j < 16; j++)
        total += acc [j];
    gc_bench_sink (total);
}

double
gc_bench_mem_read_bandwidth (const gc_bench_opts_t *opts)
{
    size_t n = (opts->quick ? 64u : 256u) << 20 >> 2;      /* 64 or 256 MiB */
    float *buf = gc_falloc (n);
    if (!buf) {
        fprintf (stderr, "gcbench: out of memory for the bandwidth buffer\n");
        exit (1);
    }
    for (size_t i = 0; i < n; i++)
        buf [i] = (float) (i & 1023);
    s_stream_t s = { buf, n };
    double t = gc_bench_time_best (s_stream_read, &s, 3, opts->quick ? 0.2 : 1.0);
    gc_mem_free (buf);
    return (double) n * sizeof (float) / t * 1e-9;
}

double
gc_bench_quantile (double *v, int n, double q)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v [j] < v [j - 1]; j--) {
            double x = v [j];
            v [j] = v [j - 1];
            v [j - 1] = x;
        }
    return v [(int) (q * (n - 1) + 0.5)];
}
