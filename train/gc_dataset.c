#include "gc_dataset.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_idx.h"
#include "gc_mem.h"
#include "gc_npy.h"
#include "gc_rng.h"

static const char *s_mnist_files [4] = {
    "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",  "t10k-labels-idx1-ubyte"
};

//  dir/name, or dir/name.gz when only the gzip file exists.
static void
s_find_file (const char *dir, const char *name, char *path, size_t size)
{
    snprintf (path, size, "%s/%s", dir, name);
    if (access (path, F_OK) == 0)
        return;
    snprintf (path, size, "%s/%s.gz", dir, name);
}

bool
gc_dataset_mnist_present (const char *dir)
{
    char path [1024];
    for (int i = 0; i < 4; i++) {
        s_find_file (dir, s_mnist_files [i], path, sizeof path);
        if (access (path, R_OK) != 0)
            return false;
    }
    return true;
}

static int
s_load_split (const char *dir, const char *images_name, const char *labels_name,
              gc_dataset_t *out, gc_err_t *err)
{
    char ipath [1024], lpath [1024];
    s_find_file (dir, images_name, ipath, sizeof ipath);
    s_find_file (dir, labels_name, lpath, sizeof lpath);
    gc_idx_t images, labels;
    if (gc_idx_read (ipath, &images, err))
        return -1;
    if (gc_idx_read (lpath, &labels, err)) {
        gc_idx_free (&images);
        return -1;
    }
    int rc = 0;
    if (images.ndims != 3)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: images need 3 dimensions, file has %d", ipath, images.ndims);
    else if (labels.ndims != 1)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: labels need 1 dimension, file has %d", lpath, labels.ndims);
    else if (images.dims [0] != labels.dims [0])
        rc = gc_err_set (err, GC_E_FORMAT, "%s: %u labels but %s has %u images",
                         lpath, labels.dims [0], ipath, images.dims [0]);
    for (size_t i = 0; rc == 0 && i < labels.count; i++)
        if (labels.data [i] > 9)
            rc = gc_err_set (err, GC_E_FORMAT, "%s: label %u of sample %zu is outside 0..9",
                             lpath, labels.data [i], i);
    if (rc == 0) {
        out->n = images.dims [0];
        out->dim = (size_t) images.dims [1] * images.dims [2];
        out->channels = 1;
        out->height = images.dims [1];
        out->width = images.dims [2];
        out->n_classes = 10;
        out->x = gc_falloc (images.count);
        out->y = malloc (out->n);
        if (!out->x || !out->y)
            rc = gc_err_set (err, GC_E_NOMEM, "%s: out of memory", ipath);
    }
    if (rc == 0) {
        for (size_t i = 0; i < images.count; i++)
            out->x [i] = (float) images.data [i] * (1.0f / 255.0f);
        memcpy (out->y, labels.data, out->n);
    }
    else
        gc_dataset_free (out);
    gc_idx_free (&images);
    gc_idx_free (&labels);
    return rc;
}

int
gc_dataset_load_mnist (const char *dir, gc_dataset_t *train, gc_dataset_t *test, gc_err_t *err)
{
    memset (train, 0, sizeof *train);
    memset (test, 0, sizeof *test);
    if (s_load_split (dir, s_mnist_files [0], s_mnist_files [1], train, err))
        return -1;
    if (s_load_split (dir, s_mnist_files [2], s_mnist_files [3], test, err)) {
        gc_dataset_free (train);
        return -1;
    }
    if (train->height != test->height || train->width != test->width) {
        gc_err_set (err, GC_E_FORMAT, "%s: train images are %zux%zu, test images %zux%zu",
                    dir, train->height, train->width, test->height, test->width);
        gc_dataset_free (train);
        gc_dataset_free (test);
        return -1;
    }
    return 0;
}

//  One split from DIR/PREFIX_x.npy and DIR/PREFIX_y.npy; *max_label gets
//  the largest label (classes are decided over both splits).
static int
s_load_npy_split (const char *dir, const char *prefix, gc_dataset_t *out, int *max_label,
                  gc_err_t *err)
{
    char xpath [1024], ypath [1024];
    snprintf (xpath, sizeof xpath, "%s/%s_x.npy", dir, prefix);
    snprintf (ypath, sizeof ypath, "%s/%s_y.npy", dir, prefix);
    gc_npy_t x, y;
    if (gc_npy_read (xpath, &x, err))
        return -1;
    if (gc_npy_read (ypath, &y, err)) {
        gc_npy_free (&x);
        return -1;
    }
    int rc = 0;
    if (x.dtype == GC_NPY_I64)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: images must be float32 or uint8, not int64", xpath);
    else
    if (x.ndim < 2)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: images need the shape (N, D), (N, H, W) or (N, C, H, W), "
                         "the file has %d dimension", xpath, x.ndim);
    else
    if (y.dtype == GC_NPY_F32 || y.ndim != 1)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: labels must be uint8 or int64 of shape (N,)", ypath);
    else
    if (y.shape [0] != x.shape [0])
        rc = gc_err_set (err, GC_E_FORMAT, "%s: %zu labels but %s has %zu images", ypath, y.shape [0],
                         xpath, x.shape [0]);
    *max_label = 0;
    for (size_t i = 0; rc == 0 && i < y.count; i++) {
        int64_t v = y.dtype == GC_NPY_U8 ? ((uint8_t *) y.data) [i] : ((int64_t *) y.data) [i];
        if (v < 0 || v > 255)
            rc = gc_err_set (err, GC_E_FORMAT, "%s: label %lld of sample %zu is outside 0..255", ypath,
                             (long long) v, i);
        else
        if (v > *max_label)
            *max_label = (int) v;
    }
    if (rc == 0) {
        out->n = x.shape [0];
        out->dim = x.count / x.shape [0];
        out->channels = x.ndim == 4 ? x.shape [1] : x.ndim == 3 ? 1 : out->dim;
        out->height = x.ndim >= 3 ? x.shape [x.ndim - 2] : 1;
        out->width = x.ndim >= 3 ? x.shape [x.ndim - 1] : 1;
        out->x = gc_falloc (x.count);
        out->y = malloc (out->n);
        if (!out->x || !out->y)
            rc = gc_err_set (err, GC_E_NOMEM, "%s: out of memory", xpath);
    }
    if (rc == 0) {
        for (size_t i = 0; i < x.count; i++)
            out->x [i] = x.dtype == GC_NPY_F32 ? ((float *) x.data) [i]
                                               : (float) ((uint8_t *) x.data) [i] * (1.0f / 255.0f);
        for (size_t i = 0; i < out->n; i++)
            out->y [i] = (uint8_t) (y.dtype == GC_NPY_U8 ? ((uint8_t *) y.data) [i]
                                                         : ((int64_t *) y.data) [i]);
        for (size_t i = 0; rc == 0 && i < x.count; i++)
            if (!isfinite (out->x [i]))
                rc = gc_err_set (err, GC_E_FORMAT, "%s: value %zu is not a finite number", xpath, i);
    }
    if (rc)
        gc_dataset_free (out);
    gc_npy_free (&x);
    gc_npy_free (&y);
    return rc;
}

int
gc_dataset_load_npy (const char *dir, gc_dataset_t *train, gc_dataset_t *test, gc_err_t *err)
{
    memset (train, 0, sizeof *train);
    memset (test, 0, sizeof *test);
    int max_train, max_test;
    if (s_load_npy_split (dir, "train", train, &max_train, err))
        return -1;
    if (s_load_npy_split (dir, "test", test, &max_test, err)) {
        gc_dataset_free (train);
        return -1;
    }
    int classes = (max_train > max_test ? max_train : max_test) + 1;
    if (train->channels != test->channels || train->height != test->height || train->width != test->width)
        gc_err_set (err, GC_E_FORMAT, "%s: train images are %zux%zux%zu, test images %zux%zux%zu", dir,
                    train->channels, train->height, train->width, test->channels, test->height,
                    test->width);
    else
    if (classes < 2)
        gc_err_set (err, GC_E_FORMAT, "%s: every label is 0; a classifier needs at least 2 classes", dir);
    else {
        train->n_classes = test->n_classes = classes;
        return 0;
    }
    gc_dataset_free (train);
    gc_dataset_free (test);
    return -1;
}

int
gc_dataset_open (const char *source, uint64_t seed, gc_dataset_t *train,
                 gc_dataset_t *test, bool *fell_back, gc_err_t *err)
{
    *fell_back = false;
    if (source && !strncmp (source, "npy:", 4))
        return gc_dataset_load_npy (source + 4, train, test, err);
    //  synthetic[:TRAIN:TEST:FEATURES]
    if (source && !strncmp (source, "synthetic:", 10)) {
        unsigned long n_train, n_test, dim;
        char extra;
        if (sscanf (source + 10, "%lu:%lu:%lu%c", &n_train, &n_test, &dim, &extra) != 3)
            return gc_err_set (err, GC_E_SPEC, "data '%s': expected synthetic or synthetic:TRAIN:TEST:FEATURES", source);
        return gc_dataset_synthetic (seed, n_train, n_test, dim, 10, train, test, err);
    }
    bool synthetic = source && !strcmp (source, "synthetic");
    if (!source) {
        source = GC_DEFAULT_DATA_DIR;
        synthetic = !gc_dataset_mnist_present (source);
        *fell_back = synthetic;
    }
    if (synthetic)
        return gc_dataset_synthetic (seed, 60000, 10000, 784, 10, train, test, err);
    if (access (source, F_OK) != 0)
        return gc_err_set (err, GC_E_IO, "data directory %s does not exist", source);
    return gc_dataset_load_mnist (source, train, test, err);
}

#define S_LATENT 16

//  Fill n samples: label uniform, latent = centre[label] + N(0, I),
//  x = P latent / sqrt(latent) + uniform noise.
static void
s_synth_fill (gc_rng_t *rng, const float *centres, const float *proj, size_t n,
              size_t dim, int n_classes, gc_dataset_t *out)
{
    float *latent = gc_falloc (n * S_LATENT);
    for (size_t i = 0; i < n; i++) {
        int c = (int) gc_rng_below (rng, (uint64_t) n_classes);
        out->y [i] = (uint8_t) c;
        for (int j = 0; j < S_LATENT; j++)
            latent [i * S_LATENT + j] = centres [c * S_LATENT + j] + (float) gc_rng_normal (rng);
    }
    //  x (n x dim) = latent (n x L) * proj^T (L x dim)
    cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) n, (int) dim, S_LATENT,
                 1.0f / sqrtf ((float) S_LATENT), latent, S_LATENT, proj, S_LATENT,
                 0.0f, out->x, (int) dim);
    for (size_t i = 0; i < n * dim; i++)
        out->x [i] += 0.5f * (gc_rng_float (rng) - 0.5f);
    gc_mem_free (latent);
}

int
gc_dataset_synthetic (uint64_t seed, size_t n_train, size_t n_test, size_t dim,
                      int n_classes, gc_dataset_t *train, gc_dataset_t *test, gc_err_t *err)
{
    memset (train, 0, sizeof *train);
    memset (test, 0, sizeof *test);
    if (n_classes < 2 || n_classes > 256 || dim == 0 || dim > (1u << 20)
    ||  n_train == 0 || n_test == 0 || n_train > (1u << 24) || n_test > (1u << 24))
        return gc_err_set (err, GC_E_SPEC, "synthetic data: bad shape (%zu + %zu samples, %zu features, %d classes)",
                           n_train, n_test, dim, n_classes);
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0x5EED);
    float *centres = gc_falloc ((size_t) n_classes * S_LATENT);
    float *proj = gc_falloc (dim * S_LATENT);
    gc_dataset_t *splits [2] = { train, test };
    size_t sizes [2] = { n_train, n_test };
    int rc = centres && proj ? 0 : gc_err_set (err, GC_E_NOMEM, "synthetic data: out of memory");
    for (int s = 0; rc == 0 && s < 2; s++) {
        splits [s]->n = sizes [s];
        splits [s]->dim = dim;
        splits [s]->channels = dim;
        splits [s]->height = 1;
        splits [s]->width = 1;
        splits [s]->n_classes = n_classes;
        splits [s]->x = gc_falloc (sizes [s] * dim);
        splits [s]->y = malloc (sizes [s]);
        if (!splits [s]->x || !splits [s]->y)
            rc = gc_err_set (err, GC_E_NOMEM, "synthetic data: out of memory");
    }
    if (rc == 0) {
        //  Centres ~ N(0, 1.2^2 I): well separated in 16 dimensions (a nearly
        //  Bayes-optimal classifier is right about 99 % of the time), yet the
        //  noise makes the task non-trivial for the first epochs.
        gc_rng_fill_normal (&rng, centres, (size_t) n_classes * S_LATENT, 0.0f, 1.2f);
        gc_rng_fill_normal (&rng, proj, dim * S_LATENT, 0.0f, 1.0f);
        s_synth_fill (&rng, centres, proj, n_train, dim, n_classes, train);
        s_synth_fill (&rng, centres, proj, n_test, dim, n_classes, test);
    }
    else {
        gc_dataset_free (train);
        gc_dataset_free (test);
    }
    gc_mem_free (centres);
    gc_mem_free (proj);
    return rc;
}

void
gc_dataset_standardise (gc_dataset_t *train, gc_dataset_t *test)
{
    size_t n = train->n * train->dim;
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        sum += train->x [i];
        sq += (double) train->x [i] * train->x [i];
    }
    double mean = n ? sum / (double) n : 0;
    double var = n ? sq / (double) n - mean * mean : 1;
    float scale = (float) (1.0 / sqrt (var > 1e-12 ? var : 1.0));
    gc_dataset_t *splits [2] = { train, test };
    for (int s = 0; s < 2; s++) {
        if (!splits [s])
            continue;
        size_t m = splits [s]->n * splits [s]->dim;
        float *x = splits [s]->x;
        for (size_t i = 0; i < m; i++)
            x [i] = (x [i] - (float) mean) * scale;
    }
}

int
gc_dataset_subset (const gc_dataset_t *src, const uint32_t *idx, size_t count,
                   gc_dataset_t *out, gc_err_t *err)
{
    memset (out, 0, sizeof *out);
    out->n = count;
    out->dim = src->dim;
    out->channels = src->channels;
    out->height = src->height;
    out->width = src->width;
    out->n_classes = src->n_classes;
    out->x = gc_falloc ((count ? count : 1) * src->dim);
    out->y = malloc (count ? count : 1);
    if (!out->x || !out->y) {
        gc_dataset_free (out);
        return gc_err_set (err, GC_E_NOMEM, "dataset subset: out of memory for %zu samples", count);
    }
    for (size_t i = 0; i < count; i++) {
        if (idx [i] >= src->n) {
            gc_dataset_free (out);
            return gc_err_set (err, GC_E_RANGE, "dataset subset: index %u outside %zu samples", idx [i], src->n);
        }
        memcpy (out->x + i * src->dim, src->x + (size_t) idx [i] * src->dim, src->dim * sizeof (float));
        out->y [i] = src->y [idx [i]];
    }
    return 0;
}

void
gc_dataset_free (gc_dataset_t *self)
{
    if (!self)
        return;
    gc_mem_free (self->x);
    free (self->y);
    memset (self, 0, sizeof *self);
}
