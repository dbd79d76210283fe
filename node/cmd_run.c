/*  gcnode run — one peer of a gossip training network.

    Threads: this (trainer) thread runs the rounds of the engine; the
    transport's network actor thread receives, verifies, decodes and applies
    messages to the replicas while the trainer computes (gc_zmq.h,
    docs/ARCHITECTURE.md). SIGINT / SIGTERM end the run cleanly (exit 0).
    What a peer is made of is node/gc_peer (shared with libgcnode); this file
    is the command line around it. */
#include <czmq.h>
#include <getopt.h>
#include <stdatomic.h>
#include <unistd.h>

#include "gc_cli.h"
#include "gc_config.h"
#include "gc_engine.h"
#include "gc_log.h"
#include "gc_peer.h"

#define S_CMD "run"

static void
s_help (void)
{
    printf (
        "usage: gcnode run --config FILE [options]\n\n"
        "Run one peer of a gossip training network until its rounds are done\n"
        "(or SIGINT/SIGTERM). Prints `peer=N rounds=R test_accuracy=0.XXXX` last.\n\n"
        "  -c, --config FILE      ZPL configuration (docs/CONFIG.md)\n"
        "  -s, --set KEY=VALUE    override one key, e.g. --set gossip/aggregator=cwmed\n"
        "                         (repeatable; applied after the file)\n"
        "      --index N          same as --set node/index=N\n"
        "      --rounds N         same as --set train/rounds=N\n"
        "      --metrics FILE     same as --set node/metrics=FILE\n"
        "      --resume           continue from the newest valid checkpoint in\n"
        "                         node/checkpoint_dir (fresh start when there is none)\n"
        "      --log-level L      error, warning, info, debug\n"
        "      --progress WHEN    auto, on, off (the live progress line)\n"
        "      --print-config     print the effective configuration and exit\n"
        "      --help-config      print the reference of every key and exit\n"
        "  -h, --help             this text\n");
}

static int
s_set (gc_config_t *cfg, const char *assignment, gc_err_t *err)
{
    const char *eq = strchr (assignment, '=');
    if (!eq || eq == assignment)
        return gc_err_set (err, GC_E_USAGE, "--set '%s': expected KEY=VALUE", assignment);
    char key [256];
    snprintf (key, sizeof key, "%.*s", (int) (eq - assignment), assignment);
    return gc_config_set (cfg, key, eq + 1, err);
}

//  Returns 0 to run, -1 when done (help printed), or an exit code > 0.
static int
s_parse (int argc, char **argv, gc_config_t *cfg, bool *resume)
{
    static const struct option longopts [] = {
        { "config", required_argument, NULL, 'c' },
        { "set", required_argument, NULL, 's' },
        { "index", required_argument, NULL, 'i' },
        { "rounds", required_argument, NULL, 'r' },
        { "metrics", required_argument, NULL, 'm' },
        { "log-level", required_argument, NULL, 'l' },
        { "progress", required_argument, NULL, 'p' },
        { "print-config", no_argument, NULL, 'P' },
        { "resume", no_argument, NULL, 'R' },
        { "help-config", no_argument, NULL, 'H' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    //  Two passes: the file first, then every override in order.
    const char *file = NULL;
    bool print = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, ":c:s:h", longopts, NULL)) != -1) {
        if (c == 'c')
            file = optarg;
        else if (c == 'h') {
            s_help ();
            return -1;
        }
        else if (c == 'H') {
            gc_config_print_reference (stdout);
            return -1;
        }
        else if (c == 'P')
            print = true;
        else if (c == 'R')
            *resume = true;
        else if (c == '?' || c == ':')
            return gc_cli_bad_option (S_CMD, c, argv);
    }
    if (optind < argc)
        return gc_cli_usage_error (S_CMD, "unexpected argument '%s'", argv [optind]);
    if (!file)
        return gc_cli_usage_error (S_CMD, "--config FILE is required (see gcnode run --help)");
    gc_err_t err = { 0 };
    if (gc_config_load (cfg, file, &err))
        return gc_cli_usage_error (S_CMD, "%s", err.msg);
    optind = 1;
    int rc = 0;
    while (rc == 0 && (c = getopt_long (argc, argv, ":c:s:h", longopts, NULL)) != -1) {
        switch (c) {
            case 's': rc = s_set (cfg, optarg, &err); break;
            case 'i': rc = gc_config_set (cfg, "node/index", optarg, &err); break;
            case 'r': rc = gc_config_set (cfg, "train/rounds", optarg, &err); break;
            case 'm': rc = gc_config_set (cfg, "node/metrics", optarg, &err); break;
            case 'l': rc = gc_config_set (cfg, "node/log_level", optarg, &err); break;
            case 'p': rc = gc_config_set (cfg, "node/progress", optarg, &err); break;
            default: break;
        }
    }
    if (rc || gc_config_check (cfg, &err))
        return gc_cli_usage_error (S_CMD, "%s", err.msg);
    if (*resume && !*cfg->checkpoint_dir)
        return gc_cli_usage_error (S_CMD, "--resume needs node/checkpoint_dir");
    if (gc_peer_check_control (cfg->control, &err))
        return gc_cli_usage_error (S_CMD, "%s", err.msg);
    if (print) {
        gc_config_print (cfg, stdout);
        return -1;
    }
    return 0;
}


int
gc_cmd_run (int argc, char **argv)
{
    gc_config_t *cfg = gc_config_new ();
    if (!cfg)
        return gc_cli_failure (S_CMD, "out of memory");
    bool resume = false;
    int rc = s_parse (argc, argv, cfg, &resume);
    if (rc) {
        gc_config_destroy (&cfg);
        return rc < 0 ? GC_EXIT_OK : rc;
    }
    gc_err_t err = { 0 };
    zsys_init ();
    zsys_catch_interrupts ();
    bool bad_input = false;
    gc_peer_t *p = gc_peer_new (cfg, &(gc_peer_options_t) { .resume = resume }, &bad_input, &err);
    if (!p)
        rc = bad_input ? gc_cli_usage_error (S_CMD, "%s", err.msg) : gc_cli_failure (S_CMD, "%s", err.msg);
    else {
        gc_engine_t *engine = gc_peer_engine (p);
        gc_peer_connect (p, &zsys_interrupted);
        while (!gc_engine_done (engine) && !zsys_interrupted && !gc_peer_stopped (p))
            if (gc_peer_round (p, &zsys_interrupted, &err)) {
                gc_log_error ("%s", err.msg);
                //  2 for what the configuration causes (e.g. a compressor whose
                //  payloads no receiver takes): systemd does not restart it
                rc = gc_cli_exit_code (&err);
                break;
            }
        if (rc == 0) {
            double accuracy = 0;
            gc_peer_finish (p, zsys_interrupted, &accuracy);
            printf ("peer=%ld rounds=%llu test_accuracy=%.4f\n", cfg->index,
                    (unsigned long long) gc_engine_round (engine), accuracy);
            fflush (stdout);
        }
    }
    gc_peer_destroy (&p);
    gc_config_destroy (&cfg);
    return rc;
}
