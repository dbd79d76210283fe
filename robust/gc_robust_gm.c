/*  gm[:NU[:ITERS[:TOL]]]: the geometric median by smoothed Weiszfeld. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"

//  Defaults (docs/ALGORITHMS.md lists them with the reasons).
#define S_GM_NU      1e-6
#define S_GM_ITERS   32
#define S_GM_TOL     1e-6

//  Smoothed Weiszfeld from the coordinate-wise median: beta_i = w_i /
//  max(nu, ||z - x_i||), z <- sum beta_i x_i / sum beta_i, until the
//  objective sum w_i ||z - x_i|| improves by less than tol (relative).
static int
s_rule_gm (gc_robust_t *self, const float *const *x, const double *w, size_t n, size_t d,
           float *out)
{
    const gc_robust_params_t *r = &self->rule;
    gc_robust_ws_t *ws = &self->ws;
    double *d2 = ws->vec_a, *a = ws->vec_b;
    int rc = gc_robust_cw_window (ws, x, n, d, (n - 1) / 2, n / 2, out);
    if (rc || (rc = gc_robust_dist_to (ws, x, n, d, out, d2)))
        return rc;
    double obj = 0;
    for (size_t i = 0; i < n; i++)
        obj += w [i] * sqrt (d2 [i]);
    for (long it = 1; it <= r->iters; it++) {
        double bsum = 0;
        for (size_t i = 0; i < n; i++) {
            double dist = sqrt (d2 [i]);
            a [i] = w [i] / (dist > r->nu ? dist : r->nu);
            bsum += a [i];
        }
        for (size_t i = 0; i < n; i++)
            a [i] /= bsum;
        if ((rc = gc_robust_step (ws, x, a, n, d, out, out, d2)))
            return rc;
        double next = 0;
        for (size_t i = 0; i < n; i++)
            next += w [i] * sqrt (d2 [i]);
        self->info.iterations = (int) it;
        bool done = obj - next <= r->tol * next;
        obj = next;
        if (done)
            break;
    }
    return 0;
}

static int
s_parse (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    int n = t->n;
    r->nu = S_GM_NU;
    r->iters = S_GM_ITERS;
    r->tol = S_GM_TOL;
    if (n > 4)
        return gc_robust_parse_count_error (r, text, err);
    if ((n > 1 && gc_parse_double (t->tok [1], 1e-30, 1e30, &r->nu, "gm nu", err))
    ||  (n > 2 && gc_parse_long (t->tok [2], 1, 10000, &r->iters, "gm iterations", err))
    ||  (n > 3 && gc_parse_double (t->tok [3], 0, 1, &r->tol, "gm tolerance", err)))
        return -1;
    return 0;
}

static void
s_describe (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    char a [32], b [32];
    gc_robust_fmt_double (a, sizeof a, r->nu);
    gc_robust_fmt_double (b, sizeof b, r->tol);
    gc_text_add (buf, size, used, "gm:%s:%ld:%s", a, r->iters, b);
}

static int
s_run (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w, float *out)
{
    return s_rule_gm (self, x, w, st->kv, st->d, out);
}

const gc_robust_rule_t gc_robust_rule_gm = {
    .name = "gm", .usage = "gm[:NU[:ITERS[:TOL]]]", .help = "geometric median (smoothed Weiszfeld)",
    .example = "gm:1e-05:16:0.001", .malformed = "gm:0",
    .coords = true,
    .parse = s_parse, .describe = s_describe, .run = s_run,
};
