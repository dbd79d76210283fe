/*  gc_scenario — a test network described in one ZPL file (docs/SCENARIOS.md):
    how many peers, the gcnode keys they run with (for all of them and per
    group: roles, attacks, algorithms), a timeline of faults, and the
    assertions the run must satisfy.

    This module only parses, validates and generates text: it starts no
    process, so that gcnet (processes on one machine), gcnet compose (docker)
    and the simulator can all read the same files. Every error names the file
    and the key, e.g. "attack.zpl: timeline/kill/at: 'round x' is not ...".

    The parsed scenario is a plain read-only struct. */
#ifndef GC_SCENARIO_H
#define GC_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gc_err.h"
#include "gc_peerset.h"

#define GC_SCENARIO_MAX_PEERS 254       /* a /24 under --netns */
#define GC_SCENARIO_MAX_SIDES 8         /* partition sides */

typedef enum {
    GC_ACT_KILL,        /* SIGKILL (kill -9) */
    GC_ACT_TERM,        /* SIGTERM: the peer stops cleanly */
    GC_ACT_STOP,        /* SIGSTOP: frozen */
    GC_ACT_CONT,        /* SIGCONT */
    GC_ACT_RESTART,     /* (kill if running, then) start again; `resume`: --resume */
    GC_ACT_DROP,        /* control: drop P */
    GC_ACT_DELAY,       /* control: delay MS [JITTER_MS] */
    GC_ACT_PARTITION,   /* control: partition, per side */
    GC_ACT_HEAL,        /* control: heal */
    GC_ACT_SLOW,        /* control: slow F */
    GC_ACT_RATE         /* control: rate BYTES_PER_S (tc under --netns) */
} gc_action_t;

typedef enum { GC_AT_TIME, GC_AT_ROUND, GC_AT_AFTER } gc_at_t;

typedef struct {
    char         *name;             /* timeline/NAME */
    char         *text;             /* the `do` value as written, for logs */
    gc_at_t       at_kind;
    double        at;               /* seconds since start / median honest round /
                                       seconds after event `after` fired */
    size_t        after;            /* GC_AT_AFTER: index of an earlier event */
    gc_action_t   action;
    gc_peerset_t  peers;            /* whom it acts on (partition: everyone) */
    double        value;            /* drop: P; delay: MS; slow: F; rate: bytes/s */
    double        value2;           /* delay: jitter MS */
    bool          resume;           /* restart with --resume */
    gc_peerset_t  sides [GC_SCENARIO_MAX_SIDES];   /* partition: disjoint sides */
    size_t        n_sides;          /* (peers in no side form one more side) */
} gc_event_t;

typedef enum { GC_CMP_GE, GC_CMP_GT, GC_CMP_LE, GC_CMP_LT, GC_CMP_EQ, GC_CMP_NE } gc_cmp_t;

typedef struct {
    char     *metric;               /* honest_mean_accuracy, rejected.bad_signature, ... */
    gc_cmp_t  cmp;
    double    value;
    char     *text;                 /* "honest_mean_accuracy >= 0.8" */
} gc_check_t;

typedef struct {
    char *path;                     /* gcnode key, e.g. gossip/aggregator */
    char *value;
} gc_setting_t;

typedef struct {
    char         *name;
    gc_peerset_t  peers;
    gc_setting_t *settings;
    size_t        n_settings;
} gc_group_t;

typedef struct {
    char         *path;             /* the file (or the name given to _load_str) */
    char         *name;             /* scenario/name, default: the file's stem */
    char         *description;
    uint32_t      n_peers;          /* scenario/peers */
    double        timeout_s;        /* scenario/timeout_s: the whole run's limit */
    double        target_accuracy;  /* scenario/target_accuracy: for rounds/time/MB to target */
    double        grace_s;          /* scenario/grace_s: others may run on after the honest peers end */
    int           base_port;        /* scenario/base_port: 0 = choose a free range */
    gc_setting_t *settings;         /* gcnode keys for every peer, file order */
    size_t        n_settings;
    gc_group_t   *groups;           /* group/NAME: overrides for some peers, file order */
    size_t        n_groups;
    gc_event_t   *events;           /* timeline, file order */
    size_t        n_events;
    gc_check_t   *checks;           /* assert */
    size_t        n_checks;
    gc_peerset_t  byzantine;        /* peers with role/kind = byzantine */
    bool          uses_control;     /* some event needs the control channel */
    bool          uses_resume;      /* some restart asks for --resume */
} gc_scenario_t;

gc_scenario_t *gc_scenario_load (const char *path, gc_err_t *err);
/*  The simulator's reading (gcsim): the same, with up to GC_PEERSET_MAX peers,
    and n_peers (if not 0) in place of scenario/peers. Both readings skip the
    `sim` section and group/NAME/sim: simulator-only keys that gcsim reads
    itself (docs/SCENARIOS.md, "gcsim"). */
gc_scenario_t *gc_scenario_load_sim (const char *path, uint32_t n_peers, gc_err_t *err);
/*  The same from text; name stands for the file in messages. */
gc_scenario_t *gc_scenario_load_str (const char *text, const char *name, gc_err_t *err);
void           gc_scenario_destroy (gc_scenario_t **self_p);

/*  The value of gcnode key path for peer (groups override the common keys,
    later groups override earlier ones), or NULL when the scenario leaves it
    at gcnode's default. */
const char    *gc_scenario_value (const gc_scenario_t *self, uint32_t peer, const char *path);
bool           gc_scenario_is_byzantine (const gc_scenario_t *self, uint32_t peer);
/*  role/attack of peer, "" for none. */
const char    *gc_scenario_attack (const gc_scenario_t *self, uint32_t peer);

/*  Parse a peer set: indices and ranges ("0,1,10-11"), group names, "all",
    "honest", "byzantine", joined by commas. `what` names the key in errors. */
int            gc_scenario_peers (const gc_scenario_t *self, const char *text,
                                  gc_peerset_t *out, const char *what, gc_err_t *err);

/*  What the runner supplies for one peer's config: everything that depends on
    where and how the network runs. NULL members are left out. */
typedef struct {
    const char *const *endpoints;   /* n_peers endpoints, e.g. tcp://127.0.0.1:7100 */
    const char *const *public_keys; /* n_peers .pub files */
    const char *private_key;        /* this peer's .key file (required) */
    const char *bind;               /* node/bind */
    const char *metrics;            /* node/metrics */
    const char *control;            /* node/control (ipc://...) */
    const char *final_model;        /* node/final_model */
    const char *checkpoint_dir;     /* node/checkpoint_dir */
    const char *curve;              /* node/curve unless the scenario sets it */
} gc_peer_env_t;

/*  Write peer's complete gcnode configuration (ZPL) to out. */
int            gc_scenario_write_config (const gc_scenario_t *self, uint32_t peer,
                                         const gc_peer_env_t *env, FILE *out, gc_err_t *err);

/*  Honest peers with more Byzantine in-neighbours than their aggregation rule
    tolerates (median-like rules: 2f < k; cwtm:B, krum:F, bulyan:F: their f,
    with k = in-degree + 1 at least the rule's minimum). Writes one line per
    such peer to out (may be NULL); returns how many, or -1 (topology or
    aggregator spec that does not parse, named in err). */
int            gc_scenario_lint (const gc_scenario_t *self, FILE *out, gc_err_t *err);

/*  The keys gcnet sets itself; a scenario may not (e.g. "node/index"). */
bool           gc_scenario_key_reserved (const char *path);
/*  Names of the actions and comparisons, for logs. */
const char    *gc_action_name (gc_action_t action);
const char    *gc_cmp_name (gc_cmp_t cmp);
bool           gc_cmp_holds (gc_cmp_t cmp, double measured, double limit);

#endif
