/*  cmd_data — the dataset of gcnode train and gcnode eval (cmd_data.h). */
#include <stdio.h>

#include "cmd_data.h"
#include "gc_cli.h"

int
gc_cmd_load_data (const char *cmd, const char *data, uint64_t seed, long train_samples,
                  const gc_model_t *model, gc_dataset_t *train, gc_dataset_t *test)
{
    gc_err_t err = { 0 };
    bool fell_back;
    if (gc_dataset_open (data, seed, train, test, &fell_back, &err))
        return gc_cli_usage_error (cmd, "%s", err.msg);
    if (fell_back)
        fprintf (stderr, "gcnode %s: %s has no dataset (install dataset-fashion-mnist); "
                 "using the built-in synthetic task instead\n", cmd, GC_DEFAULT_DATA_DIR);
    if (train_samples > 0 && (size_t) train_samples < train->n)
        train->n = (size_t) train_samples;
    int rc = 0;
    if (train->dim != gc_model_input_dim (model) || train->n_classes > gc_model_n_classes (model))
        rc = gc_cli_usage_error (cmd, "--model %s takes %zu features and %d classes, "
                                 "the data has %zu and %d", gc_model_spec (model),
                                 gc_model_input_dim (model), gc_model_n_classes (model),
                                 train->dim, train->n_classes);
    else
    if (gc_model_check_data (model, train, data ? data : GC_DEFAULT_DATA_DIR, &err))
        rc = gc_cli_usage_error (cmd, "--model: %s", err.msg);
    if (rc) {
        gc_dataset_free (train);
        gc_dataset_free (test);
        return rc;
    }
    gc_dataset_standardise (train, test);
    return 0;
}
