/*  cmd_data — what gcnode train and gcnode eval share: the dataset a
    model trains or is evaluated on, checked against the model and
    standardised with the training set's statistics (so that eval sees the
    inputs train saw). */
#ifndef CMD_DATA_H
#define CMD_DATA_H

#include <stdint.h>

#include "gc_dataset.h"
#include "gc_model.h"

/*  Opens data (NULL: the default directory, falling back to the synthetic
    task with a line on stderr), keeps the first train_samples training
    samples when > 0, checks the model takes them, standardises both sets.
    0, or the exit code after one "gcnode CMD: ..." line (nothing to free). */
int gc_cmd_load_data (const char *cmd, const char *data, uint64_t seed, long train_samples,
                      const gc_model_t *model, gc_dataset_t *train, gc_dataset_t *test);

#endif
