/*  gc_sim internals, shared by gc_sim.c (setup, event loop, threads,
    routing, the timeline's operations), gc_sim_peer.c (one peer's events) and gc_sim_report.c
    (results). Not a public interface. */
#ifndef GC_SIM_INTERNAL_H
#define GC_SIM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "gc_config.h"
#include "gc_dataset.h"
#include "gc_engine.h"
#include "gc_evq.h"
#include "gc_fault.h"
#include "gc_key.h"
#include "gc_model.h"
#include "gc_rng.h"
#include "gc_result.h"
#include "gc_scenario.h"
#include "gc_sim.h"
#include "gc_simcfg.h"
#include "gc_timeline.h"
#include "gc_topology.h"
#include "gc_trust.h"

#define GC_SIM_MAX_THREADS  2
#define GC_SIM_HELD_PER_LINK 24         /* a frozen peer: receive HWM 16 + send HWM 8 */
#define GC_SIM_SEQ_BASE     1000000000000ULL    /* sequence numbers: base + virtual µs */

enum {
    GC_SIM_EV_TIMELINE = 1,     /* arg: event index */
    GC_SIM_EV_GRACE,            /* the honest peers are done: stop the others */
    GC_SIM_EV_TIMEOUT,          /* scenario/timeout_s of virtual time */
    GC_SIM_EV_COMPUTE,          /* peer: local steps done (arg: epoch) */
    GC_SIM_EV_DEADLINE,         /* peer: wait deadline (arg: epoch) */
    GC_SIM_EV_DELIVER           /* peer: a message arrives (ptr: message) */
};

typedef enum {
    GC_SIM_DOWN = 0,            /* not running (killed, crashed, not started) */
    GC_SIM_COMPUTING,
    GC_SIM_WAITING,
    GC_SIM_DONE                 /* rounds done: the process exited */
} gc_sim_phase_t;

#define GC_SIM_MEMO 4                   /* replica states a message remembers */

//  A replica state built from a message (gc_sim_states.c), and the one it
//  was built on (NULL: a keyframe); both held.
typedef struct {
    const float *base, *built;
} gc_sim_memo_t;

//  One message, shared by its destinations.
typedef struct {
    atomic_int    refs;
    uint32_t      from;
    uint32_t      hlen, plen;
    uint32_t      n_memo;
    gc_sim_memo_t memo [GC_SIM_MEMO];
    uint8_t      *payload;      /* after the header in data, or a block taken from the engine */
    uint8_t       data [];      /* header (then payload, when copied) */
} gc_sim_msg_t;

//  What a peer did while handling its events of a batch (routed afterwards).
typedef struct {
    gc_sim_msg_t *msg;
    int64_t       t;
    size_t        first_dest, n_dests;      /* into the peer's dests */
} gc_sim_send_t;

typedef struct {
    int64_t  t;
    uint32_t kind;
    uint64_t arg;
} gc_sim_new_t;

//  The sender's state of the link to one contact.
typedef struct {
    int64_t fault_free;         /* fault layer's rate cap: busy until */
    int64_t link_free;          /* the link's bandwidth: busy until */
    int64_t last_arrival;       /* messages on a link arrive in order */
} gc_sim_link_t;

typedef struct gc_sim_t gc_sim_t;

typedef struct {
    gc_sim_t          *sim;
    uint32_t           index;
    bool               byzantine;
    int                cls;             /* thread class: index % threads */
    gc_config_t       *cfg;
    gc_engine_config_t ecfg;
    gc_dataset_t       shard;
    gc_key_t          *key;
    const gc_simpeer_t *sp;
    int64_t            step_ns;
    //  contacts (in ∪ out, ascending) and the links to them
    const uint32_t    *contacts;
    size_t             n_contacts;
    gc_sim_link_t     *links;
    uint32_t          *held_from;       /* per contact: deliveries held while frozen */
    //  lifecycle
    gc_engine_t       *engine;
    gc_sim_phase_t     phase;
    bool               frozen;
    uint64_t           epoch;           /* COMPUTE/DEADLINE events of older epochs are void */
    int64_t            compute_due, freeze_t, spawn_t, deadline_pending, remaining;
    int64_t            round_t0;        /* when the round's compute began (-1: none since the spawn) */
    double             ctl_slow;        /* timeline `slow F` */
    uint64_t           last_seq;
    //  fault layer and `slow` of the timeline (kept across restarts, as gcnet re-applies them)
    gc_fault_t         fault;
    uint32_t          *partition;
    size_t             n_partition;
    gc_rng_t           rng;             /* fault layer and link jitter (routing, serial) */
    gc_rng_t           compute_rng;     /* compute jitter (the peer's own processing) */
    gc_sim_msg_t      *delivering;      /* the message the engine is handed now */
    //  deliveries held while frozen
    gc_sim_msg_t     **held;
    size_t             n_held, cap_held;
    //  batch outputs
    int64_t            now;
    gc_sim_send_t     *sends;
    size_t             n_sends, cap_sends;
    uint32_t          *dests;
    size_t             n_dests, cap_dests;
    gc_sim_new_t      *news;
    size_t             n_news, cap_news;
    bool               touched;         /* round or phase changed (gathered after each batch) */
    //  checkpoints, for `restart resume`
    bool               wants_snap, has_snap;
    float             *snap_x, *snap_v;
    uint64_t           snap_round, snap_seq;
    //  progress
    uint64_t           round;
    uint64_t           rounds_done;     /* over every process of the peer */
    uint64_t           dropped_down, dropped_frozen;
    bool               oom;
    //  result (points into the gc_result_t)
    gc_peer_result_t  *res;
} gc_sim_peer_t;

typedef struct {
    float     *update, *sent, *agg;     /* engine scratch (gc_engine_set_scratch) */
    gc_trust_t *trust;                  /* keys are not thread-safe: one store per class */
    gc_model_t *eval_model;              /* evaluation workspace (500 rows) shared by the class */
    char      *line;                    /* metrics line buffer */
    size_t     line_size;
    double     eval_s;                  /* wall time spent evaluating */
} gc_sim_class_t;

struct gc_sim_t {
    gc_sim_opts_t      opts;
    gc_scenario_t     *sc;
    gc_simcfg_t       *scfg;
    uint32_t           n;
    uint64_t           seed;
    gc_topology_t     *topology;
    gc_dataset_t       train, test;
    uint8_t          (*ids) [8];
    gc_sim_peer_t     *peers;
    int                threads;
    gc_sim_class_t     classes [GC_SIM_MAX_THREADS];
    size_t             d;               /* model parameters */
    long               eval_every, checkpoint_every;
    gc_evq_t          *q;
    int64_t            now;
    gc_timeline_t     *timeline;
    bool               timeline_oom;    /* an event could not be queued */
    gc_result_t       *res;
    //  omniscient attackers (serial phase)
    gc_engine_observer_t observer;
    float             *omni_mean, *omni_std;
    const float      **omni_models;
    uint64_t           omni_batch, batch_no;
    //  the current batch
    gc_evq_item_t     *batch;
    size_t             n_batch, cap_batch;
    int32_t           *chain_first, *chain_last, *chain_next;
    uint32_t          *active;
    size_t             n_active;
    //  threads
    pthread_t          worker;
    bool               worker_started, quit;
    pthread_barrier_t  go, done;
    //  shared replica states (gc_sim_states.c)
    pthread_mutex_t    states_lock;
    float             *initial;         /* the initial model, as a state */
    atomic_uint_fast64_t states_built, states_shared;
    //  end of the run
    bool               stop, honest_done, grace_pushed;
    atomic_uint        crashes_shown;   /* crashes named on the log so far (gc_sim_peer.c) */
    gc_run_status_t    status;
    uint64_t           messages, deliveries, dropped_fault;
    //  wall clock (timing.json only)
    double             wall_setup_s, wall_loop_s, cpu_loop_s;
    double            *round_wall;      /* [r - 1]: loop's wall s when the median round reached r */
    float             *round_rss_mb;    /* [r - 1]: resident memory then */
    size_t             n_round_wall, cap_round_wall;
    bool               rounds_moved;    /* a peer's round or phase changed in the last batch */
};

/*  gc_sim_peer.c */
void gc_sim_peer_events (gc_sim_t *sim, gc_sim_peer_t *p, int32_t first);
int  gc_sim_peer_spawn (gc_sim_t *sim, gc_sim_peer_t *p, bool resume);
void gc_sim_peer_kill (gc_sim_t *sim, gc_sim_peer_t *p, gc_peer_state_t state, bool clean);
/*  Drop the engine of a peer whose process has ended (before a restart). */
void gc_sim_peer_discard (gc_sim_peer_t *p);
void gc_sim_peer_freeze (gc_sim_t *sim, gc_sim_peer_t *p);
void gc_sim_peer_thaw (gc_sim_t *sim, gc_sim_peer_t *p);
void gc_sim_peer_finish (gc_sim_t *sim, gc_sim_peer_t *p, gc_peer_state_t state);
/*  The virtual duration of the round p starts now; tells its engine that
    duration, the last whole round's and the slowest out-link's rate. */
int64_t gc_sim_peer_compute_ns (gc_sim_peer_t *p);
/*  Index of peer in p->contacts (sorted), SIZE_MAX when it is not one. */
size_t  gc_sim_peer_contact (const gc_sim_peer_t *p, uint32_t peer);
void gc_sim_msg_release (gc_sim_msg_t *msg);
/*  Push onto the peer's outputs (routed after the batch). */
void gc_sim_peer_schedule (gc_sim_peer_t *p, int64_t t, uint32_t kind, uint64_t arg);

/*  gc_sim_states.c: replica states shared between engines (gc_engine_states_t).
    share_states: give p's new engine the store (no-op with --no-share).
    msg_forget: release the states a message remembers (before it is freed). */
float *gc_sim_state_new (size_t n);
void gc_sim_state_hold (const float *x);
void gc_sim_state_release (const float *x);
void gc_sim_share_states (gc_sim_t *sim, gc_sim_peer_t *p);
void gc_sim_msg_forget (gc_sim_msg_t *msg);

/*  gc_sim_report.c */
int  gc_sim_report (gc_sim_t *sim, gc_err_t *err);

#endif
