#include "gc_timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gc_timeline_t {
    const gc_scenario_t  *sc;
    gc_timeline_ops_t     ops;
    uint32_t              n;
    bool                 *fired;
    double               *fired_at;
    gc_timeline_faults_t *faults;       /* per peer */
    uint64_t             *rounds;       /* scratch: the counted rounds */
    uint32_t             *members;      /* scratch: a partition side */
};

gc_timeline_t *
gc_timeline_new (const gc_scenario_t *sc, const gc_timeline_ops_t *ops)
{
    gc_timeline_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->sc = sc;
    self->ops = *ops;
    self->n = sc->n_peers;
    self->fired = calloc (sc->n_events + 1, sizeof *self->fired);
    self->fired_at = calloc (sc->n_events + 1, sizeof *self->fired_at);
    self->faults = calloc (self->n + 1, sizeof *self->faults);
    self->rounds = calloc (self->n + 1, sizeof *self->rounds);
    self->members = calloc (self->n + 1, sizeof *self->members);
    if (!self->fired || !self->fired_at || !self->faults || !self->rounds || !self->members) {
        gc_timeline_destroy (&self);
        return NULL;
    }
    for (uint32_t i = 0; i < self->n; i++)
        self->faults [i].slow = 1;
    return self;
}

void
gc_timeline_destroy (gc_timeline_t **self_p)
{
    gc_timeline_t *self = *self_p;
    if (!self)
        return;
    free (self->fired);
    free (self->fired_at);
    free (self->faults);
    free (self->rounds);
    free (self->members);
    free (self);
    *self_p = NULL;
}

//  The median of k rounds: the (k-1)/2-th and k/2-th smallest by bisection
//  on the value (no sort, no copy; rounds are bounded by train/rounds).
static double
s_median (const uint64_t *v, size_t k)
{
    if (k == 0)
        return 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < k; i++) {
        lo = v [i] < lo ? v [i] : lo;
        hi = v [i] > hi ? v [i] : hi;
    }
    size_t want [2] = { (k - 1) / 2, k / 2 };
    double at [2];
    for (int w = 0; w < 2; w++) {
        uint64_t a = lo, b = hi;
        while (a < b) {
            uint64_t mid = a + (b - a) / 2;
            size_t below = 0;
            for (size_t i = 0; i < k; i++)
                below += v [i] <= mid;
            if (below > want [w])
                b = mid;
            else
                a = mid + 1;
        }
        at [w] = (double) a;
    }
    return k % 2 ? at [1] : floor ((at [0] + at [1]) / 2);
}

double
gc_timeline_median_round (gc_timeline_t *self)
{
    size_t k = 0;
    for (uint32_t i = 0; i < self->n; i++) {
        int64_t r = self->ops.round (self->ops.ctx, i);
        if (r >= 0)
            self->rounds [k++] = (uint64_t) r;
    }
    return s_median (self->rounds, k);
}

void
gc_timeline_note (gc_timeline_t *self, const char *text)
{
    self->ops.record (self->ops.ctx, gc_timeline_median_round (self), text);
}

bool
gc_timeline_fired (const gc_timeline_t *self, size_t e)
{
    return e < self->sc->n_events && self->fired [e];
}

bool
gc_timeline_restart_pending (const gc_timeline_t *self, uint32_t peer)
{
    for (size_t e = 0; e < self->sc->n_events; e++)
        if (!self->fired [e] && self->sc->events [e].action == GC_ACT_RESTART
        &&  gc_peerset_has (&self->sc->events [e].peers, peer))
            return true;
    return false;
}

const gc_timeline_faults_t *
gc_timeline_faults (const gc_timeline_t *self, uint32_t peer)
{
    return &self->faults [peer < self->n ? peer : 0];
}

void
gc_timeline_start (gc_timeline_t *self)
{
    if (!self->ops.schedule)
        return;
    for (size_t e = 0; e < self->sc->n_events; e++)
        if (self->sc->events [e].at_kind == GC_AT_TIME)
            self->ops.schedule (self->ops.ctx, e, self->sc->events [e].at);
}

//  Every side talks only to itself; the peers in no side form one more.
static void
s_partition (gc_timeline_t *self, const gc_event_t *ev)
{
    gc_peerset_t rest;
    gc_peerset_all (&rest, self->n);
    for (size_t s = 0; s < ev->n_sides; s++)
        for (uint32_t i = 0; i < self->n; i++)
            if (gc_peerset_has (&ev->sides [s], i))
                gc_peerset_remove (&rest, i);
    for (size_t s = 0; s <= ev->n_sides; s++) {
        const gc_peerset_t *side = s < ev->n_sides ? &ev->sides [s] : &rest;
        size_t k = gc_peerset_list (side, self->members, self->n);
        for (size_t m = 0; m < k; m++)
            self->ops.partition (self->ops.ctx, self->members [m], self->members, k);
    }
}

static void
s_act (gc_timeline_t *self, const gc_event_t *ev, uint32_t i)
{
    const gc_timeline_ops_t *o = &self->ops;
    gc_timeline_faults_t *f = &self->faults [i];
    switch (ev->action) {
        case GC_ACT_KILL:
        case GC_ACT_TERM:
            o->kill (o->ctx, i, ev->action == GC_ACT_TERM);
            break;
        case GC_ACT_STOP:
        case GC_ACT_CONT:
            o->freeze (o->ctx, i, ev->action == GC_ACT_STOP);
            break;
        case GC_ACT_RESTART:
            o->restart (o->ctx, i, ev->resume, f);
            break;
        case GC_ACT_DROP:
            gc_fault_set_drop (&f->fault, ev->value);
            o->faults (o->ctx, i, GC_FAULT_DROP, f);
            break;
        case GC_ACT_DELAY:
            gc_fault_set_delay (&f->fault, ev->value, ev->value2);
            o->faults (o->ctx, i, GC_FAULT_DELAY, f);
            break;
        case GC_ACT_RATE:
            gc_fault_set_rate (&f->fault, ev->value);
            o->faults (o->ctx, i, GC_FAULT_RATE, f);
            break;
        case GC_ACT_SLOW:
            f->slow = ev->value;
            o->faults (o->ctx, i, GC_TIMELINE_SLOW, f);
            break;
        case GC_ACT_HEAL:
            o->partition (o->ctx, i, NULL, 0);
            break;
        case GC_ACT_PARTITION:
            return;                     /* per side (s_partition) */
    }
    if (o->acted)
        o->acted (o->ctx, i);
}

void
gc_timeline_fire (gc_timeline_t *self, size_t e, double t)
{
    const gc_scenario_t *sc = self->sc;
    if (e >= sc->n_events || self->fired [e])
        return;
    const gc_event_t *ev = &sc->events [e];
    self->fired [e] = true;
    self->fired_at [e] = t;
    if (self->ops.schedule)
        for (size_t a = 0; a < sc->n_events; a++) {
            const gc_event_t *later = &sc->events [a];
            if (later->at_kind == GC_AT_AFTER && later->after == e && !self->fired [a])
                self->ops.schedule (self->ops.ctx, a, later->at);
        }
    char who [512], text [1024];
    gc_peerset_format (&ev->peers, who, sizeof who);
    if (ev->action == GC_ACT_PARTITION)
        snprintf (text, sizeof text, "%s: %s", ev->name, ev->text);
    else
        snprintf (text, sizeof text, "%s: %s -> peers %s", ev->name, ev->text, who);
    gc_timeline_note (self, text);
    if (ev->action == GC_ACT_PARTITION) {
        s_partition (self, ev);
        return;
    }
    for (uint32_t i = 0; i < self->n; i++)
        if (gc_peerset_has (&ev->peers, i))
            s_act (self, ev, i);
}

void
gc_timeline_poll (gc_timeline_t *self, double t)
{
    const gc_scenario_t *sc = self->sc;
    bool any_round = false;
    for (size_t e = 0; e < sc->n_events; e++)
        any_round |= !self->fired [e] && sc->events [e].at_kind == GC_AT_ROUND;
    double round = any_round ? gc_timeline_median_round (self) : 0;
    for (size_t e = 0; e < sc->n_events; e++) {
        const gc_event_t *ev = &sc->events [e];
        if (self->fired [e])
            continue;
        bool due = ev->at_kind == GC_AT_ROUND && round >= ev->at;
        if (!self->ops.schedule)
            due |= (ev->at_kind == GC_AT_TIME && t >= ev->at)
                || (ev->at_kind == GC_AT_AFTER && self->fired [ev->after]
                    && t >= self->fired_at [ev->after] + ev->at);
        if (due)
            gc_timeline_fire (self, e, t);
    }
}
