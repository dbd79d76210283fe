/*  Softmax cross-entropy with label smoothing (gc_xent.h): the gradient of
    the logits against central differences of the loss, the values a
    smoothed target gives where they are known in closed form, and eps = 0
    computing the very bytes of plain cross-entropy. */
#include "gc_test.h"

#include <math.h>
#include <string.h>

#include "gc_rng.h"
#include "gc_xent.h"

enum { S_MAXB = 6, S_MAXK = 12 };

//  Plain cross-entropy as gc_softmax_xent computed it before label
//  smoothing existed, kept verbatim: eps = 0 must give these bytes.
static double
s_reference (float *logits, const uint8_t *y, size_t batch, size_t classes, float alpha)
{
    double loss = 0;
    float inv = alpha / (float) batch;
    for (size_t r = 0; r < batch; r++) {
        float *z = logits + r * classes;
        size_t arg = 0;
        for (size_t c = 1; c < classes; c++)
            if (z [c] > z [arg])
                arg = c;
        float zmax = z [arg], sum = 0, zy = z [y [r]] - zmax;
        for (size_t c = 0; c < classes; c++) {
            z [c] = expf (z [c] - zmax);
            sum += z [c];
        }
        loss += log ((double) sum) - (double) zy;
        float scale = inv / sum;
        for (size_t c = 0; c < classes; c++)
            z [c] *= scale;
        z [y [r]] -= inv;
    }
    return loss;
}

//  Loss (summed over the batch) of a copy of z: the function is in place.
static double
s_loss (const float *z, const uint8_t *y, size_t batch, size_t classes, float eps)
{
    float copy [S_MAXB * S_MAXK];
    memcpy (copy, z, batch * classes * sizeof (float));
    return gc_softmax_xent (copy, y, batch, classes, eps, 1.0f, NULL);
}

static const struct {
    size_t batch, classes;
    float  eps, alpha, scale;   /* scale: of the random logits */
} s_cases [] = {
    { 1, 2, 0.0f, 1.0f, 1.0f },
    { 4, 10, 0.1f, 1.0f, 2.0f },
    { 3, 5, 0.5f, 0.5f, 1.0f },
    { 6, 12, 0.9f, 3.0f, 4.0f },
    { 2, 3, 0.1f, 1.0f, 8.0f },     /* confident logits: the label's term dominates */
    { 5, 7, 0.25f, -2.0f, 1.0f },   /* a negative alpha flips the sign only */
};

//  Random logits (case k's scale) and labels for case k's batch and classes.
static void
s_fill (gc_rng_t *rng, size_t k, float *z, uint8_t *y)
{
    gc_rng_fill_normal (rng, z, s_cases [k].batch * s_cases [k].classes, 0.0f, s_cases [k].scale);
    for (size_t r = 0; r < s_cases [k].batch; r++)
        y [r] = (uint8_t) gc_rng_below (rng, s_cases [k].classes);
}

//  d(summed loss)/dz = batch * dz / alpha: central differences of the loss
//  in double around float logits, h = 1e-2 (the loss is smooth; its float
//  rounding, ~1e-7 relative, over 2h stays near 1e-5).
static void
test_gradient_matches_finite_differences (void **state)
{
    gc_rng_t rng;
    gc_rng_init (&rng, 18, 0);
    for (size_t k = 0; k < sizeof s_cases / sizeof s_cases [0]; k++) {
        size_t B = s_cases [k].batch, K = s_cases [k].classes, n = B * K;
        float eps = s_cases [k].eps, alpha = s_cases [k].alpha;
        float z [S_MAXB * S_MAXK], g [S_MAXB * S_MAXK];
        uint8_t y [S_MAXB];
        s_fill (&rng, k, z, y);
        memcpy (g, z, sizeof z);
        size_t right = 99;
        double loss = gc_softmax_xent (g, y, B, K, eps, alpha, &right);
        assert_true (fabs (loss - s_loss (z, y, B, K, eps)) < 1e-12);
        assert_true (right <= B);
        double rowsum = 0;
        for (size_t i = 0; i < n; i++) {
            const float h = 1e-2f;
            float keep = z [i];
            z [i] = keep + h;
            double up = s_loss (z, y, B, K, eps);
            z [i] = keep - h;
            double down = s_loss (z, y, B, K, eps);
            z [i] = keep;
            double want = alpha * (up - down) / (2.0 * h) / (double) B;
            if (fabs (g [i] - want) > 1e-4 * (1.0 + fabs (alpha)))
                fail_msg ("case %zu (eps %g), logit %zu: gradient %.7g, finite difference %.7g",
                          k, eps, i, g [i], want);
            rowsum += g [i];
        }
        //  softmax and target each sum to 1 per sample: the delta sums to 0
        assert_true (fabs (rowsum) < 1e-5 * (double) B);
    }
}

//  Closed forms: equal logits give p = 1/K, so the loss is log K whatever
//  eps and the delta is (1/K - t) / batch; logits log t (the target itself)
//  are the minimum, with zero gradient and the target's entropy as loss.
static void
test_known_values (void **state)
{
    static const float eps [] = { 0.0f, 0.1f, 0.5f, 0.9f };
    const size_t K = 10, B = 2;
    uint8_t y [2] = { 3, 9 };
    for (size_t e = 0; e < sizeof eps / sizeof eps [0]; e++) {
        float z [20] = { 0 };
        double loss = gc_softmax_xent (z, y, B, K, eps [e], 1.0f, NULL);
        assert_true (fabs (loss - (double) B * log ((double) K)) < 1e-5);
        for (size_t r = 0; r < B; r++)
            for (size_t c = 0; c < K; c++) {
                double t = (c == y [r] ? 1.0 - eps [e] : 0.0) + eps [e] / (double) K;
                assert_true (fabs (z [r * K + c] - (0.1 - t) / (double) B) < 1e-6);
            }
        if (eps [e] == 0.0f)
            continue;       /* log 0: the plain target has no finite minimum */
        double entropy = 0;
        for (size_t r = 0; r < B; r++)
            for (size_t c = 0; c < K; c++) {
                double t = (c == y [r] ? 1.0 - eps [e] : 0.0) + eps [e] / (double) K;
                z [r * K + c] = (float) log (t);
                entropy -= t * log (t);
            }
        loss = gc_softmax_xent (z, y, B, K, eps [e], 1.0f, NULL);
        assert_true (fabs (loss - entropy) < 1e-5);
        for (size_t i = 0; i < B * K; i++)
            assert_true (fabsf (z [i]) < 1e-6f);
    }
}

//  eps = 0: the loss and every byte of the delta are those of the code
//  before label smoothing (what keeps old runs reproducible).
static void
test_eps_zero_is_plain (void **state)
{
    gc_rng_t rng;
    gc_rng_init (&rng, 81, 0);
    for (size_t k = 0; k < sizeof s_cases / sizeof s_cases [0]; k++) {
        size_t B = s_cases [k].batch, K = s_cases [k].classes, n = B * K;
        float a [S_MAXB * S_MAXK], b [S_MAXB * S_MAXK];
        uint8_t y [S_MAXB];
        s_fill (&rng, k, a, y);
        memcpy (b, a, sizeof a);
        double got = gc_softmax_xent (a, y, B, K, 0.0f, s_cases [k].alpha, NULL);
        double want = s_reference (b, y, B, K, s_cases [k].alpha);
        assert_true (got == want);
        assert_memory_equal (a, b, n * sizeof (float));
        //  and eps > 0 is another loss on the same logits
        gc_rng_fill_normal (&rng, a, n, 0.0f, s_cases [k].scale);
        assert_true (s_loss (a, y, B, K, 0.1f) != s_loss (a, y, B, K, 0.0f));
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_gradient_matches_finite_differences),
        cmocka_unit_test (test_known_values),
        cmocka_unit_test (test_eps_zero_is_plain),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
