/*  gcnet — start whole gcnode networks on this machine, make some peers lie,
    break the rest on a timeline, and assert on what the honest peers learn. */
#include <stdarg.h>
#include <stdio.h>

#include "gc_cli.h"
#include "gcnet.h"

#ifndef GC_VERSION
#define GC_VERSION "0.0.0"
#endif

static const gc_cli_command_t s_commands [] = {
    { "run", gcnet_cmd_run, "run one scenario: peers, faults, report, assertions" },
    { "suite", gcnet_cmd_suite, "run a set of scenarios and summarise them (--full: the library)" },
    { "check", gcnet_cmd_check, "parse and lint scenario files without running them" },
    { "compose", gcnet_cmd_compose, "write a docker compose network of the scenario's peers" },
};

int
gcnet_error (const char *cmd, int code, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    fprintf (stderr, "gcnet %s: ", cmd);
    vfprintf (stderr, fmt, args);
    fputc ('\n', stderr);
    va_end (args);
    return code;
}

int
main (int argc, char **argv)
{
    return gc_cli_dispatch ("gcnet", GC_VERSION, s_commands, sizeof s_commands / sizeof s_commands [0],
                            "Scenario format, actions and assertions: docs/SCENARIOS.md", argc, argv);
}
