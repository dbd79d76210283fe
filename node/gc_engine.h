/*  gc_engine — the round engine of one peer, independent of any transport.

    The engine is a state machine driven from outside ("sans I/O"): the
    driver calls the phases of a round in order and hands it every received
    message; the engine sends through a callback. gcnode drives it with a
    trainer thread and a ZeroMQ network thread, the tests and the simulator
    with an in-memory network and a virtual clock. Times are always passed in.

    One round, on the trainer side:
        gc_engine_train      local SGD steps on x
        gc_engine_publish    u = x - x_prev; q = EC(C)(u); pub += q;
                             sign once, send to the out-neighbours;
                             serve keyframe requests, ask for keyframes
        gc_engine_wait_*     until the wait policy is satisfied (bounded)
        gc_engine_mix        x <- x + gamma (Agg(inputs) - centre), round++

    On the network side, gc_engine_on_message parses the header once and
    runs the checks in order (sizes, fields → partitioned? muted? → network,
    sender, replay, signature, digest → is it a peer, a neighbour for this
    type → rate limit → payload decode into the replica) and counts every
    rejection by reason and by peer (node/gc_engine_rx.c). It may run in
    another thread than the phases above: replicas have their own locks,
    what else both sides touch is atomic (node/gc_engine_internal.h). Each
    side is called by one thread at a time, and the phases in the order
    above; debug builds (no NDEBUG, as every test build) assert both.

    docs/ALGORITHMS.md gives the exact rules (EC modes, wait policies,
    staleness, keyframes, round catch-up). */
#ifndef GC_ENGINE_H
#define GC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_augment.h"
#include "gc_dataset.h"
#include "gc_err.h"
#include "gc_key.h"
#include "gc_optim.h"
#include "gc_topology.h"
#include "gc_trust.h"
#include "gc_wire.h"
#include "gc_zmq.h"

typedef struct {
    /*  who */
    uint32_t             self;              /* own peer index */
    const gc_topology_t *topology;          /* borrowed */
    gc_key_t            *key;               /* borrowed: own signing key */
    gc_trust_t          *trust;             /* borrowed */
    const uint8_t      (*peer_ids) [8];     /* borrowed: id of every peer index */
    const char          *network;           /* network name (signed into every message) */
    /*  learning */
    const char          *model;             /* "784-256-128-10" */
    const gc_dataset_t  *train;             /* own shard, borrowed */
    const gc_dataset_t  *test;              /* borrowed, NULL: no evaluation */
    gc_optim_config_t    optim;
    size_t               batch;
    gc_augment_t         augment;           /* of every training batch; zero: none */
    uint32_t             local_steps;       /* SGD steps per round */
    uint64_t             rounds;            /* length of the run (lr schedule, catch-up cap) */
    uint64_t             seed;              /* shared by all peers: the initial model */
    /*  gossip */
    const char          *compress;          /* compressor spec */
    const char          *ec;                /* none | ef | liec[:H] */
    const char          *policy;            /* ratio policy spec (gc_policy.h); NULL: fixed */
    const char          *aggregator;        /* robust rule spec */
    const char          *validate;          /* local validation spec (gc_validate.h); NULL: auto */
    bool                 fallback;          /* too few inputs: mix under the weaker rule they support */
    bool                 witness;           /* pass accepted headers on (WITNESS), compare those received */
    const char          *wait;              /* sync | quorum:Q | adaptive */
    double               gamma;             /* mixing step */
    double               keep_unsent;       /* λ: liec mixes around x - λ g, g the own training
                                               progress not yet sent (docs/ALGORITHMS.md); 0: off */
    uint32_t             staleness;         /* S: replicas older than S rounds are left out */
    uint32_t             keyframe_every;    /* K: periodic keyframes, 0 = on request only */
    bool                 keyframe_fp16;     /* keyframes in fp16 instead of fp32 */
    int64_t              wait_timeout_ns;
    int64_t              keyframe_interval_ns;  /* per-neighbour rate limit, both ways */
    uint32_t             mute_after;        /* authenticated rejections that mute a peer */
    int64_t              mute_for_ns;
    /*  role: NULL or "" = honest; otherwise a Byzantine attack spec (gc_attack.h) */
    const char          *attack;
    /*  simulator (gcsim) only; zero / NULL in gcnode */
    uint64_t             seq_start;         /* last seq used before the first message; 0 = the wall clock in µs */
    const struct gc_engine_observer_t *observer;    /* omniscient attacker's view; NULL = own model + replicas */
    bool                 skip_crypto;       /* in-process transport: no signatures, digests, checks (below) */
} gc_engine_config_t;

/*  skip_crypto: for a simulator whose messages travel through process memory
    between engines, where nothing can be forged on the way. Senders leave
    the payload digest and the signature out (gc_wire_encode_unsigned);
    receivers run every other check of gc_wire_rx_decode (header, network,
    sender, replay window, length, keyframe-request target). Off in gcnode;
    gcsim refuses it when a scenario has a protocol attack (untrusted,
    malformed, replay, flood, nan), whose messages only the skipped checks
    would refuse. */

/*  Simulator only: what an omniscient Byzantine peer sees instead of its own
    model and replicas. moments writes the coordinate-wise mean and standard
    deviation (n - 1) of the models it observes (e.g. every honest model);
    model gives a peer's current model (dissensus victims, mimic), or NULL to
    fall back on the attacker's replica. Called from the attacker's publish. */
typedef struct gc_engine_observer_t {
    void         *ctx;
    void        (*moments) (void *ctx, uint32_t attacker, float *mean, float *std);
    const float *(*model) (void *ctx, uint32_t peer);
} gc_engine_observer_t;

/*  Fill the defaults documented in docs/CONFIG.md. */
void gc_engine_config_defaults (gc_engine_config_t *cfg);

typedef struct {
    void *ctx;
    /*  Send header + payload to each of dests (peer indices); may copy. */
    int (*send) (void *ctx, const uint32_t *dests, size_t n_dests,
                 const uint8_t *header, size_t header_len,
                 const uint8_t *payload, size_t payload_len);
    /*  Optional: as send, but the transport takes the payload (a malloc'd
        block it frees with free) instead of copying it; on -1 the engine
        still owns it. The engine hands over only its own delta payloads,
        which it builds afresh every round anyway. */
    int (*send_owned) (void *ctx, const uint32_t *dests, size_t n_dests,
                       const uint8_t *header, size_t header_len,
                       uint8_t *payload, size_t payload_len);
} gc_engine_io_t;

/*  Rejection reasons beyond the wire's (gc_wire_reason.h), continuing its
    numbering; gc_engine_reason_name covers both. */
enum {
    GC_REJECT_NOT_NEIGHBOUR = 64,   /* trusted key, but no edge for this message type */
    GC_REJECT_UNKNOWN_PEER,         /* trusted key not in the peer list */
    GC_REJECT_BAD_PAYLOAD,          /* the payload failed its decoder */
    GC_REJECT_NONFINITE,            /* replica went NaN/Inf: left out, resynced */
    GC_REJECT_RATE_LIMITED,         /* keyframe requests too often */
    GC_REJECT_MUTED,                /* dropped: the sender is muted */
    GC_REJECT_BAD_ROUND,            /* signed round beyond the run's last (node/rounds) */
    GC_REJECT_EQUIVOCATED,          /* the author is excluded: proven equivocation */
    GC_REJECT_LAST
};
#define GC_ENGINE_NREASONS (GC_REJECT_LAST - GC_REJECT_NOT_NEIGHBOUR + 32)

const char *gc_engine_reason_name (int reason);

/*  Counters: a consistent-enough snapshot for metrics and progress lines. */
typedef struct {
    uint64_t round;
    uint64_t msgs_sent, bytes_sent;             /* per destination */
    uint64_t msgs_recv, bytes_recv;             /* every message handed in */
    uint64_t deltas_applied, keyframes_sent, keyframes_recv;
    uint64_t keyframe_requests_sent, keyframe_requests_recv;
    uint64_t gaps, superseded, mix_skipped, catchups, partitioned;
    uint64_t hellos;                            /* HELLOs accepted (PROTOCOL.md §5.1) */
    uint64_t witness_sent, witness_recv;        /* WITNESS messages (gossip/witness) */
    uint64_t mix_fallbacks;                     /* rounds mixed under a weaker rule (too few inputs) */
    uint64_t diverged;                          /* rounds own training went non-finite */
    uint64_t rejected;                          /* sum over reasons */
    uint64_t dense_equiv_bytes;                 /* what dense fp32 deltas would have cost */
    uint64_t verifies;                          /* header signatures checked (Ed25519) */
    uint64_t equivocators;                      /* authors excluded on proof of equivocation */
    uint64_t evidence_found;                    /* proofs found here: two headers, one seq */
    uint64_t evidence_recv;                     /* valid EVIDENCE messages (new or not) */
    uint64_t evidence_sent;                     /* EVIDENCE messages sent, per destination */
    double   last_loss;
    double   last_wait_s, total_wait_s;
    double   time_train_s, time_compress_s, time_sign_s, time_aggregate_s;
    double   time_verify_s, time_decode_s;          /* network side */
    size_t   mixed_inputs;                      /* inputs of the last aggregation */
    uint64_t sends_skipped;                     /* rounds the ratio policy skipped */
    double   send_budget;                       /* last round's budget, fraction of entries */
    size_t   wait_target;
} gc_engine_stats_t;

typedef struct gc_engine_t gc_engine_t;

/*  What a ratio policy (gossip/policy) budgets against: compute_s the time
    of a round's compute (<= 0: the measured train time of the round),
    round_s the time of the last whole round, publish to publish (<= 0: the
    measured wall time between the engine's publishes), rate the bytes/s of
    the slowest out-link (<= 0: unknown or unchanged). gcsim sets them from
    its virtual clock and links; gcnode leaves the measured times. Trainer
    side, between phases. */
void gc_engine_set_link (gc_engine_t *self, double compute_s, double round_s, double rate);
/*  gcnode: the out-links' rate as it is now (the fault layer's cap; 0:
    none known, which also forgets an earlier one). Trainer side. */
void gc_engine_set_link_rate (gc_engine_t *self, double rate);

gc_engine_t *gc_engine_new (const gc_engine_config_t *cfg, const gc_engine_io_t *io,
                            gc_err_t *err);
void         gc_engine_destroy (gc_engine_t **self_p);

/*  Announce this peer (HELLO) to its neighbours; call once before round 1. */
int          gc_engine_start (gc_engine_t *self, int64_t now);
/*  Local SGD steps; returns the mean training loss. */
double       gc_engine_train (gc_engine_t *self);
int          gc_engine_publish (gc_engine_t *self, int64_t now, gc_err_t *err);
void         gc_engine_wait_begin (gc_engine_t *self, int64_t now);
bool         gc_engine_ready (gc_engine_t *self, int64_t now);
int64_t      gc_engine_wait_deadline (const gc_engine_t *self);
/*  Block (real clock) until ready or the deadline, or until *stop is set. */
void         gc_engine_wait (gc_engine_t *self, volatile int *stop);
int          gc_engine_mix (gc_engine_t *self, int64_t now, gc_err_t *err);
bool         gc_engine_done (const gc_engine_t *self);

/*  Network side (any one thread). */
gc_deliver_t gc_engine_on_message (gc_engine_t *self, const uint8_t *header, size_t header_len,
                                   const uint8_t *payload, size_t payload_len, int64_t now);

/*  Emulate a network partition (fault injection): exchange messages only
    with the peers in allowed (n = 0 heals). Messages to others are not sent,
    messages from others are dropped on arrival and counted as partitioned.
    Thread-safe. */
void         gc_engine_partition (gc_engine_t *self, const uint32_t *allowed, size_t n);

/*  For checkpoints: the learning state to save (pointers into the engine,
    valid until the next phase call; v is the momentum buffer in true scale). */
void         gc_engine_snapshot (gc_engine_t *self, uint64_t *round, uint64_t *seq,
                                 const float **x, const float **v);
/*  Resume from a checkpoint: model, momentum, round. The peer announces its
    model as a new state by keyframe at the next publish and asks every
    neighbour for a keyframe (its replicas are out of date). */
/*  Sequence numbers that continue across restarts without trusting the wall
    clock (docs/PROTOCOL.md section 6): every seq up to `floor` may have been
    used before, so only larger ones are used; and before a seq beyond the
    persisted lease is used, persist(ctx, end, err) must have stored a new
    lease end (called on the trainer thread by start and publish, a few
    times per million seqs). A failure fails that phase: nothing is sent
    under a seq the next start could not know of. Call before
    gc_engine_start; without it the engine starts from seq_start or the
    wall clock, as before. */
typedef int (*gc_engine_lease_fn) (void *ctx, uint64_t end, gc_err_t *err);
void         gc_engine_seq_lease (gc_engine_t *self, uint64_t floor, gc_engine_lease_fn persist,
                                  void *ctx);
void         gc_engine_restore (gc_engine_t *self, uint64_t round, uint64_t seq,
                                const float *x, const float *v);
const char  *gc_engine_model_spec (const gc_engine_t *self);

/*  Simulators holding many engines (gcsim). set_scratch: use the caller's
    update, sent and agg buffers (n floats each, gc_falloc) instead of the
    engine's own, which are freed; they carry data only within one phase call,
    so engines whose phases never run at the same time may share one set.
    trim: free message buffers grown past 64 kB (after a dense keyframe or an
    exact synchronisation); they grow again when needed. */
void         gc_engine_set_scratch (gc_engine_t *self, float *update, float *sent, float *agg);
void         gc_engine_trim (gc_engine_t *self);

/*  Replica states shared by the engines of one process (gcsim). Decoding is
    a function of the state a replica holds and the payload it applies, so
    when several engines hold the same state of a peer and receive the same
    message, the first decodes it and the others take the result. A state
    is named by the state it was built on (NULL for a keyframe) and the
    address of the payload (the transport keeps one copy of a message for
    all its destinations and answers only for the message being delivered).
    States are immutable once offered and counted by reference:
      find   the result of payload on base, held for the caller, or NULL;
      alloc  n floats to build a result in (held for the caller);
      offer  the built result: returns the state to keep (built, or an equal
             one offered first, in which case built is released);
      hold / release  one reference.
    With a store, every replica change (delta, keyframe) builds a new state
    out of place (gc_payload_decode_onto) instead of writing in place; the
    floats are the same either way. */
typedef struct {
    void         *ctx;
    const float *(*find) (void *ctx, const float *base, const uint8_t *payload);
    float       *(*alloc) (void *ctx);
    const float *(*offer) (void *ctx, const float *base, const uint8_t *payload, float *built);
    void         (*hold) (void *ctx, const float *state);
    void         (*release) (void *ctx, const float *state);
} gc_engine_states_t;

/*  Use a store (copied; its ctx must outlive the engine). Replicas still at
    the initial state take `initial` (a store state) instead of their own
    copy when it holds the same floats as this engine's model. Call before
    gc_engine_start. */
void         gc_engine_share_states (gc_engine_t *self, const gc_engine_states_t *states,
                                     const float *initial);

/*  An embedder's model (kind external, libgcnode): the engine's model x
    becomes params (gc_engine_n_params floats, the caller's, never freed by
    the engine), so every mix writes the mixed model into it in place and
    every publish sends what changed in it since the last one. adopt: params
    hold the initial model; unless it equals the engine's seeded one, it is
    announced by keyframe at the first publish and the replicas are asked for
    again (as on a restore). Otherwise the seeded initial model is written
    into params. Trainer thread, before gc_engine_start; the caller writes
    params only between rounds. */
void         gc_engine_bind_params (gc_engine_t *self, float *params, bool adopt);

/*  One round of a driver whose model is trained elsewhere (or was trained by
    gc_engine_train before): publish, wait on the real clock as the policy
    says (or until *stop), mix. */
int          gc_engine_gossip (gc_engine_t *self, volatile int *stop, gc_err_t *err);

/*  The rule the last fallback mix used ("cwtm:0"), or "" (trainer thread). */
const char  *gc_engine_fallback_rule (const gc_engine_t *self);

/*  Test accuracy and loss of the current model x. */
int          gc_engine_evaluate (gc_engine_t *self, double *accuracy, double *loss);
uint64_t     gc_engine_round (const gc_engine_t *self);
const float *gc_engine_params (const gc_engine_t *self);
size_t       gc_engine_n_params (const gc_engine_t *self);
/*  The largest payload a neighbour may send (a dense keyframe). */
size_t       gc_engine_max_payload (const gc_engine_t *self);
void         gc_engine_stats (gc_engine_t *self, gc_engine_stats_t *out);
/*  Rejections of peer (by index) for reason, and of unattributable senders
    (peer = UINT32_MAX). */
uint64_t     gc_engine_rejections (gc_engine_t *self, uint32_t peer, int reason);
/*  peer (by index) is excluded: it was proven to equivocate (its replica is
    no longer mixed, its messages are rejected as equivocated). Either thread. */
bool         gc_engine_excluded (gc_engine_t *self, uint32_t peer);
/*  The i-th proof this peer holds (i < stats.equivocators, in the order the
    authors were excluded): an EVIDENCE payload (gc_wire_evidence_verify).
    false when there is no i-th. Either thread. */
bool         gc_engine_evidence (gc_engine_t *self, size_t i, uint8_t out [GC_WIRE_EVIDENCE_SIZE]);
/*  Everyone this peer has an edge with (in ∪ out), sorted by index. */
size_t       gc_engine_neighbours (const gc_engine_t *self, const uint32_t **peers);
/*  Staleness of the replica of in-neighbour peer, in rounds (or -1). */
int64_t      gc_engine_staleness (gc_engine_t *self, uint32_t peer);
/*  Local validation (gossip/validate, gc_validate.h): how many validations
    ran, and the factor in [0, 1] that multiplies in-neighbour peer's mixing
    weight until the next one (1 before its first); -1 when validation is
    off or peer is no in-neighbour. Trainer thread (the mix updates them). */
uint64_t     gc_engine_validations (const gc_engine_t *self);
double       gc_engine_validation_weight (gc_engine_t *self, uint32_t peer);

/*  What an operator needs to know about a neighbour's replica. */
typedef enum {
    GC_REPLICA_NOT_IN = 0,          /* not an in-neighbour: nothing to receive */
    GC_REPLICA_NEVER,               /* still the shared initial state: nothing delivered yet */
    GC_REPLICA_RESYNC,              /* no usable state: waiting for a keyframe */
    GC_REPLICA_STATE                /* a state of the peer; lag = own round - its round */
} gc_replica_kind_t;
/*  The kind of peer's replica; *lag (rounds, negative: the peer is ahead)
    is set for GC_REPLICA_STATE and GC_REPLICA_NEVER (then own round). */
gc_replica_kind_t gc_engine_replica_kind (gc_engine_t *self, uint32_t peer, int64_t *lag);
/*  Bytes of peer's authentic messages (with an edge for their type); any
    thread. */
uint64_t     gc_engine_bytes_from (gc_engine_t *self, uint32_t peer);

#endif
