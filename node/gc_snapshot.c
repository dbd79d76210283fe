#include "gc_snapshot.h"

#include <stdlib.h>
#include <string.h>

gc_snapshot_t *
gc_snapshot_new (size_t n_neighbours)
{
    gc_snapshot_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->state = "starting";
    self->connected = -1;
    self->n_neighbours = n_neighbours;
    self->n_reasons = gc_metrics_reasons (self->reasons, GC_ENGINE_NREASONS);
    //  +1: never a zero-size allocation
    self->neighbours = calloc (n_neighbours + 1, sizeof *self->neighbours);
    self->staleness = calloc (n_neighbours + 1, sizeof *self->staleness);
    self->rejections = calloc ((n_neighbours + 1) * self->n_reasons + 1, sizeof *self->rejections);
    self->kind = calloc (n_neighbours + 1, sizeof *self->kind);
    self->lag = calloc (n_neighbours + 1, sizeof *self->lag);
    self->sent_bytes = calloc (n_neighbours + 1, sizeof *self->sent_bytes);
    self->recv_bytes = calloc (n_neighbours + 1, sizeof *self->recv_bytes);
    if (!self->neighbours || !self->staleness || !self->rejections || !self->kind || !self->lag
    ||  !self->sent_bytes || !self->recv_bytes)
        gc_snapshot_destroy (&self);
    else
        for (size_t i = 0; i < n_neighbours; i++)
            self->staleness [i] = -1;
    return self;
}

void
gc_snapshot_destroy (gc_snapshot_t **self_p)
{
    gc_snapshot_t *self = *self_p;
    if (!self)
        return;
    free (self->neighbours);
    free (self->staleness);
    free (self->rejections);
    free (self->kind);
    free (self->lag);
    free (self->sent_bytes);
    free (self->recv_bytes);
    free (self);
    *self_p = NULL;
}

void
gc_snapshot_take (gc_snapshot_t *self, gc_engine_t *engine)
{
    gc_engine_stats (engine, &self->engine);
    const uint32_t *peers;
    size_t n = gc_engine_neighbours (engine, &peers);
    if (n > self->n_neighbours)
        n = self->n_neighbours;
    for (size_t i = 0; i < n; i++) {
        self->neighbours [i] = peers [i];
        self->staleness [i] = gc_engine_staleness (engine, peers [i]);
        self->kind [i] = (uint8_t) gc_engine_replica_kind (engine, peers [i], &self->lag [i]);
        self->recv_bytes [i] = gc_engine_bytes_from (engine, peers [i]);
    }
    for (size_t row = 0; row <= n; row++) {
        uint32_t who = row < n ? peers [row] : UINT32_MAX;
        for (size_t j = 0; j < self->n_reasons; j++)
            self->rejections [row * self->n_reasons + j] = gc_engine_rejections (engine, who, self->reasons [j]);
    }
}

void
gc_snapshot_copy (gc_snapshot_t *dst, const gc_snapshot_t *src)
{
    uint32_t *neighbours = dst->neighbours;
    int64_t *staleness = dst->staleness;
    uint64_t *rejections = dst->rejections;
    uint8_t *kind = dst->kind;
    int64_t *lag = dst->lag;
    uint64_t *sent_bytes = dst->sent_bytes, *recv_bytes = dst->recv_bytes;
    size_t n = src->n_neighbours < dst->n_neighbours ? src->n_neighbours : dst->n_neighbours;
    *dst = *src;
    dst->neighbours = neighbours;
    dst->staleness = staleness;
    dst->rejections = rejections;
    dst->kind = kind;
    dst->lag = lag;
    dst->sent_bytes = sent_bytes;
    dst->recv_bytes = recv_bytes;
    dst->n_neighbours = n;
    memcpy (dst->sent_bytes, src->sent_bytes, n * sizeof *sent_bytes);
    memcpy (dst->recv_bytes, src->recv_bytes, n * sizeof *recv_bytes);
    memcpy (dst->kind, src->kind, n * sizeof *kind);
    memcpy (dst->lag, src->lag, n * sizeof *lag);
    memcpy (dst->neighbours, src->neighbours, n * sizeof *neighbours);
    memcpy (dst->staleness, src->staleness, n * sizeof *staleness);
    size_t row = src->n_reasons;
    memcpy (dst->rejections, src->rejections, n * row * sizeof *rejections);
    memcpy (dst->rejections + n * row, src->rejections + src->n_neighbours * row, row * sizeof *rejections);
}

int64_t
gc_snapshot_max_staleness (const gc_snapshot_t *self)
{
    int64_t worst = -1;
    for (size_t i = 0; i < self->n_neighbours; i++)
        if (self->staleness [i] > worst)
            worst = self->staleness [i];
    return worst;
}

uint64_t
gc_snapshot_bytes_sent (const gc_snapshot_t *self)
{
    return self->has_transport ? self->transport.sent_bytes : self->engine.bytes_sent;
}
