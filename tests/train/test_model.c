/*  The model seam (gc_model.h): specs pick an implementation by kind or by
    claim, every registered kind builds from its own example and behaves as
    the interface promises, and evaluation counts what the logits say. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_model.h"

static void
test_spec_resolution (void **state)
{
    static const struct {
        const char *spec;
        const char *kind;       /* NULL: refused */
        const char *canonical;  /* or the words the error must hold */
    } cases [] = {
        { "784-256-128-10",      "mlp", "784-256-128-10" },
        { "mlp:784-256-128-10",  "mlp", "784-256-128-10" },
        { "mlp:8-3",             "mlp", "8-3" },
        { NULL,                  "mlp", GC_MODEL_DEFAULT_SPEC },
        { "",                    "mlp", GC_MODEL_DEFAULT_SPEC },
        { "resnet:99",           NULL,  "not a model of any known kind" },
        { "mlp:",                NULL,  "model spec" },
        { "mlp:8-x-3",           NULL,  "size 2" },
        { "8-3-",                NULL,  "model spec" },
        { "lenut",               NULL,  "mlp, cnn" },   /* the error lists the known kinds */
        { "lenet",               "cnn", "cnn:1x28x28/c16k5s1p2,relu,mp2s2,c32k5s1p2,relu,mp2s2,f128,relu,f10" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_err_t err = { 0 };
        gc_model_t *model = gc_model_new (cases [i].spec, &err);
        if (cases [i].kind) {
            assert_non_null (model);
            assert_string_equal (gc_model_kind (model), cases [i].kind);
            assert_string_equal (gc_model_spec (model), cases [i].canonical);
        }
        else {
            assert_null (model);
            assert_non_null (strstr (err.msg, cases [i].canonical));
        }
        gc_model_destroy (&model);
        assert_null (model);
    }
    char longspec [GC_MODEL_SPEC_MAX + 8];
    memset (longspec, '8', sizeof longspec - 1);
    longspec [sizeof longspec - 1] = '\0';
    gc_err_t err = { 0 };
    assert_null (gc_model_new (longspec, &err));
    assert_non_null (strstr (err.msg, "longer than"));
}

//  Every kind: builds from its example, its canonical spec builds the same
//  layout, the same seed gives the same initial bytes, the loss of a batch
//  is finite and positive, and loss_grad's alpha/beta contract holds.
static void
test_every_kind (void **state)
{
    size_t n_kinds;
    const gc_model_ops_t *const *kinds = gc_model_kinds (&n_kinds);
    assert_true (n_kinds >= 1);
    for (size_t k = 0; k < n_kinds; k++) {
        gc_err_t err = { 0 };
        gc_model_t *model = gc_model_new (kinds [k]->example, &err);
        assert_non_null (model);
        assert_string_equal (gc_model_kind (model), kinds [k]->kind);
        assert_non_null (kinds [k]->help);
        gc_model_t *again = gc_model_new (gc_model_spec (model), &err);
        assert_non_null (again);
        assert_true (gc_layout_equal (gc_model_layout (model), gc_model_layout (again)));
        size_t n = gc_model_n_params (model), dim = gc_model_input_dim (model);
        assert_int_equal (n, gc_model_layout (model)->n_params);
        assert_true (gc_model_forward_flops (model) > 0);
        assert_true (gc_model_train_flops (model) > gc_model_forward_flops (model));
        float *p = gc_falloc (n), *q = gc_falloc (n), *g = gc_falloc (n), *acc = gc_falloc (n);
        gc_model_init_params (model, p, 42);
        gc_model_init_params (again, q, 42);
        assert_memory_equal (p, q, n * sizeof (float));
        gc_model_init_params (again, q, 43);
        assert_memory_not_equal (p, q, n * sizeof (float));
        if (!kinds [k]->loss_grad) {
            //  a kind the engine does not train (external) says so
            assert_false (gc_model_trains (model));
            gc_mem_free (p);
            gc_mem_free (q);
            gc_mem_free (g);
            gc_mem_free (acc);
            gc_model_destroy (&again);
            gc_model_destroy (&model);
            continue;
        }
        assert_true (gc_model_trains (model));
        enum { B = 4 };
        float *x = gc_falloc (B * dim);
        uint8_t y [B];
        for (size_t i = 0; i < B * dim; i++)
            x [i] = (float) ((i * 7919) % 13) / 13.0f - 0.5f;
        for (size_t i = 0; i < B; i++)
            y [i] = (uint8_t) (i % (size_t) gc_model_n_classes (model));
        double loss = gc_model_loss_grad (model, p, x, y, B, g, 1.0f, 0.0f, NULL);
        assert_true (isfinite (loss) && loss > 0);
        assert_true (fabs (gc_model_loss_grad (again, p, x, y, B, NULL, 1.0f, 0.0f, NULL) - loss) < 1e-12);
        for (size_t i = 0; i < n; i++)
            acc [i] = 1.0f;
        gc_model_loss_grad (model, p, x, y, B, acc, 2.0f, 0.5f, NULL);
        for (size_t i = 0; i < n; i++)
            assert_true (fabsf (acc [i] - (0.5f + 2.0f * g [i])) <= 1e-5f * (1.0f + fabsf (g [i])));
        //  label smoothing 0 through the seam is the plain loss, byte for
        //  byte; eps > 0 reaches the kind (another loss)
        assert_true (gc_model_loss_grad_smoothed (model, p, x, y, B, 0.0f, acc, 1.0f, 0.0f, NULL) == loss);
        assert_memory_equal (acc, g, n * sizeof (float));
        double smooth = gc_model_loss_grad_smoothed (model, p, x, y, B, 0.2f, acc, 1.0f, 0.0f, NULL);
        assert_true (isfinite (smooth) && smooth != loss);
        gc_mem_free (p);
        gc_mem_free (q);
        gc_mem_free (g);
        gc_mem_free (acc);
        gc_mem_free (x);
        gc_model_destroy (&again);
        gc_model_destroy (&model);
    }
}

//  Kind external: borrowing another kind's table keeps its layout, init and
//  evaluation; a registered table builds by its spec, the same table gives the
//  same spec, another table another spec; bad tables and unknown specs are
//  refused by name.
static void
test_external (void **state)
{
    gc_err_t err = { 0 };
    gc_model_t *mlp = gc_model_new ("8-5-3", &err);
    gc_model_t *ext = gc_model_new ("external:mlp:8-5-3", &err);
    assert_non_null (mlp);
    assert_non_null (ext);
    assert_string_equal (gc_model_spec (ext), "external:8-5-3");
    assert_true (gc_layout_equal (gc_model_layout (mlp), gc_model_layout (ext)));
    assert_true (gc_model_trains (mlp));
    assert_false (gc_model_trains (ext));
    size_t n = gc_model_n_params (mlp);
    float *a = gc_falloc (n), *b = gc_falloc (n);
    gc_model_init_params (mlp, a, 9);
    gc_model_init_params (ext, b, 9);
    assert_memory_equal (a, b, n * sizeof (float));
    gc_mem_free (a);
    gc_mem_free (b);

    gc_layout_t t;
    gc_layout_init (&t);
    assert_int_equal (gc_layout_add_matrix (&t, "conv.weight", 4, 9, NULL), 0);
    assert_int_equal (gc_layout_add_vector (&t, "conv.bias", 4, NULL), 0);
    char spec [GC_MODEL_SPEC_MAX], again [GC_MODEL_SPEC_MAX], other [GC_MODEL_SPEC_MAX];
    assert_int_equal (gc_model_external_register (&t, spec, sizeof spec, &err), 0);
    assert_int_equal (gc_model_external_register (&t, again, sizeof again, &err), 0);
    assert_string_equal (spec, again);
    assert_non_null (strstr (spec, "external:table:40:"));
    gc_model_t *tab = gc_model_new (spec, &err);
    assert_non_null (tab);
    assert_string_equal (gc_model_spec (tab), spec);
    assert_true (gc_layout_equal (gc_model_layout (tab), &t));
    float *z = gc_falloc (40);
    z [3] = 1;
    gc_model_init_params (tab, z, 1);
    for (size_t i = 0; i < 40; i++)
        assert_true (z [i] == 0.0f);
    gc_dataset_t data = { .n = 1, .dim = 1, .n_classes = 2 };
    assert_int_equal (gc_model_evaluate (tab, z, &data, NULL, NULL, &err), -1);
    assert_non_null (strstr (err.msg, "no function to evaluate"));
    gc_mem_free (z);
    snprintf (t.layers [1].name, sizeof t.layers [1].name, "conv.b");
    assert_int_equal (gc_model_external_register (&t, other, sizeof other, &err), 0);
    assert_string_not_equal (spec, other);
    t.layers [1].offset = 7;            /* not packed */
    assert_int_equal (gc_model_external_register (&t, other, sizeof other, &err), -1);
    assert_non_null (strstr (err.msg, "conv.b"));
    gc_layout_init (&t);
    assert_int_equal (gc_model_external_register (&t, other, sizeof other, &err), -1);
    assert_non_null (strstr (err.msg, "empty"));
    static const struct { const char *spec, *words; } bad [] = {
        { "external:table:40:0000000000000000", "no such layer table" },
        { "external:external:8-3",              "cannot wrap" },
        { "external:8-x",                       "model spec" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        assert_null (gc_model_new (bad [i].spec, &err));
        assert_non_null (strstr (err.msg, bad [i].words));
    }
    gc_model_destroy (&tab);
    gc_model_destroy (&ext);
    gc_model_destroy (&mlp);
}

//  evaluate = the argmax of forward against the labels; a dataset of the
//  wrong width or with more classes than the model is refused by name.
static void
test_evaluate_and_check (void **state)
{
    gc_model_t *model = gc_model_new ("mlp:6-5-3", NULL);
    assert_non_null (model);
    size_t n = gc_model_n_params (model);
    float *p = gc_falloc (n);
    gc_model_init_params (model, p, 3);
    enum { N = 1100 };      /* more than one chunk of 500 */
    gc_dataset_t data = { .n = N, .dim = 6, .n_classes = 3 };
    data.x = gc_falloc (N * 6);
    data.y = malloc (N);
    for (size_t i = 0; i < N * 6; i++)
        data.x [i] = (float) ((i * 31) % 17) / 17.0f - 0.3f;
    size_t right = 0;
    for (size_t i = 0; i < N; i++) {
        const float *z = gc_model_forward (model, p, data.x + i * 6, 1);
        size_t arg = 0;
        for (size_t c = 1; c < 3; c++)
            if (z [c] > z [arg])
                arg = c;
        data.y [i] = (uint8_t) (i % 3);
        right += arg == data.y [i];
    }
    double accuracy = -1, loss = -1;
    assert_int_equal (gc_model_evaluate (model, p, &data, &accuracy, &loss, NULL), 0);
    assert_true (fabs (accuracy - (double) right / N) < 1e-12);
    assert_true (loss > 0 && isfinite (loss));

    gc_err_t err = { 0 };
    data.dim = 5;
    assert_int_equal (gc_model_check_data (model, &data, "shard.npy", &err), -1);
    assert_non_null (strstr (err.msg, "6-5-3"));
    assert_non_null (strstr (err.msg, "shard.npy has 5"));
    data.dim = 6;
    //  a flat model takes any shape of the right size; a spatial one only its own
    data.channels = 1;
    data.height = 2;
    data.width = 3;
    assert_int_equal (gc_model_check_data (model, &data, "shard.npy", &err), 0);
    gc_model_t *cnn = gc_model_new ("cnn:1x3x2/c2,gap,f3", &err);
    assert_non_null (cnn);
    assert_int_equal (gc_model_check_data (cnn, &data, "shard.npy", &err), -1);
    assert_non_null (strstr (err.msg, "1x3x2"));
    assert_non_null (strstr (err.msg, "shard.npy has 1x2x3"));
    data.height = 3;
    data.width = 2;
    assert_int_equal (gc_model_check_data (cnn, &data, "shard.npy", &err), 0);
    gc_model_destroy (&cnn);
    data.n_classes = 4;
    assert_int_equal (gc_model_evaluate (model, p, &data, &accuracy, NULL, &err), -1);
    assert_non_null (strstr (err.msg, "3 classes"));
    gc_dataset_free (&data);
    gc_mem_free (p);
    gc_model_destroy (&model);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_spec_resolution),
        cmocka_unit_test (test_every_kind),
        cmocka_unit_test (test_external),
        cmocka_unit_test (test_evaluate_and_check),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
