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
#include "gc_peerstat.h"
#include "gc_scenario.h"

typedef enum {
    GC_PEER_NOT_STARTED,
    GC_PEER_RUNNING,
    GC_PEER_FINISHED,           /* exited 0 on its own (rounds done) */
    GC_PEER_KILLED,             /* killed / stopped by the scenario (kill, term) */
    GC_PEER_CRASHED,            /* exited non-zero or died of a signal gcnet did not send */
    GC_PEER_STOPPED             /* stopped by gcnet at the end (timeout, interrupt, grace) */
} gc_peer_state_t;

typedef struct {
    uint32_t         index;
    bool             byzantine;
    const char      *attack;            /* "" for honest peers */
    gc_peer_state_t  state;             /* of the last process */
    char             detail [160];      /* e.g. "exit 2: train/data: ..." or "signal 11" */
    int              starts;            /* processes started (restarts + 1) */
    int              crashes;           /* processes that crashed */
    bool             down;              /* the scenario killed it and did not restart it */
    bool             has_final;         /* printed peer=N rounds=R test_accuracy=X */
    double           final_accuracy;    /* from that line, else the last evaluated (NAN: none) */
    uint64_t         final_rounds;
    gc_peerstat_t   *stat;
    char            *model_path;        /* NULL when not written */
    pid_t            pid;               /* of the last process */
} gc_peer_result_t;

typedef struct {
    double   t;                          /* seconds since the start */
    double   round;                      /* median honest round then */
    char    *text;                       /* "kill peers 2,3" or a note */
} gc_fired_t;

typedef enum { GC_RUN_COMPLETED, GC_RUN_INTERRUPTED, GC_RUN_TIMED_OUT } gc_run_status_t;

typedef struct {
    const gc_scenario_t *scenario;
    char              *out_dir;
    bool               netns;
    gc_run_status_t    status;
    double             elapsed_s;
    uint32_t           n_peers;
    gc_peer_result_t  *peers;
    gc_fired_t        *fired;
    size_t             n_fired;
    char             **not_fired;        /* names of events that never fired */
    size_t             n_not_fired;
    bool               has_final_model;  /* gcnode writes node/final_model */
    bool               has_control;
    char              *gcnode;           /* the binary used */
} gc_result_t;

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
void gc_result_destroy (gc_result_t **self_p);

const char *gc_peer_state_name (gc_peer_state_t state);

/*  The gcnode next to this program (/proc/self/exe's directory), or NULL. */
char *gc_run_find_gcnode (void);

#endif
