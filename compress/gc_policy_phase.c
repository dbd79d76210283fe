/*  phase: a fixed ratio for a span of rounds, the base ratio outside it.
    A diagnostic (docs/RESULTS.md, table 2pc): which rounds of a run its
    accuracy is lost in, by sending more in those rounds only. */
#include "gc_policy_method.h"

enum { S_FROM, S_TO, S_RATIO };

static int
s_init (gc_policy_t *self, gc_err_t *err)
{
    if (self->opt [S_TO] < self->opt [S_FROM])
        return gc_err_set (err, GC_E_RANGE, "phase: to=%g is below from=%g", self->opt [S_TO],
                           self->opt [S_FROM]);
    return 0;
}

static void
s_decide (gc_policy_t *self, const gc_policy_round_t *r, gc_policy_decision_t *d)
{
    d->ratio = (double) r->round >= self->opt [S_FROM] && (double) r->round < self->opt [S_TO]
             ? self->opt [S_RATIO] : self->base;
}

const gc_policy_method_t gc_policy_phase = {
    .name = "phase", .usage = "phase[:from=0][:to=0][:ratio=4R]",
    .help = "ratio `ratio` in rounds [from, to), the compressor's own outside",
    .example = "phase:from=100:to=150:ratio=0.04", .malformed = "phase:from=10:to=5",
    .needs_ratio = true,
    .opts = { { "from", 0, 1e12, true, false, 0 }, { "to", 0, 1e12, true, false, 0 },
              { "ratio", 1e-9, 1, false, true, 4 } },
    .init = s_init, .decide = s_decide,
};
