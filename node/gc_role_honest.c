//  The honest role, and labelflip (honest messages, trained on flipped
//  labels).
#include "gc_engine_internal.h"

#include <stdlib.h>

#include "gc_time.h"
#include "gc_vec.h"

int
gc_role_publish_delta (gc_engine_t *self, gc_err_t *err)
{
    double t0 = gc_now_s ();
    //  prev moves on before the step: a failed step ends the process
    gc_vec_advance (self->learn.update, self->learn.x, self->learn.prev, self->learn.n);
    bool exact = false;
    bool through = gc_ec_passes_through (self->gossip.ec);
    double compute_s = self->gossip.compute_s;
    gc_policy_set_env (self->gossip.policy,
                       compute_s > 0 ? compute_s : gc_gauge_get (&self->ctr.t_last_train), 0);
    //  The whole round, publish to publish: the driver's, else the wall clock's.
    double round_s = self->gossip.round_s;
    if (!(round_s > 0) && self->gossip.publish_t > 0)
        round_s = t0 - self->gossip.publish_t;
    self->gossip.publish_t = t0;
    gc_policy_set_round (self->gossip.policy, round_s);
    if (gc_ec_step (self->gossip.ec, self->learn.update, self->round, &self->gossip.payload,
                    through ? NULL : self->learn.sent, &exact, err))
        return -1;
    //  Every neighbour would refuse it as oversize and the peer would train
    //  alone, quietly: a configuration error (e.g. qsgd with bucket=1).
    size_t limit = gc_engine_max_payload (self);
    if (self->gossip.payload.len > limit)
        return gc_err_set (err, GC_E_CONFIG,
                           "compress '%s': %zu-byte payload, over the %zu a receiver takes "
                           "(a keyframe's); lower the ratio or levels, or enlarge buckets",
                           self->cfg.compress, self->gossip.payload.len, limit);
    if (through)                        /* sent would be 0 + update: pub + sent without it */
        for (size_t i = 0; i < self->learn.n; i++)
            self->learn.pub [i] += 0.0f + self->learn.update [i];
    else
        gc_vec_axpy (self->learn.pub, 1.0f, self->learn.sent, self->learn.n);
    gc_unsent_published (self, exact || through);
    gc_gauge_add (&self->ctr.t_compress, gc_now_s () - t0);
    gc_gauge_set (&self->ctr.send_budget, gc_policy_budget (self->gossip.policy));
    if (gc_ec_skipped (self->gossip.ec))
        gc_counter_add (&self->ctr.sends_skipped, 1);
    uint64_t base = self->state;
    if (gc_engine_send (self, self->out_peers, self->n_out, GC_MSG_DELTA, exact ? GC_WIRE_FLAG_EXACT : 0,
                        base, self->gossip.payload.data, self->gossip.payload.len, err))
        return -1;
    self->state = self->seq;
    gc_counter_add (&self->ctr.dense_equiv, self->n_out * (GC_WIRE_HEADER_SIZE + 4 * self->learn.n));
    return 0;
}

//  x jumped (resume, or a reset after a non-finite model): pub, prev and the
//  EC residual restart from x, announced as a new state by keyframe.
static int
s_publish_fresh_state (gc_engine_t *self, gc_err_t *err)
{
    gc_vec_copy (self->learn.pub, self->learn.x, self->learn.n);
    gc_vec_copy (self->learn.prev, self->learn.x, self->learn.n);
    float *residual = gc_ec_residual (self->gossip.ec);
    if (residual)
        gc_vec_zero (residual, self->learn.n);
    self->state = ++self->seq;          /* a state id of its own */
    self->learn.fresh_state = false;
    return gc_keyframe_send (self, self->out_peers, self->n_out, err);
}

static int
s_publish (gc_engine_t *self, gc_role_t *role, int64_t now, gc_err_t *err)
{
    (void) role;
    (void) now;
    if (!gc_vec_all_finite (self->learn.x, self->learn.n)) {
        //  Training diverged: publish nothing this round; the mix replaces x
        //  by the aggregate of the neighbours (or, with none usable, by the
        //  last public state) and the next publish announces it.
        gc_counter_add (&self->ctr.diverged, 1);
        self->learn.fresh_state = true;
    }
    else
    if (self->learn.fresh_state) {
        if (s_publish_fresh_state (self, err))
            return -1;
    }
    else
    if (gc_role_publish_delta (self, err))
        return -1;
    if (self->cfg.keyframe_every && self->round && self->round % self->cfg.keyframe_every == 0)
        if (gc_keyframe_send (self, self->out_peers, self->n_out, err))
            return -1;
    return 0;
}

const gc_role_ops_t gc_role_honest = {
    .name = "honest",
    .publish = s_publish,
};

//  labelflip: train on a copy of the shard with labels c -> C-1-c.
static const gc_dataset_t *
s_flip_labels (gc_role_t *role, const gc_dataset_t *shard, gc_err_t *err)
{
    gc_dataset_t *flipped = calloc (1, sizeof *flipped);
    uint32_t *all = malloc ((shard->n ? shard->n : 1) * sizeof *all);
    if (!flipped || !all) {
        free (flipped);
        free (all);
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < shard->n; i++)
        all [i] = (uint32_t) i;
    int rc = gc_dataset_subset (shard, all, shard->n, flipped, err);
    free (all);
    if (rc) {
        gc_dataset_free (flipped);
        free (flipped);
        return NULL;
    }
    for (size_t i = 0; i < flipped->n; i++)
        flipped->y [i] = (uint8_t) (flipped->n_classes - 1 - flipped->y [i]);
    role->state = flipped;
    return flipped;
}

static void
s_labelflip_destroy (gc_role_t *role)
{
    gc_dataset_t *flipped = role->state;
    gc_dataset_free (flipped);
    free (flipped);
}

const gc_role_ops_t gc_role_labelflip = {
    .name = "labelflip",
    .destroy = s_labelflip_destroy,
    .train_data = s_flip_labels,
    .publish = s_publish,
};
