/*  gc_result — what a run of a scenario measured, whoever ran it (gcnet's
    processes, gcsim's engines): every peer's end, the timeline as it fired,
    the run's status. gc_report.h turns it into report.json and the rest. */
#ifndef GC_RESULT_H
#define GC_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gc_peerstat.h"
#include "gc_scenario.h"
#include "gc_timeline.h"

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

void gc_result_destroy (gc_result_t **self_p);

const char *gc_peer_state_name (gc_peer_state_t state);

/*  Add a line to the fired timeline (an event, or a driver's note). */
void gc_result_note (gc_result_t *self, double t, double round, const char *text);
/*  Name every event of the timeline that did not fire. */
void gc_result_not_fired (gc_result_t *self, const gc_timeline_t *timeline);

#endif
