/*  gc_partition — split a training set among N peers.

    Every peer runs the same computation from the shared seed and keeps the
    samples assigned to its own index, so no coordinator hands out data.
      iid            shuffled, dealt round-robin: sizes differ by at most one
      dirichlet:A    per class, proportions over peers drawn from Dir(A)
                     (label skew; small A = strong skew)
      shards:S       sorted by label, cut into N*S shards, S shards per peer */
#ifndef GC_PARTITION_H
#define GC_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

typedef enum {
    GC_SPLIT_IID = 0,
    GC_SPLIT_DIRICHLET,
    GC_SPLIT_SHARDS
} gc_split_kind_t;

typedef struct {
    gc_split_kind_t kind;
    double          alpha;          /* dirichlet concentration */
    int             shards;         /* shards per peer */
} gc_split_t;

/*  "iid", "dirichlet:0.5", "shards:2" */
int gc_split_parse (const char *spec, gc_split_t *out, gc_err_t *err);
/*  Canonical spec text of a split (for logs and reports). */
void gc_split_format (const gc_split_t *split, char *buf, size_t size);

/*  owner[i] = the peer that gets sample i, for every sample. */
int gc_partition_assign (const uint8_t *labels, size_t n, int n_classes,
                         const gc_split_t *split, uint32_t n_peers, uint64_t seed,
                         uint32_t *owner, gc_err_t *err);

/*  The sample indices of one peer (malloc'd array in *idx, count in *count). */
int gc_partition_peer (const uint8_t *labels, size_t n, int n_classes,
                       const gc_split_t *split, uint32_t n_peers, uint64_t seed,
                       uint32_t peer, uint32_t **idx, size_t *count, gc_err_t *err);

#endif
