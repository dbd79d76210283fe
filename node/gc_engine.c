#include "gc_engine.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_attack.h"
#include "gc_buf.h"
#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_mem.h"
#include "gc_model.h"
#include "gc_rng.h"
#include "gc_robust.h"
#include "gc_sampler.h"
#include "gc_time.h"
#include "gc_vec.h"
#include "gc_wait.h"
#include "gc_wire.h"
#include "gc_wire_rx.h"

#define S_MUTE_WINDOW_NS (10 * 1000000000LL)
#define S_UNKNOWN ((size_t) -1)

typedef atomic_uint_fast64_t s_counter_t;

//  Replica of one in-neighbour: the last verified state of that peer. x is
//  what is read: own (written in place), or, when own is NULL, a state held
//  from the shared store.
typedef struct {
    uint32_t        peer;
    const float    *x;
    float          *own;
    uint64_t        state;          /* id (seq) of the state x holds */
    uint64_t        round;          /* its round */
    bool            synced;         /* x is a state of the peer (not aggregated otherwise) */
    bool            inexact;        /* a delta was lost since the last keyframe */
    int64_t         arrival;        /* when x last changed */
    atomic_bool     want_keyframe;  /* network side saw a gap */
    int64_t         last_request;   /* trainer side: when we last asked */
    pthread_mutex_t lock;
} s_replica_t;

//  Everyone this peer has an edge with: counters, muting, keyframe service.
typedef struct {
    uint32_t     peer;
    int          in;                /* index into replicas, -1 if not an in-neighbour */
    bool         out;               /* we send to it */
    atomic_bool  keyframe_pending;  /* it asked: serve at the next publish */
    atomic_bool  blocked;           /* partitioned away (fault injection) */
    int64_t      last_request_seen; /* network side: rate limit of its requests */
    uint32_t     failures;          /* authenticated rejections in the window */
    int64_t      window_start;
    int64_t      muted_until;
    s_counter_t  reasons [GC_ENGINE_NREASONS];
} s_contact_t;

struct gc_engine_t {
    gc_engine_config_t cfg;
    gc_engine_io_t     io;
    uint8_t            network_id [GC_WIRE_NETWORK_ID_SIZE];
    gc_wire_rx_t      *rx;
    //  learning
    gc_model_t        *model;
    gc_optim_t        *optim;
    gc_sampler_t      *sampler;
    size_t             n;
    float             *x;           /* own model */
    float             *prev;        /* x at the last publish */
    float             *pub;         /* what the neighbours hold of x */
    float             *update;      /* x - prev */
    float             *sent;        /* the decoded q of the last publish */
    float             *agg;
    bool               scratch_borrowed;    /* update, sent, agg belong to the caller */
    bool               centre_pub;  /* ef: mix around pub (CHOCO), else around x */
    bool               fresh_state; /* x jumped: announce a new state by keyframe */
    //  compression and aggregation
    gc_compressor_t   *comp;
    gc_compressor_t   *kf_comp;
    gc_ec_t           *ec;
    gc_buf_t           payload;
    gc_buf_t           kf_payload;
    gc_robust_t       *robust;
    gc_wait_t         *wait;
    gc_engine_states_t states;      /* shared replica states (gcsim); find NULL: none */
    //  protocol state (trainer side)
    uint64_t           round;
    uint64_t           seq;         /* last seq used */
    uint64_t           state;       /* id of pub */
    uint8_t            header [GC_WIRE_HEADER_SIZE];
    //  neighbours
    s_replica_t       *replicas;
    size_t             n_in;
    s_contact_t       *contacts;
    uint32_t          *contact_peers;
    size_t             n_contacts;
    uint32_t          *out_peers;
    uint32_t          *dest_scratch;    /* dests left after the partition filter */
    size_t             n_out;
    s_counter_t        unknown_reasons [GC_ENGINE_NREASONS];
    //  scratch for mixing and waiting
    const float      **inputs;
    double            *weights;
    int               *input_replica;
    bool              *fresh;
    int64_t           *arrivals;
    //  Byzantine role (gc_attack.h)
    gc_attack_t        attack;
    double             alie_z;
    float             *att_mean, *att_std, *att_prev, *att_z, *att_z2;
    float             *att_rms;            /* gc_attack_scale's scratch: one per input */
    float              att_scale;          /* the observed models' scale (gc_attack_scale) */
    bool               att_have_prev;
    gc_rng_t           att_rng;
    gc_key_t          *att_key;         /* untrusted: a key no one trusts */
    gc_dataset_t       att_data;        /* labelflip: the shard with flipped labels */
    gc_buf_t           att_saved [4];   /* replay: old messages, header + payload */
    size_t             att_n_saved;
    uint64_t           att_count;
    //  peer-id lookup, sorted by id
    struct { uint8_t id [8]; uint32_t peer; } *by_id;
    uint32_t           n_peers;
    //  arrivals wake the trainer
    pthread_mutex_t    arrive_lock;
    pthread_cond_t     arrived;
    //  statistics
    s_counter_t        msgs_sent, bytes_sent, msgs_recv, bytes_recv, deltas_applied,
                       keyframes_sent, keyframes_recv, kf_requests_sent, kf_requests_recv,
                       gaps, superseded, mix_skipped, catchups, rejected, dense_equiv, hellos,
                       partitioned, diverged;
    double             last_loss, last_wait_s, total_wait_s, wait_started;
    double             t_train, t_compress, t_sign, t_aggregate;
    double             t_verify, t_decode;      /* written by the network side only */
    size_t             mixed_inputs;
};

void
gc_engine_config_defaults (gc_engine_config_t *cfg)
{
    memset (cfg, 0, sizeof *cfg);
    cfg->network = "gcnode";
    cfg->model = "784-256-128-10";
    gc_optim_config_defaults (&cfg->optim);
    cfg->batch = 32;
    cfg->local_steps = 4;
    cfg->rounds = 300;
    cfg->seed = 1;
    cfg->compress = "topk:0.01:fp16";
    cfg->ec = "liec:100";
    cfg->aggregator = "cwtm:1";
    cfg->wait = "adaptive";
    cfg->gamma = 1.0;
    cfg->staleness = 8;
    cfg->keyframe_every = 0;
    cfg->wait_timeout_ns = 2000000000LL;
    cfg->keyframe_interval_ns = 1000000000LL;
    cfg->mute_after = 20;
    cfg->mute_for_ns = 30000000000LL;
}

//  ---------------------------------------------------------------------------
//  reasons and counters

static const char *s_engine_reasons [] = {
    [GC_REJECT_NOT_NEIGHBOUR - GC_REJECT_NOT_NEIGHBOUR] = "not_neighbour",
    [GC_REJECT_UNKNOWN_PEER - GC_REJECT_NOT_NEIGHBOUR] = "unknown_peer",
    [GC_REJECT_BAD_PAYLOAD - GC_REJECT_NOT_NEIGHBOUR] = "bad_payload",
    [GC_REJECT_NONFINITE - GC_REJECT_NOT_NEIGHBOUR] = "nonfinite",
    [GC_REJECT_RATE_LIMITED - GC_REJECT_NOT_NEIGHBOUR] = "rate_limited",
    [GC_REJECT_MUTED - GC_REJECT_NOT_NEIGHBOUR] = "muted",
};

const char *
gc_engine_reason_name (int reason)
{
    if (reason >= GC_REJECT_NOT_NEIGHBOUR && reason < GC_REJECT_LAST)
        return s_engine_reasons [reason - GC_REJECT_NOT_NEIGHBOUR];
    return gc_wire_reason_name (reason);
}

//  Wire reasons occupy slots 0..31, engine reasons the slots after.
static size_t
s_slot (int reason)
{
    return reason >= GC_REJECT_NOT_NEIGHBOUR ? 32 + (size_t) (reason - GC_REJECT_NOT_NEIGHBOUR)
                                             : (size_t) reason;
}

static void
s_add (s_counter_t *c, uint64_t v)
{
    atomic_fetch_add_explicit (c, v, memory_order_relaxed);
}

static uint64_t
s_get (s_counter_t *c)
{
    return atomic_load_explicit (c, memory_order_relaxed);
}

//  ---------------------------------------------------------------------------
//  construction

static int
s_cmp_id (const void *a, const void *b)
{
    return memcmp (a, b, 8);
}

static s_contact_t *
s_contact (gc_engine_t *self, uint32_t peer)
{
    size_t lo = 0, hi = self->n_contacts;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (self->contacts [mid].peer == peer)
            return &self->contacts [mid];
        if (self->contacts [mid].peer < peer)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int
s_build_neighbours (gc_engine_t *self, gc_err_t *err)
{
    const uint32_t *in, *out;
    uint32_t me = self->cfg.self;
    self->n_in = gc_topology_in (self->cfg.topology, me, &in);
    self->n_out = gc_topology_out (self->cfg.topology, me, &out);
    self->replicas = calloc (self->n_in ? self->n_in : 1, sizeof *self->replicas);
    self->out_peers = calloc (self->n_out ? self->n_out : 1, sizeof *self->out_peers);
    self->dest_scratch = calloc (self->n_in + self->n_out + 1, sizeof *self->dest_scratch);
    self->contacts = calloc (self->n_in + self->n_out + 1, sizeof *self->contacts);
    self->contact_peers = calloc (self->n_in + self->n_out + 1, sizeof *self->contact_peers);
    size_t k = self->n_in + 1;
    self->inputs = calloc (k, sizeof *self->inputs);
    self->weights = calloc (k, sizeof *self->weights);
    self->input_replica = calloc (k, sizeof *self->input_replica);
    self->fresh = calloc (k, sizeof *self->fresh);
    self->arrivals = calloc (k, sizeof *self->arrivals);
    if (!self->replicas || !self->out_peers || !self->dest_scratch || !self->contacts || !self->contact_peers || !self->inputs
    ||  !self->weights || !self->input_replica || !self->fresh || !self->arrivals)
        return gc_err_set (err, 1, "engine: out of memory");
    if (self->n_out)
        memcpy (self->out_peers, out, self->n_out * sizeof *out);
    for (size_t i = 0; i < self->n_in; i++) {
        s_replica_t *r = &self->replicas [i];
        r->peer = in [i];
        r->x = r->own = gc_falloc (self->n);
        if (!r->own)
            return gc_err_set (err, 1, "engine: out of memory for replicas");
        //  Every peer starts from the same initial model (shared seed), so a
        //  replica starts synced at state 0.
        gc_vec_copy (r->own, self->x, self->n);
        r->synced = true;
        pthread_mutex_init (&r->lock, NULL);
    }
    //  contacts = in ∪ out, sorted by peer index (both lists are sorted)
    size_t a = 0, b = 0;
    while (a < self->n_in || b < self->n_out) {
        uint32_t pa = a < self->n_in ? in [a] : UINT32_MAX;
        uint32_t pb = b < self->n_out ? out [b] : UINT32_MAX;
        s_contact_t *c = &self->contacts [self->n_contacts++];
        c->peer = pa < pb ? pa : pb;
        self->contact_peers [self->n_contacts - 1] = c->peer;
        c->in = pa <= pb ? (int) a : -1;
        c->out = pb <= pa;
        a += pa <= pb;
        b += pb <= pa;
    }
    return 0;
}

static const gc_dataset_t *s_flip_labels (gc_engine_t *self, const gc_dataset_t *shard,
                                          gc_err_t *err);
static int s_build_attack (gc_engine_t *self, gc_err_t *err);

static int
s_build_learning (gc_engine_t *self, gc_err_t *err)
{
    const gc_engine_config_t *cfg = &self->cfg;
    self->model = gc_model_new (cfg->model, err);
    if (!self->model)
        return gc_err_prefix (err, "train/model: ");
    if (cfg->train && gc_model_check_data (self->model, cfg->train, "the training data", err))
        return -1;
    self->n = gc_model_n_params (self->model);
    self->optim = gc_optim_new (&cfg->optim, self->n, err);
    if (!self->optim)
        return -1;
    if (cfg->train) {
        const gc_dataset_t *data = cfg->train;
        gc_attack_t attack;
        if (gc_attack_parse (cfg->attack, &attack, err))
            return gc_err_prefix (err, "role/attack: ");
        if (attack.kind == GC_ATTACK_LABELFLIP && !(data = s_flip_labels (self, cfg->train, err)))
            return gc_err_prefix (err, "labelflip: ");
        uint64_t seed = gc_seed_derive (cfg->seed, 0x5A3F00 + cfg->self);
        self->sampler = gc_sampler_new (data, cfg->batch, seed, err);
        if (!self->sampler)
            return -1;
    }
    float **bufs [] = { &self->x, &self->prev, &self->pub, &self->update, &self->sent, &self->agg };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        if (!(*bufs [i] = gc_falloc (self->n)))
            return gc_err_set (err, 1, "engine: out of memory for the model");
    gc_model_init_params (self->model, self->x, cfg->seed);
    gc_vec_copy (self->prev, self->x, self->n);
    gc_vec_copy (self->pub, self->x, self->n);
    return 0;
}

static int
s_build_gossip (gc_engine_t *self, gc_err_t *err)
{
    const gc_engine_config_t *cfg = &self->cfg;
    const gc_layout_t *layout = gc_model_layout (self->model);
    uint64_t id_seed = gc_seed_derive (cfg->seed, 0xC0DE00 + cfg->self);
    self->comp = gc_compressor_new (cfg->compress, layout, id_seed, err);
    if (!self->comp)
        return gc_err_prefix (err, "gossip/compress: ");
    self->kf_comp = gc_compressor_new (cfg->keyframe_fp16 ? "fp16" : "none", layout, id_seed, err);
    if (!self->kf_comp)
        return -1;
    self->ec = gc_ec_new (cfg->ec, self->comp, err);
    if (!self->ec)
        return gc_err_prefix (err, "gossip/ec: ");
    self->centre_pub = !strcmp (cfg->ec, "ef");
    self->robust = gc_robust_new (cfg->aggregator, err);
    if (!self->robust)
        return gc_err_prefix (err, "gossip/aggregator: ");
    size_t need = gc_robust_min_inputs (self->robust);
    self->wait = gc_wait_new (cfg->wait, self->n_in, need > 1 ? need - 1 : 1,
                              cfg->wait_timeout_ns, err);
    if (!self->wait)
        return gc_err_prefix (err, "gossip/wait: ");
    if (gc_wire_network_id (cfg->network, self->network_id, err))
        return gc_err_prefix (err, "node/network: ");
    self->rx = gc_wire_rx_new (self->network_id, cfg->trust, gc_engine_max_payload (self),
                               GC_REPLAY_DEFAULT_WINDOW, err);
    if (!self->rx)
        return -1;
    gc_wire_rx_set_self (self->rx, gc_key_peer_id (cfg->key));
    gc_buf_init (&self->payload);
    gc_buf_init (&self->kf_payload);
    return 0;
}

static int
s_build_ids (gc_engine_t *self, gc_err_t *err)
{
    self->n_peers = gc_topology_size (self->cfg.topology);
    self->by_id = calloc (self->n_peers, sizeof *self->by_id);
    if (!self->by_id)
        return gc_err_set (err, 1, "engine: out of memory");
    for (uint32_t i = 0; i < self->n_peers; i++) {
        memcpy (self->by_id [i].id, self->cfg.peer_ids [i], 8);
        self->by_id [i].peer = i;
    }
    qsort (self->by_id, self->n_peers, sizeof *self->by_id, s_cmp_id);
    for (uint32_t i = 1; i < self->n_peers; i++)
        if (!memcmp (self->by_id [i - 1].id, self->by_id [i].id, 8))
            return gc_err_set (err, 1, "peers %u and %u have the same key",
                               self->by_id [i - 1].peer, self->by_id [i].peer);
    if (memcmp (self->cfg.peer_ids [self->cfg.self], gc_key_peer_id (self->cfg.key), 8))
        return gc_err_set (err, 1, "own key %s is not the key listed for peer %u",
                           gc_key_peer_id_hex (self->cfg.key), self->cfg.self);
    return 0;
}

gc_engine_t *
gc_engine_new (const gc_engine_config_t *cfg, const gc_engine_io_t *io, gc_err_t *err)
{
    gc_engine_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, 1, "engine: out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    self->io = *io;
    pthread_mutex_init (&self->arrive_lock, NULL);
    pthread_cond_init (&self->arrived, NULL);
    if (cfg->self >= gc_topology_size (cfg->topology)
    ||  s_build_ids (self, err) || s_build_learning (self, err)
    ||  s_build_neighbours (self, err) || s_build_gossip (self, err) || s_build_attack (self, err)) {
        if (cfg->self >= gc_topology_size (cfg->topology))
            gc_err_set (err, 1, "peer index %u outside the %u peers of the topology",
                        cfg->self, gc_topology_size (cfg->topology));
        gc_engine_destroy (&self);
        return NULL;
    }
    //  Sequence numbers continue across restarts: start from the wall clock
    //  (a simulator passes its virtual clock).
    self->seq = cfg->seq_start ? cfg->seq_start : (uint64_t) gc_wall_ms () * 1000;
    return self;
}

void
gc_engine_destroy (gc_engine_t **self_p)
{
    gc_engine_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; self->replicas && i < self->n_in; i++) {
        if (!self->replicas [i].own && self->replicas [i].x)     /* a held state */
            self->states.release (self->states.ctx, self->replicas [i].x);
        gc_mem_free (self->replicas [i].own);
        pthread_mutex_destroy (&self->replicas [i].lock);
    }
    free (self->replicas);
    free (self->contacts);
    free (self->contact_peers);
    free (self->out_peers);
    free (self->dest_scratch);
    free (self->inputs);
    free (self->weights);
    free (self->input_replica);
    free (self->fresh);
    free (self->arrivals);
    free (self->by_id);
    gc_wire_rx_destroy (&self->rx);
    gc_wait_destroy (&self->wait);
    gc_robust_destroy (&self->robust);
    gc_ec_destroy (&self->ec);
    gc_compressor_destroy (&self->comp);
    gc_compressor_destroy (&self->kf_comp);
    gc_buf_free (&self->payload);
    gc_buf_free (&self->kf_payload);
    float *bufs [] = { self->x, self->prev, self->pub, self->update, self->sent, self->agg };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        if (i < 3 || !self->scratch_borrowed)
            gc_mem_free (bufs [i]);
    float *att [] = { self->att_mean, self->att_std, self->att_prev, self->att_z, self->att_z2, self->att_rms };
    for (size_t i = 0; i < sizeof att / sizeof att [0]; i++)
        gc_mem_free (att [i]);
    gc_key_destroy (&self->att_key);
    gc_dataset_free (&self->att_data);
    for (size_t i = 0; i < self->att_n_saved; i++)
        gc_buf_free (&self->att_saved [i]);
    gc_sampler_destroy (&self->sampler);
    gc_optim_destroy (&self->optim);
    gc_model_destroy (&self->model);
    pthread_mutex_destroy (&self->arrive_lock);
    pthread_cond_destroy (&self->arrived);
    free (self);
    *self_p = NULL;
}

//  ---------------------------------------------------------------------------
//  sending

static int s_send_seq (gc_engine_t *self, const uint32_t *all_dests, size_t n_all, int type,
                       uint8_t flags, uint64_t seq, uint64_t base_seq, const uint8_t *payload,
                       size_t len, gc_key_t *signer, gc_err_t *err);

static int
s_send (gc_engine_t *self, const uint32_t *dests, size_t n, int type, uint8_t flags,
        uint64_t base_seq, const uint8_t *payload, size_t len, gc_err_t *err)
{
    return s_send_seq (self, dests, n, type, flags, ++self->seq, base_seq, payload, len,
                       self->cfg.key, err);
}

static void s_replay_capture (gc_engine_t *self, const uint8_t *payload, size_t len);

//  The payload buffer goes to a transport that can take it (the simulator):
//  a model-sized copy less per round; the next round allocates a new one.
static int
s_transport_send (gc_engine_t *self, const uint32_t *dests, size_t n, const uint8_t *payload,
                  size_t len)
{
    if (self->io.send_owned && len > 0 && payload == self->payload.data) {
        if (self->io.send_owned (self->io.ctx, dests, n, self->header, GC_WIRE_HEADER_SIZE,
                                 self->payload.data, len))
            return -1;
        gc_buf_init (&self->payload);
        return 0;
    }
    return self->io.send (self->io.ctx, dests, n, self->header, GC_WIRE_HEADER_SIZE, payload, len);
}

//  Sign once (with signer: our key, or a Byzantine's untrusted one) and hand
//  one message for all destinations to the transport.
static int
s_send_seq (gc_engine_t *self, const uint32_t *all_dests, size_t n_all, int type, uint8_t flags,
            uint64_t seq, uint64_t base_seq, const uint8_t *payload, size_t len,
            gc_key_t *signer, gc_err_t *err)
{
    size_t n_dests = 0;
    uint32_t *dests = self->dest_scratch;
    for (size_t i = 0; i < n_all; i++) {
        s_contact_t *c = s_contact (self, all_dests [i]);
        if (c && atomic_load_explicit (&c->blocked, memory_order_relaxed))
            s_add (&self->partitioned, 1);
        else
            dests [n_dests++] = all_dests [i];
    }
    if (n_dests == 0)
        return 0;
    gc_msg_header_t hdr = { .type = (uint8_t) type, .flags = flags, .round = self->round,
                            .seq = seq, .base_seq = base_seq };
    double t0 = gc_now_s ();
    if ((self->cfg.skip_crypto ? gc_wire_encode_unsigned : gc_wire_encode)
            (signer, self->network_id, &hdr, payload, len, self->header, err))
        return -1;
    self->t_sign += gc_now_s () - t0;
    if (self->attack.kind == GC_ATTACK_REPLAY)
        s_replay_capture (self, payload, len);
    if (s_transport_send (self, dests, n_dests, payload, len))
        return gc_err_set (err, 1, "transport refused a %s message", gc_wire_type_name (type));
    s_add (&self->msgs_sent, n_dests);
    s_add (&self->bytes_sent, n_dests * (GC_WIRE_HEADER_SIZE + len));
    return 0;
}

//  A keyframe of pub to dests. A new state (after a jump of x) first takes a
//  state id of its own, so that later deltas build on it.
static int
s_send_keyframe (gc_engine_t *self, const uint32_t *dests, size_t n_dests, gc_err_t *err)
{
    if (gc_compressor_compress (self->kf_comp, self->pub, self->round, &self->kf_payload, err))
        return -1;
    if (s_send (self, dests, n_dests, GC_MSG_KEYFRAME, 0, self->state,
                self->kf_payload.data, self->kf_payload.len, err))
        return -1;
    s_add (&self->keyframes_sent, n_dests);
    return 0;
}

int
gc_engine_start (gc_engine_t *self, int64_t now)
{
    (void) now;
    if (self->attack.kind == GC_ATTACK_SILENT)
        return 0;
    //  HELLO payload: the announcing peer's model spec, so a mismatch is
    //  visible in the receiver's log (it is not used for decisions).
    const char *spec = gc_model_spec (self->model);
    return s_send (self, self->contact_peers, self->n_contacts, GC_MSG_HELLO, 0, 0,
                   (const uint8_t *) spec, strlen (spec), NULL);
}

double
gc_engine_train (gc_engine_t *self)
{
    if (!self->sampler)
        return 0;
    double t0 = gc_now_s (), loss = 0;
    uint32_t steps = self->cfg.local_steps ? self->cfg.local_steps : 1;
    for (uint32_t s = 0; s < steps; s++) {
        const float *x;
        const uint8_t *y;
        gc_sampler_next (self->sampler, &x, &y);
        double t = (double) self->round + (double) s / steps;
        double lr = gc_optim_lr_at (&self->cfg.optim, t, (double) self->cfg.rounds);
        loss += gc_optim_step (self->optim, self->model, self->x, x, y,
                               gc_sampler_batch (self->sampler), lr, NULL);
    }
    self->last_loss = loss / steps;
    self->t_train += gc_now_s () - t0;
    return self->last_loss;
}

static int
s_publish_delta (gc_engine_t *self, gc_err_t *err)
{
    double t0 = gc_now_s ();
    //  prev moves on before the step: a failed step ends the process
    gc_vec_advance (self->update, self->x, self->prev, self->n);
    bool exact = false;
    bool through = gc_ec_passes_through (self->ec);
    if (gc_ec_step (self->ec, self->update, self->round, &self->payload, through ? NULL : self->sent,
                    &exact, err))
        return -1;
    if (through)                        /* sent would be 0 + update: pub + sent without it */
        for (size_t i = 0; i < self->n; i++)
            self->pub [i] += 0.0f + self->update [i];
    else
        gc_vec_axpy (self->pub, 1.0f, self->sent, self->n);
    self->t_compress += gc_now_s () - t0;
    uint64_t base = self->state;
    if (s_send (self, self->out_peers, self->n_out, GC_MSG_DELTA, exact ? GC_WIRE_FLAG_EXACT : 0,
                base, self->payload.data, self->payload.len, err))
        return -1;
    self->state = self->seq;
    s_add (&self->dense_equiv, self->n_out * (GC_WIRE_HEADER_SIZE + 4 * self->n));
    return 0;
}

//  x jumped (resume, or a reset after a non-finite model): pub, prev and the
//  EC residual restart from x, announced as a new state by keyframe.
static int
s_publish_fresh_state (gc_engine_t *self, gc_err_t *err)
{
    gc_vec_copy (self->pub, self->x, self->n);
    gc_vec_copy (self->prev, self->x, self->n);
    float *residual = gc_ec_residual (self->ec);
    if (residual)
        gc_vec_zero (residual, self->n);
    self->state = ++self->seq;          /* a state id of its own */
    self->fresh_state = false;
    return s_send_keyframe (self, self->out_peers, self->n_out, err);
}

static int
s_serve_keyframes (gc_engine_t *self, gc_err_t *err)
{
    for (size_t i = 0; i < self->n_contacts; i++) {
        s_contact_t *c = &self->contacts [i];
        if (c->out && atomic_exchange (&c->keyframe_pending, false))
            if (s_send_keyframe (self, &c->peer, 1, err))
                return -1;
    }
    return 0;
}

static int
s_request_keyframes (gc_engine_t *self, int64_t now, gc_err_t *err)
{
    for (size_t i = 0; i < self->n_in; i++) {
        s_replica_t *r = &self->replicas [i];
        if (!atomic_load (&r->want_keyframe)
        ||  (r->last_request && now - r->last_request < self->cfg.keyframe_interval_ns))
            continue;
        r->last_request = now;
        pthread_mutex_lock (&r->lock);
        uint64_t have = r->synced ? r->state : 0;
        pthread_mutex_unlock (&r->lock);
        //  payload: the target's peer id; base_seq: the state we hold of it
        if (s_send (self, &r->peer, 1, GC_MSG_KEYFRAME_REQUEST, 0, have,
                    self->cfg.peer_ids [r->peer], 8, err))
            return -1;
        s_add (&self->kf_requests_sent, 1);
    }
    return 0;
}

//  ---------------------------------------------------------------------------
//  Byzantine roles (gc_attack.h): what the peer sends instead of its update

static void
s_replay_capture (gc_engine_t *self, const uint8_t *payload, size_t len)
{
    //  keep the first few messages, to be sent again later
    if (self->att_n_saved >= 4)
        return;
    gc_buf_t *b = &self->att_saved [self->att_n_saved];
    gc_buf_init (b);
    if (gc_buf_append (b, self->header, GC_WIRE_HEADER_SIZE, NULL) || gc_buf_append (b, payload, len, NULL))
        gc_buf_free (b);
    else
        self->att_n_saved++;
}

//  A model to dests as a keyframe of a fresh state: the victims' replicas of
//  this peer become exactly `model`.
static int
s_send_model (gc_engine_t *self, const uint32_t *dests, size_t n, const float *model, gc_err_t *err)
{
    if (gc_compressor_compress (self->kf_comp, model, self->round, &self->kf_payload, err))
        return -1;
    uint64_t state = ++self->seq;
    return s_send (self, dests, n, GC_MSG_KEYFRAME, 0, state, self->kf_payload.data,
                   self->kf_payload.len, err);
}

//  Noise and equivocate draw around the models' scale; IPM steps from the
//  previous mean. Other attacks skip the passes these cost.
static bool
s_attack_needs_scale (const gc_engine_t *self)
{
    return self->attack.kind == GC_ATTACK_NOISE || self->attack.kind == GC_ATTACK_EQUIVOCATE;
}

static bool
s_attack_needs_prev (const gc_engine_t *self)
{
    return self->attack.kind == GC_ATTACK_IPM;
}

//  mean and std of what the attacker observes: its own model and its synced
//  replicas.
static void
s_observe (gc_engine_t *self)
{
    const gc_engine_observer_t *oracle = self->cfg.observer;
    if (oracle) {
        oracle->moments (oracle->ctx, self->cfg.self, self->att_mean, self->att_std);
        const float *honest_mean = self->att_mean;     /* of honest models only */
        if (s_attack_needs_scale (self))
            self->att_scale = gc_attack_scale (&honest_mean, 1, self->n, self->att_rms);
        if (!self->att_have_prev) {
            gc_vec_copy (self->att_prev, self->att_mean, self->n);
            self->att_have_prev = true;
        }
        return;
    }
    size_t k = 0;
    if (gc_vec_all_finite (self->x, self->n))
        self->inputs [k++] = self->x;
    for (size_t i = 0; i < self->n_in; i++) {
        pthread_mutex_lock (&self->replicas [i].lock);
        if (self->replicas [i].synced && gc_vec_all_finite (self->replicas [i].x, self->n))
            self->inputs [k++] = self->replicas [i].x;
    }
    if (k == 0)
        self->inputs [k++] = self->pub;
    gc_attack_moments (self->inputs, k, self->n, self->att_mean, self->att_std);
    if (s_attack_needs_scale (self))
        self->att_scale = gc_attack_scale ((const float *const *) self->inputs, k, self->n, self->att_rms);
    for (size_t i = 0; i < self->n_in; i++)
        pthread_mutex_unlock (&self->replicas [i].lock);
    if (!self->att_have_prev) {
        gc_vec_copy (self->att_prev, self->att_mean, self->n);
        self->att_have_prev = true;
    }
}

static const float *
s_replica_of (gc_engine_t *self, uint32_t peer)
{
    s_contact_t *c = s_contact (self, peer);
    if (!c || c->in < 0 || !self->replicas [c->in].synced)
        return NULL;
    return self->replicas [c->in].x;
}

static int
s_attack_model (gc_engine_t *self, gc_err_t *err)
{
    s_observe (self);
    const gc_attack_t *a = &self->attack;
    int rc = 0;
    if (a->kind == GC_ATTACK_DISSENSUS)
        for (size_t i = 0; rc == 0 && i < self->n_out; i++) {
            //  replicas are written by the network thread: read under the lock
            s_contact_t *c = s_contact (self, self->out_peers [i]);
            if (c && c->in >= 0)
                pthread_mutex_lock (&self->replicas [c->in].lock);
            const float *victim = self->cfg.observer
                                ? self->cfg.observer->model (self->cfg.observer->ctx, self->out_peers [i]) : NULL;
            if (!victim)
                victim = s_replica_of (self, self->out_peers [i]);
            gc_attack_dissensus (a->param, victim ? victim : self->att_mean, self->att_mean,
                                 self->n, self->att_z);
            if (c && c->in >= 0)
                pthread_mutex_unlock (&self->replicas [c->in].lock);
            rc = s_send_model (self, &self->out_peers [i], 1, self->att_z, err);
        }
    else
    if (a->kind == GC_ATTACK_EQUIVOCATE) {
        //  two different models under one seq: half the neighbours get each
        gc_attack_target (a, 0, self->att_mean, self->att_std, self->att_prev, self->att_scale,
                          self->n, &self->att_rng, self->att_z);
        for (size_t i = 0; i < self->n; i++)
            self->att_z2 [i] = 2.0f * self->att_mean [i] - self->att_z [i];
        uint64_t state = ++self->seq, seq = ++self->seq;
        size_t half = (self->n_out + 1) / 2;
        const float *models [2] = { self->att_z, self->att_z2 };
        for (int part = 0; rc == 0 && part < 2; part++) {
            rc = gc_compressor_compress (self->kf_comp, models [part], self->round, &self->kf_payload, err);
            if (rc == 0)
                rc = s_send_seq (self, self->out_peers + (part ? half : 0),
                                 part ? self->n_out - half : half, GC_MSG_KEYFRAME, 0, seq, state,
                                 self->kf_payload.data, self->kf_payload.len, self->cfg.key, err);
        }
    }
    else {
        const float *model = self->att_z;
        if (a->kind == GC_ATTACK_MIMIC) {
            pthread_mutex_lock (&self->replicas [0].lock);
            model = self->n_in && self->replicas [0].synced ? self->replicas [0].x : self->att_mean;
            if (self->n_in && self->cfg.observer) {
                const float *seen = self->cfg.observer->model (self->cfg.observer->ctx, self->replicas [0].peer);
                model = seen ? seen : model;
            }
            gc_vec_copy (self->att_z, model, self->n);
            pthread_mutex_unlock (&self->replicas [0].lock);
            model = self->att_z;
        }
        else
            gc_attack_target (a, self->alie_z, self->att_mean, self->att_std, self->att_prev,
                              self->att_scale, self->n, &self->att_rng, self->att_z);
        rc = s_send_model (self, self->out_peers, self->n_out, model, err);
    }
    if (s_attack_needs_prev (self))
        gc_vec_copy (self->att_prev, self->att_mean, self->n);
    return rc;
}

//  Frames an honest decoder must refuse, a different kind each round.
static int
s_attack_malformed (gc_engine_t *self)
{
    size_t big = gc_engine_max_payload (self) + 1;
    uint8_t *junk = malloc (big);
    if (!junk)
        return -1;
    for (size_t i = 0; i < big; i++)
        junk [i] = (uint8_t) gc_rng_next (&self->att_rng);
    static const size_t lengths [4][2] = {
        { GC_WIRE_HEADER_SIZE, 4096 },      /* random bytes */
        { 50, 10 },                         /* truncated header */
        { GC_WIRE_HEADER_SIZE + 7, 100 },   /* wrong header length */
        { GC_WIRE_HEADER_SIZE, 0 },         /* oversized payload (below) */
    };
    size_t which = self->att_count++ % 4;
    size_t plen = which == 3 ? big : lengths [which][1];
    int rc = self->io.send (self->io.ctx, self->out_peers, self->n_out, junk, lengths [which][0],
                            junk, plen);
    free (junk);
    return rc;
}

static int
s_attack_flood (gc_engine_t *self, gc_err_t *err)
{
    uint8_t garbage [64];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage [i] = (uint8_t) gc_rng_next (&self->att_rng);
    for (int i = 0; i < 50; i++) {
        for (size_t j = 0; j < self->n_out; j++)
            if (s_send (self, &self->out_peers [j], 1, GC_MSG_KEYFRAME_REQUEST, 0, 0,
                        self->cfg.peer_ids [self->out_peers [j]], 8, err))
                return -1;
        if (s_send (self, self->out_peers, self->n_out, GC_MSG_DELTA, 0, self->state,
                    garbage, sizeof garbage, err))
            return -1;
    }
    return 0;
}

//  NaN in a payload (the decoder refuses it), then huge finite values whose
//  sum overflows in the replica (the aggregator refuses that).
static int
s_attack_nan (gc_engine_t *self, gc_err_t *err)
{
    if (self->att_count++ % 2 == 0) {
        gc_vec_zero (self->att_z, self->n);
        if (gc_compressor_compress (self->kf_comp, self->att_z, self->round, &self->kf_payload, err))
            return -1;
        static const uint8_t nan_bytes [4] = { 0x00, 0x00, 0xC0, 0x7F };   /* quiet NaN, LE */
        memcpy (self->kf_payload.data + self->kf_payload.len - 4, nan_bytes, 4);
        return s_send (self, self->out_peers, self->n_out, GC_MSG_KEYFRAME, 0, ++self->seq,
                       self->kf_payload.data, self->kf_payload.len, err);
    }
    for (size_t i = 0; i < self->n; i++)
        self->att_z [i] = 3.0e38f;
    if (s_send_model (self, self->out_peers, self->n_out, self->att_z, err))
        return -1;
    //  a delta of the same size on top: the replica overflows to Inf
    uint64_t state = self->seq - 1;
    if (gc_compressor_compress (self->kf_comp, self->att_z, self->round, &self->kf_payload, err))
        return -1;
    return s_send (self, self->out_peers, self->n_out, GC_MSG_DELTA, 0, state,
                   self->kf_payload.data, self->kf_payload.len, err);
}

static int
s_attack_untrusted (gc_engine_t *self, gc_err_t *err)
{
    gc_vec_sub (self->update, self->x, self->prev, self->n);
    gc_vec_copy (self->prev, self->x, self->n);
    if (gc_compressor_compress (self->comp, self->update, self->round, &self->payload, err))
        return -1;
    uint64_t seq = ++self->seq;
    return s_send_seq (self, self->out_peers, self->n_out, GC_MSG_DELTA, 0, seq, seq - 1,
                       self->payload.data, self->payload.len, self->att_key, err);
}

static int
s_publish_byzantine (gc_engine_t *self, gc_err_t *err)
{
    switch (self->attack.kind) {
        case GC_ATTACK_SILENT:
            return 0;
        case GC_ATTACK_UNTRUSTED:
            return s_attack_untrusted (self, err);
        case GC_ATTACK_MALFORMED:
            return s_attack_malformed (self) ? gc_err_set (err, 1, "transport refused garbage") : 0;
        case GC_ATTACK_FLOOD:
            return s_attack_flood (self, err);
        case GC_ATTACK_NAN:
            return s_attack_nan (self, err);
        case GC_ATTACK_REPLAY:
            //  honest updates, and one of the first messages again
            if (s_publish_delta (self, err))
                return -1;
            if (self->att_n_saved && self->round > 4) {
                gc_buf_t *b = &self->att_saved [self->att_count++ % self->att_n_saved];
                return self->io.send (self->io.ctx, self->out_peers, self->n_out, b->data,
                                      GC_WIRE_HEADER_SIZE, b->data + GC_WIRE_HEADER_SIZE,
                                      b->len - GC_WIRE_HEADER_SIZE);
            }
            return 0;
        default:
            return s_attack_model (self, err);
    }
}

static int
s_build_attack (gc_engine_t *self, gc_err_t *err)
{
    if (gc_attack_parse (self->cfg.attack, &self->attack, err))
        return gc_err_prefix (err, "role/attack: ");
    gc_rng_init (&self->att_rng, self->cfg.seed, 0xBAD0 + self->cfg.self);
    //  ALIE's default z: a victim aggregates about as many inputs as we have
    //  neighbours plus itself, one of them (us) Byzantine.
    self->alie_z = gc_attack_alie_z (self->n_in + 1, 1);
    if (gc_attack_is_model (self->attack.kind) || self->attack.kind == GC_ATTACK_NAN) {
        float **bufs [] = { &self->att_mean, &self->att_std, &self->att_prev, &self->att_z, &self->att_z2 };
        for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
            if (!(*bufs [i] = gc_falloc (self->n)))
                return gc_err_set (err, 1, "engine: out of memory");
        if (!(self->att_rms = gc_falloc (self->n_in + 1)))
            return gc_err_set (err, 1, "engine: out of memory");
    }
    if (self->attack.kind == GC_ATTACK_UNTRUSTED) {
        uint8_t seed [32];
        for (int i = 0; i < 32; i++)
            seed [i] = (uint8_t) gc_rng_next (&self->att_rng);
        self->att_key = gc_key_from_seed (seed, err);
        if (!self->att_key)
            return -1;
    }
    return 0;
}

//  labelflip: train on a copy of the shard with labels c -> C-1-c.
static const gc_dataset_t *
s_flip_labels (gc_engine_t *self, const gc_dataset_t *shard, gc_err_t *err)
{
    uint32_t *all = malloc ((shard->n ? shard->n : 1) * sizeof *all);
    if (!all)
        return NULL;
    for (size_t i = 0; i < shard->n; i++)
        all [i] = (uint32_t) i;
    int rc = gc_dataset_subset (shard, all, shard->n, &self->att_data, err);
    free (all);
    if (rc)
        return NULL;
    for (size_t i = 0; i < self->att_data.n; i++)
        self->att_data.y [i] = (uint8_t) (self->att_data.n_classes - 1 - self->att_data.y [i]);
    return &self->att_data;
}

int
gc_engine_publish (gc_engine_t *self, int64_t now, gc_err_t *err)
{
    if (self->attack.kind != GC_ATTACK_NONE && self->attack.kind != GC_ATTACK_LABELFLIP) {
        if (s_publish_byzantine (self, err))
            return -1;
        return s_serve_keyframes (self, err) || s_request_keyframes (self, now, err) ? -1 : 0;
    }
    if (!gc_vec_all_finite (self->x, self->n)) {
        //  Training diverged: publish nothing this round; the mix replaces x
        //  by the aggregate of the neighbours (or, with none usable, by the
        //  last public state) and the next publish announces it.
        s_add (&self->diverged, 1);
        self->fresh_state = true;
    }
    else
    if (self->fresh_state) {
        if (s_publish_fresh_state (self, err))
            return -1;
    }
    else
    if (s_publish_delta (self, err))
        return -1;
    if (self->cfg.keyframe_every && self->round && self->round % self->cfg.keyframe_every == 0)
        if (s_send_keyframe (self, self->out_peers, self->n_out, err))
            return -1;
    if (s_serve_keyframes (self, err) || s_request_keyframes (self, now, err))
        return -1;
    return 0;
}

//  ---------------------------------------------------------------------------
//  waiting

//  fresh[j]: replica j holds the neighbour's state of this round or later.
static size_t
s_collect_fresh (gc_engine_t *self)
{
    size_t count = 0;
    for (size_t i = 0; i < self->n_in; i++) {
        s_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        self->fresh [i] = r->synced && r->round >= self->round;
        self->arrivals [i] = self->fresh [i] ? r->arrival : -1;
        pthread_mutex_unlock (&r->lock);
        count += self->fresh [i];
    }
    return count;
}

void
gc_engine_wait_begin (gc_engine_t *self, int64_t now)
{
    gc_wait_begin (self->wait, now);
    self->wait_started = (double) now * 1e-9;
}

bool
gc_engine_ready (gc_engine_t *self, int64_t now)
{
    s_collect_fresh (self);
    return gc_wait_ready (self->wait, self->fresh, now);
}

int64_t
gc_engine_wait_deadline (const gc_engine_t *self)
{
    return gc_wait_deadline (self->wait);
}

void
gc_engine_wait (gc_engine_t *self, volatile int *stop)
{
    pthread_mutex_lock (&self->arrive_lock);
    while (!(stop && *stop) && !gc_engine_ready (self, gc_now_ns ())) {
        //  wake at the deadline, on an arrival, and every 100 ms for *stop
        int64_t wake = gc_now_ns () + 100000000LL;
        if (wake > gc_wait_deadline (self->wait))
            wake = gc_wait_deadline (self->wait);
        //  condition variables use CLOCK_REALTIME by default: convert
        int64_t delta = wake - gc_now_ns ();
        struct timespec ts;
        clock_gettime (CLOCK_REALTIME, &ts);
        int64_t abs_ns = (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec + (delta > 0 ? delta : 0);
        ts.tv_sec = abs_ns / 1000000000LL;
        ts.tv_nsec = abs_ns % 1000000000LL;
        pthread_cond_timedwait (&self->arrived, &self->arrive_lock, &ts);
    }
    pthread_mutex_unlock (&self->arrive_lock);
}

static void
s_signal_arrival (gc_engine_t *self)
{
    pthread_mutex_lock (&self->arrive_lock);
    pthread_cond_broadcast (&self->arrived);
    pthread_mutex_unlock (&self->arrive_lock);
}

//  ---------------------------------------------------------------------------
//  mixing

static void
s_count (gc_engine_t *self, s_contact_t *c, int reason)
{
    s_add (c ? &c->reasons [s_slot (reason)] : &self->unknown_reasons [s_slot (reason)], 1);
    if (reason != GC_WIRE_OK)
        s_add (&self->rejected, 1);
}

//  Lock the replicas, gather the centre and the usable replicas as inputs.
static size_t
s_gather (gc_engine_t *self, const float *centre)
{
    uint32_t me = self->cfg.self;
    size_t k = 0;
    self->inputs [k] = centre;
    self->weights [k] = gc_topology_weight (self->cfg.topology, me, me);
    self->input_replica [k++] = -1;
    for (size_t i = 0; i < self->n_in; i++) {
        s_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        if (r->synced && r->round + self->cfg.staleness >= self->round) {
            self->inputs [k] = r->x;
            self->weights [k] = gc_topology_weight (self->cfg.topology, me, r->peer);
            self->input_replica [k++] = (int) i;
        }
    }
    double total = 0;
    for (size_t j = 0; j < k; j++)
        total += self->weights [j];
    for (size_t j = 0; j < k; j++)
        self->weights [j] /= total;
    return k;
}

static void
s_release (gc_engine_t *self)
{
    for (size_t i = 0; i < self->n_in; i++)
        pthread_mutex_unlock (&self->replicas [i].lock);
}

//  A replica that went non-finite is left out, counted against its peer and
//  resynchronised by keyframe. Caller holds the replica locks.
static void
s_drop_input (gc_engine_t *self, size_t *k, size_t bad)
{
    int ri = self->input_replica [bad];
    if (ri >= 0) {
        s_replica_t *r = &self->replicas [ri];
        r->synced = false;
        atomic_store (&r->want_keyframe, true);
        s_count (self, s_contact (self, r->peer), GC_REJECT_NONFINITE);
    }
    else
        self->fresh_state = true;       /* own model broke: restart from the mix */
    for (size_t j = bad + 1; j < *k; j++) {
        self->inputs [j - 1] = self->inputs [j];
        self->weights [j - 1] = self->weights [j];
        self->input_replica [j - 1] = self->input_replica [j];
    }
    (*k)--;
}

//  Median round of the synced in-neighbours: a peer far behind it (frozen,
//  restarted, slow) jumps forward. The median keeps a Byzantine minority
//  from dragging the round anywhere.
static void
s_catch_up (gc_engine_t *self)
{
    uint64_t rounds [self->n_in ? self->n_in : 1];
    size_t m = 0;
    for (size_t i = 0; i < self->n_in; i++) {
        s_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        if (r->synced)
            rounds [m++] = r->round;
        pthread_mutex_unlock (&r->lock);
    }
    if (m == 0)
        return;
    for (size_t i = 1; i < m; i++)          /* insertion sort: m is a degree */
        for (size_t j = i; j > 0 && rounds [j - 1] > rounds [j]; j--) {
            uint64_t t = rounds [j];
            rounds [j] = rounds [j - 1];
            rounds [j - 1] = t;
        }
    uint64_t median = rounds [(m - 1) / 2];
    if (median > self->round + self->cfg.staleness) {
        self->round = median < self->cfg.rounds ? median : self->cfg.rounds;
        s_add (&self->catchups, 1);
    }
}

int
gc_engine_mix (gc_engine_t *self, int64_t now, gc_err_t *err)
{
    s_collect_fresh (self);
    gc_wait_end (self->wait, self->arrivals, now);
    self->last_wait_s = (double) now * 1e-9 - self->wait_started;
    self->total_wait_s += self->last_wait_s;
    double t0 = gc_now_s ();
    const float *centre = self->centre_pub ? self->pub : self->x;
    size_t k = s_gather (self, centre);
    size_t need = gc_robust_min_inputs (self->robust);
    int rc = -1;
    while (k >= need && k > 0) {
        gc_err_t aerr = { 0 };
        rc = gc_robust_aggregate (self->robust, self->inputs, self->weights, k, self->n, 0,
                                  self->agg, &aerr);
        if (rc == 0 || aerr.code != GC_ROBUST_ENONFINITE)
            break;
        s_drop_input (self, &k, (size_t) gc_robust_bad_input (self->robust));
        rc = -1;
    }
    s_release (self);
    self->mixed_inputs = rc == 0 ? k : 0;
    if (rc != 0 && !gc_vec_all_finite (self->x, self->n)) {
        //  diverged and nothing to mix with: back to the last public state
        gc_vec_copy (self->x, self->pub, self->n);
        self->fresh_state = true;
    }
    if (rc == 0) {
        if (self->fresh_state)          /* own model was non-finite */
            gc_vec_copy (self->x, self->agg, self->n);
        else {
            float g = (float) self->cfg.gamma;
            for (size_t i = 0; i < self->n; i++)
                self->x [i] += g * (self->agg [i] - centre [i]);
        }
    }
    else
        s_add (&self->mix_skipped, 1);
    self->t_aggregate += gc_now_s () - t0;
    self->round++;
    s_catch_up (self);
    (void) err;
    return 0;
}

bool
gc_engine_done (const gc_engine_t *self)
{
    return self->round >= self->cfg.rounds;
}

//  ---------------------------------------------------------------------------
//  receiving

static uint32_t
s_peer_of (gc_engine_t *self, const uint8_t id [8])
{
    size_t lo = 0, hi = self->n_peers;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = memcmp (self->by_id [mid].id, id, 8);
        if (c == 0)
            return self->by_id [mid].peer;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return UINT32_MAX;
}

//  An authenticated sender keeps failing: mute it for a while.
static gc_deliver_t
s_reject_authenticated (gc_engine_t *self, s_contact_t *c, int reason, int64_t now)
{
    s_count (self, c, reason);
    if (c) {
        if (now - c->window_start > S_MUTE_WINDOW_NS) {
            c->window_start = now;
            c->failures = 0;
        }
        if (++c->failures >= self->cfg.mute_after) {
            c->muted_until = now + self->cfg.mute_for_ns;
            c->failures = 0;
        }
    }
    return GC_DELIVER_REJECTED;
}

//  A replica takes a state of the store: the one it held (or its own
//  buffer) goes.
static void
s_replica_take (gc_engine_t *self, s_replica_t *r, const float *state)
{
    if (!r->own)
        self->states.release (self->states.ctx, r->x);
    gc_mem_free (r->own);
    r->own = NULL;
    r->x = state;
}

//  The replica's next state: payload applied to what it holds (keyframe:
//  to zeros). In place on its own buffer, or, with a store, a store state
//  built once per (base, message) for every engine that receives it. On an
//  error the replica is as it was, and err says why.
static int
s_replica_apply (gc_engine_t *self, s_replica_t *r, const uint8_t *payload, size_t len,
                 bool keyframe, gc_err_t *err)
{
    const gc_layout_t *layout = gc_model_layout (self->model);
    if (!self->states.find || (!keyframe && r->own)) {
        if (keyframe)
            gc_vec_zero (r->own, self->n);
        return gc_payload_decompress_add (payload, len, layout, r->own, err);
    }
    const gc_engine_states_t *st = &self->states;
    const float *base = keyframe ? NULL : r->x;
    const float *next = st->find (st->ctx, base, payload);
    if (!next) {
        float *built = st->alloc (st->ctx);
        if (!built)
            return gc_err_set (err, GC_COMPRESS_ERR_NOMEM, "out of memory for a replica state");
        if (gc_payload_decode_onto (payload, len, layout, base, built, err)) {
            st->release (st->ctx, built);
            return -1;
        }
        next = st->offer (st->ctx, base, payload, built);
    }
    s_replica_take (self, r, next);
    return 0;
}

static gc_deliver_t
s_on_delta (gc_engine_t *self, s_contact_t *c, const gc_msg_header_t *h,
            const uint8_t *payload, size_t len, int64_t now)
{
    if (!c || c->in < 0)
        return s_reject_authenticated (self, c, GC_REJECT_NOT_NEIGHBOUR, now);
    s_replica_t *r = &self->replicas [c->in];
    pthread_mutex_lock (&r->lock);
    if (r->synced && h->seq <= r->state) {
        pthread_mutex_unlock (&r->lock);
        s_add (&self->superseded, 1);       /* already inside a keyframe we hold */
        return GC_DELIVER_OK;
    }
    if (!r->synced) {
        pthread_mutex_unlock (&r->lock);
        atomic_store (&r->want_keyframe, true);
        s_add (&self->gaps, 1);
        return GC_DELIVER_OK;
    }
    //  A gap (a delta in between was lost): apply this one anyway. The replica
    //  then lacks the lost deltas but stays fresh and close, instead of going
    //  stale until the keyframe it asks for arrives and makes it exact again.
    //  Under message loss this is what keeps neighbours in the mix.
    bool gap = h->base_seq != r->state;
    gc_err_t perr = { 0 };
    double t0 = gc_now_s ();
    int bad = s_replica_apply (self, r, payload, len, false, &perr);
    self->t_decode += gc_now_s () - t0;
    if (bad) {
        pthread_mutex_unlock (&r->lock);
        return s_reject_authenticated (self, c, GC_REJECT_BAD_PAYLOAD, now);
    }
    if (gap) {
        atomic_store (&r->want_keyframe, true);
        s_add (&self->gaps, 1);
        r->inexact = true;
    }
    r->state = h->seq;
    r->round = h->round;
    r->arrival = now;
    pthread_mutex_unlock (&r->lock);
    s_add (&self->deltas_applied, 1);
    s_signal_arrival (self);
    return GC_DELIVER_OK;
}

static gc_deliver_t
s_on_keyframe (gc_engine_t *self, s_contact_t *c, const gc_msg_header_t *h,
               const uint8_t *payload, size_t len, int64_t now)
{
    if (!c || c->in < 0)
        return s_reject_authenticated (self, c, GC_REJECT_NOT_NEIGHBOUR, now);
    s_replica_t *r = &self->replicas [c->in];
    pthread_mutex_lock (&r->lock);
    //  an inexact replica (deltas were lost) takes a keyframe of its current
    //  state too: that is what it asked for
    if (r->synced && (h->base_seq < r->state || (h->base_seq == r->state && !r->inexact))) {
        pthread_mutex_unlock (&r->lock);
        s_add (&self->superseded, 1);
        return GC_DELIVER_OK;
    }
    gc_err_t perr = { 0 };
    if (s_replica_apply (self, r, payload, len, true, &perr)) {
        r->synced = false;
        pthread_mutex_unlock (&r->lock);
        atomic_store (&r->want_keyframe, true);
        return s_reject_authenticated (self, c, GC_REJECT_BAD_PAYLOAD, now);
    }
    r->state = h->base_seq;
    r->round = h->round;
    r->synced = true;
    r->inexact = false;
    r->arrival = now;
    atomic_store (&r->want_keyframe, false);
    pthread_mutex_unlock (&r->lock);
    s_add (&self->keyframes_recv, 1);
    s_signal_arrival (self);
    return GC_DELIVER_OK;
}

//  A keyframe request: serve one at the next publish, at most one per
//  interval per peer.
static gc_deliver_t
s_on_keyframe_request (gc_engine_t *self, s_contact_t *c, int64_t now)
{
    if (!c || !c->out)
        return s_reject_authenticated (self, c, GC_REJECT_NOT_NEIGHBOUR, now);
    s_add (&self->kf_requests_recv, 1);
    if (c->last_request_seen && now - c->last_request_seen < self->cfg.keyframe_interval_ns)
        return s_reject_authenticated (self, c, GC_REJECT_RATE_LIMITED, now);
    c->last_request_seen = now;
    atomic_store (&c->keyframe_pending, true);
    return GC_DELIVER_OK;
}

//  Cheap checks on the claimed sender before any cryptography: a muted
//  sender, or one on the other side of an emulated partition.
static bool
s_prefiltered (gc_engine_t *self, const uint8_t *header, size_t header_len, size_t payload_len,
               int64_t now)
{
    gc_msg_header_t h;
    if (gc_wire_parse (header, header_len, payload_len, gc_engine_max_payload (self), &h, NULL))
        return false;
    s_contact_t *c = s_contact (self, s_peer_of (self, h.sender));
    if (c && atomic_load_explicit (&c->blocked, memory_order_relaxed)) {
        s_add (&self->partitioned, 1);
        return true;
    }
    if (c && c->muted_until > now) {
        s_count (self, c, GC_REJECT_MUTED);
        return true;
    }
    return false;
}

//  skip_crypto (simulators only, gc_engine.h): gc_wire_rx_decode's checks in
//  its order, without the signature and the payload digest. Other message
//  types take the full path.
static int
s_decode_trusted (gc_engine_t *self, const uint8_t *header, size_t header_len,
                  const uint8_t *payload, size_t payload_len, gc_msg_header_t *h, gc_err_t *err)
{
    int r = gc_wire_parse (header, header_len, payload_len, gc_engine_max_payload (self), h, err);
    if (r != GC_WIRE_OK)
        return r;
    if (h->type != GC_MSG_DELTA && h->type != GC_MSG_KEYFRAME && h->type != GC_MSG_KEYFRAME_REQUEST
    &&  h->type != GC_MSG_HELLO)
        return gc_wire_rx_decode (self->rx, header, header_len, payload, payload_len, h, NULL, err);
    if (memcmp (h->network_id, self->network_id, GC_WIRE_NETWORK_ID_SIZE))
        return GC_WIRE_WRONG_NETWORK;
    if (!gc_trust_lookup (self->cfg.trust, h->sender))
        return GC_WIRE_UNKNOWN_SENDER;
    gc_replay_t *replay = gc_wire_rx_replay (self->rx);
    r = gc_replay_check (replay, h->sender, h->seq);
    if (r != GC_WIRE_OK)
        return r;
    if (payload_len != h->payload_len)
        return payload_len < h->payload_len ? GC_WIRE_TRUNCATED : GC_WIRE_BAD_LENGTH;
    r = gc_replay_accept (replay, h->sender, h->seq, err);
    if (r == GC_WIRE_OK && h->type == GC_MSG_KEYFRAME_REQUEST
    &&  memcmp (payload, gc_key_peer_id (self->cfg.key), GC_PEER_ID_SIZE))
        r = GC_WIRE_WRONG_TARGET;
    return r;
}

gc_deliver_t
gc_engine_on_message (gc_engine_t *self, const uint8_t *header, size_t header_len,
                      const uint8_t *payload, size_t payload_len, int64_t now)
{
    s_add (&self->msgs_recv, 1);
    s_add (&self->bytes_recv, header_len + payload_len);
    if (s_prefiltered (self, header, header_len, payload_len, now))
        return GC_DELIVER_REJECTED;
    gc_msg_header_t h;
    gc_err_t err = { 0 };
    double t0 = gc_now_s ();
    int reason = self->cfg.skip_crypto
               ? s_decode_trusted (self, header, header_len, payload, payload_len, &h, &err)
               : gc_wire_rx_decode (self->rx, header, header_len, payload, payload_len, &h, NULL, &err);
    self->t_verify += gc_now_s () - t0;
    uint32_t peer = reason == GC_WIRE_OK || reason > GC_WIRE_BAD_FIELD ? s_peer_of (self, h.sender)
                                                                       : UINT32_MAX;
    s_contact_t *c = peer == UINT32_MAX ? NULL : s_contact (self, peer);
    if (reason != GC_WIRE_OK) {
        s_count (self, c, reason);
        return GC_DELIVER_UNAUTHENTICATED;
    }
    if (peer == UINT32_MAX)
        return s_reject_authenticated (self, NULL, GC_REJECT_UNKNOWN_PEER, now);
    switch (h.type) {
        case GC_MSG_DELTA:
            return s_on_delta (self, c, &h, payload, payload_len, now);
        case GC_MSG_KEYFRAME:
            return s_on_keyframe (self, c, &h, payload, payload_len, now);
        case GC_MSG_KEYFRAME_REQUEST:
            return s_on_keyframe_request (self, c, now);
        case GC_MSG_HELLO:
            //  A (re)joining neighbour holds an old state of ours (or the
            //  initial one): our next delta shows it a gap and it asks for a
            //  keyframe, so nothing is sent blindly here.
            s_add (&self->hellos, 1);
            return GC_DELIVER_OK;
        default:
            return GC_DELIVER_OK;       /* evidence: verified by the decoder, kept by the harness */
    }
}

//  ---------------------------------------------------------------------------
//  queries

int
gc_engine_evaluate (gc_engine_t *self, double *accuracy, double *loss)
{
    if (!self->cfg.test)
        return -1;
    return gc_model_evaluate (self->model, self->x, self->cfg.test, accuracy, loss, NULL);
}

uint64_t gc_engine_round (const gc_engine_t *self) { return self->round; }
const float *gc_engine_params (const gc_engine_t *self) { return self->x; }
size_t gc_engine_n_params (const gc_engine_t *self) { return self->n; }

size_t
gc_engine_max_payload (const gc_engine_t *self)
{
    const gc_layout_t *layout = gc_model_layout (self->model);
    return 4 * self->n + 64 * layout->n_layers + 4096;
}

void
gc_engine_stats (gc_engine_t *self, gc_engine_stats_t *out)
{
    memset (out, 0, sizeof *out);
    out->round = self->round;
    out->msgs_sent = s_get (&self->msgs_sent);
    out->bytes_sent = s_get (&self->bytes_sent);
    out->msgs_recv = s_get (&self->msgs_recv);
    out->bytes_recv = s_get (&self->bytes_recv);
    out->deltas_applied = s_get (&self->deltas_applied);
    out->keyframes_sent = s_get (&self->keyframes_sent);
    out->keyframes_recv = s_get (&self->keyframes_recv);
    out->keyframe_requests_sent = s_get (&self->kf_requests_sent);
    out->keyframe_requests_recv = s_get (&self->kf_requests_recv);
    out->gaps = s_get (&self->gaps);
    out->superseded = s_get (&self->superseded);
    out->mix_skipped = s_get (&self->mix_skipped);
    out->catchups = s_get (&self->catchups);
    out->partitioned = s_get (&self->partitioned);
    out->diverged = s_get (&self->diverged);
    out->rejected = s_get (&self->rejected);
    out->dense_equiv_bytes = s_get (&self->dense_equiv);
    out->last_loss = self->last_loss;
    out->last_wait_s = self->last_wait_s;
    out->total_wait_s = self->total_wait_s;
    out->time_train_s = self->t_train;
    out->time_compress_s = self->t_compress;
    out->time_sign_s = self->t_sign;
    out->time_aggregate_s = self->t_aggregate;
    out->time_verify_s = self->t_verify;
    out->time_decode_s = self->t_decode;
    out->mixed_inputs = self->mixed_inputs;
    out->wait_target = gc_wait_target (self->wait);
}

uint64_t
gc_engine_rejections (gc_engine_t *self, uint32_t peer, int reason)
{
    if (peer == UINT32_MAX)
        return s_get (&self->unknown_reasons [s_slot (reason)]);
    s_contact_t *c = s_contact (self, peer);
    return c ? s_get (&c->reasons [s_slot (reason)]) : 0;
}

void
gc_engine_snapshot (gc_engine_t *self, uint64_t *round, uint64_t *seq, const float **x,
                    const float **v)
{
    *round = self->round;
    *seq = self->seq;
    *x = self->x;
    *v = gc_optim_velocity (self->optim);
}

void
gc_engine_restore (gc_engine_t *self, uint64_t round, uint64_t seq, const float *x, const float *v)
{
    gc_vec_copy (self->x, x, self->n);
    gc_vec_copy (gc_optim_velocity (self->optim), v, self->n);
    self->round = round;
    if (seq > self->seq)
        self->seq = seq;
    self->fresh_state = true;
    for (size_t i = 0; i < self->n_in; i++) {
        s_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        r->synced = false;
        pthread_mutex_unlock (&r->lock);
        atomic_store (&r->want_keyframe, true);
    }
}

const char *
gc_engine_model_spec (const gc_engine_t *self)
{
    return gc_model_spec (self->model);
}

//  ---------------------------------------------------------------------------
//  simulators (gcsim): shared phase-local buffers, trimmed message buffers

void
gc_engine_set_scratch (gc_engine_t *self, float *update, float *sent, float *agg)
{
    if (!self->scratch_borrowed) {
        gc_mem_free (self->update);
        gc_mem_free (self->sent);
        gc_mem_free (self->agg);
        self->scratch_borrowed = true;
    }
    self->update = update;
    self->sent = sent;
    self->agg = agg;
}

void
gc_engine_trim (gc_engine_t *self)
{
    if (self->payload.cap > 65536)
        gc_buf_free (&self->payload);
    if (self->kf_payload.cap > 65536)
        gc_buf_free (&self->kf_payload);
}

void
gc_engine_share_states (gc_engine_t *self, const gc_engine_states_t *states, const float *initial)
{
    self->states = *states;
    if (!initial || memcmp (initial, self->x, self->n * sizeof *self->x))
        return;
    for (size_t i = 0; i < self->n_in; i++) {
        s_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        if (r->synced && r->state == 0 && r->own) {
            states->hold (states->ctx, initial);
            s_replica_take (self, r, initial);
        }
        pthread_mutex_unlock (&r->lock);
    }
}

void
gc_engine_partition (gc_engine_t *self, const uint32_t *allowed, size_t n)
{
    for (size_t i = 0; i < self->n_contacts; i++) {
        bool keep = n == 0;
        for (size_t k = 0; k < n && !keep; k++)
            keep = allowed [k] == self->contacts [i].peer;
        atomic_store (&self->contacts [i].blocked, !keep);
    }
}

size_t
gc_engine_neighbours (const gc_engine_t *self, const uint32_t **peers)
{
    *peers = self->contact_peers;
    return self->n_contacts;
}

int64_t
gc_engine_staleness (gc_engine_t *self, uint32_t peer)
{
    s_contact_t *c = s_contact (self, peer);
    if (!c || c->in < 0)
        return -1;
    s_replica_t *r = &self->replicas [c->in];
    pthread_mutex_lock (&r->lock);
    int64_t lag = r->synced ? (int64_t) self->round - (int64_t) r->round : -1;
    pthread_mutex_unlock (&r->lock);
    return lag;
}
