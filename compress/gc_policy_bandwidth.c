/*  bandwidth: keep a round's send time within frac of its compute time, or
    (round=1) of the whole round's time.
    The payload may take frac x T x rate bytes on the slowest out-link; the
    bytes an entry costs are measured from the last payload (6 before one:
    a varint index and an fp32 value). rate is the option, else what the
    driver measured or configured (gc_policy_set_env); with neither, or
    before the first compute time, the base ratio (as a later stage of a
    chain: no cap). T is the median of the last 9 rounds' compute times,
    or with round=1 of their whole times (publish to publish, the wait for
    the neighbours included; the compute time until one is known). Why the
    round: under `wait sync` a round lasts as long as its slowest
    neighbourhood's sends, and a peer whose out-links are faster than the
    ones that set that pace can send more in the same time; budgeted
    against its own compute, it was held to the thin links' payloads
    (docs/RESULTS.md, table 2ht). A thin-linked peer's own payload makes
    its round longer, so T = c + s with s = frac T: s = frac c / (1 - frac),
    which round=1 with frac = 1/3 makes the same c / 2 that the compute
    basis gives with frac = 0.5. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_policy_method.h"

enum { S_FRAC, S_RATE, S_MIN, S_MAX, S_ROUND };

//  The compute time is the median of the last S_TIMES rounds' (a process
//  sharing its cores with others measures train times that swing 10x from
//  one round to the next, and the budget followed them: gcnet, table 2h); a
//  steady time, as gcsim's, gives the same budget as the time itself.
#define S_TIMES 9

typedef struct {
    double   t [S_TIMES];
    uint32_t n, at;
} s_times_t;

typedef struct {
    s_times_t compute, round;
} s_bandwidth_t;

static int
s_init (gc_policy_t *self, gc_err_t *err)
{
    if (!(self->state = calloc (1, sizeof (s_bandwidth_t))))
        return gc_err_set (err, GC_E_NOMEM, "bandwidth: out of memory");
    return 0;
}

//  The median of the window with the round's time added (the lower middle
//  of an even count: one of the times, never an average of two).
static double
s_median_add (s_times_t *w, double now)
{
    w->t [w->at] = now;
    w->at = (w->at + 1) % S_TIMES;
    w->n += w->n < S_TIMES;
    double v [S_TIMES];
    memcpy (v, w->t, w->n * sizeof *v);
    for (uint32_t i = 1; i < w->n; i++)
        for (uint32_t j = i; j > 0 && v [j - 1] > v [j]; j--) {
            double tmp = v [j];
            v [j] = v [j - 1];
            v [j - 1] = tmp;
        }
    return v [(w->n - 1) / 2];
}

static void
s_decide (gc_policy_t *self, const gc_policy_round_t *round, gc_policy_decision_t *d)
{
    (void) round;
    const gc_policy_env_t *env = self->env;
    double rate = self->opt [S_RATE] > 0 ? self->opt [S_RATE] : env->rate;
    if (!(rate > 0 && env->compute_s > 0))
        return;                         /* nothing to go on: the preset stands */
    s_bandwidth_t *st = self->state;
    double t = s_median_add (&st->compute, env->compute_s);
    if (self->opt [S_ROUND] > 0 && env->round_s > 0)
        t = s_median_add (&st->round, env->round_s);
    double per_entry = env->last_len && env->last_k
                     ? (double) env->last_len / (double) env->last_k : 6.0;
    double entries = self->opt [S_FRAC] * t * rate / per_entry;
    double r = entries / (double) self->layout->n_params;
    d->ratio = fmax (self->opt [S_MIN], fmin (self->opt [S_MAX], r));
}

const gc_policy_method_t gc_policy_bandwidth = {
    .name = "bandwidth", .usage = "bandwidth[:frac=0.5][:rate=B/S][:min=R/10][:max=4R][:round=0]",
    .help = "the ratio whose payload takes frac x the compute time (round=1: the round's time) "
            "at the link rate",
    .example = "bandwidth:frac=0.25:rate=1e6", .malformed = "bandwidth:frac=2",
    .needs_ratio = true,
    .opts = { { "frac", 1e-6, 1, false, false, 0.5 }, { "rate", 0, 1e15, false, false, 0 },
              { "min", 1e-9, 1, false, true, 0.1 }, { "max", 1e-9, 1, false, true, 4 },
              { "round", 0, 1, true, false, 0 } },
    .init = s_init, .decide = s_decide,
};
