/*  Fuzz the aggregation rules with arbitrary floats (NaN, Inf, FLT_MAX,
    denormals), shapes, weights and self indices.

    Input: [rule][k][d][self][flags] then raw float bytes (recycled if short).
    Checks: no crash or sanitizer report; a success gives finite outputs,
    inside the inputs' per-coordinate range for the order-statistic rules;
    NaN/Inf is reported exactly when some input holds one; the portable
    kernels agree with the fast ones. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gc_robust.h"

static const char *s_specs [] = {
    "mean", "cwmed", "cwtm:1", "cwtm:2", "krum:1", "mkrum:1:2", "bulyan:1", "gm:1e-6:8",
    "cclip:1:2", "scclip", "scclip:0.5", "nnm+cwtm:1", "bucket:2+cwmed", "nnm:1+krum:0",
    "cwtm:0", "bucket:3+nnm:1+mean", "guard", "nnm:1+guard:1:4"
};
#define S_NSPECS (sizeof s_specs / sizeof s_specs [0])

#define S_K 12
#define S_D 40

static void
s_require (int ok)
{
    if (!ok)
        __builtin_trap ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 6)
        return 0;
    const char *spec = s_specs [data [0] % S_NSPECS];
    size_t k = 1 + data [1] % S_K, d = 1 + data [2] % S_D;
    int self = (int) (data [3] % (k + 1)) - 1;
    uint8_t flags = data [4];
    const uint8_t *raw = data + 5;
    size_t n_raw = size - 5;
    static float buf [S_K * S_D];
    for (size_t i = 0; i < k * d; i++)
        for (size_t b = 0; b < sizeof (float); b++)
            ((uint8_t *) &buf [i]) [b] = raw [(i * sizeof (float) + b) % n_raw];
    const float *in [S_K];
    double w [S_K];
    bool nonfinite = false;
    for (size_t i = 0; i < k; i++) {
        in [i] = buf + i * d;
        w [i] = (double) ((flags >> 2) & 3) * (double) (i % 3);
        for (size_t j = 0; j < d; j++)
            nonfinite |= !isfinite (in [i][j]);
    }
    //  Valid weights by construction (some are zero): NULL or positive sum.
    const double *weights = (flags & 1) && k >= 2 && ((flags >> 2) & 3) ? w : NULL;

    gc_robust_t *fast = gc_robust_new (spec, NULL), *portable = gc_robust_new (spec, NULL);
    s_require (fast && portable);
    gc_robust_set_portable (portable, true);
    float a [S_D], b [S_D];
    gc_err_t err;
    int rc = gc_robust_aggregate (fast, in, weights, k, d, self, a, &err);
    int rc_p = gc_robust_aggregate (portable, in, weights, k, d, self, b, NULL);
    s_require (rc == rc_p);
    if (rc == 0) {
        s_require (!nonfinite);
        bool order_stat = !strcmp (spec, "cwmed") || !strncmp (spec, "cwtm", 4);
        for (size_t j = 0; j < d; j++) {
            s_require (isfinite (a [j]));
            if (order_stat) {
                float lo = INFINITY, hi = -INFINITY;
                for (size_t i = 0; i < k; i++) {
                    lo = fminf (lo, in [i][j]);
                    hi = fmaxf (hi, in [i][j]);
                }
                s_require (a [j] >= lo && a [j] <= hi);
                //  Same networks and order: identical bytes (up to the sign of zero).
                s_require (a [j] == b [j]);
            }
        }
    }
    else
    if (err.code == GC_E_NONFINITE) {
        s_require (nonfinite);
        int bad = gc_robust_bad_input (fast);
        s_require (bad >= 0 && (size_t) bad < k);
        bool found = false;
        for (size_t j = 0; j < d; j++)
            found |= !isfinite (in [bad][j]);
        s_require (found);
    }
    else
        s_require (err.code == GC_E_INPUT);
    gc_robust_destroy (&fast);
    gc_robust_destroy (&portable);
    return 0;
}
