/*  Order statistics per coordinate: cwmed (the median) and cwtm:B (the
    trimmed mean, B dropped on each side), both one window of the sorted
    inputs (gc_robust_cw_window). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"

static void
s_window_median (const gc_robust_params_t *r, size_t n, size_t *lo, size_t *hi)
{
    (void) r;
    *lo = (n - 1) / 2;
    *hi = n / 2;
}

static void
s_window_trimmed (const gc_robust_params_t *r, size_t n, size_t *lo, size_t *hi)
{
    *lo = (size_t) r->f;
    *hi = n - 1 - (size_t) r->f;
}

static int
s_run_window (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w,
              float *out)
{
    (void) w;
    size_t lo, hi;
    self->rule.desc->window (&self->rule, st->kv, &lo, &hi);
    return gc_robust_cw_window (&self->ws, x, st->kv, st->d, lo, hi, out);
}

static int
s_parse_trimmed (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err)
{
    if (t->n != 2)
        return gc_robust_parse_count_error (r, text, err);
    return gc_parse_long (t->tok [1], 0, (GC_ROBUST_MAX_INPUTS - 1) / 2, &r->f, "cwtm b", err);
}

static size_t
s_min_trimmed (const gc_robust_params_t *r)
{
    return 2 * (size_t) r->f + 1;
}

static void
s_describe_trimmed (const gc_robust_params_t *r, char *buf, size_t size, size_t *used)
{
    gc_text_add (buf, size, used, "cwtm:%ld", r->f);
}

const gc_robust_rule_t gc_robust_rule_cwmed = {
    .name = "cwmed", .usage = "cwmed", .help = "coordinate-wise median",
    .example = "cwmed", .malformed = "cwmed:1",
    .coords = true,
    .parse = gc_robust_parse_plain, .describe = gc_robust_describe_plain, .run = s_run_window,
    .window = s_window_median,
};

const gc_robust_rule_t gc_robust_rule_cwtm = {
    .name = "cwtm", .usage = "cwtm:B", .help = "coordinate-wise trimmed mean, B dropped on each side",
    .example = "cwtm:2", .malformed = "cwtm",
    .coords = true,
    .parse = s_parse_trimmed, .min_inputs = s_min_trimmed, .describe = s_describe_trimmed,
    .run = s_run_window, .window = s_window_trimmed,
};
