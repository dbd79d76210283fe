/*  gcnode train and gcnode eval as a user runs them: nonsense options and
    bad data give one clear line and exit 2; a small synthetic run prints
    test_accuracy=, and eval reads back what train --save wrote. */
#include "gc_test.h"

#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *s_gcnode;
static char *s_dir;

static int
s_setup (void **state)
{
    s_gcnode = gc_test_build_path ("gcnode");
    s_dir = gc_test_tmpdir ("cli");
    return 0;
}

static int
s_teardown (void **state)
{
    gc_test_rmtree (s_dir);
    free (s_dir);
    free (s_gcnode);
    return 0;
}

//  gcnode ARGS exits with code and prints needle; its output (to free).
static char *
s_expect_out (const char *args, int code, const char *needle)
{
    char cmd [4096];
    snprintf (cmd, sizeof cmd, "%s %s", s_gcnode, args);
    return gc_test_expect (cmd, code, needle);
}

static void
s_expect (const char *args, int code, const char *needle)
{
    free (s_expect_out (args, code, needle));
}

static void
test_bad_options_exit_2_with_one_line (void **state)
{
    static const struct { const char *args; const char *needle; } cases [] = {
        { "train --epochs abc", "--epochs: 'abc' is not an integer" },
        { "train --epochs 0", "--epochs: 0 is outside" },
        { "train --batch", "option --batch needs a value" },
        { "train --lr -1", "--lr: -1 is outside" },
        { "train --model 784-x-10", "size 2" },
        { "train --schedule sawtooth", "lr schedule 'sawtooth'" },
        { "train --frobnicate", "unknown option '--frobnicate'" },
        { "train extra", "unexpected argument 'extra'" },
        { "train --data /nonexistent/dir", "/nonexistent/dir does not exist" },
        { "train --data synthetic --model 100-10", "--model 100-10 takes 100 features" },
        { "train --data synthetic --model cnn:lenet", "expects samples of 1x28x28, synthetic has 784x1x1" },
        { "train --model cnn:c16,relu", "cnn:c16,relu': the last layer must be linear" },
        { "train --model external:8-3", "its embedder trains it" },
        { "train --data synthetic --augment flip", "--augment: augmentation needs images" },
        { "train --augment rotate", "'rotate' is not crop:P, flip or erase:P" },
        { "train --label-smoothing 1", "--label-smoothing: 1 is outside [0, 1)" },
        { "train --label-smoothing -0.1", "--label-smoothing: -0.1 is outside" },
        { "train --label-smoothing x", "--label-smoothing: 'x' is not a number" },
        { "train --save /nonexistent/dir/m.model", "--save: /nonexistent/dir/m.model: cannot create" },
        { "fly", "unknown command 'fly'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++)
        s_expect (cases [i].args, 2, cases [i].needle);
}

static void
test_corrupt_dataset_names_the_file (void **state)
{
    const char *names [4] = { "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                              "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte" };
    //  valid headers, but the training images stop short
    uint8_t img [16 + 4 * 4] = { 0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 4 };
    uint8_t lab [8 + 2] = { 0, 0, 8, 1, 0, 0, 0, 2, 1, 2 };
    for (int f = 0; f < 4; f++) {
        char path [512];
        snprintf (path, sizeof path, "%s/%s", s_dir, names [f]);
        if (f % 2)
            gc_test_write_file (path, lab, sizeof lab);
        else
            gc_test_write_file (path, img, f == 0 ? sizeof img - 5 : sizeof img);
    }
    char args [1024];
    snprintf (args, sizeof args, "train --data %s", s_dir);
    s_expect (args, 2, "train-images-idx3-ubyte: truncated");
}

static void
test_small_synthetic_run (void **state)
{
    s_expect ("train --data synthetic --train-samples 3000 --epochs 2 --batch 32", 0, "test_accuracy=0.");
    s_expect ("train --data synthetic:2000:500:16 --model cnn:16x1x1/c8k1,gn2,relu,f10 --epochs 2",
              0, "test_accuracy=0.");
    s_expect ("train --help", 0, "usage: gcnode train");
    s_expect ("--help", 0, "commands:");
}

//  The value after `key` in out (the first occurrence), or -1.
static double
s_value (const char *out, const char *key)
{
    const char *at = strstr (out, key);
    return at ? atof (at + strlen (key)) : -1.0;
}

static void
s_path (char *path, size_t size, const char *name)
{
    snprintf (path, size, "%s/%s", s_dir, name);
}

/*  What train --save writes, eval reads back to the same accuracy; the
    average of two copies is the model itself; files that are not the
    model are refused by name. */
static void
test_eval_reads_what_train_saves (void **state)
{
    static const char *data = "--data synthetic --train-samples 2000";
    char a [512], nan_file [512], cmd [2048];
    s_path (a, sizeof a, "a.model");
    snprintf (cmd, sizeof cmd, "train %s --epochs 1 --quiet --save %s", data, a);
    char *trained = s_expect_out (cmd, 0, "test_accuracy=0.");
    double want = s_value (trained, "test_accuracy=");
    free (trained);

    snprintf (cmd, sizeof cmd, "eval %s %s %s", data, a, a);
    char *out = s_expect_out (cmd, 0, "average_model test_accuracy=");
    //  the loss too: a ReLU net scaled by a constant keeps its accuracy
    const char *file_line = strstr (out, "a.model test_accuracy=");
    const char *avg_line = strstr (out, "average_model test_accuracy=");
    if (!file_line || !avg_line || s_value (file_line, "test_accuracy=") != want
        || s_value (avg_line, "test_accuracy=") != want
        || s_value (out, "mean test_accuracy=") != want
        || s_value (avg_line, "test_loss=") != s_value (file_line, "test_loss="))
        fail_msg ("train printed %.4f, eval:\n%s", want, out);
    free (out);

    //  a copy with one parameter made NaN: refused, naming it
    size_t n = 0;
    float *p = NULL;
    FILE *f = fopen (a, "rb");
    assert_non_null (f);
    uint8_t head [16];
    assert_int_equal (fread (head, 1, 16, f), 16);
    memcpy (&n, head + 8, sizeof n);
    p = malloc (n * sizeof *p);
    assert_non_null (p);
    assert_int_equal (fread (p, sizeof *p, n, f), n);
    fclose (f);
    p [7] = NAN;
    s_path (nan_file, sizeof nan_file, "nan.model");
    f = fopen (nan_file, "wb");
    assert_non_null (f);
    fwrite (head, 1, 16, f);
    fwrite (p, sizeof *p, n, f);
    fclose (f);
    free (p);

    static const struct { const char *args; const char *file; int code; const char *needle; } cases [] = {
        { "", "nan.model", 2, "nan.model: parameter 7 is nan" },
        { "--model 784-10", "a.model", 2, "expected 7850" },
        { "", "missing.model", 1, "missing.model: cannot open" },
        { "--model cnn:lenet", "a.model", 2, "expects samples of 1x28x28" },
        { "--threads 0", "a.model", 2, "--threads: 0 is outside" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char file [512];
        s_path (file, sizeof file, cases [i].file);
        snprintf (cmd, sizeof cmd, "eval %s %s %s", data, cases [i].args, file);
        s_expect (cmd, cases [i].code, cases [i].needle);
    }
    s_expect ("eval --data synthetic", 2, "no model file");
    s_expect ("eval --help", 0, "usage: gcnode eval");
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_bad_options_exit_2_with_one_line),
        cmocka_unit_test (test_corrupt_dataset_names_the_file),
        cmocka_unit_test (test_small_synthetic_run),
        cmocka_unit_test (test_eval_reads_what_train_saves),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
