//  Replicas of the in-neighbours and keyframes: how a verified delta or
//  keyframe changes a replica (network side, under the replica's lock), what
//  the trainer reads of them (fresh, catch-up), and the keyframes this peer
//  sends, serves and asks for.
#include "gc_engine_internal.h"

#include "gc_lgc_codec.h"
#include "gc_mem.h"
#include "gc_payload.h"
#include "gc_time.h"
#include "gc_vec.h"

int
gc_replica_init (gc_engine_t *self, gc_replica_t *r, uint32_t peer, gc_err_t *err)
{
    r->peer = peer;
    pthread_mutex_init (&r->lock, NULL);
    r->x = r->own = gc_falloc (self->learn.n);
    if (!r->own)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory for replicas");
    //  Every peer starts from the same initial model (shared seed), so a
    //  replica starts synced at state 0.
    gc_vec_copy (r->own, self->learn.x, self->learn.n);
    r->synced = true;
    return 0;
}

void
gc_replica_fini (gc_engine_t *self, gc_replica_t *r)
{
    if (!r->own && r->x)                /* a held state */
        self->gossip.states.release (self->gossip.states.ctx, r->x);
    gc_mem_free (r->own);
    r->own = NULL;
    r->x = NULL;
    r->synced = false;
    gc_lgc_codec_destroy (&r->codec);
    pthread_mutex_destroy (&r->lock);
}

//  A replica takes a state of the store: the one it held (or its own
//  buffer) goes.
static void
s_take (gc_engine_t *self, gc_replica_t *r, const float *state)
{
    if (!r->own)
        self->gossip.states.release (self->gossip.states.ctx, r->x);
    gc_mem_free (r->own);
    r->own = NULL;
    r->x = state;
}

//  A decoder the payload carries replaces the one held of its sender (it
//  is applied only to that sender's payloads). -1 on a malformed one.
static int
s_take_codec (gc_replica_t *r, const uint8_t *payload, size_t len, const gc_layout_t *layout,
              gc_err_t *err)
{
    gc_lgc_codec_t *codec = gc_payload_codec (payload, len, layout, err);
    if (!codec)
        return err->code ? -1 : 0;
    gc_lgc_codec_destroy (&r->codec);
    r->codec = codec;
    return 0;
}

//  The replica's next state: payload applied to what it holds (keyframe:
//  to zeros). In place on its own buffer, or, with a store, a store state
//  built once per (base, message) for every engine that receives it (lgc:
//  the same codec id gives the same decoder, so the same state). On an
//  error the replica is as it was, and err says why (GC_E_CODEC: the
//  payload names a decoder not held of its sender).
static int
s_apply (gc_engine_t *self, gc_replica_t *r, const uint8_t *payload, size_t len,
         bool keyframe, gc_err_t *err)
{
    const gc_layout_t *layout = gc_model_layout (self->learn.model);
    if (s_take_codec (r, payload, len, layout, err))
        return -1;
    //  Before the shared store too: a state another receiver decoded is not
    //  one this replica may take without the decoder itself.
    uint64_t id = gc_payload_codec_id (payload, len);
    if (id && !(r->codec && gc_lgc_codec_named (r->codec, id)))
        return gc_err_set (err, GC_E_CODEC, "payload names codec %016llx, not held of peer %u",
                           (unsigned long long) id, r->peer);
    if (!self->gossip.states.find || (!keyframe && r->own)) {
        if (keyframe)
            gc_vec_zero (r->own, self->learn.n);
        return gc_payload_decompress_add_with (payload, len, layout, r->codec, r->own, err);
    }
    const gc_engine_states_t *st = &self->gossip.states;
    const float *base = keyframe ? NULL : r->x;
    const float *next = st->find (st->ctx, base, payload);
    if (!next) {
        float *built = st->alloc (st->ctx);
        if (!built)
            return gc_err_set (err, GC_E_NOMEM, "out of memory for a replica state");
        if (gc_payload_decode_onto_with (payload, len, layout, r->codec, base, built, err)) {
            st->release (st->ctx, built);
            return -1;
        }
        next = st->offer (st->ctx, base, payload, built);
    }
    s_take (self, r, next);
    return 0;
}

static void
s_signal_arrival (gc_engine_t *self)
{
    pthread_mutex_lock (&self->arrive_lock);
    pthread_cond_broadcast (&self->arrived);
    pthread_mutex_unlock (&self->arrive_lock);
}

int
gc_replica_on_delta (gc_engine_t *self, gc_contact_t *c, const gc_msg_header_t *h,
                     const uint8_t *payload, size_t len, int64_t now)
{
    gc_replica_t *r = &self->replicas [c->in];
    pthread_mutex_lock (&r->lock);
    if (r->synced && h->seq <= r->state) {
        pthread_mutex_unlock (&r->lock);
        gc_counter_add (&self->ctr.superseded, 1);      /* already inside a keyframe we hold */
        return GC_WIRE_OK;
    }
    if (!r->synced) {
        pthread_mutex_unlock (&r->lock);
        atomic_store (&r->want_keyframe, true);
        gc_counter_add (&self->ctr.gaps, 1);
        return GC_WIRE_OK;
    }
    //  A gap (a delta in between was lost): apply this one anyway. The replica
    //  then lacks the lost deltas but stays fresh and close, instead of going
    //  stale until the keyframe it asks for arrives and makes it exact again.
    //  Under message loss this is what keeps neighbours in the mix.
    bool gap = h->base_seq != r->state;
    gc_err_t perr = { 0 };
    double t0 = gc_now_s ();
    int bad = s_apply (self, r, payload, len, false, &perr);
    gc_gauge_add (&self->ctr.t_decode, gc_now_s () - t0);
    if (bad && perr.code == GC_E_CODEC) {
        //  Never decoded with a codec it does not hold: a gap, mended by
        //  the keyframe (which carries the decoder).
        r->inexact = true;
        pthread_mutex_unlock (&r->lock);
        atomic_store (&r->want_keyframe, true);
        gc_counter_add (&self->ctr.gaps, 1);
        return GC_WIRE_OK;
    }
    if (bad) {
        pthread_mutex_unlock (&r->lock);
        return GC_REJECT_BAD_PAYLOAD;
    }
    if (gap) {
        atomic_store (&r->want_keyframe, true);
        gc_counter_add (&self->ctr.gaps, 1);
        r->inexact = true;
    }
    r->state = h->seq;
    r->round = h->round;
    r->arrival = now;
    pthread_mutex_unlock (&r->lock);
    gc_counter_add (&self->ctr.deltas_applied, 1);
    s_signal_arrival (self);
    return GC_WIRE_OK;
}

int
gc_replica_on_keyframe (gc_engine_t *self, gc_contact_t *c, const gc_msg_header_t *h,
                        const uint8_t *payload, size_t len, int64_t now)
{
    gc_replica_t *r = &self->replicas [c->in];
    pthread_mutex_lock (&r->lock);
    //  an inexact replica (deltas were lost) takes a keyframe of its current
    //  state too: that is what it asked for
    if (r->synced && (h->base_seq < r->state || (h->base_seq == r->state && !r->inexact))) {
        pthread_mutex_unlock (&r->lock);
        gc_counter_add (&self->ctr.superseded, 1);
        return GC_WIRE_OK;
    }
    gc_err_t perr = { 0 };
    if (s_apply (self, r, payload, len, true, &perr)) {
        r->synced = false;
        pthread_mutex_unlock (&r->lock);
        atomic_store (&r->want_keyframe, true);
        return GC_REJECT_BAD_PAYLOAD;
    }
    r->state = h->base_seq;
    r->round = h->round;
    r->synced = true;
    r->inexact = false;
    r->arrival = now;
    atomic_store (&r->want_keyframe, false);
    pthread_mutex_unlock (&r->lock);
    gc_counter_add (&self->ctr.keyframes_recv, 1);
    s_signal_arrival (self);
    return GC_WIRE_OK;
}

const float *
gc_replica_of (gc_engine_t *self, uint32_t peer)
{
    gc_contact_t *c = gc_engine_contact (self, peer);
    if (!c || c->in < 0)
        return NULL;
    GC_ASSERT_LOCKED (&self->replicas [c->in].lock);
    if (!self->replicas [c->in].synced)
        return NULL;
    return self->replicas [c->in].x;
}

size_t
gc_replica_collect_fresh (gc_engine_t *self)
{
    size_t count = 0;
    uint64_t round = self->round;
    for (size_t i = 0; i < self->n_in; i++) {
        gc_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        self->fresh [i] = r->synced && r->round >= round;
        self->arrivals [i] = self->fresh [i] ? r->arrival : -1;
        pthread_mutex_unlock (&r->lock);
        count += self->fresh [i];
    }
    return count;
}

//  Median round of the synced in-neighbours: a peer far behind it (frozen,
//  restarted, slow) jumps forward. The median keeps a Byzantine minority
//  from dragging the round anywhere.
void
gc_replica_catch_up (gc_engine_t *self)
{
    uint64_t rounds [self->n_in ? self->n_in : 1];
    size_t m = 0;
    for (size_t i = 0; i < self->n_in; i++) {
        gc_replica_t *r = &self->replicas [i];
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
    if (median > self->round && median - self->round > self->cfg.staleness) {
        self->round = median < self->cfg.rounds ? median : self->cfg.rounds;
        gc_counter_add (&self->ctr.catchups, 1);
    }
}

void
gc_replica_invalidate_all (gc_engine_t *self)
{
    for (size_t i = 0; i < self->n_in; i++) {
        gc_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        r->synced = false;
        pthread_mutex_unlock (&r->lock);
        atomic_store (&r->want_keyframe, true);
    }
}

void
gc_engine_share_states (gc_engine_t *self, const gc_engine_states_t *states, const float *initial)
{
    self->gossip.states = *states;
    if (!initial || memcmp (initial, self->learn.x, self->learn.n * sizeof *self->learn.x))
        return;
    for (size_t i = 0; i < self->n_in; i++) {
        gc_replica_t *r = &self->replicas [i];
        pthread_mutex_lock (&r->lock);
        if (r->synced && r->state == 0 && r->own) {
            states->hold (states->ctx, initial);
            s_take (self, r, initial);
        }
        pthread_mutex_unlock (&r->lock);
    }
}

//  ---------------------------------------------------------------------------
//  keyframes

//  A keyframe of pub to dests. A new state (after a jump of x) first takes a
//  state id of its own, so that later deltas build on it.
int
gc_keyframe_send (gc_engine_t *self, const uint32_t *dests, size_t n_dests, gc_err_t *err)
{
    if (gc_compressor_compress (self->gossip.kf_comp, self->learn.pub, self->round,
                                &self->gossip.kf_payload, err))
        return -1;
    //  An lgc sender's keyframes carry its decoder: what a restarted, late
    //  or lossy receiver needs to decode its next deltas.
    const gc_lgc_codec_t *codec = gc_compressor_codec (self->gossip.comp);
    if (codec && gc_payload_attach_codec (&self->gossip.kf_payload, codec, err))
        return -1;
    if (gc_engine_send (self, dests, n_dests, GC_MSG_KEYFRAME, 0, self->state,
                        self->gossip.kf_payload.data, self->gossip.kf_payload.len, err))
        return -1;
    gc_counter_add (&self->ctr.keyframes_sent, n_dests);
    return 0;
}

int
gc_keyframe_send_model (gc_engine_t *self, const uint32_t *dests, size_t n, const float *model,
                        gc_err_t *err)
{
    if (gc_compressor_compress (self->gossip.kf_comp, model, self->round, &self->gossip.kf_payload, err))
        return -1;
    uint64_t state = ++self->seq;
    return gc_engine_send (self, dests, n, GC_MSG_KEYFRAME, 0, state, self->gossip.kf_payload.data,
                           self->gossip.kf_payload.len, err);
}

int
gc_keyframe_serve (gc_engine_t *self, gc_err_t *err)
{
    for (size_t i = 0; i < self->n_contacts; i++) {
        gc_contact_t *c = &self->contacts [i];
        if (c->out && atomic_exchange (&c->keyframe_pending, false))
            if (gc_keyframe_send (self, &c->peer, 1, err))
                return -1;
    }
    return 0;
}

int
gc_keyframe_request (gc_engine_t *self, int64_t now, gc_err_t *err)
{
    for (size_t i = 0; i < self->n_in; i++) {
        gc_replica_t *r = &self->replicas [i];
        if (!atomic_load (&r->want_keyframe) || gc_engine_excluded (self, r->peer)
        ||  (r->last_request && now - r->last_request < self->cfg.keyframe_interval_ns))
            continue;
        r->last_request = now;
        pthread_mutex_lock (&r->lock);
        uint64_t have = r->synced ? r->state : 0;
        pthread_mutex_unlock (&r->lock);
        //  payload: the target's peer id; base_seq: the state we hold of it
        if (gc_engine_send (self, &r->peer, 1, GC_MSG_KEYFRAME_REQUEST, 0, have,
                            self->cfg.peer_ids [r->peer], 8, err))
            return -1;
        gc_counter_add (&self->ctr.kf_requests_sent, 1);
    }
    return 0;
}
