/*  gc_robust_net — compare-exchange networks for order statistics.

    A network over n wires brings the order statistics lo..hi of its n input
    values onto wires lo..hi (as a multiset; in order when `ordered` was
    asked for). It is applied lane-wise to whole vectors of coordinates, so
    one network computes a median or trimmed mean for 16 coordinates at once
    without branches.

    Two constructions, the cheaper one is kept:
    - Batcher's odd-even merge sort (for 2^m >= n wires, comparators that
      touch a wire >= n dropped: those wires would hold +inf);
    - extraction: repeated bubbling of the minimum (maximum) of the remaining
      wires to the low (high) end, lo times (n-1-hi times); cheap when few
      values are dropped, as in cwtm:1.
    Then comparators whose outputs cannot reach a kept wire are removed, and
    those with one useful output become a single min or max.

    Used by the library at run time and by gc_robust_netgen at build time
    (which turns the same networks into straight-line register code), so
    both paths give bit-identical results. */
#ifndef GC_ROBUST_NET_H
#define GC_ROBUST_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    GC_NET_CE  = 0,     /* a = min (a, b), b = max (a, b) */
    GC_NET_MIN = 1,     /* a = min (a, b) only */
    GC_NET_MAX = 2      /* b = max (a, b) only */
} gc_net_op_t;

typedef struct {
    uint16_t op, a, b;  /* a < b */
} gc_net_ce_t;

typedef struct {
    size_t       n, lo, hi;
    bool         ordered;
    gc_net_ce_t *ce;
    size_t       n_ce, cap;
} gc_robust_net_t;

/*  Build the cheapest network for (n, lo, hi); lo <= hi < n, n <= 65535.
    Returns 0, or -1 when out of memory. Reuses self's buffer. */
int    gc_robust_net_build (gc_robust_net_t *self, size_t n, size_t lo, size_t hi,
                            bool ordered);
void   gc_robust_net_free (gc_robust_net_t *self);
/*  Cost in vector operations: 2 per compare-exchange, 1 per min or max. */
size_t gc_robust_net_cost (const gc_robust_net_t *self);
/*  Apply to n scalars (the reference the vector paths are checked against). */
void   gc_robust_net_apply (const gc_robust_net_t *self, float *v);

#endif
