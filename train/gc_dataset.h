/*  gc_dataset — labelled samples as a dense float matrix (n x dim, row-major).

    Sources: an MNIST-format directory (IDX files, plain or gzip), or a
    synthetic task generated from a seed (class clusters in a low-dimensional
    latent space pushed through a fixed random projection, plus noise). */
#ifndef GC_DATASET_H
#define GC_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_DEFAULT_DATA_DIR "/usr/share/datasets/fashion-mnist"

typedef struct {
    size_t    n;            /* samples */
    size_t    dim;          /* features per sample */
    /*  Shape of a sample, channels x height x width = dim (NCHW, so a sample
        is channel planes of rows); 0 x 0 x 0 when unknown. Images from IDX
        files are 1 x rows x cols, synthetic features dim x 1 x 1. */
    size_t    channels, height, width;
    int       n_classes;
    float    *x;            /* n * dim, owned (gc_mem) */
    uint8_t  *y;            /* n labels in [0, n_classes), owned */
} gc_dataset_t;

/*  Load train and test splits from an MNIST-format directory (files
    train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
    t10k-labels-idx1-ubyte, each optionally .gz). Pixels become x / 255. */
int  gc_dataset_load_mnist (const char *dir, gc_dataset_t *train, gc_dataset_t *test,
                            gc_err_t *err);
/*  True when dir holds the four MNIST-format files (plain or gzip). */
bool gc_dataset_mnist_present (const char *dir);

/*  Load train and test splits from NumPy files in dir: train_x.npy,
    train_y.npy, test_x.npy, test_y.npy (gc_npy.h). Images float32 (as they
    are) or uint8 (x / 255) of shape (N, C, H, W), (N, H, W) or (N, D);
    labels uint8 or int64 of shape (N,) in 0..255. The classes are the
    largest label of either split + 1. */
int  gc_dataset_load_npy (const char *dir, gc_dataset_t *train, gc_dataset_t *test,
                          gc_err_t *err);

/*  A learnable synthetic task: n_classes clusters in a 16-dim latent space,
    projected to dim features. Same seed → same bytes. */
int  gc_dataset_synthetic (uint64_t seed, size_t n_train, size_t n_test, size_t dim,
                           int n_classes, gc_dataset_t *train, gc_dataset_t *test,
                           gc_err_t *err);

/*  The usual way a program gets its data: source is an MNIST-format directory,
    "npy:DIR" (gc_dataset_load_npy), "synthetic", or "synthetic:TRAIN:TEST:FEATURES" (10 classes). When source is NULL the default directory is used if it
    holds the dataset, otherwise the synthetic task (60000 + 10000 samples of
    784 features, 10 classes) and *fell_back is set so that the caller says
    so on screen. An explicit directory that is missing is an error. */
int  gc_dataset_open (const char *source, uint64_t seed, gc_dataset_t *train,
                      gc_dataset_t *test, bool *fell_back, gc_err_t *err);

/*  Standardise both splits with the training split's global mean and standard
    deviation (one scalar each, so constant features stay finite). */
void gc_dataset_standardise (gc_dataset_t *train, gc_dataset_t *test);

/*  A new dataset holding rows idx[0..count) of src (copied). */
int  gc_dataset_subset (const gc_dataset_t *src, const uint32_t *idx, size_t count,
                        gc_dataset_t *out, gc_err_t *err);
void gc_dataset_free (gc_dataset_t *self);

#endif
