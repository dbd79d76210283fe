/*  gc_config — a peer's configuration: a ZPL file (read with CZMQ zconfig),
    overridden by command-line flags. Every key, its type, range, default and
    meaning is in one table (gc_config.c), which also prints docs/CONFIG.md's
    reference (`gcnode run --help-config`). Unknown keys, values out of range
    and missing required keys are errors that name the key. */
#ifndef GC_CONFIG_H
#define GC_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gc_err.h"

#define GC_CONFIG_MAX_PEERS 4096

typedef struct {
    char *endpoint;     /* tcp://host:port */
    char *key;          /* public key file */
    char *curve_key;    /* CURVE public certificate (NULL: derived from key) */
    bool  revoked;      /* peers/N/revoked: not trusted, not connected, key optional */
} gc_config_peer_t;

typedef struct {
    //  node
    long      index;
    char     *network;
    char     *bind;
    char     *key;
    char     *trust;
    uint64_t  seed;
    long      threads;
    char     *log_level;
    char     *log_to;
    char     *metrics;
    char     *progress;
    long      eval_every;
    char     *metrics_http;
    bool      curve;
    char     *curve_key;
    char     *status_file;
    char     *control;
    char     *final_model;
    char     *checkpoint_dir;
    long      checkpoint_every;
    //  peers
    gc_config_peer_t *peers;
    long      n_peers;
    //  discovery
    bool      discovery;
    long      discovery_port;
    long      discovery_interval_ms;
    char     *discovery_interface;
    long      discovery_wait_s;
    //  topology
    char     *topology;
    //  train
    char     *data;
    char     *split;
    char     *model;
    long      batch;
    long      local_steps;
    long      rounds;
    double    lr;
    double    momentum;
    bool      nesterov;
    double    weight_decay;
    char     *schedule;
    char     *augment;
    double    label_smoothing;
    double    warmup;
    long      train_samples;
    long      test_samples;
    //  gossip
    char     *compress;
    char     *ec;
    char     *policy;
    char     *aggregator;
    char     *validate;
    long      fallback;
    long      witness;
    double    gamma;
    double    keep_unsent;
    char     *wait;
    long      timeout_ms;
    long      staleness;
    long      keyframe_every;
    bool      keyframe_fp16;
    long      keyframe_interval_ms;
    long      mute_after;
    long      mute_for_s;
    //  role
    char     *role;
    char     *attack;
} gc_config_t;

/*  Defaults for every key. */
gc_config_t *gc_config_new (void);
void         gc_config_destroy (gc_config_t **self_p);
/*  Read a ZPL file on top of the current values. */
int          gc_config_load (gc_config_t *self, const char *path, gc_err_t *err);
/*  Set one key: "gossip/aggregator", "cwmed" (the --set flag). */
int          gc_config_set (gc_config_t *self, const char *path, const char *value, gc_err_t *err);
/*  Cross-key checks (required keys, peers, index in range). */
int          gc_config_check (const gc_config_t *self, gc_err_t *err);
/*  The reference of every key as a Markdown table. */
void         gc_config_print_reference (FILE *out);
/*  The CURVE key files: node/curve_key, or node/key with ".key" replaced by
    ".curve"; peers/N/curve_key, or peers/N/key with ".pub" replaced by
    ".curve.pub" (the names `gcnode keygen` writes). */
int          gc_config_curve_secret (const gc_config_t *self, char *out, size_t size);
int          gc_config_curve_public (const gc_config_t *self, long peer, char *out, size_t size);
/*  The value of peers/N/endpoint that asks discovery to fill it in. */
#define GC_CONFIG_DISCOVER "discover"
/*  Write the configuration as ZPL (what the peer actually runs with). */
void         gc_config_print (const gc_config_t *self, FILE *out);

#endif
