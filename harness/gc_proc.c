#include "gc_proc.h"

pid_t
gc_proc_spawn (const gc_proc_opts_t *opts, gc_err_t *err)
{
    if (!opts || !opts->argv || !opts->argv [0])
        return gc_err_set (err, GC_E_ARG, "spawn: no program");
    return gc_command_exec (opts, true, -1, err);
}

