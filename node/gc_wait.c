#include "gc_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_parse.h"

//  Adaptive rule constants (docs/ALGORITHMS.md explains them).
#define S_EMA          0.3      /* weight of a new delay observation */
#define S_RHO          2.0      /* wait for neighbours up to 2x slower than the reference */
#define S_SLACK_NS     5e6      /* ... plus 5 ms, so near-equal fast peers are all kept */
#define S_MISS_GROWTH  2.0      /* a missed round doubles the estimate */

struct gc_wait_t {
    gc_wait_kind_t kind;
    size_t   n;
    size_t   quorum;            /* quorum: Q; adaptive: the current target */
    size_t   min_fresh;
    int64_t  timeout_ns;
    int64_t  begin;
    double  *estimate;          /* adaptive: delay estimate per neighbour (ns) */
    double  *scratch;
    char     name [32];
};

gc_wait_t *
gc_wait_new (const char *spec, size_t n, size_t min_fresh, int64_t timeout_ns, gc_err_t *err)
{
    gc_spec_t s;
    if (gc_spec_split (&s, spec, ':', "wait policy", err))
        return NULL;
    gc_wait_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, 1, "wait policy: out of memory");
        return NULL;
    }
    self->n = n;
    self->min_fresh = min_fresh < n ? min_fresh : n;
    self->timeout_ns = timeout_ns;
    int rc = 0;
    if (!strcmp (s.tok [0], "sync") && s.n == 1)
        self->kind = GC_WAIT_SYNC;
    else
    if (!strcmp (s.tok [0], "quorum") && s.n == 2) {
        long q;
        self->kind = GC_WAIT_QUORUM;
        rc = gc_parse_long (s.tok [1], 1, 1 << 20, &q, "wait policy quorum size", err);
        self->quorum = rc ? 0 : ((size_t) q < n ? (size_t) q : n);
    }
    else
    if (!strcmp (s.tok [0], "adaptive") && s.n == 1) {
        self->kind = GC_WAIT_ADAPTIVE;
        self->estimate = calloc (n ? n : 1, sizeof *self->estimate);
        self->scratch = calloc (n ? n : 1, sizeof *self->scratch);
        if (!self->estimate || !self->scratch)
            rc = gc_err_set (err, 1, "wait policy: out of memory");
        self->quorum = n;       /* until delays are known, wait for everyone */
    }
    else
        rc = gc_err_set (err, 1, "wait policy '%s': expected sync, quorum:Q or adaptive", spec);
    if (rc) {
        gc_wait_destroy (&self);
        return NULL;
    }
    snprintf (self->name, sizeof self->name, "%s", spec);
    return self;
}

void
gc_wait_destroy (gc_wait_t **self_p)
{
    gc_wait_t *self = *self_p;
    if (!self)
        return;
    free (self->estimate);
    free (self->scratch);
    free (self);
    *self_p = NULL;
}

void
gc_wait_begin (gc_wait_t *self, int64_t now)
{
    self->begin = now;
}

size_t
gc_wait_target (const gc_wait_t *self)
{
    return self->kind == GC_WAIT_SYNC ? self->n : self->quorum;
}

bool
gc_wait_ready (const gc_wait_t *self, const bool *fresh, int64_t now)
{
    if (now >= gc_wait_deadline (self))
        return true;
    size_t count = 0;
    for (size_t j = 0; j < self->n; j++)
        count += fresh [j];
    return count >= gc_wait_target (self);
}

int64_t
gc_wait_deadline (const gc_wait_t *self)
{
    return self->begin + self->timeout_ns;
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

void
gc_wait_end (gc_wait_t *self, const int64_t *arrival, int64_t now)
{
    if (self->kind != GC_WAIT_ADAPTIVE)
        return;
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

double
gc_wait_estimate (const gc_wait_t *self, size_t j)
{
    return self->estimate && j < self->n ? self->estimate [j] : 0.0;
}

const char *
gc_wait_name (const gc_wait_t *self)
{
    return self->name;
}
