/*  gc_cli — what gcnode's subcommands share: the exit-code convention and
    error printing. Exit codes: 0 success, 1 runtime failure, 2 bad input
    (an option, a config key or a file that fails its checks). Only the
    commands turn an error into an exit code (gc_cli_exit_code): the layers
    below say what went wrong (err->code), never how to exit. */
#ifndef GC_CLI_H
#define GC_CLI_H

#include <stddef.h>

#include "gc_err.h"

#define GC_EXIT_OK      0
#define GC_EXIT_FAILURE 1
#define GC_EXIT_USAGE   2

/*  "gcnode CMD: message\n" on stderr; returns GC_EXIT_USAGE. */
int gc_cli_usage_error (const char *cmd, const char *fmt, ...)
        __attribute__ ((format (printf, 2, 3)));
/*  The same, returning GC_EXIT_FAILURE. */
int gc_cli_failure (const char *cmd, const char *fmt, ...)
        __attribute__ ((format (printf, 2, 3)));

/*  The exit code for a command that failed with err: GC_EXIT_USAGE when
    what it was given is wrong (GC_E_USAGE, CONFIG, SPEC, PARSE, RANGE,
    FORMAT, PERMS, COLLISION: fixing the input fixes it), GC_EXIT_FAILURE
    otherwise (the input was acceptable, running it failed: I/O, system,
    memory, crypto, a peer, a timeout, a stop, or a code not classified). */
int gc_cli_exit_code (const gc_err_t *err);
/*  "gcnode CMD: err->msg" on stderr; returns gc_cli_exit_code (err). */
int gc_cli_error (const char *cmd, const gc_err_t *err);

/*  The getopt_long error for the option just rejected (unknown or missing
    its value), as one line; returns GC_EXIT_USAGE. */
int gc_cli_bad_option (const char *cmd, int c, char **argv);

/*  A binary made of subcommands (gcnode, gcnet): one row per command. */
typedef struct {
    const char *name;
    int       (*run) (int argc, char **argv);
    const char *what;
} gc_cli_command_t;

/*  main() of such a binary: PROG COMMAND [args] runs the command with argv
    starting at its name; --help / -h / help print the command list (and
    `footer`, when not NULL) on stdout, --version "PROG VERSION"; no command
    or an unknown one is a usage error (exit 2). */
int gc_cli_dispatch (const char *prog, const char *version, const gc_cli_command_t *cmds, size_t n,
                     const char *footer, int argc, char **argv);

/*  Set the OpenBLAS thread count (default 1: many peers share a machine). */
void gc_cli_set_blas_threads (int n);

int gc_cmd_train (int argc, char **argv);
int gc_cmd_eval (int argc, char **argv);
int gc_cmd_run (int argc, char **argv);
int gc_cmd_control (int argc, char **argv);
int gc_cmd_keygen (int argc, char **argv);
int gc_cmd_id (int argc, char **argv);
int gc_cmd_status (int argc, char **argv);

#endif
