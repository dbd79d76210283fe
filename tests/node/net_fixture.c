#include "net_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_partition.h"
#include "gc_vec.h"
#include "gc_test.h"

void
net_config_defaults (gc_engine_config_t *cfg)
{
    gc_engine_config_defaults (cfg);
    cfg->model = "64-32-10";
    cfg->batch = 16;
    cfg->local_steps = 2;
    cfg->rounds = 60;
    cfg->compress = "topk:0.1";
    cfg->ec = "liec:20";
    cfg->aggregator = "cwtm:1";
    cfg->wait = "sync";
    cfg->keyframe_interval_ns = 0;
}

static int
s_send (void *ctx, const uint32_t *dests, size_t n_dests, const uint8_t *header, size_t hlen,
        const uint8_t *payload, size_t plen)
{
    net_t *self = ((net_io_t *) ctx)->net;
    uint32_t from = ((net_io_t *) ctx)->peer;
    for (size_t i = 0; i < n_dests; i++) {
        if (self->queued == self->cap) {
            self->cap = self->cap ? 2 * self->cap : 64;
            self->queue = realloc (self->queue, self->cap * sizeof *self->queue);
            assert_non_null (self->queue);
        }
        net_msg_t *m = &self->queue [self->queued++];
        m->from = from;
        m->to = dests [i];
        m->header = malloc (hlen);
        m->payload = malloc (plen ? plen : 1);
        assert_non_null (m->header);
        assert_non_null (m->payload);
        memcpy (m->header, header, hlen);
        memcpy (m->payload, payload, plen);
        m->header_len = hlen;
        m->payload_len = plen;
    }
    return 0;
}

//  Takes the payload: queues copies as s_send does, then frees the block,
//  so that an engine still using it is a use after free under ASan.
static int
s_send_owned (void *ctx, const uint32_t *dests, size_t n_dests, const uint8_t *header, size_t hlen,
              uint8_t *payload, size_t plen)
{
    s_send (ctx, dests, n_dests, header, hlen, payload, plen);
    ((net_io_t *) ctx)->net->taken++;
    free (payload);
    return 0;
}

static net_t *
s_net_new (uint32_t n, const char *topology, const gc_engine_config_t *cfg,
           const char *const *attacks, bool taking)
{
    assert_true (n <= NET_MAX_PEERS);
    net_t *self = calloc (1, sizeof *self);
    assert_non_null (self);
    self->n = n;
    gc_err_t err = { 0 };
    self->topology = gc_topology_new (topology, n, cfg->seed, &err);
    assert_non_null (self->topology);
    self->trust = gc_trust_new ();
    for (uint32_t i = 0; i < n; i++) {
        uint8_t seed [32] = { 0 };
        seed [0] = (uint8_t) (i + 1);
        self->keys [i] = gc_key_from_seed (seed, &err);
        assert_non_null (self->keys [i]);
        memcpy (self->ids [i], gc_key_peer_id (self->keys [i]), 8);
        assert_int_equal (gc_trust_add_raw (self->trust, gc_key_public_raw (self->keys [i]), "test key", &err), 0);
    }
    assert_int_equal (gc_dataset_synthetic (3, 400 * n, 1000, 64, 10, &self->train, &self->test, &err), 0);
    gc_dataset_standardise (&self->train, &self->test);
    gc_split_t split = { .kind = GC_SPLIT_IID };
    for (uint32_t i = 0; i < n; i++) {
        uint32_t *idx;
        size_t count;
        assert_int_equal (gc_partition_peer (self->train.y, self->train.n, 10, &split, n, 1, i,
                                             &idx, &count, &err), 0);
        assert_int_equal (gc_dataset_subset (&self->train, idx, count, &self->shards [i], &err), 0);
        free (idx);
    }
    for (uint32_t i = 0; i < n; i++) {
        gc_engine_config_t c = *cfg;
        c.self = i;
        c.topology = self->topology;
        c.key = self->keys [i];
        c.trust = self->trust;
        c.peer_ids = (const uint8_t (*) [8]) self->ids;
        c.train = &self->shards [i];
        c.test = &self->test;
        c.attack = attacks ? attacks [i] : NULL;
        self->byzantine [i] = c.attack && *c.attack;
        self->io_ctx [i].net = self;
        self->io_ctx [i].peer = i;
        gc_engine_io_t io = { .ctx = &self->io_ctx [i], .send = s_send,
                              .send_owned = taking ? s_send_owned : NULL };
        self->cfgs [i] = c;
        self->engines [i] = gc_engine_new (&c, &io, &err);
        if (!self->engines [i])
            fail_msg ("engine %u: %s", i, err.msg);
    }
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal (gc_engine_start (self->engines [i], self->now), 0);
    return self;
}

net_t *
net_new (uint32_t n, const char *topology, const gc_engine_config_t *cfg,
         const char *const *attacks)
{
    return s_net_new (n, topology, cfg, attacks, false);
}

net_t *
net_new_taking (uint32_t n, const char *topology, const gc_engine_config_t *cfg,
                const char *const *attacks)
{
    return s_net_new (n, topology, cfg, attacks, true);
}

gc_engine_t *
net_replace (net_t *self, uint32_t peer, uint64_t seq_start)
{
    assert_true (peer < self->n);
    gc_engine_destroy (&self->engines [peer]);
    gc_engine_config_t c = self->cfgs [peer];
    c.seq_start = seq_start;
    gc_engine_io_t io = { .ctx = &self->io_ctx [peer], .send = s_send };
    gc_err_t err = { 0 };
    self->engines [peer] = gc_engine_new (&c, &io, &err);
    if (!self->engines [peer])
        fail_msg ("engine %u: %s", peer, err.msg);
    return self->engines [peer];
}

void
net_destroy (net_t **self_p)
{
    net_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->queued; i++) {
        free (self->queue [i].header);
        free (self->queue [i].payload);
    }
    free (self->queue);
    for (uint32_t i = 0; i < self->n; i++) {
        gc_engine_destroy (&self->engines [i]);
        gc_key_destroy (&self->keys [i]);
        gc_dataset_free (&self->shards [i]);
    }
    gc_trust_destroy (&self->trust);
    gc_topology_destroy (&self->topology);
    gc_dataset_free (&self->train);
    gc_dataset_free (&self->test);
    free (self);
    *self_p = NULL;
}

gc_deliver_t
net_inject (net_t *self, uint32_t to, const uint8_t *header, size_t hlen,
            const uint8_t *payload, size_t plen)
{
    return gc_engine_on_message (self->engines [to], header, hlen, payload, plen, self->now);
}

static void
s_deliver_all (net_t *self)
{
    //  messages sent while delivering (none today) would wait for the next call
    size_t count = self->queued;
    for (size_t i = 0; i < count; i++) {
        net_msg_t *m = &self->queue [i];
        if (!self->filter || self->filter (self, m, self->filter_arg)) {
            gc_engine_on_message (self->engines [m->to], m->header, m->header_len,
                                  m->payload, m->payload_len, self->now);
            self->delivered++;
        }
        else
            self->dropped++;
        free (m->header);
        free (m->payload);
    }
    memmove (self->queue, self->queue + count, (self->queued - count) * sizeof *self->queue);
    self->queued -= count;
}

void
net_round (net_t *self)
{
    self->now += 10000000;      /* 10 ms of virtual time per round */
    for (uint32_t i = 0; i < self->n; i++) {
        gc_engine_train (self->engines [i]);
        gc_err_t err = { 0 };
        if (gc_engine_publish (self->engines [i], self->now, &err))
            fail_msg ("peer %u publish: %s", i, err.msg);
        gc_engine_wait_begin (self->engines [i], self->now);
    }
    s_deliver_all (self);
    for (uint32_t i = 0; i < self->n; i++) {
        gc_engine_ready (self->engines [i], self->now + 1000);
        assert_int_equal (gc_engine_mix (self->engines [i], self->now + 1000, NULL), 0);
    }
}

static double
s_accuracy (net_t *self, bool want_min)
{
    double total = 0, low = 1;
    uint32_t honest = 0;
    for (uint32_t i = 0; i < self->n; i++) {
        if (self->byzantine [i])
            continue;
        double acc = 0;
        assert_int_equal (gc_engine_evaluate (self->engines [i], &acc, NULL), 0);
        total += acc;
        low = acc < low ? acc : low;
        honest++;
    }
    return want_min ? low : total / honest;
}

double
net_mean_accuracy (net_t *self)
{
    return s_accuracy (self, false);
}

double
net_min_accuracy (net_t *self)
{
    return s_accuracy (self, true);
}

double
net_consensus_distance (net_t *self)
{
    size_t d = gc_engine_n_params (self->engines [0]);
    float *mean = gc_falloc (d);
    uint32_t honest = 0;
    for (uint32_t i = 0; i < self->n; i++)
        honest += !self->byzantine [i];
    for (uint32_t i = 0; i < self->n; i++)
        if (!self->byzantine [i])
            gc_vec_axpy (mean, 1.0f / (float) honest, gc_engine_params (self->engines [i]), d);
    double worst = 0, norm = sqrt (gc_vec_norm2sq (mean, d));
    for (uint32_t i = 0; i < self->n; i++) {
        if (self->byzantine [i])
            continue;
        double dist = sqrt (gc_vec_dist2sq (mean, gc_engine_params (self->engines [i]), d));
        worst = dist > worst ? dist : worst;
    }
    gc_mem_free (mean);
    return worst / norm;
}
