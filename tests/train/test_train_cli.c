/*  gcnode train as a user runs it: nonsense options and bad data give one
    clear line and exit 2; a small synthetic run prints test_accuracy=. */
#include "gc_test.h"

#include <stdio.h>
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

static void
s_expect (const char *args, int code, const char *needle)
{
    char cmd [2048];
    snprintf (cmd, sizeof cmd, "%s %s", s_gcnode, args);
    free (gc_test_expect (cmd, code, needle));
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

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_bad_options_exit_2_with_one_line),
        cmocka_unit_test (test_corrupt_dataset_names_the_file),
        cmocka_unit_test (test_small_synthetic_run),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
