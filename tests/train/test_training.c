/*  Training end to end on the synthetic task: it learns (>= 0.95 test
    accuracy in a few seconds), it is deterministic (same seed, same bytes),
    and every optimizer variant makes progress. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_dataset.h"
#include "gc_mem.h"
#include "gc_model.h"
#include "gc_optim.h"
#include "gc_sampler.h"

typedef struct {
    gc_dataset_t train, test;
} s_data_t;

static s_data_t s_data;

static int
s_setup (void **state)
{
    gc_err_t err = { 0 };
    if (gc_dataset_synthetic (7, 12000, 2000, 784, 10, &s_data.train, &s_data.test, &err))
        return -1;
    gc_dataset_standardise (&s_data.train, &s_data.test);
    return 0;
}

static int
s_teardown (void **state)
{
    gc_dataset_free (&s_data.train);
    gc_dataset_free (&s_data.test);
    return 0;
}

//  Train the default model for `epochs`; returns test accuracy and leaves the
//  final parameters in *params_out (caller frees).
static double
s_train (const gc_optim_config_t *cfg, uint64_t seed, int epochs, float **params_out)
{
    gc_model_t *model = gc_model_new (GC_MODEL_DEFAULT_SPEC, NULL);
    size_t n = gc_model_n_params (model);
    float *params = gc_falloc (n);
    gc_optim_t *optim = gc_optim_new (cfg, n, NULL);
    gc_sampler_t *sampler = gc_sampler_new (&s_data.train, 64, seed, NULL);
    assert_non_null (optim);
    assert_non_null (sampler);
    gc_model_init_params (model, params, seed);
    size_t per_epoch = gc_sampler_batches_per_epoch (sampler);
    size_t steps = per_epoch * (size_t) epochs;
    for (size_t s = 0; s < steps; s++) {
        const float *x;
        const uint8_t *y;
        gc_sampler_next (sampler, &x, &y);
        double lr = gc_optim_lr_at (cfg, (double) s / (double) per_epoch, epochs);
        gc_optim_step (optim, model, params, x, y, 64, lr, NULL);
    }
    double accuracy = 0;
    assert_int_equal (gc_model_evaluate (model, params, &s_data.test, &accuracy, NULL, NULL), 0);
    gc_sampler_destroy (&sampler);
    gc_optim_destroy (&optim);
    gc_model_destroy (&model);
    if (params_out)
        *params_out = params;
    else
        gc_mem_free (params);
    return accuracy;
}

static void
test_synthetic_task_is_learned (void **state)
{
    gc_optim_config_t cfg;
    gc_optim_config_defaults (&cfg);
    double accuracy = s_train (&cfg, 1, 2, NULL);
    print_message ("synthetic test accuracy after 2 epochs: %.4f\n", accuracy);
    assert_true (accuracy >= 0.95);
}

static void
test_same_seed_same_bytes (void **state)
{
    gc_optim_config_t cfg;
    gc_optim_config_defaults (&cfg);
    float *a, *b, *c;
    s_train (&cfg, 3, 1, &a);
    s_train (&cfg, 3, 1, &b);
    s_train (&cfg, 4, 1, &c);
    gc_model_t *model = gc_model_new (GC_MODEL_DEFAULT_SPEC, NULL);
    size_t n = gc_model_n_params (model);
    gc_model_destroy (&model);
    assert_memory_equal (a, b, n * sizeof (float));
    assert_true (memcmp (a, c, n * sizeof (float)) != 0);
    gc_mem_free (a);
    gc_mem_free (b);
    gc_mem_free (c);
}

static void
test_optimizer_variants_learn (void **state)
{
    static const struct { const char *what; double momentum; bool nesterov; const char *schedule; } cases [] = {
        { "plain SGD, step schedule", 0.0, false, "step:0.5:0.5" },
        { "Nesterov, constant", 0.9, true, "constant" },
        { "heavy ball, cosine", 0.9, false, "cosine" },
        { "heavy ball, label smoothing 0.1", 0.9, false, "cosine" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_optim_config_t cfg;
        gc_optim_config_defaults (&cfg);
        cfg.momentum = cases [i].momentum;
        cfg.nesterov = cases [i].nesterov;
        if (cases [i].momentum == 0)
            cfg.lr = 0.2;
        assert_int_equal (gc_optim_schedule_parse (cases [i].schedule, &cfg, NULL), 0);
        cfg.warmup = 0.1;
        if (strstr (cases [i].what, "smoothing"))
            cfg.label_smoothing = 0.1;
        double accuracy = s_train (&cfg, 5, 1, NULL);
        if (accuracy < 0.9)
            fail_msg ("%s: accuracy %.4f after one epoch", cases [i].what, accuracy);
    }
}

static void
test_learning_rate_schedules (void **state)
{
    gc_optim_config_t cfg;
    gc_optim_config_defaults (&cfg);
    cfg.lr = 1.0;
    assert_true (gc_optim_lr_at (&cfg, 0, 10) == 1.0);
    assert_true (gc_optim_lr_at (&cfg, 5, 10) > 0.499 && gc_optim_lr_at (&cfg, 5, 10) < 0.501);
    assert_true (gc_optim_lr_at (&cfg, 10, 10) < 1e-9);
    assert_int_equal (gc_optim_schedule_parse ("step:3:0.1", &cfg, NULL), 0);
    assert_true (gc_optim_lr_at (&cfg, 2.9, 10) == 1.0);
    assert_true (gc_optim_lr_at (&cfg, 3.0, 10) > 0.0999 && gc_optim_lr_at (&cfg, 3.0, 10) < 0.1001);
    cfg.warmup = 2;
    assert_true (gc_optim_lr_at (&cfg, 1.0, 10) > 0.49 && gc_optim_lr_at (&cfg, 1.0, 10) < 0.51);
    gc_err_t err = { 0 };
    assert_int_equal (gc_optim_schedule_parse ("step:3", &cfg, &err), -1);
    assert_int_equal (gc_optim_schedule_parse ("linear", &cfg, &err), -1);
    assert_int_equal (gc_optim_schedule_parse ("step:3:2", &cfg, &err), -1);
}

//  Label smoothing outside [0, 1) is refused by name; 0 trains the same
//  bytes as before the option (the default), a smoothing other bytes.
static void
test_label_smoothing (void **state)
{
    static const double bad [] = { -0.1, 1.0, 2.0, NAN };
    gc_optim_config_t cfg;
    gc_optim_config_defaults (&cfg);
    assert_true (cfg.label_smoothing == 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_err_t err = { 0 };
        cfg.label_smoothing = bad [i];
        assert_null (gc_optim_new (&cfg, 10, &err));
        assert_non_null (strstr (err.msg, "label smoothing"));
        assert_non_null (strstr (err.msg, "outside [0, 1)"));
        assert_int_equal (gc_optim_check_label_smoothing (bad [i], "--x", NULL), -1);
    }
    assert_int_equal (gc_optim_check_label_smoothing (0.0, "--x", NULL), 0);
    assert_int_equal (gc_optim_check_label_smoothing (0.999, "--x", NULL), 0);
    float *a, *b;
    gc_optim_config_defaults (&cfg);
    s_train (&cfg, 3, 1, &a);
    cfg.label_smoothing = 0.1;
    s_train (&cfg, 3, 1, &b);
    gc_model_t *model = gc_model_new (GC_MODEL_DEFAULT_SPEC, NULL);
    size_t n = gc_model_n_params (model);
    gc_model_destroy (&model);
    assert_true (memcmp (a, b, n * sizeof (float)) != 0);
    gc_mem_free (a);
    gc_mem_free (b);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_synthetic_task_is_learned),
        cmocka_unit_test (test_same_seed_same_bytes),
        cmocka_unit_test (test_optimizer_variants_learn),
        cmocka_unit_test (test_learning_rate_schedules),
        cmocka_unit_test (test_label_smoothing),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
