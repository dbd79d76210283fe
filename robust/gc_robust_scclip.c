/*  scclip[:TAU] / scclip:auto[:DELTA]: self-centered clipping
    (ClippedGossip), with a fixed radius or the adaptive one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"

#define S_SCCLIP_DELTA 0.25

//  The adaptive radius: tau^2 = (1/delta) sum of w_j ||x_j - x_own||^2 over
//  the nearest inputs holding weight 1 - delta (the last one fractionally):
//  the ClippedGossip choice tau^2 = (1/delta) sum_{honest j} w_j E||.||^2
//  with the unknown honest set replaced by the closest 1 - delta of weight,
//  which never exceeds it since the honest weight is at least 1 - delta.
static double
s_adaptive_tau (gc_robust_t *self, const double *d2, const double *w, size_t n, double delta)
{
    gc_robust_order (self->ws.idx, n, d2);
    double budget = 1.0 - delta, sum = 0;
    for (size_t t = 0; t < n && budget > 0; t++) {
        size_t i = self->ws.idx [t];
        double take = w [i] < budget ? w [i] : budget;
        sum += take * d2 [i];
        budget -= take;
    }
    return sqrt (sum / delta);
}

//  Self-centered clipping: out = own + sum_j w_j clip_tau(x_j - own).
static int
s_rule_scclip (gc_robust_t *self, const float *const *x, const double *w, size_t n, size_t d,
               const float *own, float *out)
{
    const gc_robust_params_t *r = &self->rule;
    gc_robust_ws_t *ws = &self->ws;
    double *d2 = ws->vec_a, *a = ws->vec_b;
    int rc = gc_robust_dist_to (ws, x, n, d, own, d2);
    if (rc)
        return rc;
    double tau = r->adaptive ? s_adaptive_tau (self, d2, w, n, r->delta) : r->tau;
    size_t clipped = 0;
    for (size_t i = 0; i < n; i++) {
        double c = tau > 0 ? gc_robust_clip_factor (d2 [i], tau) : (d2 [i] > 0 ? 0.0 : 1.0);
        clipped += c < 1.0;
        a [i] = w [i] * c;
    }
    self->info.tau = tau;
    self->info.n_clipped = clipped;
    return gc_robust_step (ws, x, a, n, d, own, out, NULL);
}

static int
s_parse (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    int n = t->n;
    r->delta = S_SCCLIP_DELTA;
    if (n > 3)
        return gc_robust_parse_count_error (r, text, err);
    r->adaptive = n == 1 || !strcmp (t->tok [1], "auto");
    if (r->adaptive) {
        if (n > 2 && gc_parse_double (t->tok [2], 1e-6, 1 - 1e-6, &r->delta, "scclip delta", err))
            return -1;
    }
    else
    if (n > 2 || gc_parse_double (t->tok [1], 1e-30, 1e30, &r->tau, "scclip tau", err))
        return n > 2 ? gc_err_set (err, GC_ROBUST_ESPEC,
                                   "'%s': scclip takes TAU, or auto[:DELTA]", text) : -1;
    return 0;
}

static void
s_describe (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    char a [32];
    gc_robust_fmt_double (a, sizeof a, r->adaptive ? r->delta : r->tau);
    gc_text_add (buf, size, used, r->adaptive ? "scclip:auto:%s" : "scclip:%s", a);
}

static int
s_run (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w, float *out)
{
    return s_rule_scclip (self, x, w, st->kv, st->d, st->own, out);
}

const gc_robust_rule_t gc_robust_rule_scclip = {
    .name = "scclip", .usage = "scclip[:TAU] or scclip:auto[:DELTA]",
    .help = "self-centered clipping (ClippedGossip) around the own vector; auto: adaptive radius",
    .example = "scclip:auto:0.2", .malformed = "scclip:1:2",
    .coords = true, .needs_centre = true,
    .parse = s_parse, .describe = s_describe, .run = s_run,
};
