/*  accordion, after Accordion (Agarwal et al.): a critical learning regime
    shows as a fast change of the update norm; compress less there. Every
    `window` rounds the window's mean |u| is compared with the previous
    window's: a relative change of eta or more makes the next window
    critical (ratio crit), less makes it calm (ratio calm). Training starts
    critical. */
#include <math.h>
#include <stdlib.h>

#include "gc_policy_method.h"

enum { S_CRIT, S_CALM, S_ETA, S_WINDOW };

typedef struct {
    gc_policy_window_t win;
    double   prev;          /* the previous window's mean, < 0 before one */
    bool     critical;
} s_accordion_t;

static int
s_init (gc_policy_t *self, gc_err_t *err)
{
    s_accordion_t *st = calloc (1, sizeof *st);
    if (!st)
        return gc_err_set (err, GC_E_NOMEM, "accordion: out of memory");
    st->prev = -1;
    st->critical = true;
    self->state = st;
    return 0;
}

static void
s_decide (gc_policy_t *self, const gc_policy_round_t *r, gc_policy_decision_t *d)
{
    s_accordion_t *st = self->state;
    //  This round's budget is the regime decided at the last window's end.
    d->ratio = st->critical ? self->opt [S_CRIT] : self->opt [S_CALM];
    double mean;
    if (gc_policy_window_add (&st->win, sqrt (r->sq_update), (uint32_t) self->opt [S_WINDOW], &mean)) {
        if (st->prev > 0)
            st->critical = fabs (mean - st->prev) >= self->opt [S_ETA] * st->prev;
        else
            st->critical = st->prev < 0;    /* the first window's end: still critical */
        st->prev = mean;
    }
}

const gc_policy_method_t gc_policy_accordion = {
    .name = "accordion", .usage = "accordion[:crit=2R][:calm=R/2][:eta=0.5][:window=10]",
    .help = "ratio crit while the window's mean |u| moves by eta or more, calm otherwise",
    .example = "accordion:crit=0.05:calm=0.005:eta=0.3", .malformed = "accordion:eta=-1",
    .needs_ratio = true,
    .opts = { { "crit", 1e-9, 1, false, true, 2 }, { "calm", 1e-9, 1, false, true, 0.5 },
              { "eta", 0, 100, false, false, 0.5 }, { "window", 1, 100000, true, false, 10 } },
    .uses_norm = true,
    .init = s_init, .decide = s_decide,
};
