/*  settle: compress more while the model moves fast, less as it settles.
    Every `window` rounds the window's mean |u| is compared with the first
    window's: the ratio of the next window is lo (ref / mean)^power, within
    [lo, hi]. Training starts at lo.

    Why (docs/RESULTS.md, table 2b): in the replica scheme what a run's
    first rounds send decides how many bytes it takes to reach a target,
    and what its last rounds send decides where it ends (the consensus
    between peers when their updates are small): top-k 0.5 % reaches 0.84
    with the fewest bytes of the fixed ratios, 2 % ends closest to dense.
    The update norm tells the two phases apart without knowing the
    schedule: it falls as the learning rate decays and as the gradient
    does. The opposite of accordion's rule, which spends its bytes early. */
#include <math.h>
#include <stdlib.h>

#include "gc_policy_method.h"

enum { S_LO, S_HI, S_WINDOW, S_POWER };

typedef struct {
    gc_policy_window_t win;
    double   ref;           /* the first window's mean |u|, < 0 before it */
    double   ratio;         /* this window's */
} s_settle_t;

static int
s_init (gc_policy_t *self, gc_err_t *err)
{
    if (self->opt [S_HI] < self->opt [S_LO])
        return gc_err_set (err, GC_E_RANGE, "settle: hi=%g is below lo=%g", self->opt [S_HI],
                           self->opt [S_LO]);
    s_settle_t *st = calloc (1, sizeof *st);
    if (!st)
        return gc_err_set (err, GC_E_NOMEM, "settle: out of memory");
    st->ref = -1;
    st->ratio = self->opt [S_LO];
    self->state = st;
    return 0;
}

static void
s_decide (gc_policy_t *self, const gc_policy_round_t *r, gc_policy_decision_t *d)
{
    s_settle_t *st = self->state;
    d->ratio = st->ratio;
    double mean;
    if (!gc_policy_window_add (&st->win, sqrt (r->sq_update), (uint32_t) self->opt [S_WINDOW], &mean))
        return;
    if (st->ref < 0) {
        st->ref = mean;
        return;
    }
    //  a window of zero updates (a peer that stopped) keeps the ratio it had
    if (!(mean > 0) || !(st->ref > 0))
        return;
    double ratio = self->opt [S_LO] * pow (st->ref / mean, self->opt [S_POWER]);
    st->ratio = fmin (fmax (ratio, self->opt [S_LO]), self->opt [S_HI]);
}

const gc_policy_method_t gc_policy_settle = {
    .name = "settle", .usage = "settle[:lo=R/4][:hi=4R][:window=10][:power=2]",
    .help = "ratio lo (first |u| / window's mean |u|)^power, within [lo, hi]: more as the model settles",
    .example = "settle:lo=0.005:hi=0.02:power=1", .malformed = "settle:lo=0.02:hi=0.01",
    .needs_ratio = true,
    .opts = { { "lo", 1e-9, 1, false, true, 0.25 }, { "hi", 1e-9, 1, false, true, 4 },
              { "window", 1, 100000, true, false, 10 }, { "power", 0, 8, false, false, 2 } },
    .uses_norm = true,
    .init = s_init, .decide = s_decide,
};
