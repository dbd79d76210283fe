#include "gc_partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_parse.h"
#include "gc_rng.h"

int
gc_split_parse (const char *spec, gc_split_t *out, gc_err_t *err)
{
    gc_spec_t s;
    if (gc_spec_split (&s, spec, ':', "data split", err))
        return -1;
    memset (out, 0, sizeof *out);
    if (!strcmp (s.tok [0], "iid") && s.n == 1) {
        out->kind = GC_SPLIT_IID;
        return 0;
    }
    if (!strcmp (s.tok [0], "dirichlet") && s.n == 2) {
        out->kind = GC_SPLIT_DIRICHLET;
        return gc_parse_double (s.tok [1], 1e-3, 1e6, &out->alpha, "dirichlet alpha", err);
    }
    if (!strcmp (s.tok [0], "shards") && s.n == 2) {
        long v;
        if (gc_parse_long (s.tok [1], 1, 1000, &v, "shards per peer", err))
            return -1;
        out->kind = GC_SPLIT_SHARDS;
        out->shards = (int) v;
        return 0;
    }
    return gc_err_set (err, GC_E_SPEC, "data split '%s': expected iid, dirichlet:ALPHA or shards:S", spec);
}

void
gc_split_format (const gc_split_t *split, char *buf, size_t size)
{
    if (split->kind == GC_SPLIT_DIRICHLET)
        snprintf (buf, size, "dirichlet:%g", split->alpha);
    else if (split->kind == GC_SPLIT_SHARDS)
        snprintf (buf, size, "shards:%d", split->shards);
    else
        snprintf (buf, size, "iid");
}

static void
s_assign_iid (size_t n, uint32_t n_peers, gc_rng_t *rng, uint32_t *perm, uint32_t *owner)
{
    gc_rng_shuffle_u32 (rng, perm, n);
    for (size_t i = 0; i < n; i++)
        owner [perm [i]] = (uint32_t) (i % n_peers);
}

//  One Dirichlet draw per class; the class's shuffled samples are cut at the
//  cumulative proportions. Redrawn (deterministically) while some peer would
//  hold fewer than min_size samples, as is usual in the FL literature.
static int
s_assign_dirichlet (const uint8_t *labels, size_t n, int n_classes, double alpha,
                    uint32_t n_peers, gc_rng_t *rng, uint32_t *perm, uint32_t *owner,
                    gc_err_t *err)
{
    size_t min_size = n / n_peers / 10;
    if (min_size > 10)
        min_size = 10;
    double *p = malloc (n_peers * sizeof *p);
    size_t *sizes = malloc (n_peers * sizeof *sizes);
    int rc = -1;
    for (int attempt = 0; attempt < 1000 && p && sizes; attempt++) {
        memset (sizes, 0, n_peers * sizeof *sizes);
        for (int c = 0; c < n_classes; c++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (labels [i] == c)
                    perm [m++] = (uint32_t) i;
            gc_rng_shuffle_u32 (rng, perm, m);
            double total = 0;
            for (uint32_t k = 0; k < n_peers; k++)
                total += p [k] = gc_rng_gamma (rng, alpha) + 1e-300;
            double cum = 0;
            size_t start = 0;
            for (uint32_t k = 0; k < n_peers; k++) {
                cum += p [k] / total;
                size_t end = k + 1 == n_peers ? m : (size_t) (cum * (double) m + 0.5);
                if (end > m)
                    end = m;
                for (size_t i = start; i < end; i++)
                    owner [perm [i]] = k;
                sizes [k] += end > start ? end - start : 0;
                if (end > start)
                    start = end;
            }
        }
        size_t smallest = n;
        for (uint32_t k = 0; k < n_peers; k++)
            smallest = sizes [k] < smallest ? sizes [k] : smallest;
        if (smallest >= min_size) {
            rc = 0;
            break;
        }
    }
    if (rc)
        gc_err_set (err, GC_E_CONFIG, "dirichlet:%g split of %zu samples over %u peers leaves a peer "
                    "with almost no data; use a larger alpha or fewer peers", alpha, n, n_peers);
    free (p);
    free (sizes);
    return rc;
}

static int
s_assign_shards (const uint8_t *labels, size_t n, int n_classes, int per_peer,
                 uint32_t n_peers, gc_rng_t *rng, uint32_t *perm, uint32_t *owner)
{
    //  shuffle, then stable counting sort by label
    for (size_t i = 0; i < n; i++)
        perm [i] = (uint32_t) i;
    gc_rng_shuffle_u32 (rng, perm, n);
    size_t n_shards = (size_t) n_peers * (size_t) per_peer;
    uint32_t *sorted = malloc (n * sizeof *sorted);
    uint32_t *shard_owner = malloc (n_shards * sizeof *shard_owner);
    if (!sorted || !shard_owner) {
        free (sorted);
        free (shard_owner);
        return -1;
    }
    size_t start [257] = { 0 };
    for (size_t i = 0; i < n; i++)
        start [labels [i] + 1]++;
    for (int c = 0; c < n_classes; c++)
        start [c + 1] += start [c];
    for (size_t i = 0; i < n; i++)
        sorted [start [labels [perm [i]]]++] = perm [i];
    for (size_t s = 0; s < n_shards; s++)
        shard_owner [s] = (uint32_t) (s / (size_t) per_peer);
    gc_rng_shuffle_u32 (rng, shard_owner, n_shards);
    for (size_t i = 0; i < n; i++)
        owner [sorted [i]] = shard_owner [i * n_shards / n];
    free (shard_owner);
    free (sorted);
    return 0;
}

int
gc_partition_assign (const uint8_t *labels, size_t n, int n_classes,
                     const gc_split_t *split, uint32_t n_peers, uint64_t seed,
                     uint32_t *owner, gc_err_t *err)
{
    if (n_peers == 0 || n_peers > n)
        return gc_err_set (err, GC_E_CONFIG, "cannot split %zu samples among %u peers", n, n_peers);
    if (n_classes < 1 || n_classes > 256)
        return gc_err_set (err, GC_E_RANGE, "partition: %d classes outside [1, 256]", n_classes);
    if (split->kind == GC_SPLIT_SHARDS && (size_t) n_peers * (size_t) split->shards > n)
        return gc_err_set (err, GC_E_CONFIG, "shards:%d needs %zu shards but there are only %zu samples",
                           split->shards, (size_t) n_peers * (size_t) split->shards, n);
    for (size_t i = 0; i < n; i++)
        if (labels [i] >= n_classes)
            return gc_err_set (err, GC_E_RANGE, "partition: sample %zu has label %u, expected < %d",
                               i, labels [i], n_classes);
    uint32_t *perm = malloc (n * sizeof *perm);
    if (!perm)
        return gc_err_set (err, GC_E_NOMEM, "partition: out of memory");
    for (size_t i = 0; i < n; i++)
        perm [i] = (uint32_t) i;
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0xDA7A);
    int rc = 0;
    if (split->kind == GC_SPLIT_IID)
        s_assign_iid (n, n_peers, &rng, perm, owner);
    else
    if (split->kind == GC_SPLIT_DIRICHLET)
        rc = s_assign_dirichlet (labels, n, n_classes, split->alpha, n_peers, &rng, perm, owner, err);
    else
    if (s_assign_shards (labels, n, n_classes, split->shards, n_peers, &rng, perm, owner))
        rc = gc_err_set (err, GC_E_NOMEM, "partition: out of memory");
    free (perm);
    return rc;
}

int
gc_partition_peer (const uint8_t *labels, size_t n, int n_classes,
                   const gc_split_t *split, uint32_t n_peers, uint64_t seed,
                   uint32_t peer, uint32_t **idx, size_t *count, gc_err_t *err)
{
    *idx = NULL;
    *count = 0;
    if (peer >= n_peers)
        return gc_err_set (err, GC_E_RANGE, "peer index %u is not below the peer count %u", peer, n_peers);
    uint32_t *owner = malloc (n * sizeof *owner);
    if (!owner)
        return gc_err_set (err, GC_E_NOMEM, "partition: out of memory");
    if (gc_partition_assign (labels, n, n_classes, split, n_peers, seed, owner, err)) {
        free (owner);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += owner [i] == peer;
    *idx = malloc ((m ? m : 1) * sizeof **idx);
    if (!*idx) {
        free (owner);
        return gc_err_set (err, GC_E_NOMEM, "partition: out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (owner [i] == peer)
            (*idx) [(*count)++] = (uint32_t) i;
    free (owner);
    return 0;
}
