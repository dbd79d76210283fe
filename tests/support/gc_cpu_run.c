/*  gc_cpu_run LEVEL COMMAND [ARGS...] — run COMMAND with GC_CPU=LEVEL, or
    exit 77 (ctest's SKIP_RETURN_CODE: reported as skipped, never as passed)
    with a message when this CPU lacks LEVEL. An unknown LEVEL is an error. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gc_cpu.h"

int
main (int argc, char **argv)
{
    if (argc < 3) {
        fprintf (stderr, "usage: gc_cpu_run LEVEL COMMAND [ARGS...]\n");
        return 2;
    }
    int level = gc_cpu_parse (argv [1]);
    if (level < 0) {
        fprintf (stderr, "gc_cpu_run: '%s' is not a level (generic, avx2, avx512)\n", argv [1]);
        return 2;
    }
    gc_cpu_level_t have = gc_cpu_detected ();
    if ((gc_cpu_level_t) level > have) {
        printf ("gc_cpu_run: level %s unavailable on this CPU (best: %s): skipped\n",
                argv [1], gc_cpu_name (have));
        return 77;
    }
    if (setenv ("GC_CPU", argv [1], 1)) {
        perror ("gc_cpu_run: setenv");
        return 2;
    }
    execvp (argv [2], argv + 2);
    perror (argv [2]);
    return 2;
}
