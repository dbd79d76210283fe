/*  gc_proc — gcnet's long-running peers as child processes: spawned into
    their own process group, optionally inside a network namespace, killed by
    the kernel if gcnet dies. Helper commands run to completion are
    gc_command's. */
#ifndef GC_PROC_H
#define GC_PROC_H

#include "gc_command.h"

typedef gc_command_opts_t gc_proc_opts_t;

/*  Start a child: its own process group (so signals reach it and anything
    it starts, and a terminal's Ctrl-C reaches only gcnet), PR_SET_PDEATHSIG
    SIGKILL (nothing outlives gcnet), default signal dispositions and mask.
    Returns the pid, or -1 with the reason (exec failures included). */
pid_t gc_proc_spawn (const gc_proc_opts_t *opts, gc_err_t *err);

#endif
