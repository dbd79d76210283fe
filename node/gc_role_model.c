//  Byzantine roles that send crafted models (gc_attack.h has the math):
//  signflip, noise, alie, ipm, dissensus, mimic, equivocate, minmax, minsum,
//  stealth (late:R: honest before round R). Each round the
//  role observes (its own model and synced replicas, or the simulator's
//  omniscient view), picks a target and sends it as a keyframe of a fresh
//  state, so the victims' replicas of this peer become exactly the target.
#include "gc_engine_internal.h"

#include <math.h>
#include <stdlib.h>

#include "gc_attack_adaptive.h"
#include "gc_mem.h"
#include "gc_rng.h"
#include "gc_vec.h"

typedef struct {
    double    alie_z;
    float    *mean, *std, *prev, *z, *z2;
    float    *rms;              /* gc_attack_scale's scratch: one per input */
    float    *hist;             /* stealth: each victim's model last round (n_out x n) */
    bool     *have_hist;        /* stealth: per victim, hist holds a model */
    float     scale;            /* the observed models' scale (gc_attack_scale) */
    bool      have_prev;
    gc_rng_t  rng;
} s_model_t;

static void
s_destroy (gc_role_t *role)
{
    s_model_t *st = role->state;
    float *bufs [] = { st->mean, st->std, st->prev, st->z, st->z2, st->rms, st->hist };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        gc_mem_free (bufs [i]);
    free (st->have_hist);
    free (st);
}

static int
s_build (gc_engine_t *self, gc_role_t *role, gc_err_t *err)
{
    s_model_t *st = calloc (1, sizeof *st);
    if (!st)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    role->state = st;
    gc_rng_init (&st->rng, self->cfg.seed, 0xBAD0 + self->cfg.self);
    //  ALIE's default z: a victim aggregates about as many inputs as we have
    //  neighbours plus itself, one of them (us) Byzantine.
    st->alie_z = gc_attack_alie_z (self->n_in + 1, 1);
    float **bufs [] = { &st->mean, &st->std, &st->prev, &st->z, &st->z2 };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs [0]; i++)
        if (!(*bufs [i] = gc_falloc (self->learn.n)))
            return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    if (!(st->rms = gc_falloc (self->n_in + 1)))
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    if (role->attack.kind == GC_ATTACK_STEALTH && self->n_out > 0
    &&  (!(st->hist = gc_falloc (self->n_out * self->learn.n))
         || !(st->have_hist = calloc (self->n_out, sizeof *st->have_hist))))
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    return 0;
}

//  Noise and equivocate draw around the models' scale; IPM steps from the
//  previous mean. Other attacks skip the passes these cost.
static bool
s_needs_scale (const gc_role_t *role)
{
    return role->attack.kind == GC_ATTACK_NOISE || role->attack.kind == GC_ATTACK_EQUIVOCATE;
}

//  mean and std of what the attacker observes: its own model and its synced
//  replicas.
static void
s_observe (gc_engine_t *self, gc_role_t *role, s_model_t *st)
{
    size_t n = self->learn.n;
    const gc_engine_observer_t *oracle = self->cfg.observer;
    if (oracle) {
        oracle->moments (oracle->ctx, self->cfg.self, st->mean, st->std);
        const float *honest_mean = st->mean;     /* of honest models only */
        if (s_needs_scale (role))
            st->scale = gc_attack_scale (&honest_mean, 1, n, st->rms);
        if (!st->have_prev) {
            gc_vec_copy (st->prev, st->mean, n);
            st->have_prev = true;
        }
        return;
    }
    size_t k = 0;
    if (gc_vec_all_finite (self->learn.x, n))
        self->inputs [k++] = self->learn.x;
    for (size_t i = 0; i < self->n_in; i++) {
        pthread_mutex_lock (&self->replicas [i].lock);
        if (self->replicas [i].synced && gc_vec_all_finite (self->replicas [i].x, n))
            self->inputs [k++] = self->replicas [i].x;
    }
    if (k == 0)
        self->inputs [k++] = self->learn.pub;
    gc_attack_moments (self->inputs, k, n, st->mean, st->std);
    if (s_needs_scale (role))
        st->scale = gc_attack_scale ((const float *const *) self->inputs, k, n, st->rms);
    for (size_t i = 0; i < self->n_in; i++)
        pthread_mutex_unlock (&self->replicas [i].lock);
    if (!st->have_prev) {
        gc_vec_copy (st->prev, st->mean, n);
        st->have_prev = true;
    }
}

//  A victim's model as the attacker sees it: the omniscient view's, or its
//  replica. Replicas are written by the network thread, so the replica's
//  lock is taken here and released by s_victim_done. NULL when the attacker
//  has neither.
static const float *
s_victim (gc_engine_t *self, uint32_t peer, gc_contact_t **cp)
{
    gc_contact_t *c = gc_engine_contact (self, peer);
    if (c && c->in >= 0)
        pthread_mutex_lock (&self->replicas [c->in].lock);
    *cp = c;
    const float *victim = self->cfg.observer ? self->cfg.observer->model (self->cfg.observer->ctx, peer) : NULL;
    return victim ? victim : gc_replica_of (self, peer);
}

static void
s_victim_done (gc_engine_t *self, gc_contact_t *c)
{
    if (c && c->in >= 0)
        pthread_mutex_unlock (&self->replicas [c->in].lock);
}

//  What a per-victim attack writes into st->z for out-neighbour i, whose
//  model the attacker sees as victim.
typedef void (s_victim_fn) (const gc_attack_t *a, s_model_t *st, size_t i, const float *victim,
                            size_t n);

//  One target per victim, each sent to that victim alone; a victim the
//  attacker sees nothing of stands at the observed mean.
static int
s_per_victim (gc_engine_t *self, const gc_attack_t *a, s_model_t *st, s_victim_fn *target,
              gc_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < self->n_out; i++) {
        gc_contact_t *c;
        const float *victim = s_victim (self, self->out_peers [i], &c);
        target (a, st, i, victim ? victim : st->mean, self->learn.n);
        s_victim_done (self, c);
        rc = gc_keyframe_send_model (self, &self->out_peers [i], 1, st->z, err);
    }
    return rc;
}

//  Dissensus: each out-neighbour is pushed away from the mean.
static void
s_dissensus_target (const gc_attack_t *a, s_model_t *st, size_t i, const float *victim, size_t n)
{
    (void) i;
    gc_attack_dissensus (a->param, victim, st->mean, n, st->z);
}

//  Stealth: a push of K times how far the victim moved since the last round
//  (the size self-centred clipping lets through), RHO of it along ALIE's
//  direction; a victim not seen before gets its own model back. The
//  round's directions are in st->prev (e) and st->z2 (xi), IPM's and
//  equivocate's buffers, which this attack does not otherwise use.
static void
s_stealth_target (const gc_attack_t *a, s_model_t *st, size_t i, const float *victim, size_t n)
{
    float *last = st->hist + i * n;
    double step = st->have_hist [i] ? sqrt (gc_vec_dist2sq (victim, last, n)) : 0.0;
    gc_attack_stealth (a->param, a->param2, step, victim, st->prev, st->z2, n, st->z);
    gc_vec_copy (last, victim, n);
    st->have_hist [i] = true;
}

//  Two different models under one seq: half the neighbours get each.
static int
s_equivocate (gc_engine_t *self, const gc_attack_t *a, s_model_t *st, gc_err_t *err)
{
    size_t n = self->learn.n;
    gc_attack_target (a, 0, st->mean, st->std, st->prev, st->scale, n, &st->rng, st->z);
    for (size_t i = 0; i < n; i++)
        st->z2 [i] = 2.0f * st->mean [i] - st->z [i];
    uint64_t state = ++self->seq, seq = ++self->seq;
    size_t half = (self->n_out + 1) / 2;
    const float *models [2] = { st->z, st->z2 };
    int rc = 0;
    for (int part = 0; rc == 0 && part < 2; part++) {
        rc = gc_compressor_compress (self->gossip.kf_comp, models [part], self->round,
                                     &self->gossip.kf_payload, err);
        if (rc == 0)
            rc = gc_engine_send_seq (self, self->out_peers + (part ? half : 0),
                                     part ? self->n_out - half : half, GC_MSG_KEYFRAME, 0, seq, state,
                                     self->gossip.kf_payload.data, self->gossip.kf_payload.len,
                                     self->cfg.key, err);
    }
    return rc;
}

//  The first in-neighbour's model (the omniscient view's, or our replica).
static const float *
s_mimic (gc_engine_t *self, s_model_t *st)
{
    if (self->n_in == 0) {
        gc_vec_copy (st->z, st->mean, self->learn.n);
        return st->z;
    }
    pthread_mutex_lock (&self->replicas [0].lock);
    const float *model = self->replicas [0].synced ? self->replicas [0].x : st->mean;
    if (self->cfg.observer) {
        const float *seen = self->cfg.observer->model (self->cfg.observer->ctx, self->replicas [0].peer);
        model = seen ? seen : model;
    }
    gc_vec_copy (st->z, model, self->learn.n);
    pthread_mutex_unlock (&self->replicas [0].lock);
    return st->z;
}

//  minmax / minsum over the models the attacker sees: its victims' when
//  omniscient, else its own and its replicas (gc_attack_adaptive.h).
static int
s_minmax (gc_engine_t *self, const gc_attack_t *a, s_model_t *st, gc_err_t *err)
{
    const gc_engine_observer_t *oracle = self->cfg.observer;
    size_t k = 0;
    self->inputs [k++] = self->learn.x;
    for (size_t i = 0; i < self->n_in; i++)
        pthread_mutex_lock (&self->replicas [i].lock);
    for (size_t i = 0; i < self->n_in; i++) {
        const float *m = oracle ? oracle->model (oracle->ctx, self->replicas [i].peer) : NULL;
        if (!m && self->replicas [i].synced)
            m = self->replicas [i].x;
        if (m && gc_vec_all_finite (m, self->learn.n))
            self->inputs [k++] = m;
    }
    gc_attack_minmax (self->inputs, k, self->learn.n, st->mean, st->std,
                      a->kind == GC_ATTACK_MINSUM, st->z);
    for (size_t i = 0; i < self->n_in; i++)
        pthread_mutex_unlock (&self->replicas [i].lock);
    return gc_keyframe_send_model (self, self->out_peers, self->n_out, st->z, err);
}

static int
s_publish (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    const gc_attack_t *a = &role->attack;
    //  late:R: an honest peer (trains, sends its updates) until round R,
    //  so that histories built on its past behaviour vouch for it.
    if ((double) self->round < a->start)
        return gc_role_honest.publish (self, role, now, err);
    s_model_t *st = role->state;
    s_observe (self, role, st);
    int rc;
    if (a->kind == GC_ATTACK_DISSENSUS)
        rc = s_per_victim (self, a, st, s_dissensus_target, err);
    else
    if (a->kind == GC_ATTACK_STEALTH) {
        gc_attack_stealth_dirs (st->std, self->learn.n, a->balanced, &st->rng, st->prev, st->z2);
        rc = s_per_victim (self, a, st, s_stealth_target, err);
    }
    else
    if (a->kind == GC_ATTACK_MINMAX || a->kind == GC_ATTACK_MINSUM)
        rc = s_minmax (self, a, st, err);
    else
    if (a->kind == GC_ATTACK_EQUIVOCATE)
        rc = s_equivocate (self, a, st, err);
    else {
        const float *model = st->z;
        if (a->kind == GC_ATTACK_MIMIC)
            model = s_mimic (self, st);
        else
            gc_attack_target (a, st->alie_z, st->mean, st->std, st->prev, st->scale,
                              self->learn.n, &st->rng, st->z);
        rc = gc_keyframe_send_model (self, self->out_peers, self->n_out, model, err);
    }
    if (a->kind == GC_ATTACK_IPM)
        gc_vec_copy (st->prev, st->mean, self->learn.n);
    return rc;
}

const gc_role_ops_t gc_role_model = {
    .name = "model",
    .build = s_build,
    .destroy = s_destroy,
    .publish = s_publish,
};
