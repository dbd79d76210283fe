/*  The model: finite-difference check of the gradient of every layer and of
    the loss, gradient accumulation (beta), spec parsing. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_mlp.h"
#include "gc_rng.h"

//  Central differences in float: with h = 1e-2 on inputs of unit scale the
//  truncation error is O(h^2) ~ 1e-4 relative and the rounding error of the
//  float loss (~1e-7) divided by 2h stays below 1e-5, hence the tolerance.
static void
s_check_gradient (const char *spec, size_t batch, uint64_t seed)
{
    gc_mlp_t *mlp = gc_mlp_new (spec, NULL);
    assert_non_null (mlp);
    size_t n = gc_mlp_n_params (mlp), dim = gc_mlp_input_dim (mlp);
    int classes = gc_mlp_n_classes (mlp);
    float *params = gc_falloc (n), *grad = gc_falloc (n), *x = gc_falloc (batch * dim);
    uint8_t *y = malloc (batch);
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0);
    gc_mlp_init_params (mlp, params, seed);
    for (size_t i = 0; i < n; i++)      /* non-zero biases exercise their gradient */
        params [i] += 0.1f * (float) gc_rng_normal (&rng);
    gc_rng_fill_normal (&rng, x, batch * dim, 0.0f, 1.0f);
    for (size_t r = 0; r < batch; r++)
        y [r] = (uint8_t) gc_rng_below (&rng, (uint64_t) classes);
    gc_mlp_loss_grad (mlp, params, x, y, batch, grad, 1.0f, 0.0f, NULL);

    const gc_layout_t *layout = gc_mlp_layout (mlp);
    size_t checked = 0, kinks = 0;
    for (size_t l = 0; l < layout->n_layers; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        for (size_t j = 0; j < layer->count; j++) {
            size_t i = layer->offset + j;
            float saved = params [i], h = 1e-2f;
            params [i] = saved + h;
            double up = gc_mlp_loss_grad (mlp, params, x, y, batch, NULL, 1.0f, 0.0f, NULL);
            params [i] = saved - h;
            double down = gc_mlp_loss_grad (mlp, params, x, y, batch, NULL, 1.0f, 0.0f, NULL);
            params [i] = saved;
            double numeric = (up - down) / (2.0 * h);
            double err = fabs (numeric - grad [i]);
            //  A ReLU kink inside [w-h, w+h] breaks the finite difference;
            //  allow a few such coordinates but not more.
            if (err > 2e-3 + 2e-2 * fabs (numeric)) {
                kinks++;
                print_message ("%s %s[%zu]: analytic %g numeric %g\n", spec, layer->name, j, grad [i], numeric);
            }
            checked++;
        }
    }
    assert_true (checked == n);
    assert_true (kinks * 200 <= n);
    gc_mem_free (params);
    gc_mem_free (grad);
    gc_mem_free (x);
    free (y);
    gc_mlp_destroy (&mlp);
    assert_null (mlp);
}

static void
test_gradient_matches_finite_differences (void **state)
{
    static const struct { const char *spec; size_t batch; } cases [] = {
        { "6-3", 5 },               /* softmax regression: loss only */
        { "7-5-4", 3 },             /* one hidden layer */
        { "9-8-6-5", 4 },           /* two hidden layers, like the default */
        { "5-4-4-4-3", 1 },         /* batch of one */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++)
        s_check_gradient (cases [i].spec, cases [i].batch, 100 + i);
}

static void
test_gradient_accumulates_with_beta (void **state)
{
    gc_mlp_t *mlp = gc_mlp_new ("8-6-3", NULL);
    size_t n = gc_mlp_n_params (mlp);
    float *params = gc_falloc (n), *g = gc_falloc (n), *acc = gc_falloc (n), x [4 * 8];
    uint8_t y [4] = { 0, 1, 2, 1 };
    gc_rng_t rng;
    gc_rng_init (&rng, 5, 0);
    gc_rng_fill_normal (&rng, x, 32, 0, 1);
    gc_mlp_init_params (mlp, params, 5);
    gc_mlp_loss_grad (mlp, params, x, y, 4, g, 1.0f, 0.0f, NULL);
    for (size_t i = 0; i < n; i++)
        acc [i] = (float) i * 0.001f;
    gc_mlp_loss_grad (mlp, params, x, y, 4, acc, 2.0f, 0.5f, NULL);
    for (size_t i = 0; i < n; i++)
        assert_true (fabsf (acc [i] - (0.5f * (float) i * 0.001f + 2.0f * g [i])) < 1e-5f);
    //  beta = 1 is the accumulate-only path (no scaling pass)
    gc_mlp_loss_grad (mlp, params, x, y, 4, acc, -2.0f, 1.0f, NULL);
    for (size_t i = 0; i < n; i++)
        assert_true (fabsf (acc [i] - 0.5f * (float) i * 0.001f) < 1e-5f);
    gc_mem_free (params);
    gc_mem_free (g);
    gc_mem_free (acc);
    gc_mlp_destroy (&mlp);
}

//  A confidently wrong prediction costs a large but finite loss (the logit
//  gap), not Inf: exp() of the gap underflows, the loss must not.
static void
test_loss_is_finite_for_huge_logits (void **state)
{
    gc_mlp_t *mlp = gc_mlp_new ("2-2", NULL);
    float params [6] = { 100, 0, -100, 0, 0, 0 };     /* W = [[100,0],[-100,0]], b = 0 */
    float x [2] = { 10, 0 };                           /* logits 1000 and -1000 */
    uint8_t y [1] = { 1 };
    float grad [6];
    double loss = gc_mlp_loss_grad (mlp, params, x, y, 1, grad, 1.0f, 0.0f, NULL);
    assert_true (loss > 1999.0 && loss < 2001.0);
    gc_mlp_destroy (&mlp);
}

static void
test_spec_parsing (void **state)
{
    static const struct { const char *spec; int ok; const char *needle; } cases [] = {
        { "784-256-128-10", 1, NULL },
        { "2-2", 1, NULL },
        { "784", 0, "need 2 to" },
        { "784-abc-10", 0, "size 2" },
        { "784-0-10", 0, "outside" },
        { "784-256-1", 0, "classes" },
        { "784--10", 0, "missing" },
        { "", 0, "need 2 to" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_err_t err = { 0 };
        gc_mlp_t *mlp = gc_mlp_new (cases [i].spec, &err);
        if (cases [i].ok) {
            assert_non_null (mlp);
            assert_string_equal (gc_mlp_spec (mlp), cases [i].spec);
        }
        else {
            assert_null (mlp);
            if (!strstr (err.msg, cases [i].needle))
                fail_msg ("spec '%s': message '%s' lacks '%s'", cases [i].spec, err.msg, cases [i].needle);
        }
        gc_mlp_destroy (&mlp);
    }
    gc_mlp_t *mlp = gc_mlp_new ("784-256-128-10", NULL);
    const gc_layout_t *layout = gc_mlp_layout (mlp);
    assert_int_equal (layout->n_layers, 6);
    assert_int_equal (layout->n_params, 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
    assert_string_equal (layout->layers [2].name, "fc2.weight");
    assert_int_equal (layout->layers [2].rows, 128);
    assert_int_equal (layout->layers [2].cols, 256);
    gc_mlp_destroy (&mlp);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_gradient_matches_finite_differences),
        cmocka_unit_test (test_gradient_accumulates_with_beta),
        cmocka_unit_test (test_loss_is_finite_for_huge_logits),
        cmocka_unit_test (test_spec_parsing),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
