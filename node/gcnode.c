/*  gcnode — a Byzantine-robust decentralized gossip training node.
    One binary, several commands; each lives in cmd_<name>.c. */
#include <stdio.h>

#include "gc_cli.h"
#include "gc_cpu.h"

#ifndef GC_VERSION
#define GC_VERSION "0.0.0"
#endif

static const gc_cli_command_t s_commands [] = {
    { "run", gc_cmd_run, "run one peer of a gossip training network" },
    { "train", gc_cmd_train, "train one model on one machine (the baseline)" },
    { "eval", gc_cmd_eval, "test accuracy of model files and of their average" },
    { "control", gc_cmd_control, "send a command to a running peer's control channel" },
    { "keygen", gc_cmd_keygen, "generate a peer identity (NAME.key/.pub) and CURVE keys (NAME.curve/.curve.pub)" },
    { "id", gc_cmd_id, "print the peer id of a key file" },
    { "status", gc_cmd_status, "check a peer like a monitoring plugin: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN" },
};

int
main (int argc, char **argv)
{
    //  The version line names the kernel level this CPU runs (bug reports).
    char version [64];
    snprintf (version, sizeof version, "%s (kernels %s)", GC_VERSION, gc_cpu_name (gc_cpu_level ()));
    return gc_cli_dispatch ("gcnode", version, s_commands, sizeof s_commands / sizeof s_commands [0],
                            NULL, argc, argv);
}
