/*  gcnode — a Byzantine-robust decentralized gossip training node.
    One binary, several commands; each lives in cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "gc_cli.h"

#ifndef GC_VERSION
#define GC_VERSION "0.0.0"
#endif

static const struct {
    const char *name;
    int       (*run) (int argc, char **argv);
    const char *what;
} s_commands [] = {
    { "run", gc_cmd_run, "run one peer of a gossip training network" },
    { "train", gc_cmd_train, "train one model on one machine (the baseline)" },
    { "control", gc_cmd_control, "send a command to a running peer's control channel" },
    { "keygen", gc_cmd_keygen, "generate a peer identity (NAME.key/.pub) and CURVE keys (NAME.curve/.curve.pub)" },
    { "id", gc_cmd_id, "print the peer id of a key file" },
    { "status", gc_cmd_status, "print a running peer's state; exit 0 if it is alive and progressing" },
};
#define S_NCOMMANDS (sizeof s_commands / sizeof s_commands [0])

static void
s_usage (FILE *out)
{
    fprintf (out, "usage: gcnode COMMAND [options]   (gcnode COMMAND --help for its options)\n\n"
                  "commands:\n");
    for (size_t i = 0; i < S_NCOMMANDS; i++)
        fprintf (out, "  %-10s %s\n", s_commands [i].name, s_commands [i].what);
    fprintf (out, "\n  --version  print the version\n  --help     this text\n");
}

int
main (int argc, char **argv)
{
    if (argc < 2) {
        s_usage (stderr);
        return GC_EXIT_USAGE;
    }
    if (!strcmp (argv [1], "--help") || !strcmp (argv [1], "-h") || !strcmp (argv [1], "help")) {
        s_usage (stdout);
        return GC_EXIT_OK;
    }
    if (!strcmp (argv [1], "--version")) {
        printf ("gcnode %s\n", GC_VERSION);
        return GC_EXIT_OK;
    }
    for (size_t i = 0; i < S_NCOMMANDS; i++)
        if (!strcmp (argv [1], s_commands [i].name))
            return s_commands [i].run (argc - 1, argv + 1);
    fprintf (stderr, "gcnode: unknown command '%s' (see gcnode --help)\n", argv [1]);
    return GC_EXIT_USAGE;
}
