#include "gc_robust_net.h"

#include <stdlib.h>
#include <string.h>

static int
s_push (gc_robust_net_t *self, size_t a, size_t b)
{
    if (self->n_ce == self->cap) {
        size_t cap = self->cap ? 2 * self->cap : 64;
        gc_net_ce_t *ce = realloc (self->ce, cap * sizeof *ce);
        if (!ce)
            return -1;
        self->ce = ce;
        self->cap = cap;
    }
    self->ce [self->n_ce++] = (gc_net_ce_t) { GC_NET_CE, (uint16_t) a, (uint16_t) b };
    return 0;
}

//  Batcher's odd-even merge sort on the next power of two; a comparator
//  (i, j) with j >= n would meet a +inf padding wire and is a no-op.
static int
s_batcher (gc_robust_net_t *self, size_t n)
{
    size_t pow2 = 1;
    while (pow2 < n)
        pow2 *= 2;
    for (size_t p = 1; p < pow2; p *= 2)
        for (size_t k = p; k >= 1; k /= 2)
            for (size_t j = k % p; j + k < pow2; j += 2 * k)
                for (size_t i = 0; i < k && i + j + k < n; i++)
                    if ((i + j) / (2 * p) == (i + j + k) / (2 * p))
                        if (s_push (self, i + j, i + j + k))
                            return -1;
    return 0;
}

//  Bubble the minimum of wires [t_lo, t_hi] down to t_lo, or the maximum up
//  to t_hi, as many times as values are dropped at each end. With emit
//  false it only counts, so that a quadratic network is never built when
//  Batcher's is smaller anyway.
static size_t
s_extraction (gc_robust_net_t *self, size_t n, size_t lo, size_t hi, bool emit, int *rc)
{
    size_t count = 0, t_lo = 0, t_hi = n - 1, n_lo = lo, n_hi = n - 1 - hi;
    while (n_lo > 0 || n_hi > 0) {
        if (n_lo > 0) {
            for (size_t w = t_hi; w > t_lo; w--, count++)
                if (emit && s_push (self, w - 1, w))
                    *rc = -1;
            t_lo++;
            n_lo--;
        }
        if (n_hi > 0) {
            for (size_t w = t_lo; w < t_hi; w++, count++)
                if (emit && s_push (self, w, w + 1))
                    *rc = -1;
            t_hi--;
            n_hi--;
        }
    }
    return count;
}

//  Backward liveness from the kept wires: drop what cannot reach them, and
//  keep only the useful half of a comparator with one dead output.
static int
s_prune (gc_robust_net_t *self)
{
    //  On the stack for every k the library accepts: rebuilding a network
    //  when k changes should not allocate.
    bool stack_live [1024];
    bool *live = self->n <= 1024 ? stack_live : malloc (self->n * sizeof *live);
    if (!live)
        return -1;
    memset (live, 0, self->n * sizeof *live);
    for (size_t w = self->lo; w <= self->hi; w++)
        live [w] = true;
    size_t e = self->n_ce;
    while (e-- > 0) {
        gc_net_ce_t *ce = &self->ce [e];
        bool la = live [ce->a], lb = live [ce->b];
        if (!la && !lb)
            ce->op = 0xffff;
        else
            ce->op = la && lb ? GC_NET_CE : la ? GC_NET_MIN : GC_NET_MAX;
        if (la || lb)
            live [ce->a] = live [ce->b] = true;
    }
    if (live != stack_live)
        free (live);
    size_t kept = 0;
    for (size_t i = 0; i < self->n_ce; i++)
        if (self->ce [i].op != 0xffff)
            self->ce [kept++] = self->ce [i];
    self->n_ce = kept;
    return 0;
}

size_t
gc_robust_net_cost (const gc_robust_net_t *self)
{
    size_t cost = 0;
    for (size_t i = 0; i < self->n_ce; i++)
        cost += self->ce [i].op == GC_NET_CE ? 2 : 1;
    return cost;
}

static int
s_build_batcher (gc_robust_net_t *self)
{
    self->n_ce = 0;
    return s_batcher (self, self->n) || s_prune (self) ? -1 : 0;
}

int
gc_robust_net_build (gc_robust_net_t *self, size_t n, size_t lo, size_t hi, bool ordered)
{
    if (n == 0 || n > 65535 || lo > hi || hi >= n)
        return -1;
    self->n = n;
    self->lo = lo;
    self->hi = hi;
    self->ordered = ordered;
    if (s_build_batcher (self))
        return -1;
    if (ordered)
        return 0;
    int rc = 0;
    size_t batcher_cost = gc_robust_net_cost (self);
    //  Pruning removes only a few comparators of an extraction network and
    //  each costs at least 1: a comparator count above Batcher's cost means
    //  it cannot win, and is not worth building.
    if (s_extraction (self, n, lo, hi, false, &rc) >= batcher_cost)
        return 0;
    //  Build the alternative in the same buffer; rebuild Batcher's if it
    //  loses (cheap, and no second buffer to allocate).
    self->n_ce = 0;
    s_extraction (self, n, lo, hi, true, &rc);
    if (rc || s_prune (self))
        return -1;
    if (gc_robust_net_cost (self) >= batcher_cost)
        return s_build_batcher (self);
    return 0;
}

void
gc_robust_net_free (gc_robust_net_t *self)
{
    free (self->ce);
    memset (self, 0, sizeof *self);
}

//  Written exactly like the vector instructions (x86 min/max return the
//  second operand on equality), so the scalar result is bit-identical,
//  signed zeros included.
void
gc_robust_net_apply (const gc_robust_net_t *self, float *v)
{
    for (size_t i = 0; i < self->n_ce; i++) {
        const gc_net_ce_t *ce = &self->ce [i];
        float x = v [ce->a], y = v [ce->b];
        if (ce->op != GC_NET_MAX)
            v [ce->a] = x < y ? x : y;
        if (ce->op != GC_NET_MIN)
            v [ce->b] = x > y ? x : y;
    }
}
