#include "gc_cli.h"

#include <cblas.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int
s_vreport (const char *cmd, int code, const char *fmt, va_list ap)
{
    fprintf (stderr, "gcnode %s: ", cmd);
    vfprintf (stderr, fmt, ap);
    fputc ('\n', stderr);
    return code;
}

int
gc_cli_usage_error (const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int code = s_vreport (cmd, GC_EXIT_USAGE, fmt, ap);
    va_end (ap);
    return code;
}

int
gc_cli_failure (const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int code = s_vreport (cmd, GC_EXIT_FAILURE, fmt, ap);
    va_end (ap);
    return code;
}

int
gc_cli_exit_code (const gc_err_t *err)
{
    switch (err ? err->code : GC_E_OK) {
        case GC_E_USAGE: case GC_E_CONFIG: case GC_E_SPEC: case GC_E_PARSE: case GC_E_RANGE:
        case GC_E_FORMAT: case GC_E_PERMS: case GC_E_COLLISION:
            return GC_EXIT_USAGE;
        default:
            return GC_EXIT_FAILURE;
    }
}

int
gc_cli_error (const char *cmd, const gc_err_t *err)
{
    if (gc_cli_exit_code (err) == GC_EXIT_USAGE)
        return gc_cli_usage_error (cmd, "%s", err->msg);
    return gc_cli_failure (cmd, "%s", err->msg);
}

int
gc_cli_bad_option (const char *cmd, int c, char **argv)
{
    const char *opt = argv [optind - 1];
    if (c == ':')
        return gc_cli_usage_error (cmd, "option %s needs a value", opt);
    return gc_cli_usage_error (cmd, "unknown option '%s' (see gcnode %s --help)", opt, cmd);
}

void
gc_cli_set_blas_threads (int n)
{
    openblas_set_num_threads (n > 0 ? n : 1);
}

static void
s_usage (FILE *out, const char *prog, const gc_cli_command_t *cmds, size_t n, const char *footer)
{
    fprintf (out, "usage: %s COMMAND [options]   (%s COMMAND --help for its options)\n\ncommands:\n",
             prog, prog);
    int width = 0;
    for (size_t i = 0; i < n; i++)
        if ((int) strlen (cmds [i].name) > width)
            width = (int) strlen (cmds [i].name);
    for (size_t i = 0; i < n; i++)
        fprintf (out, "  %-*s  %s\n", width, cmds [i].name, cmds [i].what);
    if (footer)
        fprintf (out, "\n%s\n", footer);
    fprintf (out, "\n  --version  print the version\n  --help     this text\n");
}

int
gc_cli_dispatch (const char *prog, const char *version, const gc_cli_command_t *cmds, size_t n,
                 const char *footer, int argc, char **argv)
{
    if (argc < 2) {
        s_usage (stderr, prog, cmds, n, footer);
        return GC_EXIT_USAGE;
    }
    if (!strcmp (argv [1], "--help") || !strcmp (argv [1], "-h") || !strcmp (argv [1], "help")) {
        s_usage (stdout, prog, cmds, n, footer);
        return GC_EXIT_OK;
    }
    if (!strcmp (argv [1], "--version")) {
        printf ("%s %s\n", prog, version);
        return GC_EXIT_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp (argv [1], cmds [i].name))
            return cmds [i].run (argc - 1, argv + 1);
    fprintf (stderr, "%s: unknown command '%s' (see %s --help)\n", prog, argv [1], prog);
    return GC_EXIT_USAGE;
}
