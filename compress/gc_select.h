/*  gc_select — choose the entries of a float vector with the largest |x|.

    Both modes start from a random sample of |x| (4096 runs of 16
    consecutive entries) that estimates the k-th largest |x|, take a lower
    bound a few standard deviations of the sample count below it, and make
    one vectorised pass that collects every entry at or above the bound.
    exact:   if the pass found at least k, the top k are all among them and
             an exact radix select over the candidates cuts them to k;
             otherwise (the estimate was off: ties, odd distributions) an
             MSD radix select over the whole vector runs: a histogram of
             the top 11 bits of |x|, then one pass collecting the boundary
             bin, or two more histogram levels when that bin is huge.
             Always exactly k; the sample only decides how fast.
    sampled: the same, but when the pass finds fewer than k and at least
             0.95 k, they are kept (DGC-style: threshold from a sample,
             corrected so the count lands within 5 % of k); below that the
             radix path runs. The count is in [0.95k, k].
    In both, the result is the top-count entries by |x|; ties at the
    boundary value go to the lower indices. Short vectors (< 2^17) and
    large fractions (k > m/8) go to the radix path directly.

    Results are ascending indices relative to x, with their values. */
#ifndef GC_SELECT_H
#define GC_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

typedef enum {
    GC_SELECT_PATH_NONE = 0,
    GC_SELECT_PATH_ALL,             /* k >= m */
    GC_SELECT_PATH_RADIX_BIN,       /* radix: boundary bin collected after level 1 */
    GC_SELECT_PATH_RADIX_LEVELS,    /* radix: three histogram levels (many ties) */
    GC_SELECT_PATH_PRUNED,          /* sample bound, one pass, cut to exactly k */
    GC_SELECT_PATH_SHORT,           /* sampled mode kept [0.95k, k) */
    GC_SELECT_PATH_FALLBACK         /* sample bound failed, radix ran */
} gc_select_path_t;

typedef struct {
    uint32_t *idx;          /* results (and candidates while working) */
    float    *val;
    size_t    cap;          /* entries idx/val hold, plus a SIMD slack of 16 */
    size_t    count;        /* results of the last call */
    float    *tmp;          /* sample / candidate scratch */
    size_t    tmp_cap;
    int       path;         /* gc_select_path_t of the last call */
} gc_select_t;

gc_select_t *gc_select_new (void);
void gc_select_destroy (gc_select_t **self_p);

/*  Top k of x[0..m) by |x|. seed drives the sample positions (sampled mode).
    -1 with err when x holds a non-finite value or memory runs out. */
int  gc_select_topk (gc_select_t *self, const float *x, size_t m, size_t k,
                     bool exact, uint64_t seed, gc_err_t *err);
/*  Every entry with |x| > tau (tau >= 0). */
int  gc_select_threshold (gc_select_t *self, const float *x, size_t m, float tau,
                          gc_err_t *err);

/*  The k-th largest |v| of v[0..m) as a key (the bits of |v|), with the
    number of entries strictly above it. 1 <= k <= m. Exposed for tests. */
uint32_t gc_select_kth_key (const float *v, size_t m, size_t k, size_t *above);

#endif
