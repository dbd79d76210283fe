/*  gcsim — run a gcnet scenario as a deterministic simulation of its peers
    in one process (sim/gc_sim.h, docs/SCENARIOS.md "gcsim"). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gc_mem.h"
#include "gc_parse.h"
#include "gc_scenario.h"
#include "gc_sim.h"

static void
s_help (void)
{
    printf (
        "usage: gcsim SCENARIO.zpl [options]\n\n"
        "Simulate the scenario's network in this process: the same round engine,\n"
        "compressors, aggregators and Byzantine roles as gcnode, an in-memory\n"
        "transport and a virtual clock. Writes report.json, report.md and plots as\n"
        "gcnet does (times in virtual seconds), series.dat and timing.json. The same\n"
        "scenario and seed give the same report.json, byte for byte, with 1 or 2\n"
        "threads. Prints PASS/FAIL per assertion and `honest_mean_accuracy=0.XXXX`\n"
        "last. Exit code 0 when every assertion holds, 1 otherwise, 2 for a bad\n"
        "scenario or option.\n\n"
        "  -n, --peers N        run N peers instead of scenario/peers (up to 4096)\n"
        "  -s, --seed S         node/seed for every peer (initial model, data split,\n"
        "                       topology, keys, the simulator's own draws)\n"
        "  -o, --out DIR        output directory (default runs/NAME-sim-DATE-TIME)\n"
        "  -t, --threads T      1 or 2 (default: sim/threads, else 1)\n"
        "      --target A       accuracy for rounds/time/bytes to target (default 0.85)\n"
        "      --jsonl          also write peerN.jsonl metrics files\n"
        "      --keep-models    keep peerN.model files (final models)\n"
        "      --no-share       decode every message once per receiver, as separate\n"
        "                       processes do, instead of once per replica state\n"
        "                       (the same results, byte for byte; slower)\n"
        "  -q, --quiet          no progress, only the results\n"
        "  -h, --help           this text\n");
}

static int
s_usage (const char *fmt, const char *arg)
{
    fprintf (stderr, "gcsim: ");
    fprintf (stderr, fmt, arg);
    fprintf (stderr, " (see gcsim --help)\n");
    return 2;
}

int
main (int argc, char **argv)
{
    static const struct option longopts [] = {
        { "peers", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 's' },
        { "out", required_argument, NULL, 'o' },
        { "threads", required_argument, NULL, 't' },
        { "target", required_argument, NULL, 'T' },
        { "jsonl", no_argument, NULL, 'j' },
        { "keep-models", no_argument, NULL, 'k' },
        { "no-share", no_argument, NULL, 'S' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    gc_mem_hugepages_reexec (argv);
    gc_sim_opts_t opts = { .log = stderr };
    gc_err_t err = { 0 };
    long n;
    unsigned long long seed;
    int c;
    opterr = 0;
    while ((c = getopt_long (argc, argv, ":n:s:o:t:qh", longopts, NULL)) != -1) {
        switch (c) {
            case 'n':
                if (gc_parse_long (optarg, 1, GC_PEERSET_MAX, &n, "--peers", &err))
                    return s_usage ("%s", err.msg);
                opts.peers = (uint32_t) n;
                break;
            case 's':
                if (gc_parse_u64 (optarg, &seed, "--seed", &err))
                    return s_usage ("%s", err.msg);
                opts.seed = seed;
                opts.has_seed = true;
                break;
            case 'o': opts.out_dir = optarg; break;
            case 't':
                if (gc_parse_long (optarg, 1, 2, &n, "--threads", &err))
                    return s_usage ("%s", err.msg);
                opts.threads = (int) n;
                break;
            case 'T':
                if (gc_parse_double (optarg, 0.000001, 1, &opts.target, "--target", &err))
                    return s_usage ("%s", err.msg);
                break;
            case 'j': opts.jsonl = true; break;
            case 'k': opts.keep_models = true; break;
            case 'S': opts.no_share = true; break;
            case 'q': opts.log = NULL; break;
            case 'h': s_help (); return 0;
            case ':': return s_usage ("%s needs a value", argv [optind - 1]);
            default: return s_usage ("unknown option '%s'", argv [optind - 1]);
        }
    }
    if (optind != argc - 1)
        return s_usage ("%s", "expected one scenario file");
    opts.scenario = argv [optind];
    char out [4096];
    if (!opts.out_dir) {
        //  the scenario's stem names the run, as gcnet does
        const char *base = strrchr (opts.scenario, '/');
        base = base ? base + 1 : opts.scenario;
        time_t now = time (NULL);
        char stamp [32];
        strftime (stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime (&now));
        snprintf (out, sizeof out, "runs/%.*s-sim-%s", (int) strcspn (base, "."), base, stamp);
        opts.out_dir = out;
    }
    int rc = gc_sim_run (&opts, &err);
    if (rc == 2 || (rc && err.msg [0]))
        fprintf (stderr, "gcsim: %s\n", err.msg);
    return rc;
}
