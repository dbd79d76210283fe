/*  gc_proc — child processes for gcnet: long-running peers (spawned into
    their own process group, optionally inside a network namespace, killed by
    the kernel if gcnet dies) and short helper commands run to completion
    with a timeout (gcnode keygen, ip, tc, gnuplot). */
#ifndef GC_PROC_H
#define GC_PROC_H

#include <stdbool.h>
#include <sys/types.h>

#include "gc_err.h"

typedef struct {
    const char *const *argv;        /* argv [0]: the program's path */
    const char *cwd;                /* NULL: gcnet's */
    const char *stdout_path;        /* appended to; NULL: /dev/null */
    const char *stderr_path;        /* appended to; NULL: /dev/null */
    const char *netns;              /* a namespace file (/run/netns/NAME) to enter, or NULL */
} gc_proc_opts_t;

/*  Start a child: its own process group (so signals reach it and anything
    it starts, and a terminal's Ctrl-C reaches only gcnet), PR_SET_PDEATHSIG
    SIGKILL (nothing outlives gcnet), default signal dispositions and mask.
    Returns the pid, or -1 with the reason (exec failures included: the
    child reports them through a close-on-exec pipe before it exits). */
pid_t gc_proc_spawn (const gc_proc_opts_t *opts, gc_err_t *err);

/*  Run argv [0] (a path, or a name looked up in PATH) to completion, at most
    timeout_s (then it is killed). stdout and stderr together go into
    *output (malloc'd, NUL-terminated, at most 1 MiB kept) when output is not
    NULL. Returns the exit status (0..255), or -1 with err when it could not
    run, timed out or was killed by a signal. */
int   gc_proc_run (const char *const *argv, double timeout_s, char **output, gc_err_t *err);

/*  Is there an executable `name` in PATH (or is name an executable path)? */
bool  gc_proc_which (const char *name);

#endif
