//  Byzantine roles that break the protocol instead of the model: what an
//  honest receiver must refuse (and count) without harm. replay, untrusted,
//  malformed, flood, nan, silent, fork (gc_attack.h).
#include "gc_engine_internal.h"

#include <stdlib.h>

#include "gc_mem.h"
#include "gc_rng.h"
#include "gc_vec.h"

#define S_SAVED 4

typedef struct {
    gc_rng_t  rng;
    uint64_t  count;            /* rounds published: picks the variant */
    gc_key_t *key;              /* untrusted: a key no one trusts */
    float    *z;                /* nan: the model it sends */
    gc_buf_t  saved [S_SAVED];  /* replay: old messages, header + payload */
    size_t    n_saved;
} s_protocol_t;

static void
s_destroy (gc_role_t *role)
{
    s_protocol_t *st = role->state;
    gc_key_destroy (&st->key);
    gc_mem_free (st->z);
    for (size_t i = 0; i < st->n_saved; i++)
        gc_buf_free (&st->saved [i]);
    free (st);
}

static int
s_build (gc_engine_t *self, gc_role_t *role, gc_err_t *err)
{
    s_protocol_t *st = calloc (1, sizeof *st);
    if (!st)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    role->state = st;
    gc_rng_init (&st->rng, self->cfg.seed, 0xBAD0 + self->cfg.self);
    if (role->attack.kind == GC_ATTACK_NAN && !(st->z = gc_falloc (self->learn.n)))
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    if (role->attack.kind == GC_ATTACK_UNTRUSTED) {
        uint8_t seed [32];
        for (int i = 0; i < 32; i++)
            seed [i] = (uint8_t) gc_rng_next (&st->rng);
        st->key = gc_key_from_seed (seed, err);
        if (!st->key)
            return -1;
    }
    return 0;
}

//  replay: honest updates, and one of the first messages again
static void
s_replay_capture (gc_engine_t *self, gc_role_t *role, const uint8_t *header,
                  const uint8_t *payload, size_t len)
{
    (void) self;
    s_protocol_t *st = role->state;
    //  keep the first few messages, to be sent again later
    if (st->n_saved >= S_SAVED)
        return;
    gc_buf_t *b = &st->saved [st->n_saved];
    gc_buf_init (b);
    if (gc_buf_append (b, header, GC_WIRE_HEADER_SIZE, NULL) || gc_buf_append (b, payload, len, NULL))
        gc_buf_free (b);
    else
        st->n_saved++;
}

static int
s_replay (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    (void) now;
    s_protocol_t *st = role->state;
    if (gc_role_publish_delta (self, err))
        return -1;
    if (st->n_saved && self->round > 4) {
        gc_buf_t *b = &st->saved [st->count++ % st->n_saved];
        return self->io.send (self->io.ctx, self->out_peers, self->n_out, b->data,
                              GC_WIRE_HEADER_SIZE, b->data + GC_WIRE_HEADER_SIZE,
                              b->len - GC_WIRE_HEADER_SIZE);
    }
    return 0;
}

static int
s_untrusted (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    (void) now;
    s_protocol_t *st = role->state;
    size_t n = self->learn.n;
    gc_vec_sub (self->learn.update, self->learn.x, self->learn.prev, n);
    gc_vec_copy (self->learn.prev, self->learn.x, n);
    if (gc_compressor_compress (self->gossip.comp, self->learn.update, self->round,
                                &self->gossip.payload, err))
        return -1;
    uint64_t seq = ++self->seq;
    return gc_engine_send_seq (self, self->out_peers, self->n_out, GC_MSG_DELTA, 0, seq, seq - 1,
                               self->gossip.payload.data, self->gossip.payload.len, st->key, err);
}

//  Frames an honest decoder must refuse, a different kind each round.
static int
s_malformed (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    (void) now;
    s_protocol_t *st = role->state;
    size_t big = gc_engine_max_payload (self) + 1;
    uint8_t *junk = malloc (big);
    if (!junk)
        return gc_err_set (err, GC_E_SYS, "transport refused garbage");
    for (size_t i = 0; i < big; i++)
        junk [i] = (uint8_t) gc_rng_next (&st->rng);
    static const size_t lengths [4][2] = {
        { GC_WIRE_HEADER_SIZE, 4096 },      /* random bytes */
        { 50, 10 },                         /* truncated header */
        { GC_WIRE_HEADER_SIZE + 7, 100 },   /* wrong header length */
        { GC_WIRE_HEADER_SIZE, 0 },         /* oversized payload (below) */
    };
    size_t which = st->count++ % 4;
    size_t plen = which == 3 ? big : lengths [which][1];
    int rc = self->io.send (self->io.ctx, self->out_peers, self->n_out, junk, lengths [which][0],
                            junk, plen);
    free (junk);
    return rc ? gc_err_set (err, GC_E_SYS, "transport refused garbage") : 0;
}

//  Per round 50 times: a keyframe request to each neighbour and a validly
//  signed delta with an undecodable payload.
static int
s_flood (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    (void) now;
    s_protocol_t *st = role->state;
    uint8_t garbage [64];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage [i] = (uint8_t) gc_rng_next (&st->rng);
    for (int i = 0; i < 50; i++) {
        for (size_t j = 0; j < self->n_out; j++)
            if (gc_engine_send (self, &self->out_peers [j], 1, GC_MSG_KEYFRAME_REQUEST, 0, 0,
                                self->cfg.peer_ids [self->out_peers [j]], 8, err))
                return -1;
        if (gc_engine_send (self, self->out_peers, self->n_out, GC_MSG_DELTA, 0, self->state,
                            garbage, sizeof garbage, err))
            return -1;
    }
    return 0;
}

//  NaN in a payload (the decoder refuses it), then huge finite values whose
//  sum overflows in the replica (the aggregator refuses that).
static int
s_nan (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    (void) now;
    s_protocol_t *st = role->state;
    gc_buf_t *kf = &self->gossip.kf_payload;
    if (st->count++ % 2 == 0) {
        gc_vec_zero (st->z, self->learn.n);
        if (gc_compressor_compress (self->gossip.kf_comp, st->z, self->round, kf, err))
            return -1;
        static const uint8_t nan_bytes [4] = { 0x00, 0x00, 0xC0, 0x7F };   /* quiet NaN, LE */
        memcpy (kf->data + kf->len - 4, nan_bytes, 4);
        return gc_engine_send (self, self->out_peers, self->n_out, GC_MSG_KEYFRAME, 0, ++self->seq,
                               kf->data, kf->len, err);
    }
    for (size_t i = 0; i < self->learn.n; i++)
        st->z [i] = 3.0e38f;
    if (gc_keyframe_send_model (self, self->out_peers, self->n_out, st->z, err))
        return -1;
    //  a delta of the same size on top: the replica overflows to Inf
    uint64_t state = self->seq - 1;
    if (gc_compressor_compress (self->gossip.kf_comp, st->z, self->round, kf, err))
        return -1;
    return gc_engine_send (self, self->out_peers, self->n_out, GC_MSG_DELTA, 0, state,
                           kf->data, kf->len, err);
}

//  Two deltas under one seq, each validly signed: the update to the first
//  half of the neighbours, the update negated to the second half. The halves
//  share one neighbour, which gets both: an equivocator whose two versions
//  meet somewhere, as they do once anyone compares notes. That peer proves
//  it, and the proof reaches the others (gc_equiv.c).
static int
s_fork (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    (void) role;
    (void) now;
    size_t n = self->learn.n, half = (self->n_out + 1) / 2, seam = half ? half - 1 : 0;
    gc_vec_sub (self->learn.update, self->learn.x, self->learn.prev, n);
    gc_vec_copy (self->learn.prev, self->learn.x, n);
    uint64_t base = self->state, seq = ++self->seq;
    for (int part = 0; part < 2; part++) {
        if (part)
            gc_vec_scale (self->learn.update, -1.0f, n);
        if (gc_compressor_compress (self->gossip.comp, self->learn.update, self->round,
                                    &self->gossip.payload, err))
            return -1;
        const uint32_t *dests = self->out_peers + (part ? seam : 0);
        size_t k = part ? self->n_out - seam : half;
        if (gc_engine_send_seq (self, dests, k, GC_MSG_DELTA, 0, seq, base, self->gossip.payload.data,
                                self->gossip.payload.len, self->cfg.key, err))
            return -1;
    }
    self->state = seq;
    return 0;
}

static int
s_silent (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    (void) self;
    (void) role;
    (void) now;
    (void) err;
    return 0;
}

const gc_role_ops_t gc_role_replay = {
    .name = "replay", .build = s_build, .destroy = s_destroy, .publish = s_replay,
    .on_sent = s_replay_capture,
};
const gc_role_ops_t gc_role_untrusted = {
    .name = "untrusted", .build = s_build, .destroy = s_destroy, .publish = s_untrusted,
};
const gc_role_ops_t gc_role_malformed = {
    .name = "malformed", .build = s_build, .destroy = s_destroy, .publish = s_malformed,
};
const gc_role_ops_t gc_role_flood = {
    .name = "flood", .build = s_build, .destroy = s_destroy, .publish = s_flood,
};
const gc_role_ops_t gc_role_nan = {
    .name = "nan", .build = s_build, .destroy = s_destroy, .publish = s_nan,
};
const gc_role_ops_t gc_role_fork = {
    .name = "fork", .publish = s_fork,
};
const gc_role_ops_t gc_role_silent = {
    .name = "silent", .silent = true, .publish = s_silent,
};
