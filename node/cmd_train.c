/*  gcnode train — the single-machine baseline every decentralized result is
    compared with: one model, the whole training set, SGD with momentum. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_data.h"
#include "gc_cli.h"
#include "gc_model_file.h"
#include "gc_dataset.h"
#include "gc_fs.h"
#include "gc_model.h"
#include "gc_mem.h"
#include "gc_optim.h"
#include "gc_parse.h"
#include "gc_sampler.h"
#include "gc_time.h"

#define S_CMD "train"

typedef struct {
    const char        *data;        /* NULL = default dir, falling back to synthetic */
    const char        *model;
    long               epochs;
    long               batch;
    long               threads;
    long               train_samples;   /* 0 = all */
    unsigned long long seed;
    gc_optim_config_t  optim;
    gc_augment_t       augment;
    int                quiet;
    const char        *save;        /* the final parameters as a GCMODEL1 file */
} s_opts_t;

static void
s_help (void)
{
    printf (
        "usage: gcnode train [options]\n\n"
        "Train one model on one machine (the baseline for decentralized runs).\n"
        "Prints a progress line per epoch and last `test_accuracy=0.XXXX`.\n\n"
        "  --data DIR|synthetic  MNIST-format directory (IDX, plain or .gz), or the\n"
        "                        built-in synthetic task (default: %s,\n"
        "                        synthetic if that is absent, said on screen)\n"
        "  --model SPEC          KIND:ARGS, one of the model kinds below (default %s)\n"
        "  --epochs N            passes over the training set (default 10)\n"
        "  --batch N             minibatch size (default 64)\n"
        "  --lr X                base learning rate (default 0.03)\n"
        "  --momentum X          heavy-ball momentum, 0 disables (default 0.9)\n"
        "  --nesterov            Nesterov momentum instead of heavy ball\n"
        "  --weight-decay X      decoupled weight decay per unit lr (default 5e-3)\n"
        "  --schedule S          constant | cosine | step:EPOCHS:GAMMA (default cosine)\n"
        "  --warmup E            linear warm-up over E epochs (default 0)\n"
        "  --augment SPEC        comma list of crop:P, flip, erase:P, or none: random\n"
        "                        crops of the image padded by P pixels, mirror images,\n"
        "                        a random rectangle erased in P %% of the samples\n"
        "                        (default none)\n"
        "  --label-smoothing EPS train against (1-EPS) onehot + EPS/classes, 0 <= EPS < 1\n"
        "                        (default 0: plain cross-entropy; `loss` is then the\n"
        "                        smoothed loss, test_loss stays plain)\n"
        "  --train-samples N     use only the first N training samples (default all)\n"
        "  --seed N              seed for initialisation and sampling (default 1)\n"
        "  --threads N           OpenBLAS threads (default 1)\n"
        "  --save FILE           write the final model to FILE (GCMODEL1: gcnode eval\n"
        "                        reads it)\n"
        "  --quiet               only the final line\n"
        "  -h, --help            this text\n\nModel kinds:\n",
        GC_DEFAULT_DATA_DIR, GC_MODEL_DEFAULT_SPEC);
    size_t n;
    const gc_model_ops_t *const *kinds = gc_model_kinds (&n);
    for (size_t i = 0; i < n; i++)
        printf ("  %-8s %s\n           e.g. --model %s\n", kinds [i]->kind, kinds [i]->help,
                kinds [i]->example);
}

static int
s_parse (int argc, char **argv, s_opts_t *o)
{
    static const struct option longopts [] = {
        { "data", required_argument, NULL, 'd' },
        { "model", required_argument, NULL, 'm' },
        { "epochs", required_argument, NULL, 'e' },
        { "batch", required_argument, NULL, 'b' },
        { "lr", required_argument, NULL, 'l' },
        { "momentum", required_argument, NULL, 'M' },
        { "nesterov", no_argument, NULL, 'N' },
        { "weight-decay", required_argument, NULL, 'w' },
        { "schedule", required_argument, NULL, 's' },
        { "warmup", required_argument, NULL, 'W' },
        { "train-samples", required_argument, NULL, 'n' },
        { "augment", required_argument, NULL, 'a' },
        { "label-smoothing", required_argument, NULL, 'L' },
        { "seed", required_argument, NULL, 'S' },
        { "threads", required_argument, NULL, 't' },
        { "quiet", no_argument, NULL, 'q' },
        { "save", required_argument, NULL, 'o' },
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
            case 'e': rc = gc_parse_long (optarg, 1, 100000, &o->epochs, "--epochs", &err); break;
            case 'b': rc = gc_parse_long (optarg, 1, 65536, &o->batch, "--batch", &err); break;
            case 'l': rc = gc_parse_double (optarg, 0, 100, &o->optim.lr, "--lr", &err); break;
            case 'M': rc = gc_parse_double (optarg, 0, 0.9999, &o->optim.momentum, "--momentum", &err); break;
            case 'N': o->optim.nesterov = true; break;
            case 'w': rc = gc_parse_double (optarg, 0, 1, &o->optim.weight_decay, "--weight-decay", &err); break;
            case 's': rc = gc_optim_schedule_parse (optarg, &o->optim, &err); break;
            case 'W': rc = gc_parse_double (optarg, 0, 1e6, &o->optim.warmup, "--warmup", &err); break;
            case 'n': rc = gc_parse_long (optarg, 0, 1L << 30, &o->train_samples, "--train-samples", &err); break;
            case 'S': rc = gc_parse_u64 (optarg, &o->seed, "--seed", &err); break;
            case 't': rc = gc_parse_long (optarg, 1, 256, &o->threads, "--threads", &err); break;
            case 'a': rc = gc_augment_parse (optarg, &o->augment, &err); break;
            case 'L':
                rc = gc_parse_double (optarg, 0, 1, &o->optim.label_smoothing, "--label-smoothing", &err);
                if (rc == 0)
                    rc = gc_optim_check_label_smoothing (o->optim.label_smoothing, "--label-smoothing", &err);
                break;
            case 'q': o->quiet = 1; break;
            case 'o': o->save = optarg; break;
            case 'h': s_help (); return -1;
            default: return gc_cli_bad_option (S_CMD, c, argv);
        }
    }
    if (rc)
        return gc_cli_usage_error (S_CMD, "%s", err.msg);
    if (optind < argc)
        return gc_cli_usage_error (S_CMD, "unexpected argument '%s'", argv [optind]);
    return 0;
}

static int
s_train (const s_opts_t *o, gc_model_t *model, const gc_dataset_t *train, const gc_dataset_t *test)
{
    gc_err_t err = { 0 };
    size_t n = gc_model_n_params (model);
    float *params = gc_falloc (n);
    gc_optim_t *optim = gc_optim_new (&o->optim, n, &err);
    gc_sampler_t *sampler = gc_sampler_new (train, (size_t) o->batch, o->seed, &err);
    int rc = GC_EXIT_OK;
    if (!params || !optim || !sampler)
        rc = gc_cli_failure (S_CMD, "%s", err.msg [0] ? err.msg : "out of memory");
    else
    if (gc_sampler_set_augment (sampler, &o->augment, o->seed, &err))
        rc = gc_cli_usage_error (S_CMD, "--augment: %s", err.msg);
    double accuracy = 0, test_loss = 0;
    if (rc == GC_EXIT_OK) {
        gc_model_init_params (model, params, o->seed);
        size_t per_epoch = gc_sampler_batches_per_epoch (sampler);
        size_t batch = gc_sampler_batch (sampler);
        for (long epoch = 0; epoch < o->epochs; epoch++) {
            double t0 = gc_now_s (), loss = 0;
            double lr = 0;
            for (size_t i = 0; i < per_epoch; i++) {
                const float *x;
                const uint8_t *y;
                gc_sampler_next (sampler, &x, &y);
                lr = gc_optim_lr_at (&o->optim, (double) epoch + (double) i / (double) per_epoch,
                                     (double) o->epochs);
                loss += gc_optim_step (optim, model, params, x, y, batch, lr, NULL);
            }
            double dt = gc_now_s () - t0;
            gc_model_evaluate (model, params, test, &accuracy, &test_loss, NULL);
            if (!o->quiet)
                printf ("epoch %3ld/%ld  loss %.4f  test_loss %.4f  test_acc %.4f  "
                        "lr %.4g  %.0f samples/s\n", epoch + 1, o->epochs,
                        loss / (double) per_epoch, test_loss, accuracy, lr,
                        (double) (per_epoch * batch) / dt);
            fflush (stdout);
        }
        printf ("test_accuracy=%.4f\n", accuracy);
        if (o->save && gc_model_file_write (o->save, params, n, &err))
            rc = gc_cli_error (S_CMD, &err);
    }
    gc_sampler_destroy (&sampler);
    gc_optim_destroy (&optim);
    gc_mem_free (params);
    return rc;
}

int
gc_cmd_train (int argc, char **argv)
{
    s_opts_t o = { .model = GC_MODEL_DEFAULT_SPEC, .epochs = 10, .batch = 64, .threads = 1, .seed = 1 };
    gc_optim_config_defaults (&o.optim);
    int rc = s_parse (argc, argv, &o);
    if (rc)
        return rc < 0 ? GC_EXIT_OK : rc;
    gc_cli_set_blas_threads ((int) o.threads);
    gc_err_t err = { 0 };
    //  before the training, not after it
    if (o.save && gc_fs_check_writable (o.save, &err))
        return gc_cli_usage_error (S_CMD, "--save: %s", err.msg);
    gc_model_t *model = gc_model_new (o.model, &err);
    if (!model)
        return gc_cli_usage_error (S_CMD, "--model: %s", err.msg);
    if (!gc_model_trains (model)) {
        rc = gc_cli_usage_error (S_CMD, "--model %s: its embedder trains it (docs/EMBEDDING.md), "
                                 "gcnode cannot", gc_model_spec (model));
        gc_model_destroy (&model);
        return rc;
    }
    gc_dataset_t train, test;
    rc = gc_cmd_load_data (S_CMD, o.data, o.seed, o.train_samples, model, &train, &test);
    if (rc == 0) {
        if (!o.quiet)
            printf ("model %s (%zu parameters), %zu training and %zu test samples, batch %ld, "
                    "%ld epochs\n", gc_model_spec (model), gc_model_n_params (model), train.n, test.n,
                    o.batch, o.epochs);
        rc = s_train (&o, model, &train, &test);
        gc_dataset_free (&train);
        gc_dataset_free (&test);
    }
    gc_model_destroy (&model);
    return rc;
}
