#include "gc_sampler.h"

#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_rng.h"

struct gc_sampler_t {
    const gc_dataset_t *data;
    size_t     batch;
    size_t     pos;             /* next index into perm */
    uint64_t   epoch;
    gc_rng_t   rng;
    uint32_t  *perm;
    float     *x;               /* batch x dim */
    uint8_t   *y;
    gc_augment_t aug;
    gc_rng_t   aug_rng;
    float     *scratch;         /* one image plane */
};

gc_sampler_t *
gc_sampler_new (const gc_dataset_t *data, size_t batch, uint64_t seed, gc_err_t *err)
{
    if (data->n == 0 || batch == 0) {
        gc_err_set (err, GC_E_ARG, "sampler: %s", data->n ? "batch size is zero" : "the dataset is empty");
        return NULL;
    }
    gc_sampler_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "sampler: out of memory");
        return NULL;
    }
    self->data = data;
    self->batch = batch < data->n ? batch : data->n;
    self->perm = malloc (data->n * sizeof *self->perm);
    self->x = gc_falloc (self->batch * data->dim);
    self->y = malloc (self->batch);
    if (!self->perm || !self->x || !self->y) {
        gc_sampler_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "sampler: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < data->n; i++)
        self->perm [i] = (uint32_t) i;
    gc_rng_init (&self->rng, seed, 0xBA7C);
    gc_rng_shuffle_u32 (&self->rng, self->perm, data->n);
    return self;
}

void
gc_sampler_destroy (gc_sampler_t **self_p)
{
    gc_sampler_t *self = *self_p;
    if (!self)
        return;
    free (self->perm);
    gc_mem_free (self->scratch);
    gc_mem_free (self->x);
    free (self->y);
    free (self);
    *self_p = NULL;
}

#define S_HEAD_BYTES 512

static void
s_prefetch_head (const float *row, size_t bytes)
{
    const char *p = (const char *) row;
    for (size_t o = 0; o < S_HEAD_BYTES && o < bytes; o += 64)
        __builtin_prefetch (p + o, 0, 3);
}

void
gc_sampler_next (gc_sampler_t *self, const float **x, const uint8_t **y)
{
    const gc_dataset_t *d = self->data;
    if (self->pos + self->batch > d->n) {
        gc_rng_shuffle_u32 (&self->rng, self->perm, d->n);
        self->pos = 0;
        self->epoch++;
    }
    size_t bytes = d->dim * sizeof (float);
    for (size_t r = 0; r < self->batch; r++) {
        uint32_t i = self->perm [self->pos + r];
        //  The rows lie at random places: the hardware prefetchers find
        //  each one only after its first misses. Asking for the head of the
        //  next row while this one is copied overlaps those misses
        //  (docs/RESULTS.md, branch i17mlp).
        if (r + 1 < self->batch)
            s_prefetch_head (d->x + (size_t) self->perm [self->pos + r + 1] * d->dim, bytes);
        memcpy (self->x + r * d->dim, d->x + (size_t) i * d->dim, bytes);
        self->y [r] = d->y [i];
    }
    self->pos += self->batch;
    if (self->scratch)
        gc_augment_apply (&self->aug, self->x, self->batch, d->channels, d->height, d->width,
                          &self->aug_rng, self->scratch);
    *x = self->x;
    *y = self->y;
}

int
gc_sampler_set_augment (gc_sampler_t *self, const gc_augment_t *aug, uint64_t seed,
                        gc_err_t *err)
{
    const gc_dataset_t *d = self->data;
    if (!gc_augment_active (aug))
        return 0;
    if (d->height * d->width <= 1 || d->channels * d->height * d->width != d->dim)
        return gc_err_set (err, GC_E_INPUT, "augmentation needs images; the data has %zu features "
                           "without an image shape", d->dim);
    gc_mem_free (self->scratch);
    self->scratch = gc_falloc (d->height * d->width);
    if (!self->scratch)
        return gc_err_set (err, GC_E_NOMEM, "sampler: out of memory");
    self->aug = *aug;
    gc_rng_init (&self->aug_rng, seed, 0xA06);
    return 0;
}

size_t gc_sampler_batch (const gc_sampler_t *self) { return self->batch; }
size_t gc_sampler_batches_per_epoch (const gc_sampler_t *self) { return self->data->n / self->batch; }
uint64_t gc_sampler_epoch (const gc_sampler_t *self) { return self->epoch; }
