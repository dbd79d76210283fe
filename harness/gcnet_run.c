/*  gcnet run — one scenario, from its file to the report. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gc_cli.h"
#include "gc_report.h"
#include "gc_run.h"
#include "gc_scenario.h"
#include "gcnet.h"

static void
s_help (void)
{
    printf (
        "usage: gcnet run SCENARIO.zpl [options]\n\n"
        "Generate keys and per-peer configs from the scenario, start its gcnode peers\n"
        "on this machine, apply its timeline, stop everything, write report.md,\n"
        "report.json and plots, and check its assertions. Prints PASS/FAIL per\n"
        "assertion and `honest_mean_accuracy=0.XXXX` last. Exit code 0 only when the\n"
        "run completed and every assertion holds (1: something failed, 2: bad\n"
        "scenario or option, 130: interrupted). Format: docs/SCENARIOS.md.\n\n"
        "  -o, --out DIR        output directory (default runs/NAME-DATE-TIME)\n"
        "      --netns          each peer in its own network namespace, links capped\n"
        "                       with tc (root only)\n"
        "      --gcnode PATH    the gcnode binary (default: next to gcnet)\n"
        "      --progress WHEN  auto (a live line on a terminal), on, off (plain lines)\n"
        "  -q, --quiet          no progress, only the results\n"
        "  -h, --help           this text\n");
}

int
gcnet_run_scenario (const char *cmd, const char *path, const gcnet_args_t *args, gcnet_outcome_t *o)
{
    memset (o, 0, sizeof *o);
    o->mean = o->min = o->consensus = o->min_rounds = o->mb_sent = o->target = o->time_to_target_s = NAN;
    snprintf (o->name, sizeof o->name, "%s", path);
    snprintf (o->status, sizeof o->status, "not run");
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load (path, &err);
    if (!sc) {
        snprintf (o->failed, sizeof o->failed, "%s", err.msg);
        return o->exit_code = gcnet_error (cmd, GCNET_EXIT_USAGE, "%s", err.msg);
    }
    snprintf (o->name, sizeof o->name, "%s", sc->name);
    int violations = gc_scenario_lint (sc, NULL, &err);
    if (violations < 0) {
        snprintf (o->failed, sizeof o->failed, "%s", err.msg);
        gc_scenario_destroy (&sc);
        return o->exit_code = gcnet_error (cmd, GCNET_EXIT_USAGE, "%s", err.msg);
    }
    if (violations > 0) {
        fprintf (stderr, "gcnet %s: warning: %s: %d honest peers have more Byzantine neighbours than "
                 "their rule tolerates:\n", cmd, sc->name, violations);
        gc_scenario_lint (sc, stderr, NULL);
    }
    char *gcnode = args->gcnode ? strdup (args->gcnode) : gc_run_find_gcnode ();
    if (!gcnode || access (gcnode, X_OK)) {
        free (gcnode);
        gc_scenario_destroy (&sc);
        return o->exit_code = gcnet_error (cmd, GCNET_EXIT_USAGE, "no gcnode binary next to gcnet "
                                           "(build it, or give --gcnode PATH)");
    }
    char out [4096];
    if (args->out_dir)
        snprintf (out, sizeof out, "%s", args->out_dir);
    else {
        time_t now = time (NULL);
        char stamp [32];
        strftime (stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime (&now));
        snprintf (out, sizeof out, "runs/%s-%s", sc->name, stamp);
    }
    bool live = !args->quiet && (!strcmp (args->progress, "on")
                              || (!strcmp (args->progress, "auto") && isatty (STDERR_FILENO)));
    gc_run_opts_t opts = { .scenario = sc, .out_dir = out, .gcnode = gcnode, .netns = args->netns,
                           .live = live, .log = args->quiet ? NULL : stderr };
    gc_result_t *res = NULL;
    if (gc_run (&opts, &res, &err)) {
        free (gcnode);
        gc_scenario_destroy (&sc);
        snprintf (o->failed, sizeof o->failed, "%s", err.msg);
        return o->exit_code = gcnet_error (cmd, gc_cli_exit_code (&err), "%s", err.msg);
    }
    gc_summary_t sum;
    int rc = GCNET_EXIT_FAIL;
    if (gc_report_summarise (res, &sum, &err) == 0) {
        if (gc_report_write (res, &sum, args->quiet ? NULL : stderr, &err))
            gcnet_error (cmd, 0, "%s", err.msg);
        else
        if (!args->quiet)
            fprintf (stderr, "gcnet: report: %s/report.md\n", res->out_dir);
        gc_report_print (res, &sum, stdout);
        rc = res->status == GC_RUN_INTERRUPTED ? GCNET_EXIT_INTERRUPTED
           : sum.all_pass ? GCNET_EXIT_OK : GCNET_EXIT_FAIL;
        o->passed = sum.all_pass;
        o->mean = sum.honest_mean_accuracy;
        o->min = sum.honest_min_accuracy;
        o->consensus = sum.consensus_distance;
        o->min_rounds = sum.min_rounds;
        o->target = sum.target_accuracy;
        o->time_to_target_s = sum.time_to_target_s;
        double mb = 0;
        int honest = 0;
        for (uint32_t i = 0; i < res->n_peers; i++)
            if (!res->peers [i].byzantine) {
                mb += (double) gc_peerstat_bytes_sent (res->peers [i].stat) / 1e6;
                honest++;
            }
        o->mb_sent = honest ? mb / honest : NAN;
        for (size_t c = 0; c < sc->n_checks && !*o->failed; c++)
            if (!sum.pass [c])
                snprintf (o->failed, sizeof o->failed, "%s (measured %.4g)", sc->checks [c].text, sum.measured [c]);
        gc_summary_free (&sum);
    }
    else
        gcnet_error (cmd, 0, "%s", err.msg);
    static const char *status [] = { "completed", "interrupted", "timed out" };
    snprintf (o->status, sizeof o->status, "%s", status [res->status]);
    if (res->status != GC_RUN_COMPLETED && !*o->failed)
        snprintf (o->failed, sizeof o->failed, "run %s", status [res->status]);
    snprintf (o->out_dir, sizeof o->out_dir, "%s", res->out_dir);
    o->elapsed_s = res->elapsed_s;
    gc_result_destroy (&res);
    free (gcnode);
    gc_scenario_destroy (&sc);
    return o->exit_code = rc;
}

bool
gcnet_args_option (gcnet_args_t *args, int c, const char *value)
{
    switch (c) {
        case 'n': args->netns = true; return true;
        case 'g': args->gcnode = value; return true;
        case 'p': args->progress = value; return true;
        case 'q': args->quiet = true; return true;
        default: return false;
    }
}

int
gcnet_args_check (const char *cmd, const gcnet_args_t *args)
{
    if (strcmp (args->progress, "auto") && strcmp (args->progress, "on") && strcmp (args->progress, "off"))
        return gcnet_error (cmd, GCNET_EXIT_USAGE, "--progress '%s' (expected auto, on or off)", args->progress);
    return 0;
}

int
gcnet_cmd_run (int argc, char **argv)
{
    static const struct option longopts [] = {
        { "out", required_argument, NULL, 'o' },
        { "netns", no_argument, NULL, 'n' },
        { "gcnode", required_argument, NULL, 'g' },
        { "progress", required_argument, NULL, 'p' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    gcnet_args_t args = { .progress = "auto" };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, ":o:qh", longopts, NULL)) != -1) {
        if (gcnet_args_option (&args, c, optarg))
            continue;
        switch (c) {
            case 'o': args.out_dir = optarg; break;
            case 'h': s_help (); return GCNET_EXIT_OK;
            case ':': return gcnet_error ("run", GCNET_EXIT_USAGE, "%s needs a value", argv [optind - 1]);
            default: return gcnet_error ("run", GCNET_EXIT_USAGE, "unknown option '%s' (see gcnet run --help)",
                                         argv [optind - 1]);
        }
    }
    if (gcnet_args_check ("run", &args))
        return GCNET_EXIT_USAGE;
    if (optind != argc - 1)
        return gcnet_error ("run", GCNET_EXIT_USAGE, "expected one scenario file (see gcnet run --help)");
    gcnet_outcome_t outcome;
    return gcnet_run_scenario ("run", argv [optind], &args, &outcome);
}
