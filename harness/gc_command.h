/*  gc_command — run a program as a child process: short helper commands run
    to completion with a timeout (gcnode keygen, ip, tc, gnuplot), a program
    looked up in PATH, and the fork / exec step that gc_proc builds gcnet's
    long-running peers on. The report's plots need only this, so gcsim links
    it without gcnet's process management (gc_proc, gc_run). */
#ifndef GC_COMMAND_H
#define GC_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

#include "gc_err.h"

typedef struct {
    const char *const *argv;        /* argv [0]: the program's path */
    const char *cwd;                /* NULL: the caller's */
    const char *stdout_path;        /* appended to; NULL: /dev/null */
    const char *stderr_path;        /* appended to; NULL: /dev/null */
    const char *netns;              /* a namespace file (/run/netns/NAME) to enter, or NULL */
} gc_command_opts_t;

/*  Run argv [0] (a path, or a name looked up in PATH) to completion, at most
    timeout_s (then it is killed). stdout and stderr together go into
    *output (malloc'd, NUL-terminated, at most 1 MiB kept) when output is not
    NULL. Returns the exit status (0..255), or -1 with err when it could not
    run, timed out or was killed by a signal. */
int   gc_command_run (const char *const *argv, double timeout_s, char **output, gc_err_t *err);

/*  Is there an executable `name` in PATH (or is name an executable path)? */
bool  gc_command_which (const char *name);

/*  Fork and exec opts->argv [0] (a path: no PATH lookup) with default signal
    dispositions and mask and PR_SET_PDEATHSIG SIGKILL (nothing outlives the
    caller); group: in a process group of its own; out_fd >= 0: the child's
    stdout and stderr (else opts' paths). Returns the pid once the exec
    happened, or -1 with the reason (exec failures included: the child
    reports them through a close-on-exec pipe before it exits). */
pid_t gc_command_exec (const gc_command_opts_t *opts, bool group, int out_fd, gc_err_t *err);

#endif
