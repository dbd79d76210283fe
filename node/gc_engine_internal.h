/*  gc_engine_internal — what the engine's files share (not for callers:
    they see gc_engine.h only).

    The engine is split by responsibility (docs/ARCHITECTURE.md, "The round
    engine"):
      gc_engine.c         construction, the round phases, the public queries
      gc_engine_rx.c      the receive path: parse once, prefilter, verify,
                          type rules, counting
      gc_replica.c        replicas of the in-neighbours, keyframes (send,
                          serve, request), round catch-up
      gc_equiv.c          equivocation: the headers seen per contact, proofs,
                          excluded authors, the proofs passed on
      gc_role*.c          what the peer publishes: honest, or a Byzantine
                          role (gc_role.h)

    Threads. The trainer thread runs the phases (start, train, publish, wait,
    mix, snapshot, restore, evaluate); the network thread runs
    gc_engine_on_message; in gcnode a control handler on the network thread
    also calls gc_engine_stats and gc_engine_partition. gcsim runs everything
    on one thread. Every field below says who writes it and how the other
    thread may read it:
      [T]  trainer only          [N]  network side only
      [A]  atomic (stdatomic)    [L]  under the replica's lock
      [C]  set at construction (or before gc_engine_start), read-only after */
#ifndef GC_ENGINE_INTERNAL_H
#define GC_ENGINE_INTERNAL_H

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "gc_engine.h"
#include "gc_attack.h"
#include "gc_buf.h"
#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_model.h"
#include "gc_policy.h"
#include "gc_robust.h"
#include "gc_sampler.h"
#include "gc_validate.h"
#include "gc_wait.h"
#include "gc_wire.h"
#include "gc_wire_rx.h"
#include "gc_role.h"

typedef atomic_uint_fast64_t gc_counter_t;

static inline void
gc_counter_add (gc_counter_t *c, uint64_t v)
{
    atomic_fetch_add_explicit (c, v, memory_order_relaxed);
}

static inline uint64_t
gc_counter_get (gc_counter_t *c)
{
    return atomic_load_explicit (c, memory_order_relaxed);
}

/*  A float statistic with one writing thread, read by the other: a relaxed
    load and store (no read-modify-write: there is one writer). */
typedef _Atomic double gc_gauge_t;

static inline void
gc_gauge_set (gc_gauge_t *g, double v)
{
    atomic_store_explicit (g, v, memory_order_relaxed);
}

static inline double
gc_gauge_get (gc_gauge_t *g)
{
    return atomic_load_explicit (g, memory_order_relaxed);
}

static inline void
gc_gauge_add (gc_gauge_t *g, double v)
{
    gc_gauge_set (g, gc_gauge_get (g) + v);
}

//  Round arithmetic that cannot wrap, whatever a replica's round (bounded by
//  node/rounds on receipt, but the configuration bounds nothing itself).
//  lag: how far `them` is behind `me`, negative when ahead, saturated.
static inline int64_t
gc_round_lag (uint64_t me, uint64_t them)
{
    uint64_t d = me >= them ? me - them : them - me;
    int64_t m = d > (uint64_t) INT64_MAX ? INT64_MAX : (int64_t) d;
    return me >= them ? m : -m;
}

//  `them` is more than `staleness` rounds behind `me`.
static inline bool
gc_round_staler (uint64_t me, uint64_t them, uint64_t staleness)
{
    return me > them && me - them > staleness;
}

//  Replica of one in-neighbour: the last verified state of that peer. x is
//  what is read: own (written in place), or, when own is NULL, a state held
//  from the shared store.
typedef struct {
    uint32_t        peer;           /* [C] */
    const float    *x;              /* [L] */
    float          *own;            /* [L] */
    uint64_t        state;          /* [L] id (seq) of the state x holds */
    uint64_t        round;          /* [L] its round */
    bool            synced;         /* [L] x is a state of the peer (not aggregated otherwise) */
    bool            inexact;        /* [L] a delta was lost since the last keyframe */
    gc_lgc_codec_t *codec;          /* [L] the peer's LGC decoder, as it last sent it, or NULL */
    int64_t         arrival;        /* [L] when x last changed */
    atomic_bool     want_keyframe;  /* [A] network side saw a gap */
    int64_t         last_request;   /* [T] when we last asked */
    pthread_mutex_t lock;
} gc_replica_t;

//  Everyone this peer has an edge with: counters, muting, keyframe service.
typedef struct {
    uint32_t     peer;              /* [C] */
    int          in;                /* [C] index into replicas, -1 if not an in-neighbour */
    bool         out;               /* [C] we send to it */
    atomic_bool  keyframe_pending;  /* [A] it asked: serve at the next publish */
    atomic_bool  blocked;           /* [A] partitioned away (fault injection) */
    int64_t      last_request_seen; /* [N] rate limit of its requests */
    uint32_t     failures;          /* [N] authenticated rejections in the window */
    int64_t      window_start;      /* [N] */
    int64_t      muted_until;       /* [N] */
    struct gc_equiv_seen_t *seen;   /* [N] its last headers by seq (gc_equiv.c), NULL until one */
    gc_counter_t reasons [GC_ENGINE_NREASONS];  /* [A] */
    gc_counter_t bytes_recv;        /* [A] of its authentic messages with an edge */
} gc_contact_t;

//  The learning state: the model and what the publish and the mix derive
//  from it. [T], except x, read by the observer of a simulator (one thread).
typedef struct {
    gc_model_t   *model;
    gc_optim_t   *optim;
    gc_sampler_t *sampler;
    size_t        n;                /* [C] parameters */
    float        *x;                /* own model */
    float        *prev;             /* x at the last publish */
    float        *pub;              /* what the neighbours hold of x */
    float        *update;           /* x - prev */
    float        *sent;             /* the decoded q of the last publish */
    float        *agg;
    bool          scratch_borrowed; /* update, sent, agg belong to the caller */
    bool          x_borrowed;       /* [C] x is an embedder's buffer (gc_engine_bind_params) */
    bool          centre_pub;       /* [C] ef: mix around pub (CHOCO), else around x */
    //  keep_unsent (gc_unsent.c): g, the own training progress not sent yet;
    //  between a mix and the next publish it holds g - x (the training in
    //  between adds to x, the publish adds x back). NULL: off.
    float        *unsent;
    bool          unsent_is_g;      /* unsent holds g (a delta was published since the mix) */
    bool          fresh_state;      /* x jumped: announce a new state by keyframe */
    //  local validation (gc_validate.h): the shard cut into held-out samples
    //  and the rest trained on; validate NULL: off
    gc_dataset_t  held, rest;       /* [C] */
    bool          split;            /* [C] held and rest are ours to free */
    gc_validate_cfg_t vcfg;         /* [C] */
    gc_validate_t *validate;        /* made with the neighbours (s_build_gossip) */
} gc_engine_learn_t;

//  Compression, aggregation, waiting. [T]; states is [C].
typedef struct {
    gc_compressor_t   *comp;
    gc_compressor_t   *kf_comp;
    gc_ec_t           *ec;
    gc_policy_t       *policy;      /* ratio policy, set on ec */
    double             compute_s;   /* driver's compute time of a round (0: measured) */
    double             round_s;     /* driver's time of the last whole round (0: measured) */
    double             publish_t;   /* gc_now_s of the last publish (0: none yet) */
    gc_buf_t           payload;
    gc_buf_t           kf_payload;
    gc_robust_t       *robust;
    gc_robust_t      **fallback;    /* [k]: the rule for k < min_inputs inputs, made on first use */
    const char        *fallback_used;   /* name of the last one used, or NULL */
    gc_wait_t         *wait;
    gc_engine_states_t states;      /* shared replica states (gcsim); find NULL: none */
} gc_engine_gossip_t;

//  Counters and timings. All [A]: gc_engine_stats reads them from either
//  thread. Each gauge has one writer, named.
typedef struct {
    gc_counter_t msgs_sent, bytes_sent, msgs_recv, bytes_recv, deltas_applied,
                 keyframes_sent, keyframes_recv, kf_requests_sent, kf_requests_recv,
                 gaps, superseded, mix_skipped, catchups, rejected, dense_equiv, hellos,
                 partitioned, diverged, verifies, equivocators, evidence_found,
                 evidence_recv, evidence_sent, sends_skipped, mix_fallbacks,
                 witness_sent, witness_recv;
    gc_counter_t unknown_reasons [GC_ENGINE_NREASONS];
    gc_gauge_t   last_loss, last_wait_s, total_wait_s;          /* trainer */
    gc_gauge_t   t_train, t_compress, t_sign, t_aggregate;      /* trainer */
    gc_gauge_t   t_last_train, send_budget;                     /* trainer */
    gc_gauge_t   t_verify, t_decode;                            /* network side */
    double       wait_started;                                  /* [T] */
    atomic_size_t mixed_inputs;                                 /* trainer */
    atomic_size_t wait_target;      /* trainer: gc_wait_target after each change */
} gc_engine_counters_t;

struct gc_engine_t {
    gc_engine_config_t   cfg;       /* [C] */
    gc_engine_io_t       io;        /* [C] */
    uint8_t              network_id [GC_WIRE_NETWORK_ID_SIZE];    /* [C] */
    gc_wire_rx_t        *rx;        /* [N] replay window, trust lookups */
    gc_engine_learn_t    learn;
    gc_engine_gossip_t   gossip;
    //  protocol state
    _Atomic uint64_t     round;     /* [A] written by the trainer, read by stats */
    uint64_t             seq;       /* [T] last seq used */
    struct {                        /* [T] gc_engine_seq_lease */
        gc_engine_lease_fn persist;
        void              *ctx;
        uint64_t           end;     /* seqs up to here are covered by a stored lease */
    } lease;
    uint64_t             state;     /* [T] id of pub */
    uint8_t              header [GC_WIRE_HEADER_SIZE];   /* [T] the last header sent */
    //  neighbours [C] (their elements say how they are shared)
    gc_replica_t        *replicas;
    size_t               n_in;
    gc_contact_t        *contacts;
    uint32_t            *contact_peers;
    size_t               n_contacts;
    uint32_t            *out_peers;
    uint32_t            *dest_scratch;  /* [T] dests left after the partition filter */
    size_t               n_out;
    //  scratch for mixing, waiting and observing [T]
    const float        **inputs;
    double              *weights;
    int                 *input_replica;
    bool                *fresh;
    int64_t             *arrivals;
    //  per replica: the state it held at the last mix it entered, and
    //  whether it holds another now (a message moved it): guard's stillness
    //  test measures only moved inputs
    uint64_t            *mixed_state;
    bool                *moved;
    //  what this peer publishes (gc_role.h) [T]
    gc_role_t            role;
    //  peer-id lookup, sorted by id [C]
    struct { uint8_t id [8]; uint32_t peer; } *by_id;
    uint32_t             n_peers;
    //  proven equivocators (gc_equiv.c): excluded [A] by peer index; the
    //  proofs, in the order of exclusion, under lock (network side appends,
    //  the trainer passes on those after `sent`)
    atomic_bool         *excluded;
    struct {
        pthread_mutex_t  lock;
        uint8_t        (*proof) [GC_WIRE_EVIDENCE_SIZE];
        uint32_t        *accused;
        size_t           n, cap, sent;
    } evidence;
    //  gossip/witness (gc_equiv.c): the headers accepted since the last
    //  publish, under lock (network side appends, the trainer sends), and
    //  [N] those others passed on, by author (NULL until one)
    struct {
        pthread_mutex_t  lock;
        uint8_t          header [GC_WIRE_WITNESS_MAX][GC_WIRE_HEADER_SIZE];
        size_t           n;
        struct gc_equiv_seen_t **by_author;
    } witness;
    //  arrivals wake the trainer; the condition waits on CLOCK_MONOTONIC
    pthread_mutex_t      arrive_lock;
    pthread_cond_t       arrived;
    gc_engine_counters_t ctr;
#ifndef NDEBUG
    //  Debug builds check who calls: the phases are the trainer's, one
    //  call at a time (gcsim hands a peer between its threads, but never
    //  runs two of its phases at once); the receive path is one thread's
    //  at a time too. busy is set for the length of a call.
    atomic_int           trainer_busy;
    atomic_int           receiver_busy;
    int                  phase;     /* the last phase called (gc_engine.c) */
#endif
};

//  Debug builds: a side of the engine is entered by one thread at a time;
//  a lock the caller must hold is held (by someone: trylock fails).
#ifndef NDEBUG
#   define GC_ENGINE_ENTER(flag) assert (atomic_exchange (&(flag), 1) == 0)
#   define GC_ENGINE_LEAVE(flag) atomic_store (&(flag), 0)
#   define GC_ENGINE_IN(flag)    assert (atomic_load (&(flag)))
#   define GC_ASSERT_LOCKED(m)   assert (pthread_mutex_trylock (m) == EBUSY)
#else
#   define GC_ENGINE_ENTER(flag) ((void) 0)
#   define GC_ENGINE_LEAVE(flag) ((void) 0)
#   define GC_ENGINE_IN(flag)    ((void) 0)
#   define GC_ASSERT_LOCKED(m)   ((void) 0)
#endif

//  gc_engine.c
gc_contact_t *gc_engine_contact (gc_engine_t *self, uint32_t peer);
/*  Wire reasons occupy slots 0..31, engine reasons the slots after. */
size_t gc_engine_slot (int reason);
/*  Count a result against contact c (NULL: an unattributable sender). */
void   gc_engine_count (gc_engine_t *self, gc_contact_t *c, int reason);
/*  Sign once (with signer: our key, or a Byzantine's untrusted one) and hand
    one message for all destinations to the transport. gc_engine_send takes
    the next seq and our key. */
int    gc_engine_send_seq (gc_engine_t *self, const uint32_t *all_dests, size_t n_all, int type,
                           uint8_t flags, uint64_t seq, uint64_t base_seq, const uint8_t *payload,
                           size_t len, gc_key_t *signer, gc_err_t *err);
int    gc_engine_send (gc_engine_t *self, const uint32_t *dests, size_t n, int type,
                       uint8_t flags, uint64_t base_seq, const uint8_t *payload, size_t len,
                       gc_err_t *err);

//  gc_replica.c: replicas and keyframes
int    gc_replica_init (gc_engine_t *self, gc_replica_t *r, uint32_t peer, gc_err_t *err);
void   gc_replica_fini (gc_engine_t *self, gc_replica_t *r);
/*  A verified DELTA / KEYFRAME from in-neighbour c (network side) applied
    to its replica: GC_WIRE_OK (applied, superseded or a gap: counted here),
    or GC_REJECT_BAD_PAYLOAD for the caller to count. */
int    gc_replica_on_delta (gc_engine_t *self, gc_contact_t *c, const gc_msg_header_t *h,
                            const uint8_t *payload, size_t len, int64_t now);
int    gc_replica_on_keyframe (gc_engine_t *self, gc_contact_t *c, const gc_msg_header_t *h,
                               const uint8_t *payload, size_t len, int64_t now);
/*  The replica of peer if synced, else NULL; caller holds its lock. */
const float *gc_replica_of (gc_engine_t *self, uint32_t peer);
/*  fresh[j], arrivals[j]: replica j holds the state of this round or later. */
size_t gc_replica_collect_fresh (gc_engine_t *self);
/*  Median-round catch-up after a mix. */
void   gc_replica_catch_up (gc_engine_t *self);
/*  Every replica stale: ask for keyframes (restore). */
void   gc_replica_invalidate_all (gc_engine_t *self);
/*  A keyframe of pub to dests; serve what was asked; ask for what we lack. */
int    gc_keyframe_send (gc_engine_t *self, const uint32_t *dests, size_t n_dests, gc_err_t *err);
int    gc_keyframe_serve (gc_engine_t *self, gc_err_t *err);
int    gc_keyframe_request (gc_engine_t *self, int64_t now, gc_err_t *err);
/*  A model to dests as a keyframe of a fresh state (Byzantine roles). */
int    gc_keyframe_send_model (gc_engine_t *self, const uint32_t *dests, size_t n,
                               const float *model, gc_err_t *err);

//  gc_equiv.c: equivocation (network side unless said otherwise)
int    gc_equiv_init (gc_engine_t *self, gc_err_t *err);
void   gc_equiv_fini (gc_engine_t *self);
/*  An accepted message of contact c: remember its header under its seq. */
void   gc_equiv_record (gc_engine_t *self, gc_contact_t *c, const uint8_t *header, uint64_t seq);
/*  A message of contact c refused as replay or stale: 1 when its header is
    authentic and differs from the one accepted under its seq (proof holds
    the EVIDENCE payload), 0 when it is the same message or no header is
    kept for that seq, GC_WIRE_BAD_SIGNATURE (or the sender's reason) when
    it differs but is not authentic: a forgery. */
int    gc_equiv_check (gc_engine_t *self, gc_contact_t *c, const uint8_t *header,
                       const gc_msg_header_t *h, uint8_t proof [GC_WIRE_EVIDENCE_SIZE]);
/*  Exclude the author proven by a verified proof (peer index): its replica
    leaves the mix; the proof is kept and passed on. false when it was
    already excluded (or is this peer itself, or not a peer). */
bool   gc_equiv_convict (gc_engine_t *self, uint32_t peer, const uint8_t proof [GC_WIRE_EVIDENCE_SIZE]);
/*  Trainer, in publish: the proofs not yet passed on, as EVIDENCE to every
    out-neighbour but the accused. */
int    gc_equiv_forward (gc_engine_t *self, gc_err_t *err);
/*  gossip/witness: an accepted DELTA or KEYFRAME's header, to pass on. */
void   gc_equiv_witness_note (gc_engine_t *self, const uint8_t *header);
/*  Trainer, in publish: the noted headers as one WITNESS to the out-neighbours. */
int    gc_equiv_witness_send (gc_engine_t *self, gc_err_t *err);
/*  A WITNESS from contact c (authenticated): each header compared with
    what this peer holds under its author and seq; two authentic different
    ones convict the author. GC_WIRE_OK, or GC_WIRE_BAD_EVIDENCE at the first
    header c passed on that is not authentic (c's fault; the rest of the
    message is not read, so a forger buys at most two signature checks per
    message before muting). */
int    gc_equiv_on_witness (gc_engine_t *self, gc_contact_t *c, const uint8_t *payload, size_t len,
                            int64_t now);
/*  gc_engine_rx.c: a rejection that is c's own fault (authenticated):
    counted, logged, and towards muting c. */
gc_deliver_t gc_engine_reject (gc_engine_t *self, gc_contact_t *c, int reason, int64_t now);
/*  gc_engine_rx.c: the peer index of a peer id, UINT32_MAX if none. */
uint32_t gc_engine_peer_of (gc_engine_t *self, const uint8_t id [8]);

//  gc_role_honest.c: the honest publish, also used by the replay role
int    gc_role_publish_delta (gc_engine_t *self, gc_err_t *err);

//  keep_unsent (gc_unsent.c): the own unsent training progress g, left out
//  of the mixing centre. All no-ops when off (learn.unsent NULL).
int    gc_unsent_new (gc_engine_t *self, gc_err_t *err);
void   gc_unsent_destroy (gc_engine_t *self);
//  x jumped (restore, adopted parameters): g = 0 from it on.
void   gc_unsent_forget (gc_engine_t *self);
//  After a delta's EC step (learn.sent holds its decoded q); everything:
//  an exact round or a lossless compressor, g = 0.
void   gc_unsent_published (gc_engine_t *self, bool everything);
//  The mixing centre x - λ g (in scratch), or x.
const float *gc_unsent_centre (gc_engine_t *self, float *scratch);
//  After the mix changed x.
void   gc_unsent_mixed (gc_engine_t *self);

#endif
