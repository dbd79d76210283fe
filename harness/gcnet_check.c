/*  gcnet check — parse and lint scenario files without running anything. */
#include <getopt.h>
#include <string.h>

#include "gc_scenario.h"
#include "gcnet.h"

int
gcnet_cmd_check (int argc, char **argv)
{
    if (argc < 2 || !strcmp (argv [1], "--help") || !strcmp (argv [1], "-h")) {
        printf ("usage: gcnet check SCENARIO.zpl...\n\n"
                "Parse every scenario (errors name the file and the key) and check that no\n"
                "honest peer has more Byzantine in-neighbours than its aggregation rule\n"
                "tolerates. Exit code 0 when all parse and pass, 1 on lint findings, 2 on\n"
                "errors.\n");
        return argc < 2 ? GCNET_EXIT_USAGE : GCNET_EXIT_OK;
    }
    int rc = GCNET_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        gc_err_t err = { 0 };
        gc_scenario_t *sc = gc_scenario_load (argv [i], &err);
        if (!sc) {
            gcnet_error ("check", 0, "%s", err.msg);
            rc = GCNET_EXIT_USAGE;
            continue;
        }
        int v = gc_scenario_lint (sc, stdout, &err);
        if (v < 0) {
            gcnet_error ("check", 0, "%s", err.msg);
            rc = GCNET_EXIT_USAGE;
        }
        else {
            printf ("%s: %s: %u peers, %zu Byzantine, %zu events, %zu assertions%s\n",
                    v ? "LINT" : "ok", argv [i], sc->n_peers, gc_peerset_count (&sc->byzantine),
                    sc->n_events, sc->n_checks, v ? " (see above)" : "");
            if (v && rc == GCNET_EXIT_OK)
                rc = GCNET_EXIT_FAIL;
        }
        gc_scenario_destroy (&sc);
    }
    return rc;
}
