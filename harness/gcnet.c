/*  gcnet — start whole gcnode networks on this machine, make some peers lie,
    break the rest on a timeline, and assert on what the honest peers learn. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gcnet.h"

#ifndef GC_VERSION
#define GC_VERSION "0.0.0"
#endif

static const struct {
    const char *name;
    int       (*run) (int argc, char **argv);
    const char *what;
} s_commands [] = {
    { "run", gcnet_cmd_run, "run one scenario: peers, faults, report, assertions" },
    { "suite", gcnet_cmd_suite, "run a set of scenarios and summarise them (--full: the library)" },
    { "check", gcnet_cmd_check, "parse and lint scenario files without running them" },
    { "compose", gcnet_cmd_compose, "write a docker compose network of the scenario's peers" },
};
#define S_NCOMMANDS (sizeof s_commands / sizeof s_commands [0])

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

static void
s_usage (FILE *out)
{
    fprintf (out, "usage: gcnet COMMAND [options]   (gcnet COMMAND --help for its options)\n\n"
                  "commands:\n");
    for (size_t i = 0; i < S_NCOMMANDS; i++)
        fprintf (out, "  %-8s %s\n", s_commands [i].name, s_commands [i].what);
    fprintf (out, "\nScenario format, actions and assertions: docs/SCENARIOS.md\n"
                  "  --version  print the version\n  --help     this text\n");
}

int
main (int argc, char **argv)
{
    if (argc < 2) {
        s_usage (stderr);
        return GCNET_EXIT_USAGE;
    }
    if (!strcmp (argv [1], "--help") || !strcmp (argv [1], "-h") || !strcmp (argv [1], "help")) {
        s_usage (stdout);
        return GCNET_EXIT_OK;
    }
    if (!strcmp (argv [1], "--version")) {
        printf ("gcnet %s\n", GC_VERSION);
        return GCNET_EXIT_OK;
    }
    for (size_t i = 0; i < S_NCOMMANDS; i++)
        if (!strcmp (argv [1], s_commands [i].name))
            return s_commands [i].run (argc - 1, argv + 1);
    fprintf (stderr, "gcnet: unknown command '%s' (see gcnet --help)\n", argv [1]);
    return GCNET_EXIT_USAGE;
}
