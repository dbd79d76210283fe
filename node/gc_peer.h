/*  gc_peer — one running peer of a network: what `gcnode run` and libgcnode
    (an embedder's peer, lib/) both are. It owns the identity (own key, trust
    store, peer ids), the data shard, the engine, the ZeroMQ transport with
    its control channel, the operational side (gc_ops: discovery, CURVE,
    status, HTTP, systemd), checkpoints with their sequence lease, and the
    metrics file, all set up from one gc_config_t.

    Threads: the caller's thread is the trainer (new, connect, round, finish,
    destroy); the transport's actor thread receives into the engine and
    answers the control channel. Every function takes the stop flag the
    caller's waits watch (SIGINT for gcnode, the embedder's own otherwise);
    the control verb `stop` sets gc_peer_stopped. */
#ifndef GC_PEER_H
#define GC_PEER_H

#include <stdbool.h>

#include "gc_config.h"
#include "gc_engine.h"
#include "gc_err.h"

typedef struct {
    bool   resume;          /* continue from the newest valid checkpoint */
    /*  An embedder's model (kind external): no data is loaded and nothing is
        evaluated here; the engine's model is params (gc_engine_bind_params,
        adopt as documented there) when not NULL. */
    bool   external;
    float *params;
    bool   adopt;
} gc_peer_options_t;

typedef struct gc_peer_t gc_peer_t;

/*  node/control (empty: none) is only ipc:// in a directory private to this
    user, created 0700 when missing: the channel can stop or partition the
    peer and the directory is its only authentication. Call before
    gc_peer_new (gcnode run refuses the configuration as a usage error). */
int          gc_peer_check_control (const char *control, gc_err_t *err);

/*  Everything up to the first round: identity, data, engine, operations,
    transport, checkpoint directory, resume, metrics file. cfg is borrowed
    (it must outlive the peer; discovery fills in endpoints). NULL with err;
    *bad_input (if not NULL) says whether the configuration or its files were
    at fault (exit 2) rather than the run (exit 1). */
gc_peer_t   *gc_peer_new (gc_config_t *cfg, const gc_peer_options_t *opt, bool *bad_input,
                          gc_err_t *err);
void         gc_peer_destroy (gc_peer_t **self_p);

/*  Wait (bounded) for the neighbours' sockets, then announce this peer. */
void         gc_peer_connect (gc_peer_t *self, volatile int *stop);
/*  One round: local training (a native model), the straggler delay the
    control channel set, publish, wait, mix, then a checkpoint, an evaluation
    and the metrics as configured. */
int          gc_peer_round (gc_peer_t *self, volatile int *stop, gc_err_t *err);
/*  After the last round: final checkpoint, evaluation, metrics and model
    file, the summary log line. *accuracy gets the final test accuracy. */
void         gc_peer_finish (gc_peer_t *self, bool stopped, double *accuracy);

gc_engine_t *gc_peer_engine (gc_peer_t *self);
/*  The control channel asked the peer to stop. */
bool         gc_peer_stopped (gc_peer_t *self);
/*  An accuracy measured by the embedder: shown by status and metrics. */
void         gc_peer_set_accuracy (gc_peer_t *self, double accuracy);

#endif
