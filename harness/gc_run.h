/*  gc_run — run one scenario on this machine: keys, trust, per-peer configs,
    N gcnode processes (on loopback, or each in its own network namespace),
    the timeline, live progress, a clean stop, and what was measured.

    Layout of the output directory:
        scenario.zpl            the scenario as given
        keys/peerN.{key,pub}    made by gcnode keygen
        peerN.zpl               each peer's configuration
        peerN.jsonl             metrics; peerN.log (stderr), peerN.out (stdout)
        peerN.model             final model (when gcnode has node/final_model)
        peerN.ckpt/             checkpoints (when gcnode has node/checkpoint_dir)
        pids.txt                every process started ("peer pid"), for checks
        ctl/                    control sockets while the run lasts
        events.log              the timeline as it fired
        report.json, report.md, plots/   (gc_report.h)

    Processes: see gc_proc.h. SIGINT / SIGTERM to gcnet stop the peers
    (SIGTERM, SIGKILL after a grace period) and the run ends as interrupted. */
#ifndef GC_RUN_H
#define GC_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "gc_err.h"
#include "gc_result.h"
#include "gc_scenario.h"

typedef struct {
    const gc_scenario_t *scenario;
    const char *out_dir;                /* created; an old gcnet run there is replaced */
    const char *gcnode;                 /* path of the gcnode binary */
    bool        netns;                  /* one namespace per peer (root only) */
    bool        live;                   /* one refreshed progress line (a terminal) */
    FILE       *log;                    /* progress and events (stderr); NULL: quiet */
} gc_run_opts_t;

/*  Set by SIGINT / SIGTERM while a run is active (and by tests). */
extern volatile int gc_run_interrupted;

/*  Run the scenario. 0 with *result when the run happened (whatever the
    peers did); -1 with err when it could not be set up (then nothing is left
    running): err->code 2 when the scenario asks for what this gcnode or
    machine does not offer (control channel, --resume, --netns as non-root). */
int  gc_run (const gc_run_opts_t *opts, gc_result_t **result, gc_err_t *err);

/*  The gcnode next to this program (/proc/self/exe's directory), or NULL. */
char *gc_run_find_gcnode (void);

#endif
