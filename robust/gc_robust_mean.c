/*  mean: the weighted mean. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_robust_rule.h"
#include "gc_vec.h"

//  Inputs no kernel read (zero weight or coefficient) are still checked:
//  a peer that sends NaN is reported whatever its weight.
static int
s_check_unread (const float *const *in, const double *coef, size_t k, size_t d)
{
    for (size_t i = 0; i < k; i++)
        if (coef [i] == 0 && !gc_vec_all_finite (in [i], d))
            return 1;
    return 0;
}

static int
s_run (gc_robust_t *self, gc_robust_run_t *st, const float *const *x, const double *w, float *out)
{
    int rc = gc_robust_combine (&self->ws, x, w, st->kv, st->d, out);
    return rc ? rc : s_check_unread (x, w, st->kv, st->d);
}

const gc_robust_rule_t gc_robust_rule_mean = {
    .name = "mean", .usage = "mean", .help = "weighted mean (not robust: the baseline)",
    .example = "mean", .malformed = "mean:1",
    .coords = true,
    .parse = gc_robust_parse_plain, .describe = gc_robust_describe_plain, .run = s_run,
};
