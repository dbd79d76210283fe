#include "gc_engine_internal.h"

#include "gc_lgc_codec.h"

#include <stdio.h>
#include <stdlib.h>

#include "gc_mem.h"
#include "gc_rng.h"
#include "gc_time.h"
#include "gc_vec.h"

//  Debug builds poison what destroy frees, so a use after destroy reads
//  garbage that fails loudly instead of the old values.
#ifndef NDEBUG
#   define S_POISON(p, n) memset ((p), 0xdd, (n))
#else
#   define S_POISON(p, n) ((void) 0)
#endif

//  ---------------------------------------------------------------------------
//  reasons and counters

static const char *s_engine_reasons [] = {
    [GC_REJECT_NOT_NEIGHBOUR - GC_REJECT_NOT_NEIGHBOUR] = "not_neighbour",
    [GC_REJECT_UNKNOWN_PEER - GC_REJECT_NOT_NEIGHBOUR] = "unknown_peer",
    [GC_REJECT_BAD_PAYLOAD - GC_REJECT_NOT_NEIGHBOUR] = "bad_payload",
    [GC_REJECT_NONFINITE - GC_REJECT_NOT_NEIGHBOUR] = "nonfinite",
    [GC_REJECT_RATE_LIMITED - GC_REJECT_NOT_NEIGHBOUR] = "rate_limited",
    [GC_REJECT_MUTED - GC_REJECT_NOT_NEIGHBOUR] = "muted",
    [GC_REJECT_BAD_ROUND - GC_REJECT_NOT_NEIGHBOUR] = "bad_round",
    [GC_REJECT_EQUIVOCATED - GC_REJECT_NOT_NEIGHBOUR] = "equivocated",
};

const char *
gc_engine_reason_name (int reason)
{
    if (reason >= GC_REJECT_NOT_NEIGHBOUR && reason < GC_REJECT_LAST)
        return s_engine_reasons [reason - GC_REJECT_NOT_NEIGHBOUR];
    return gc_wire_reason_name (reason);
}

size_t
gc_engine_slot (int reason)
{
    return reason >= GC_REJECT_NOT_NEIGHBOUR ? 32 + (size_t) (reason - GC_REJECT_NOT_NEIGHBOUR)
                                             : (size_t) reason;
}

void
gc_engine_count (gc_engine_t *self, gc_contact_t *c, int reason)
{
    size_t slot = gc_engine_slot (reason);
    assert (slot < GC_ENGINE_NREASONS);
    gc_counter_add (c ? &c->reasons [slot] : &self->ctr.unknown_reasons [slot], 1);
    if (reason != GC_WIRE_OK)
        gc_counter_add (&self->ctr.rejected, 1);
}

//  The phases' documented order (gc_engine.h): the wait begins after a
//  publish, the mix after the wait began. Catches a driver that mixes twice
//  or mixes what it never published.
enum { S_PHASE_NONE, S_PHASE_START, S_PHASE_PUBLISH, S_PHASE_WAIT, S_PHASE_MIX };

static void
s_phase (gc_engine_t *self, int phase)
{
#ifndef NDEBUG
    GC_ENGINE_IN (self->trainer_busy);
    switch (phase) {
        case S_PHASE_WAIT:          /* wait_begin: after a publish */
            assert (self->phase == S_PHASE_PUBLISH || self->phase == S_PHASE_WAIT);
            break;
        case S_PHASE_MIX:           /* mix: after the wait began */
            assert (self->phase == S_PHASE_WAIT);
            break;
        default:
            break;
    }
    self->phase = phase;
#else
    (void) self;
    (void) phase;
#endif
}

//  ---------------------------------------------------------------------------
//  construction

static int
s_cmp_id (const void *a, const void *b)
{
    return memcmp (a, b, 8);
}

gc_contact_t *
gc_engine_contact (gc_engine_t *self, uint32_t peer)
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
    self->mixed_state = calloc (k, sizeof *self->mixed_state);
    self->moved = calloc (k, sizeof *self->moved);
    if (!self->replicas || !self->out_peers || !self->dest_scratch || !self->contacts || !self->contact_peers || !self->inputs
    ||  !self->weights || !self->input_replica || !self->fresh || !self->arrivals
    ||  !self->mixed_state || !self->moved)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    for (size_t i = 0; i < k; i++)
        self->mixed_state [i] = UINT64_MAX;     /* no mix yet: the first state is a move */
    if (self->n_out)
        memcpy (self->out_peers, out, self->n_out * sizeof *out);
    for (size_t i = 0; i < self->n_in; i++)
        if (gc_replica_init (self, &self->replicas [i], in [i], err))
            return -1;
    //  contacts = in ∪ out, sorted by peer index (both lists are sorted)
    size_t a = 0, b = 0;
    while (a < self->n_in || b < self->n_out) {
        uint32_t pa = a < self->n_in ? in [a] : UINT32_MAX;
        uint32_t pb = b < self->n_out ? out [b] : UINT32_MAX;
        gc_contact_t *c = &self->contacts [self->n_contacts++];
        c->peer = pa < pb ? pa : pb;
        self->contact_peers [self->n_contacts - 1] = c->peer;
        c->in = pa <= pb ? (int) a : -1;
        c->out = pb <= pa;
        a += pa <= pb;
        b += pb <= pa;
    }
    return 0;
}


//  Local validation: hold samples of the shard out of training (before a
//  role such as labelflip changes the labels: the held-out part is the
//  shard's own) and score the neighbours' models on them in the mix.
static int
s_build_validation (gc_engine_t *self, gc_err_t *err)
{
    const gc_engine_config_t *cfg = &self->cfg;
    gc_validate_cfg_t *vc = &self->learn.vcfg;
    if (gc_validate_parse (cfg->validate, cfg->aggregator, vc, err))
        return -1;
    if (!vc->samples || !gc_model_trains (self->learn.model))
        return 0;
    uint64_t seed = gc_seed_derive (cfg->seed, 0x7A11D00 + cfg->self);
    if (gc_validate_split (cfg->train, vc->samples, seed, &self->learn.held, &self->learn.rest, err))
        return -1;
    self->learn.split = true;
    return 0;
}

//  The validator, once the in-neighbours are known; none when the shard was
//  too small to hold samples out.
static int
s_build_validator (gc_engine_t *self, gc_err_t *err)
{
    if (!self->learn.split || !self->learn.held.n)
        return 0;
    uint64_t seed = gc_seed_derive (self->cfg.seed, 0x7A11D80 + self->cfg.self);
    self->learn.validate = gc_validate_new (&self->learn.vcfg, &self->learn.held, self->n_in, seed);
    gc_validate_set_labels (self->learn.validate, &self->learn.rest);
    return self->learn.validate ? 0 : gc_err_set (err, GC_E_NOMEM, "gossip/validate: out of memory");
}

static int
s_build_learning (gc_engine_t *self, gc_err_t *err)
{
    const gc_engine_config_t *cfg = &self->cfg;
    self->learn.model = gc_model_new (cfg->model, err);
    if (!self->learn.model)
        return gc_err_prefix (err, "train/model: ");
    if (cfg->train && !gc_model_trains (self->learn.model))
        return gc_err_set (err, GC_E_CONFIG, "train/model %s is trained by its embedder "
                           "(libgcnode, docs/EMBEDDING.md), not by gcnode",
                           gc_model_spec (self->learn.model));
    if (cfg->train && gc_model_check_data (self->learn.model, cfg->train, "the training data", err))
        return -1;
    self->learn.n = gc_model_n_params (self->learn.model);
    self->learn.optim = gc_optim_new (&cfg->optim, self->learn.n, err);
    if (!self->learn.optim)
        return -1;
    if (gc_role_select (cfg->attack, &self->role, err))
        return -1;
    if (cfg->train && s_build_validation (self, err))
        return -1;
    if (cfg->train) {
        const gc_dataset_t *data = self->learn.split ? &self->learn.rest : cfg->train;
        if (self->role.ops->train_data && !(data = self->role.ops->train_data (&self->role, data, err)))
            return gc_err_prefix (err, "%s: ", self->role.ops->name);
        uint64_t seed = gc_seed_derive (cfg->seed, 0x5A3F00 + cfg->self);
        self->learn.sampler = gc_sampler_new (data, cfg->batch, seed, err);
        if (!self->learn.sampler)
            return -1;
        if (gc_sampler_set_augment (self->learn.sampler, &cfg->augment, seed, err))
            return gc_err_prefix (err, "train/augment: ");
    }
    gc_engine_learn_t *l = &self->learn;
    float **bufs [] = { &l->x, &l->prev, &l->pub, &l->update, &l->sent, &l->agg };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        if (!(*bufs [i] = gc_falloc (self->learn.n)))
            return gc_err_set (err, GC_E_NOMEM, "engine: out of memory for the model");
    gc_model_init_params (self->learn.model, self->learn.x, cfg->seed);
    gc_vec_copy (self->learn.prev, self->learn.x, self->learn.n);
    gc_vec_copy (self->learn.pub, self->learn.x, self->learn.n);
    return 0;
}

static int
s_build_gossip (gc_engine_t *self, gc_err_t *err)
{
    const gc_engine_config_t *cfg = &self->cfg;
    const gc_layout_t *layout = gc_model_layout (self->learn.model);
    uint64_t id_seed = gc_seed_derive (cfg->seed, 0xC0DE00 + cfg->self);
    self->gossip.comp = gc_compressor_new (cfg->compress, layout, id_seed, err);
    if (!self->gossip.comp)
        return gc_err_prefix (err, "gossip/compress: ");
    self->gossip.kf_comp = gc_compressor_new (cfg->keyframe_fp16 ? "fp16" : "none", layout, id_seed, err);
    if (!self->gossip.kf_comp)
        return -1;
    self->gossip.ec = gc_ec_new (cfg->ec, self->gossip.comp, err);
    if (!self->gossip.ec)
        return gc_err_prefix (err, "gossip/ec: ");
    self->gossip.policy = gc_policy_new (cfg->policy && *cfg->policy ? cfg->policy : "fixed",
                                         self->gossip.comp, err);
    if (!self->gossip.policy || gc_ec_set_policy (self->gossip.ec, self->gossip.policy, err))
        return gc_err_prefix (err, "gossip/policy: ");
    gc_gauge_set (&self->ctr.send_budget, gc_policy_budget (self->gossip.policy));
    self->learn.centre_pub = !strcmp (cfg->ec, "ef");
    if (gc_unsent_new (self, err))
        return -1;
    self->gossip.robust = gc_robust_new (cfg->aggregator, err);
    if (!self->gossip.robust)
        return gc_err_prefix (err, "gossip/aggregator: ");
    size_t need = gc_robust_min_inputs (self->gossip.robust);
    self->gossip.fallback = calloc (need, sizeof *self->gossip.fallback);
    if (!self->gossip.fallback)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    self->gossip.wait = gc_wait_new (cfg->wait, self->n_in, need > 1 ? need - 1 : 1,
                              cfg->wait_timeout_ns, err);
    if (!self->gossip.wait)
        return gc_err_prefix (err, "gossip/wait: ");
    atomic_store (&self->ctr.wait_target, gc_wait_target (self->gossip.wait));
    if (gc_wire_network_id (cfg->network, self->network_id, err))
        return gc_err_prefix (err, "node/network: ");
    self->rx = gc_wire_rx_new (self->network_id, cfg->trust, gc_engine_max_payload (self),
                               GC_REPLAY_DEFAULT_WINDOW, err);
    if (!self->rx)
        return -1;
    gc_wire_rx_set_self (self->rx, gc_key_peer_id (cfg->key));
    gc_buf_init (&self->gossip.payload);
    gc_buf_init (&self->gossip.kf_payload);
    return 0;
}

static int
s_build_ids (gc_engine_t *self, gc_err_t *err)
{
    self->n_peers = gc_topology_size (self->cfg.topology);
    self->by_id = calloc (self->n_peers, sizeof *self->by_id);
    if (!self->by_id)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    for (uint32_t i = 0; i < self->n_peers; i++) {
        memcpy (self->by_id [i].id, self->cfg.peer_ids [i], 8);
        self->by_id [i].peer = i;
    }
    qsort (self->by_id, self->n_peers, sizeof *self->by_id, s_cmp_id);
    for (uint32_t i = 1; i < self->n_peers; i++)
        if (!memcmp (self->by_id [i - 1].id, self->by_id [i].id, 8))
            return gc_err_set (err, GC_E_CONFIG, "peers %u and %u have the same key",
                               self->by_id [i - 1].peer, self->by_id [i].peer);
    if (memcmp (self->cfg.peer_ids [self->cfg.self], gc_key_peer_id (self->cfg.key), 8))
        return gc_err_set (err, GC_E_CONFIG, "own key %s is not the key listed for peer %u",
                           gc_key_peer_id_hex (self->cfg.key), self->cfg.self);
    return 0;
}

gc_engine_t *
gc_engine_new (const gc_engine_config_t *cfg, const gc_engine_io_t *io, gc_err_t *err)
{
    gc_engine_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    self->io = *io;
    pthread_mutex_init (&self->arrive_lock, NULL);
    pthread_mutex_init (&self->evidence.lock, NULL);    /* gc_equiv.c */
    pthread_mutex_init (&self->witness.lock, NULL);
    //  the wait's deadline is a monotonic time (gc_now_ns): so is the
    //  condition's, and a wall-clock step cannot stretch or cut a wait
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->arrived, &attr);
    pthread_condattr_destroy (&attr);
    if (cfg->self >= gc_topology_size (cfg->topology)
    ||  s_build_ids (self, err) || gc_equiv_init (self, err) || s_build_learning (self, err)
    ||  s_build_neighbours (self, err) || s_build_gossip (self, err) || s_build_validator (self, err)
    ||  (self->role.ops->build && self->role.ops->build (self, &self->role, err))) {
        if (cfg->self >= gc_topology_size (cfg->topology))
            gc_err_set (err, GC_E_CONFIG, "peer index %u outside the %u peers of the topology",
                        cfg->self, gc_topology_size (cfg->topology));
        gc_engine_destroy (&self);
        return NULL;
    }
    //  Sequence numbers continue across restarts: start from the wall clock
    //  (a simulator passes its virtual clock); gc_engine_seq_lease raises it
    //  past a persisted lease, so that a clock stepped back cannot reuse seqs.
    self->seq = cfg->seq_start ? cfg->seq_start : (uint64_t) gc_wall_ms () * 1000;
    return self;
}

void
gc_engine_destroy (gc_engine_t **self_p)
{
    gc_engine_t *self = *self_p;
    if (!self)
        return;
#ifndef NDEBUG
    //  destroy only when no thread is inside the engine any more
    assert (!atomic_load (&self->trainer_busy) && !atomic_load (&self->receiver_busy));
#endif
    for (size_t i = 0; self->replicas && i < self->n_in; i++)
        gc_replica_fini (self, &self->replicas [i]);
    gc_equiv_fini (self);
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
    free (self->mixed_state);
    free (self->moved);
    free (self->by_id);
    gc_wire_rx_destroy (&self->rx);
    gc_wait_destroy (&self->gossip.wait);
    for (size_t k = 0; self->gossip.fallback && self->gossip.robust && k < gc_robust_min_inputs (self->gossip.robust); k++)
        gc_robust_destroy (&self->gossip.fallback [k]);
    free (self->gossip.fallback);
    gc_robust_destroy (&self->gossip.robust);
    gc_ec_destroy (&self->gossip.ec);
    gc_policy_destroy (&self->gossip.policy);
    gc_compressor_destroy (&self->gossip.comp);
    gc_compressor_destroy (&self->gossip.kf_comp);
    gc_buf_free (&self->gossip.payload);
    gc_buf_free (&self->gossip.kf_payload);
    gc_unsent_destroy (self);
    gc_engine_learn_t *l = &self->learn;
    float *bufs [] = { l->x, l->prev, l->pub, l->update, l->sent, l->agg };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        if (i == 0 ? !l->x_borrowed : i < 3 || !self->learn.scratch_borrowed)
            gc_mem_free (bufs [i]);
    gc_role_destroy (&self->role);
    gc_sampler_destroy (&self->learn.sampler);
    gc_optim_destroy (&self->learn.optim);
    gc_model_destroy (&self->learn.model);
    gc_validate_destroy (&self->learn.validate);
    if (self->learn.split) {
        gc_dataset_free (&self->learn.held);
        gc_dataset_free (&self->learn.rest);
    }
    pthread_mutex_destroy (&self->arrive_lock);
    pthread_cond_destroy (&self->arrived);
    S_POISON (self, sizeof *self);
    free (self);
    *self_p = NULL;
}

//  ---------------------------------------------------------------------------
//  sending

//  A phase uses far fewer seqs than this (a delta, keyframes and requests
//  per neighbour, a role's extras), so a lease checked at each phase's
//  start covers every seq the phase takes.
#define S_LEASE_MARGIN (1ULL << 20)

void
gc_engine_seq_lease (gc_engine_t *self, uint64_t floor, gc_engine_lease_fn persist, void *ctx)
{
    GC_ENGINE_ENTER (self->trainer_busy);
    if (floor > self->seq)
        self->seq = floor;
    self->lease.persist = persist;
    self->lease.ctx = ctx;
    self->lease.end = self->seq;        /* nothing above is covered yet */
    GC_ENGINE_LEAVE (self->trainer_busy);
}

static int
s_lease (gc_engine_t *self, gc_err_t *err)
{
    if (!self->lease.persist || self->seq + S_LEASE_MARGIN <= self->lease.end)
        return 0;
    uint64_t end = self->seq + 2 * S_LEASE_MARGIN;
    if (self->lease.persist (self->lease.ctx, end, err))
        return gc_err_prefix (err, "sequence lease: ");
    self->lease.end = end;
    return 0;
}

int
gc_engine_send (gc_engine_t *self, const uint32_t *dests, size_t n, int type, uint8_t flags,
                uint64_t base_seq, const uint8_t *payload, size_t len, gc_err_t *err)
{
    return gc_engine_send_seq (self, dests, n, type, flags, ++self->seq, base_seq, payload, len,
                               self->cfg.key, err);
}

//  The payload buffer goes to a transport that can take it (the simulator):
//  a model-sized copy less per round; the next round allocates a new one.
static int
s_transport_send (gc_engine_t *self, const uint32_t *dests, size_t n, const uint8_t *payload,
                  size_t len)
{
    if (self->io.send_owned && len > 0 && payload == self->gossip.payload.data) {
        if (self->io.send_owned (self->io.ctx, dests, n, self->header, GC_WIRE_HEADER_SIZE,
                                 self->gossip.payload.data, len))
            return -1;
        gc_buf_init (&self->gossip.payload);
        return 0;
    }
    return self->io.send (self->io.ctx, dests, n, self->header, GC_WIRE_HEADER_SIZE, payload, len);
}

int
gc_engine_send_seq (gc_engine_t *self, const uint32_t *all_dests, size_t n_all, int type,
                    uint8_t flags, uint64_t seq, uint64_t base_seq, const uint8_t *payload,
                    size_t len, gc_key_t *signer, gc_err_t *err)
{
    GC_ENGINE_IN (self->trainer_busy);      /* sends happen inside a phase */
    size_t n_dests = 0;
    uint32_t *dests = self->dest_scratch;
    for (size_t i = 0; i < n_all; i++) {
        gc_contact_t *c = gc_engine_contact (self, all_dests [i]);
        if (c && atomic_load_explicit (&c->blocked, memory_order_relaxed))
            gc_counter_add (&self->ctr.partitioned, 1);
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
    gc_gauge_add (&self->ctr.t_sign, gc_now_s () - t0);
    if (self->role.ops->on_sent)
        self->role.ops->on_sent (self, &self->role, self->header, payload, len);
    if (s_transport_send (self, dests, n_dests, payload, len))
        return gc_err_set (err, GC_E_SYS, "transport refused a %s message", gc_wire_type_name (type));
    gc_counter_add (&self->ctr.msgs_sent, n_dests);
    gc_counter_add (&self->ctr.bytes_sent, n_dests * (GC_WIRE_HEADER_SIZE + len));
    return 0;
}

//  ---------------------------------------------------------------------------
//  the round phases

int
gc_engine_start (gc_engine_t *self, int64_t now)
{
    (void) now;
    GC_ENGINE_ENTER (self->trainer_busy);
    s_phase (self, S_PHASE_START);
    int rc = s_lease (self, NULL);
    if (rc == 0 && !self->role.ops->silent) {
        //  HELLO payload: the announcing peer's model spec, so a mismatch is
        //  visible in the receiver's log (it is not used for decisions).
        const char *spec = gc_model_spec (self->learn.model);
        rc = gc_engine_send (self, self->contact_peers, self->n_contacts, GC_MSG_HELLO, 0, 0,
                             (const uint8_t *) spec, strlen (spec), NULL);
    }
    GC_ENGINE_LEAVE (self->trainer_busy);
    return rc;
}

void
gc_engine_set_link (gc_engine_t *self, double compute_s, double round_s, double rate)
{
    self->gossip.compute_s = compute_s > 0 ? compute_s : 0;
    self->gossip.round_s = round_s > 0 ? round_s : 0;
    gc_policy_set_env (self->gossip.policy, 0, rate);
}

void
gc_engine_set_link_rate (gc_engine_t *self, double rate)
{
    gc_policy_set_rate (self->gossip.policy, rate);
}

double
gc_engine_train (gc_engine_t *self)
{
    if (!self->learn.sampler)
        return 0;
    GC_ENGINE_ENTER (self->trainer_busy);
    double t0 = gc_now_s (), loss = 0;
    uint32_t steps = self->cfg.local_steps ? self->cfg.local_steps : 1;
    for (uint32_t s = 0; s < steps; s++) {
        const float *x;
        const uint8_t *y;
        gc_sampler_next (self->learn.sampler, &x, &y);
        double t = (double) self->round + (double) s / steps;
        double lr = gc_optim_lr_at (&self->cfg.optim, t, (double) self->cfg.rounds);
        loss += gc_optim_step (self->learn.optim, self->learn.model, self->learn.x, x, y,
                               gc_sampler_batch (self->learn.sampler), lr, NULL);
    }
    gc_gauge_set (&self->ctr.last_loss, loss / steps);
    gc_gauge_add (&self->ctr.t_train, gc_now_s () - t0);
    gc_gauge_set (&self->ctr.t_last_train, gc_now_s () - t0);
    GC_ENGINE_LEAVE (self->trainer_busy);
    return loss / steps;
}

//  The role decides what goes out; every role then serves the keyframes it
//  was asked for, asks for those it lacks and passes on the proofs of
//  equivocation it learned since the last publish.
int
gc_engine_publish (gc_engine_t *self, int64_t now, gc_err_t *err)
{
    GC_ENGINE_ENTER (self->trainer_busy);
    s_phase (self, S_PHASE_PUBLISH);
    int rc = s_lease (self, err) || self->role.ops->publish (self, &self->role, now, err)
          || gc_keyframe_serve (self, err) || gc_keyframe_request (self, now, err)
          || gc_equiv_forward (self, err) || gc_equiv_witness_send (self, err) ? -1 : 0;
    GC_ENGINE_LEAVE (self->trainer_busy);
    return rc;
}

//  ---------------------------------------------------------------------------
//  waiting

void
gc_engine_wait_begin (gc_engine_t *self, int64_t now)
{
    GC_ENGINE_ENTER (self->trainer_busy);
    s_phase (self, S_PHASE_WAIT);
    gc_wait_begin (self->gossip.wait, now);
    self->ctr.wait_started = (double) now * 1e-9;
    GC_ENGINE_LEAVE (self->trainer_busy);
}

bool
gc_engine_ready (gc_engine_t *self, int64_t now)
{
    gc_replica_collect_fresh (self);
    return gc_wait_ready (self->gossip.wait, self->fresh, now);
}

int64_t
gc_engine_wait_deadline (const gc_engine_t *self)
{
    return gc_wait_deadline (self->gossip.wait);
}

void
gc_engine_wait (gc_engine_t *self, volatile int *stop)
{
    pthread_mutex_lock (&self->arrive_lock);
    while (!(stop && *stop) && !gc_engine_ready (self, gc_now_ns ())) {
        //  wake at the deadline, on an arrival, and every 100 ms for *stop;
        //  gc_now_ns and the condition both run on CLOCK_MONOTONIC
        int64_t wake = gc_now_ns () + 100000000LL;
        if (wake > gc_wait_deadline (self->gossip.wait))
            wake = gc_wait_deadline (self->gossip.wait);
        struct timespec ts = { .tv_sec = wake / 1000000000LL, .tv_nsec = wake % 1000000000LL };
        pthread_cond_timedwait (&self->arrived, &self->arrive_lock, &ts);
    }
    pthread_mutex_unlock (&self->arrive_lock);
}

//  ---------------------------------------------------------------------------
//  mixing

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
        gc_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        if (r->synced && !gc_round_staler (self->round, r->round, self->cfg.staleness)) {
            self->moved [i] = r->state != self->mixed_state [i];
            self->mixed_state [i] = r->state;
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
        gc_replica_t *r = &self->replicas [ri];
        GC_ASSERT_LOCKED (&r->lock);
        r->synced = false;
        atomic_store (&r->want_keyframe, true);
        gc_engine_count (self, gc_engine_contact (self, r->peer), GC_REJECT_NONFINITE);
    }
    else
        self->learn.fresh_state = true;       /* own model broke: restart from the mix */
    for (size_t j = bad + 1; j < *k; j++) {
        self->inputs [j - 1] = self->inputs [j];
        self->weights [j - 1] = self->weights [j];
        self->input_replica [j - 1] = self->input_replica [j];
    }
    (*k)--;
}

//  Local validation scales the neighbours' weights; one it gave no weight
//  leaves the inputs, as a stale replica does, so that it moves none of the
//  rule's statistics either (a median, a reference). Caller holds the locks.
static void
s_validate (gc_engine_t *self, size_t *k)
{
    bool suspect [*k];      /* the rule's suspects leave validation's medians */
    for (size_t j = 0; j < *k; j++) {
        int ri = self->input_replica [j];
        suspect [j] = ri >= 0 && gc_robust_suspects (self->gossip.robust, self->replicas [ri].peer);
    }
    gc_validate_weigh (self->learn.validate, self->learn.model, self->inputs,
                       self->input_replica, suspect, self->weights, *k);
    size_t kept = 1;
    for (size_t j = 1; j < *k; j++)
        if (self->weights [j] > 0) {
            self->inputs [kept] = self->inputs [j];
            self->weights [kept] = self->weights [j];
            self->input_replica [kept++] = self->input_replica [j];
        }
    *k = kept;
}

int
gc_engine_mix (gc_engine_t *self, int64_t now, gc_err_t *err)
{
    GC_ENGINE_ENTER (self->trainer_busy);
    s_phase (self, S_PHASE_MIX);
    gc_replica_collect_fresh (self);
    gc_wait_end (self->gossip.wait, self->arrivals, now);
    atomic_store (&self->ctr.wait_target, gc_wait_target (self->gossip.wait));
    double waited = (double) now * 1e-9 - self->ctr.wait_started;
    gc_gauge_set (&self->ctr.last_wait_s, waited);
    gc_gauge_add (&self->ctr.total_wait_s, waited);
    double t0 = gc_now_s ();
    //  update is free until the next publish: the centre's scratch
    const float *centre = self->learn.centre_pub ? self->learn.pub
                        : gc_unsent_centre (self, self->learn.update);
    size_t k = s_gather (self, centre);
    //  a neighbour whose model does worse on our held-out samples loses
    //  weight to our own model, whatever the rule then does with it
    if (self->learn.validate)
        s_validate (self, &k);
    gc_robust_t *rule = self->gossip.robust;
    size_t need = gc_robust_min_inputs (rule);
    //  Too few fresh inputs for the rule: the weaker rule they support
    //  (gc_robust_new_fallback) rather than no mix at all; never with the
    //  own model alone, which is no mix.
    self->gossip.fallback_used = NULL;
    if (k < need && k >= 2 && self->cfg.fallback) {
        if (!self->gossip.fallback [k])
            self->gossip.fallback [k] = gc_robust_new_fallback (rule, k, NULL);
        if (self->gossip.fallback [k]) {
            rule = self->gossip.fallback [k];
            need = gc_robust_min_inputs (rule);
        }
    }
    int rc = -1;
    while (k >= need && k > 0) {
        gc_err_t aerr = { 0 };
        uint64_t keys [k];              /* who each input is: guard keeps a history per peer */
        bool moved [k];                 /* and whether a message moved it since the last mix */
        for (size_t j = 0; j < k; j++) {
            int ri = self->input_replica [j];
            keys [j] = ri < 0 ? self->cfg.self : self->replicas [ri].peer;
            moved [j] = ri < 0 || self->moved [ri];
        }
        gc_robust_set_keys (rule, keys, moved, k);
        //  x += gamma (agg - centre) inside the rule's output pass where it
        //  has one (guard): the aggregate is then never stored and read back
        if (!self->learn.fresh_state)
            gc_robust_set_mix (rule, self->learn.x, centre, (float) self->cfg.gamma);
        rc = gc_robust_aggregate (rule, self->inputs, self->weights, k, self->learn.n, 0,
                                  self->learn.agg, &aerr);
        if (rc == 0 || aerr.code != GC_E_NONFINITE)
            break;
        //  the rule must name an input it was given; if it names none (-1)
        //  or one out of range, skip the mix rather than index outside
        int bad = gc_robust_bad_input (rule);
        rc = -1;
        if (bad < 0 || (size_t) bad >= k)
            break;
        s_drop_input (self, &k, (size_t) bad);
    }
    s_release (self);
    atomic_store (&self->ctr.mixed_inputs, rc == 0 ? k : 0);
    if (rc != 0 && !gc_vec_all_finite (self->learn.x, self->learn.n)) {
        //  diverged and nothing to mix with: back to the last public state
        gc_vec_copy (self->learn.x, self->learn.pub, self->learn.n);
        self->learn.fresh_state = true;
    }
    if (rc == 0 && rule != self->gossip.robust) {
        gc_counter_add (&self->ctr.mix_fallbacks, 1);
        self->gossip.fallback_used = gc_robust_name (rule);
    }
    if (rc == 0) {
        if (self->learn.fresh_state)          /* own model was non-finite */
            gc_vec_copy (self->learn.x, self->learn.agg, self->learn.n);
        else if (!gc_robust_mixed (rule)) {   /* the same operations as the rule's own */
            float g = (float) self->cfg.gamma;
            for (size_t i = 0; i < self->learn.n; i++)
                self->learn.x [i] += g * (self->learn.agg [i] - centre [i]);
        }
    }
    else
        gc_counter_add (&self->ctr.mix_skipped, 1);
    gc_unsent_mixed (self);
    gc_gauge_add (&self->ctr.t_aggregate, gc_now_s () - t0);
    self->round++;
    gc_replica_catch_up (self);
    GC_ENGINE_LEAVE (self->trainer_busy);
    (void) err;
    return 0;
}

int
gc_engine_gossip (gc_engine_t *self, volatile int *stop, gc_err_t *err)
{
    if (gc_engine_publish (self, gc_now_ns (), err))
        return -1;
    gc_engine_wait_begin (self, gc_now_ns ());
    gc_engine_wait (self, stop);
    return gc_engine_mix (self, gc_now_ns (), err);
}

bool
gc_engine_done (const gc_engine_t *self)
{
    return self->round >= self->cfg.rounds;
}

//  ---------------------------------------------------------------------------
//  queries

int
gc_engine_evaluate (gc_engine_t *self, double *accuracy, double *loss)
{
    if (!self->cfg.test)
        return -1;
    return gc_model_evaluate (self->learn.model, self->learn.x, self->cfg.test, accuracy, loss, NULL);
}

uint64_t gc_engine_round (const gc_engine_t *self) { return self->round; }
const float *gc_engine_params (const gc_engine_t *self) { return self->learn.x; }
size_t gc_engine_n_params (const gc_engine_t *self) { return self->learn.n; }

size_t
gc_engine_max_payload (const gc_engine_t *self)
{
    const gc_layout_t *layout = gc_model_layout (self->learn.model);
    //  A dense keyframe, plus the largest LGC decoder one may carry.
    return 4 * self->learn.n + 64 * layout->n_layers + 4096 + 4 + gc_lgc_blob_size (GC_LGC_MAX_CODE);
}

//  Either thread (gcnode's control handler runs on the network thread):
//  every field read here is atomic.
void
gc_engine_stats (gc_engine_t *self, gc_engine_stats_t *out)
{
    gc_engine_counters_t *c = &self->ctr;
    memset (out, 0, sizeof *out);
    out->round = self->round;
    out->msgs_sent = gc_counter_get (&c->msgs_sent);
    out->bytes_sent = gc_counter_get (&c->bytes_sent);
    out->msgs_recv = gc_counter_get (&c->msgs_recv);
    out->bytes_recv = gc_counter_get (&c->bytes_recv);
    out->deltas_applied = gc_counter_get (&c->deltas_applied);
    out->keyframes_sent = gc_counter_get (&c->keyframes_sent);
    out->keyframes_recv = gc_counter_get (&c->keyframes_recv);
    out->keyframe_requests_sent = gc_counter_get (&c->kf_requests_sent);
    out->keyframe_requests_recv = gc_counter_get (&c->kf_requests_recv);
    out->gaps = gc_counter_get (&c->gaps);
    out->superseded = gc_counter_get (&c->superseded);
    out->mix_skipped = gc_counter_get (&c->mix_skipped);
    out->mix_fallbacks = gc_counter_get (&c->mix_fallbacks);
    out->catchups = gc_counter_get (&c->catchups);
    out->hellos = gc_counter_get (&c->hellos);
    out->witness_sent = gc_counter_get (&c->witness_sent);
    out->witness_recv = gc_counter_get (&c->witness_recv);
    out->partitioned = gc_counter_get (&c->partitioned);
    out->diverged = gc_counter_get (&c->diverged);
    out->sends_skipped = gc_counter_get (&c->sends_skipped);
    out->send_budget = gc_gauge_get (&c->send_budget);
    out->rejected = gc_counter_get (&c->rejected);
    out->verifies = gc_counter_get (&c->verifies);
    out->equivocators = gc_counter_get (&c->equivocators);
    out->evidence_found = gc_counter_get (&c->evidence_found);
    out->evidence_recv = gc_counter_get (&c->evidence_recv);
    out->evidence_sent = gc_counter_get (&c->evidence_sent);
    out->dense_equiv_bytes = gc_counter_get (&c->dense_equiv);
    out->last_loss = gc_gauge_get (&c->last_loss);
    out->last_wait_s = gc_gauge_get (&c->last_wait_s);
    out->total_wait_s = gc_gauge_get (&c->total_wait_s);
    out->time_train_s = gc_gauge_get (&c->t_train);
    out->time_compress_s = gc_gauge_get (&c->t_compress);
    out->time_sign_s = gc_gauge_get (&c->t_sign);
    out->time_aggregate_s = gc_gauge_get (&c->t_aggregate);
    out->time_verify_s = gc_gauge_get (&c->t_verify);
    out->time_decode_s = gc_gauge_get (&c->t_decode);
    out->mixed_inputs = atomic_load (&c->mixed_inputs);
    out->wait_target = atomic_load (&c->wait_target);
}

uint64_t
gc_engine_rejections (gc_engine_t *self, uint32_t peer, int reason)
{
    if (peer == UINT32_MAX)
        return gc_counter_get (&self->ctr.unknown_reasons [gc_engine_slot (reason)]);
    gc_contact_t *c = gc_engine_contact (self, peer);
    return c ? gc_counter_get (&c->reasons [gc_engine_slot (reason)]) : 0;
}

void
gc_engine_snapshot (gc_engine_t *self, uint64_t *round, uint64_t *seq, const float **x,
                    const float **v)
{
    *round = self->round;
    *seq = self->seq;
    *x = self->learn.x;
    *v = gc_optim_velocity (self->learn.optim);
}

void
gc_engine_restore (gc_engine_t *self, uint64_t round, uint64_t seq, const float *x, const float *v)
{
    GC_ENGINE_ENTER (self->trainer_busy);
    gc_vec_copy (self->learn.x, x, self->learn.n);
    gc_vec_copy (gc_optim_velocity (self->learn.optim), v, self->learn.n);
    self->round = round;
    if (seq > self->seq)
        self->seq = seq;
    self->learn.fresh_state = true;
    gc_unsent_forget (self);
    gc_replica_invalidate_all (self);
    GC_ENGINE_LEAVE (self->trainer_busy);
}

void
gc_engine_bind_params (gc_engine_t *self, float *params, bool adopt)
{
    GC_ENGINE_ENTER (self->trainer_busy);
    gc_engine_learn_t *l = &self->learn;
    size_t bytes = l->n * sizeof (float);
    bool same = !memcmp (params, l->x, bytes);
    if (!adopt)
        memcpy (params, l->x, bytes);
    if (!l->x_borrowed)
        gc_mem_free (l->x);
    l->x = params;
    l->x_borrowed = true;
    if (adopt && !same) {
        gc_vec_copy (l->prev, l->x, l->n);
        gc_vec_copy (l->pub, l->x, l->n);
        l->fresh_state = true;
        gc_unsent_forget (self);
        gc_replica_invalidate_all (self);
    }
    GC_ENGINE_LEAVE (self->trainer_busy);
}

const char *
gc_engine_model_spec (const gc_engine_t *self)
{
    return gc_model_spec (self->learn.model);
}

//  ---------------------------------------------------------------------------
//  simulators (gcsim): shared phase-local buffers, trimmed message buffers

void
gc_engine_set_scratch (gc_engine_t *self, float *update, float *sent, float *agg)
{
    if (!self->learn.scratch_borrowed) {
        gc_mem_free (self->learn.update);
        gc_mem_free (self->learn.sent);
        gc_mem_free (self->learn.agg);
        self->learn.scratch_borrowed = true;
    }
    self->learn.update = update;
    self->learn.sent = sent;
    self->learn.agg = agg;
}

void
gc_engine_trim (gc_engine_t *self)
{
    if (self->gossip.payload.cap > 65536)
        gc_buf_free (&self->gossip.payload);
    if (self->gossip.kf_payload.cap > 65536)
        gc_buf_free (&self->gossip.kf_payload);
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
    gc_contact_t *c = gc_engine_contact (self, peer);
    if (!c || c->in < 0)
        return -1;
    gc_replica_t *r = &self->replicas [c->in];
    pthread_mutex_lock (&r->lock);
    int64_t lag = r->synced ? gc_round_lag (self->round, r->round) : -1;
    pthread_mutex_unlock (&r->lock);
    return lag;
}

uint64_t
gc_engine_validations (const gc_engine_t *self)
{
    return self->learn.validate ? gc_validate_runs (self->learn.validate) : 0;
}

double
gc_engine_validation_weight (gc_engine_t *self, uint32_t peer)
{
    gc_contact_t *c = gc_engine_contact (self, peer);
    if (!self->learn.validate || !c || c->in < 0)
        return -1;
    return gc_validate_factor (self->learn.validate, (size_t) c->in);
}

gc_replica_kind_t
gc_engine_replica_kind (gc_engine_t *self, uint32_t peer, int64_t *lag)
{
    gc_contact_t *c = gc_engine_contact (self, peer);
    *lag = 0;
    if (!c || c->in < 0)
        return GC_REPLICA_NOT_IN;
    gc_replica_t *r = &self->replicas [c->in];
    pthread_mutex_lock (&r->lock);
    //  seqs start above 0: state 0 is the shared initial model
    gc_replica_kind_t kind = !r->synced ? GC_REPLICA_RESYNC : r->state == 0 ? GC_REPLICA_NEVER : GC_REPLICA_STATE;
    *lag = gc_round_lag (self->round, r->round);
    pthread_mutex_unlock (&r->lock);
    return kind;
}

uint64_t
gc_engine_bytes_from (gc_engine_t *self, uint32_t peer)
{
    gc_contact_t *c = gc_engine_contact (self, peer);
    return c ? gc_counter_get (&c->bytes_recv) : 0;
}

const char *
gc_engine_fallback_rule (const gc_engine_t *self)
{
    return self->gossip.fallback_used ? self->gossip.fallback_used : "";
}
