/*  gcbench — micro and end-to-end benchmarks of gcnode's libraries.

    gcbench SUITE [--json] [--quick] [--min-time S]
    Each figure is one line; with --json one JSON object per line with at least
    name, value, unit and cpu (the kernel level, gc_cpu.h; GC_CPU forces one). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_bench.h"
#include "gc_cpu.h"
#include "gc_parse.h"

//  One line per suite; each lives in bench_<suite>.c.
int gc_bench_train (const gc_bench_opts_t *opts);
int gc_bench_crypto (const gc_bench_opts_t *opts);
int gc_bench_robust (const gc_bench_opts_t *opts);
int gc_bench_compress (const gc_bench_opts_t *opts);
int gc_bench_gossip (const gc_bench_opts_t *opts);

static const struct {
    const char        *name;
    gc_bench_suite_fn  run;
    const char        *what;
} s_suites [] = {
    { "train", gc_bench_train, "training step throughput vs. the sgemm rate on the same shapes" },
    { "crypto", gc_bench_crypto, "per-message sign/verify cost vs. raw Ed25519 and direct signing" },
    { "robust", gc_bench_robust, "robust aggregation rules in input GB/s vs. memory bandwidth and the Gram sgemm" },
    { "gossip", gc_bench_gossip, "time per round of one peer with 4 neighbours, by phase" },
    { "compress", gc_bench_compress, "compressors and payload decoding (GB/s, bytes per entry) vs. memory bandwidth" },
};
#define S_NSUITES (sizeof s_suites / sizeof s_suites [0])

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: gcbench SUITE [--json] [--quick] [--min-time SECONDS]\n"
        "       gcbench all [--json] [--quick]\n\n"
        "  --json           one JSON object per line: name, value, unit, ...\n"
        "  --quick          smaller sizes and fewer repetitions (smoke test)\n"
        "  --min-time S     seconds each measurement runs at least (default 0.5)\n"
        "  -h, --help       this text\n\n"
        "GC_CPU=generic|avx2|avx512 in the environment forces a kernel level.\n\nsuites:\n");
    for (size_t i = 0; i < S_NSUITES; i++)
        fprintf (out, "  %-10s %s\n", s_suites [i].name, s_suites [i].what);
}

int
main (int argc, char **argv)
{
    if (argc < 2 || argv [1][0] == '-') {
        bool help = argc >= 2 && (!strcmp (argv [1], "-h") || !strcmp (argv [1], "--help"));
        s_usage (help ? stdout : stderr);
        return help ? 0 : 2;
    }
    const char *suite = argv [1];
    gc_bench_opts_t opts = { .json = false, .quick = false, .min_time = 0.5 };
    static const struct option longopts [] = {
        { "json", no_argument, NULL, 'j' },
        { "quick", no_argument, NULL, 'q' },
        { "min-time", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    optind = 2;
    opterr = 0;
    int c;
    gc_err_t err;
    while ((c = getopt_long (argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
            case 'j': opts.json = true; break;
            case 'q': opts.quick = true; break;
            case 't':
                if (gc_parse_double (optarg, 0.0, 3600.0, &opts.min_time, "--min-time", &err)) {
                    fprintf (stderr, "gcbench: %s\n", err.msg);
                    return 2;
                }
                break;
            case 'h': s_usage (stdout); return 0;
            case ':':
                fprintf (stderr, "gcbench: option %s needs a value\n", argv [optind - 1]);
                return 2;
            default:
                fprintf (stderr, "gcbench: unknown option '%s' (see gcbench --help)\n", argv [optind - 1]);
                return 2;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "gcbench: unexpected argument '%s'\n", argv [optind]);
        return 2;
    }
    int rc = 0, found = 0;
    fprintf (stderr, "gcbench: kernels %s (this CPU: %s)\n", gc_cpu_name (gc_cpu_level ()),
             gc_cpu_name (gc_cpu_detected ()));
    for (size_t i = 0; i < S_NSUITES; i++)
        if (!strcmp (suite, "all") || !strcmp (suite, s_suites [i].name)) {
            found = 1;
            if (s_suites [i].run (&opts))
                rc = 1;
        }
    if (!found) {
        fprintf (stderr, "gcbench: unknown suite '%s' (see gcbench --help)\n", suite);
        return 2;
    }
    return rc;
}
