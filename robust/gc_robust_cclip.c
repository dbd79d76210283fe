/*  cclip[:TAU[:L]]: centered clipping, L steps from the centre. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"

#define S_CCLIP_TAU  10.0
#define S_CCLIP_L    3

//  Centered clipping: v <- v + sum w_i clip_tau(x_i - v), L times, from the
//  given centre (else the coordinate-wise median).
static int
s_rule_cclip (gc_robust_t *self, const float *const *x, const double *w, size_t n, size_t d,
              const float *own, float *out)
{
    const gc_robust_params_t *r = &self->rule;
    gc_robust_ws_t *ws = &self->ws;
    double *d2 = ws->vec_a, *a = ws->vec_b;
    int rc;
    if (own && own != out)
        memcpy (out, own, d * sizeof *out);
    else
    if (!own && (rc = gc_robust_cw_window (ws, x, n, d, (n - 1) / 2, n / 2, out)))
        return rc;
    if ((rc = gc_robust_dist_to (ws, x, n, d, out, d2)))
        return rc;
    for (long it = 1; it <= r->iters; it++) {
        size_t clipped = 0;
        for (size_t i = 0; i < n; i++) {
            double c = gc_robust_clip_factor (d2 [i], r->tau);
            clipped += c < 1.0;
            a [i] = w [i] * c;
        }
        self->info.n_clipped = clipped;
        self->info.iterations = (int) it;
        if ((rc = gc_robust_step (ws, x, a, n, d, out, out, it < r->iters ? d2 : NULL)))
            return rc;
    }
    return 0;
}

static int
s_parse (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    int n = t->n;
    r->tau = S_CCLIP_TAU;
    r->iters = S_CCLIP_L;
    if (n > 3)
        return gc_robust_parse_count_error (r, text, err);
    if ((n > 1 && gc_parse_double (t->tok [1], 1e-30, 1e30, &r->tau, "cclip tau", err))
    ||  (n > 2 && gc_parse_long (t->tok [2], 1, 10000, &r->iters, "cclip L", err)))
        return -1;
    return 0;
}

static void
s_describe (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    char a [32];
    gc_robust_fmt_double (a, sizeof a, r->tau);
    gc_text_add (buf, size, used, "cclip:%s:%ld", a, r->iters);
}

static int
s_run (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w, float *out)
{
    return s_rule_cclip (self, x, w, st->kv, st->d, st->own, out);
}

const gc_robust_rule_t gc_robust_rule_cclip = {
    .name = "cclip", .usage = "cclip[:TAU[:L]]",
    .help = "centered clipping: L steps of radius TAU from the centre (else the median)",
    .example = "cclip:5:2", .malformed = "cclip:0",
    .coords = true,
    .parse = s_parse, .describe = s_describe, .run = s_run,
};
