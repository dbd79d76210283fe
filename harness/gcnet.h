/*  gcnet — the local multi-peer network and fault-injection harness.
    One binary, subcommands from a table in gcnet.c; each lives in
    gcnet_<name>.c (harness/CMakeLists.txt picks up every gcnet*.c). */
#ifndef GCNET_H
#define GCNET_H

#include <stdbool.h>
#include <stdio.h>

#include "gc_cli.h"

//  gcnode's convention (gc_cli.h), which gc_cli_exit_code follows.
#define GCNET_EXIT_OK          GC_EXIT_OK
#define GCNET_EXIT_FAIL        GC_EXIT_FAILURE  /* an assertion failed, the run timed out or could not run */
#define GCNET_EXIT_USAGE       GC_EXIT_USAGE    /* bad option or scenario */
#define GCNET_EXIT_INTERRUPTED 130

/*  Subcommands: int fn (argc, argv) with argv [0] = the subcommand's name. */
int gcnet_cmd_run (int argc, char **argv);
int gcnet_cmd_suite (int argc, char **argv);
int gcnet_cmd_check (int argc, char **argv);
int gcnet_cmd_compose (int argc, char **argv);

/*  "gcnet CMD: message" on stderr; returns code. */
int gcnet_error (const char *cmd, int code, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

/*  Shared by run and suite: one scenario from file to report. */
typedef struct {
    const char *out_dir;        /* NULL: runs/NAME-YYYYmmdd-HHMMSS */
    const char *gcnode;         /* NULL: next to gcnet */
    bool        netns;
    const char *progress;       /* auto, on, off */
    bool        quiet;          /* no progress, only the results */
} gcnet_args_t;

typedef struct {
    char   name [128];
    char   out_dir [4096];
    int    exit_code;
    bool   passed;
    char   status [32];
    char   failed [GC_ERR_MSG_MAX]; /* the first failing assertion, or the error */
    double mean, min, consensus, min_rounds, elapsed_s, mb_sent;
    double target, time_to_target_s;    /* scenario/target_accuracy; NAN: never reached */
} gcnet_outcome_t;

/*  The options run and suite share (-n --netns, -g --gcnode, -p --progress,
    -q --quiet): true when c was one of them, stored in args. */
bool gcnet_args_option (gcnet_args_t *args, int c, const char *value);
/*  --progress must be auto, on or off: 0, or the usage error (printed). */
int  gcnet_args_check (const char *cmd, const gcnet_args_t *args);

int gcnet_run_scenario (const char *cmd, const char *path, const gcnet_args_t *args,
                        gcnet_outcome_t *outcome);

#endif
