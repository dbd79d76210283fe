/*  gc_sampler — minibatches from a dataset: a fresh seeded permutation each
    epoch, rows gathered into contiguous batch buffers. An epoch is
    floor(n / batch) batches (the ragged tail of each permutation is skipped,
    and reshuffled into the next epoch). */
#ifndef GC_SAMPLER_H
#define GC_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "gc_augment.h"
#include "gc_dataset.h"
#include "gc_err.h"

typedef struct gc_sampler_t gc_sampler_t;

/*  batch is clamped to the dataset size. The sampler keeps a pointer to data. */
gc_sampler_t *gc_sampler_new (const gc_dataset_t *data, size_t batch, uint64_t seed,
                              gc_err_t *err);
void          gc_sampler_destroy (gc_sampler_t **self_p);
/*  Augment every batch from now on (gc_augment.h), from its own stream of
    seed; -1 with err when the data has no image shape. */
int           gc_sampler_set_augment (gc_sampler_t *self, const gc_augment_t *aug,
                                      uint64_t seed, gc_err_t *err);
/*  Gather the next batch; pointers valid until the next call. */
void          gc_sampler_next (gc_sampler_t *self, const float **x, const uint8_t **y);
size_t        gc_sampler_batch (const gc_sampler_t *self);
size_t        gc_sampler_batches_per_epoch (const gc_sampler_t *self);
/*  Completed epochs and position (for checkpoints and schedules). */
uint64_t      gc_sampler_epoch (const gc_sampler_t *self);

#endif
