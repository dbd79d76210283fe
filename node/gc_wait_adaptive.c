/*  adaptive: the number of fresh neighbours to wait for adapts to observed
    arrival delays (after DSGD-AAU, Xiong et al.; docs/ALGORITHMS.md). */
#include <stdlib.h>

#include "gc_wait_policy.h"

//  Adaptive rule constants (docs/ALGORITHMS.md explains them).
#define S_EMA          0.3      /* weight of a new delay observation */
#define S_RHO          2.0      /* wait for neighbours up to 2x slower than the reference */
#define S_SLACK_NS     5e6      /* ... plus 5 ms, so near-equal fast peers are all kept */
#define S_MISS_GROWTH  2.0      /* a missed round doubles the estimate */

static int
s_parse (gc_wait_t *self, const gc_spec_t *sp, gc_err_t *err)
{
    if (sp->n != 1)
        return gc_err_set (err, 1, "adaptive takes no parameter");
    size_t n = self->n;
    self->estimate = calloc (n ? n : 1, sizeof *self->estimate);
    self->scratch = calloc (n ? n : 1, sizeof *self->scratch);
    if (!self->estimate || !self->scratch)
        return gc_err_set (err, 1, "wait policy: out of memory");
    self->quorum = n;       /* until delays are known, wait for everyone */
    return 0;
}

static size_t
s_target (const gc_wait_t *self)
{
    return self->quorum;
}

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

//  Target = max(m, #{j : D_j <= rho * D_(m) + slack}), m = min(min_fresh,
//  live neighbours): every neighbour not much slower than the m-th fastest is
//  waited for; the slower ones contribute when their update happens to be
//  fresh. A neighbour whose estimate sits at the cap (it has missed round
//  after round: dead, frozen, partitioned away) is not waited for at all, so
//  a dead neighbour costs one timeout, not one per round.
static void
s_adapt (gc_wait_t *self)
{
    double cap = 2.0 * (double) self->timeout_ns;
    size_t live = 0;
    for (size_t j = 0; j < self->n; j++)
        if (self->estimate [j] < cap)
            self->scratch [live++] = self->estimate [j];
    size_t m = self->min_fresh < live ? self->min_fresh : live;
    if (m == 0) {
        self->quorum = 0;
        return;
    }
    qsort (self->scratch, live, sizeof (double), s_cmp_double);
    double limit = S_RHO * self->scratch [m - 1] + S_SLACK_NS;
    size_t target = 0;
    for (size_t j = 0; j < live; j++)
        target += self->scratch [j] <= limit;
    self->quorum = target > m ? target : m;
}

static void
s_end (gc_wait_t *self, const int64_t *arrival, int64_t now)
{
    double elapsed = (double) (now - self->begin);
    for (size_t j = 0; j < self->n; j++) {
        if (arrival [j] >= 0) {
            double delay = arrival [j] > self->begin ? (double) (arrival [j] - self->begin) : 0.0;
            self->estimate [j] = (1 - S_EMA) * self->estimate [j] + S_EMA * delay;
        }
        else {
            //  censored: the delay is at least `elapsed`, and repeated misses
            //  push the estimate up quickly
            double grown = S_MISS_GROWTH * self->estimate [j];
            if (grown < elapsed + 1e6)
                grown = elapsed + 1e6;
            //  capped, so a neighbour that recovers is readmitted within a
            //  dozen rounds
            double cap = 2.0 * (double) self->timeout_ns;
            self->estimate [j] = grown < cap ? grown : cap;
        }
    }
    s_adapt (self);
}

const gc_wait_policy_t gc_wait_policy_adaptive = {
    .name = "adaptive", .usage = "adaptive",
    .help = "as many as arrive not much later than the min_fresh-th fastest (learnt delays)",
    .example = "adaptive", .malformed = "adaptive:3",
    .parse = s_parse, .target = s_target, .end = s_end,
};
