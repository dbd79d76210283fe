/*  gcnode eval — the test accuracy of model files (gcnode train --save,
    gcsim --keep-models, a peer's node/final_model) and, given several, of
    their average: whether a network's peers learned less, or only disagree
    (an average model far above its peers' mean is a consensus gap). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd_data.h"
#include "gc_cli.h"
#include "gc_mem.h"
#include "gc_model_file.h"
#include "gc_parse.h"

#define S_CMD "eval"

typedef struct {
    const char        *data;
    const char        *model;
    long               train_samples;
    long               threads;
    unsigned long long seed;
} s_opts_t;

static void
s_help (void)
{
    printf (
        "usage: gcnode eval [options] FILE...\n\n"
        "Evaluate model files (GCMODEL1: gcnode train --save, gcsim --keep-models,\n"
        "node/final_model) on the test set: one line per file, `FILE test_accuracy=...\n"
        "test_loss=...`; given several, also their mean and the accuracy of their\n"
        "average (`average_model test_accuracy=...`).\n\n"
        "  --model SPEC          the files' model (default %s)\n"
        "  --data DIR|synthetic  the dataset, as for gcnode train (default %s)\n"
        "  --train-samples N     the training samples the inputs are standardised\n"
        "                        with, as the run that trained the model (default all)\n"
        "  --seed N              the seed of a synthetic task (default 1)\n"
        "  --threads N           OpenBLAS threads (default 1)\n"
        "  -h, --help            this text\n",
        GC_MODEL_DEFAULT_SPEC, GC_DEFAULT_DATA_DIR);
}

static int
s_parse (int argc, char **argv, s_opts_t *o)
{
    static const struct option longopts [] = {
        { "data", required_argument, NULL, 'd' },
        { "model", required_argument, NULL, 'm' },
        { "train-samples", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 'S' },
        { "threads", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    gc_err_t err = { 0 };
    int c, rc = 0;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (c = getopt_long (argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
            case 'd': o->data = optarg; break;
            case 'm': o->model = optarg; break;
            case 'n': rc = gc_parse_long (optarg, 0, 1L << 30, &o->train_samples, "--train-samples", &err); break;
            case 'S': rc = gc_parse_u64 (optarg, &o->seed, "--seed", &err); break;
            case 't': rc = gc_parse_long (optarg, 1, 256, &o->threads, "--threads", &err); break;
            case 'h': s_help (); return -1;
            default: return gc_cli_bad_option (S_CMD, c, argv);
        }
    }
    if (rc)
        return gc_cli_usage_error (S_CMD, "%s", err.msg);
    if (optind == argc)
        return gc_cli_usage_error (S_CMD, "no model file (gcnode eval --help)");
    return 0;
}

//  The index of the first parameter that is NaN or infinite, or n.
static size_t
s_first_non_finite (const float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite (p [i]))
            return i;
    return n;
}

typedef struct {
    double sum, min, max;
    size_t files;
} s_tally_t;

//  Reads and evaluates one file into params, adds it to sum; 0 or an exit code.
static int
s_eval_file (const char *path, gc_model_t *model, const gc_dataset_t *test, float *params,
             double *sum, s_tally_t *tally)
{
    gc_err_t err = { 0 };
    size_t n = gc_model_n_params (model);
    if (gc_model_file_read (path, params, n, &err))
        return gc_cli_error (S_CMD, &err);
    size_t bad = s_first_non_finite (params, n);
    if (bad < n)
        return gc_cli_usage_error (S_CMD, "%s: parameter %zu is %g", path, bad, params [bad]);
    double accuracy, loss;
    if (gc_model_evaluate (model, params, test, &accuracy, &loss, &err))
        return gc_cli_error (S_CMD, &err);
    printf ("%s test_accuracy=%.4f test_loss=%.4f\n", path, accuracy, loss);
    for (size_t i = 0; i < n; i++)
        sum [i] += params [i];
    tally->sum += accuracy;
    tally->min = tally->files == 0 || accuracy < tally->min ? accuracy : tally->min;
    tally->max = tally->files == 0 || accuracy > tally->max ? accuracy : tally->max;
    tally->files++;
    return 0;
}

//  The files' mean accuracy and their average model's, from the sums.
static int
s_eval_average (gc_model_t *model, const gc_dataset_t *test, float *params, const double *sum,
                const s_tally_t *tally)
{
    gc_err_t err = { 0 };
    size_t n = gc_model_n_params (model);
    for (size_t i = 0; i < n; i++)
        params [i] = (float) (sum [i] / (double) tally->files);
    double accuracy, loss;
    if (gc_model_evaluate (model, params, test, &accuracy, &loss, &err))
        return gc_cli_error (S_CMD, &err);
    printf ("mean test_accuracy=%.4f (min %.4f, max %.4f, %zu files)\n",
            tally->sum / (double) tally->files, tally->min, tally->max, tally->files);
    printf ("average_model test_accuracy=%.4f test_loss=%.4f\n", accuracy, loss);
    return 0;
}

static int
s_eval (int nfiles, char **files, gc_model_t *model, const gc_dataset_t *test)
{
    size_t n = gc_model_n_params (model);
    float *params = gc_falloc (n);
    double *sum = calloc (n, sizeof *sum);
    int rc = 0;
    if (!params || !sum)
        rc = gc_cli_failure (S_CMD, "out of memory for %zu parameters", n);
    s_tally_t tally = { 0 };
    for (int i = 0; rc == 0 && i < nfiles; i++)
        rc = s_eval_file (files [i], model, test, params, sum, &tally);
    if (rc == 0 && nfiles > 1)
        rc = s_eval_average (model, test, params, sum, &tally);
    free (sum);
    gc_mem_free (params);
    return rc;
}

int
gc_cmd_eval (int argc, char **argv)
{
    s_opts_t o = { .model = GC_MODEL_DEFAULT_SPEC, .threads = 1, .seed = 1 };
    int rc = s_parse (argc, argv, &o);
    if (rc)
        return rc < 0 ? GC_EXIT_OK : rc;
    gc_cli_set_blas_threads ((int) o.threads);
    gc_err_t err = { 0 };
    gc_model_t *model = gc_model_new (o.model, &err);
    if (!model)
        return gc_cli_usage_error (S_CMD, "--model: %s", err.msg);
    gc_dataset_t train, test;
    rc = gc_cmd_load_data (S_CMD, o.data, o.seed, o.train_samples, model, &train, &test);
    if (rc == 0) {
        rc = s_eval (argc - optind, argv + optind, model, &test);
        gc_dataset_free (&train);
        gc_dataset_free (&test);
    }
    gc_model_destroy (&model);
    return rc;
}
