/*  lazy, after LAG (lazily aggregated gradients): skip the round's send when
    its update is small against the recent ones. The skipped update stays in
    the EC residual and goes out with a later send; a skip is an empty
    payload (header, no section), so the neighbours still see a fresh,
    signed message of the round and never mistake a skip for a loss. */
#include <stdlib.h>

#include "gc_policy_method.h"

enum { S_THETA, S_K, S_WINDOW };

typedef struct {
    double  *sq;        /* |u|^2 of the last `window` rounds, a ring */
    size_t   len, at;
    uint32_t run;       /* skips in a row */
} s_lazy_t;

static int
s_init (gc_policy_t *self, gc_err_t *err)
{
    s_lazy_t *st = calloc (1, sizeof *st);
    size_t w = (size_t) self->opt [S_WINDOW];
    if (!st || !(st->sq = calloc (w, sizeof *st->sq))) {
        free (st);
        return gc_err_set (err, GC_E_NOMEM, "lazy: out of memory");
    }
    self->state = st;
    return 0;
}

static void
s_fini (gc_policy_t *self)
{
    s_lazy_t *st = self->state;
    if (st)
        free (st->sq);
    free (st);
    self->state = NULL;
}

static void
s_decide (gc_policy_t *self, const gc_policy_round_t *r, gc_policy_decision_t *d)
{
    double sq_update = r->sq_update;
    s_lazy_t *st = self->state;
    size_t w = (size_t) self->opt [S_WINDOW];
    double mean = 0;
    for (size_t i = 0; i < st->len; i++)
        mean += st->sq [i];
    if (st->len)
        mean /= (double) st->len;
    //  Only against a full window: early rounds are the critical ones.
    d->skip = st->len == w && st->run < (uint32_t) self->opt [S_K]
           && sq_update < self->opt [S_THETA] * mean;
    st->run = d->skip ? st->run + 1 : 0;
    st->sq [st->at] = sq_update;
    st->at = (st->at + 1) % w;
    if (st->len < w)
        st->len++;
}

const gc_policy_method_t gc_policy_lazy = {
    .name = "lazy", .usage = "lazy[:theta=1][:K=2][:window=8]",
    .help = "skip the send when |u|^2 < theta x the window's mean (at most K in a row)",
    .example = "lazy:theta=0.8:K=3", .malformed = "lazy:K=0",
    .skips = true,
    .opts = { { "theta", 0, 100, false, false, 1 }, { "K", 1, 1000, true, false, 2 },
              { "window", 1, 10000, true, false, 8 } },
    .uses_norm = true,
    .init = s_init, .fini = s_fini, .decide = s_decide,
};
