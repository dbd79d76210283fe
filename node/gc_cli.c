#include "gc_cli.h"

#include <cblas.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

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
