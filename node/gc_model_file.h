/*  gc_model_file — a model's parameters as a file: 8 bytes "GCMODEL1", the
    parameter count n as uint64 little-endian, then n float32 little-endian.
    Written atomically (temporary file, fsync, rename). Used for the final
    model of a run (node/final_model), which gcnet reads to measure how far
    the honest peers are from agreeing. */
#ifndef GC_MODEL_FILE_H
#define GC_MODEL_FILE_H

#include <stddef.h>

#include "gc_err.h"

#define GC_MODEL_FILE_MAGIC "GCMODEL1"

int gc_model_file_write (const char *path, const float *params, size_t n, gc_err_t *err);
/*  Reads exactly n parameters into params; -1 if the file does not hold n. */
int gc_model_file_read (const char *path, float *params, size_t n, gc_err_t *err);

#endif
