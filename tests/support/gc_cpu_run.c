/*  gc_cpu_run LEVEL COMMAND [ARGS...] — run COMMAND with GC_CPU=LEVEL.

    When this CPU lacks LEVEL (an AVX2 machine asked for avx512), COMMAND
    still runs with GC_CPU=LEVEL, and what is checked is the documented
    fallback (docs/OPERATIONS.md): the library says on stderr that it uses
    the best level the CPU has, and everything passes on that level; no
    instruction the CPU lacks runs (that would be SIGILL). So a level test
    never reports "skipped": on such a CPU it tests the fallback. Exit:
    COMMAND's status, or 1 when the fallback line is missing; 2 on usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_cpu.h"

//  Run argv with its stderr through a pipe, copied to our stdout; returns
//  its exit status (128 + signal when killed), with *seen set when a line
//  containing needle went by.
static int
s_run_watching (char **argv, const char *needle, int *seen)
{
    int fds [2];
    if (pipe (fds)) {
        perror ("gc_cpu_run: pipe");
        return 2;
    }
    pid_t pid = fork ();
    if (pid < 0) {
        perror ("gc_cpu_run: fork");
        return 2;
    }
    if (pid == 0) {
        dup2 (fds [1], STDERR_FILENO);
        close (fds [0]);
        close (fds [1]);
        execvp (argv [0], argv);
        perror (argv [0]);
        _exit (127);
    }
    close (fds [1]);
    FILE *err = fdopen (fds [0], "r");
    char line [4096];
    *seen = 0;
    while (err && fgets (line, sizeof line, err)) {
        fputs (line, stdout);
        *seen = *seen || strstr (line, needle) != NULL;
    }
    if (err)
        fclose (err);
    int status;
    if (waitpid (pid, &status, 0) < 0) {
        perror ("gc_cpu_run: waitpid");
        return 2;
    }
    return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

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
    if (setenv ("GC_CPU", argv [1], 1)) {
        perror ("gc_cpu_run: setenv");
        return 2;
    }
    gc_cpu_level_t have = gc_cpu_detected ();
    if ((gc_cpu_level_t) level <= have) {
        execvp (argv [2], argv + 2);
        perror (argv [2]);
        return 2;
    }
    char needle [160];
    snprintf (needle, sizeof needle, "gc_cpu: GC_CPU=%s but this CPU supports at most %s: using %s",
              argv [1], gc_cpu_name (have), gc_cpu_name (have));
    printf ("gc_cpu_run: this CPU lacks %s (best: %s): running with GC_CPU=%s to check the "
            "fallback to %s\n", argv [1], gc_cpu_name (have), argv [1], gc_cpu_name (have));
    fflush (stdout);
    int seen, rc = s_run_watching (argv + 2, needle, &seen);
    if (rc == 0 && !seen) {
        printf ("gc_cpu_run: FAIL: no '%s' line on stderr\n", needle);
        return 1;
    }
    return rc;
}
