/*  IDX reader and MNIST-directory loader on files the test writes: the valid
    plain and gzip forms, and every corrupt case, each with its message. */
#include "gc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gc_dataset.h"
#include "gc_idx.h"

static char *s_dir;

static void
s_path (char *out, size_t size, const char *name)
{
    snprintf (out, size, "%s/%s", s_dir, name);
}

//  An IDX image of n items of rows x cols with magic type 0x08.
static size_t
s_make_idx (uint8_t *buf, uint32_t n, uint32_t rows, uint32_t cols, int ndims)
{
    uint8_t *p = buf;
    *p++ = 0; *p++ = 0; *p++ = 0x08; *p++ = (uint8_t) ndims;
    uint32_t dims [3] = { n, rows, cols };
    for (int i = 0; i < ndims; i++) {
        *p++ = (uint8_t) (dims [i] >> 24); *p++ = (uint8_t) (dims [i] >> 16);
        *p++ = (uint8_t) (dims [i] >> 8);  *p++ = (uint8_t) dims [i];
    }
    size_t count = n;
    for (int i = 1; i < ndims; i++)
        count *= dims [i];
    for (size_t i = 0; i < count; i++)
        *p++ = (uint8_t) (i % 10);
    return (size_t) (p - buf);
}

static void
s_write_gz (const char *path, const uint8_t *data, size_t size)
{
    gzFile f = gzopen (path, "wb");
    assert_non_null (f);
    assert_int_equal (gzwrite (f, data, (unsigned) size), (int) size);
    assert_int_equal (gzclose (f), Z_OK);
}

static int
s_setup (void **state)
{
    s_dir = gc_test_tmpdir ("idx");
    return 0;
}

static int
s_teardown (void **state)
{
    gc_test_rmtree (s_dir);
    free (s_dir);
    return 0;
}

static void
test_valid_plain_and_gzip (void **state)
{
    static uint8_t buf [4096];
    size_t size = s_make_idx (buf, 5, 4, 3, 3);
    char plain [512], gz [512];
    s_path (plain, sizeof plain, "ok.idx");
    s_path (gz, sizeof gz, "ok.idx.gz");
    gc_test_write_file (plain, buf, size);
    s_write_gz (gz, buf, size);
    const char *paths [2] = { plain, gz };
    for (int i = 0; i < 2; i++) {
        gc_idx_t idx;
        gc_err_t err = { 0 };
        assert_int_equal (gc_idx_read (paths [i], &idx, &err), 0);
        assert_int_equal (idx.ndims, 3);
        assert_int_equal (idx.count, 60);
        assert_int_equal (idx.dims [1], 4);
        assert_int_equal (idx.data [13], 3);
        gc_idx_free (&idx);
    }
}

typedef enum { S_PLAIN, S_GZIP, S_GZIP_CORRUPT } s_form_t;

static void
test_corrupt_files_are_refused (void **state)
{
    static uint8_t good [4096];
    size_t size = s_make_idx (good, 5, 4, 3, 3);
    //  keep: bytes of the file kept (-1: all, -2: all plus one extra byte)
    static const struct {
        const char *what;
        int         patch_at;       /* byte to overwrite, -1 none */
        uint8_t     patch;
        long        keep;
        s_form_t    form;
        const char *needle;
    } cases [] = {
        { "empty file",        -1, 0, 0,  S_PLAIN, "truncated" },
        { "short header",      -1, 0, 6,  S_PLAIN, "truncated" },
        { "truncated data",    -1, 0, 70, S_PLAIN, "truncated" },
        { "truncated gzip",    -1, 0, -1, S_GZIP, "truncated" },
        { "wrong magic",        0, 0x1f, -1, S_PLAIN, "bad magic" },
        { "float elements",     2, 0x0D, -1, S_PLAIN, "element type" },
        { "zero dimensions",    3, 0, -1, S_PLAIN, "dimension count" },
        { "zero size",          7, 0, -1, S_PLAIN, "dimension 0 is zero" },
        { "huge claim",         4, 0x7f, -1, S_PLAIN, "more than" },
        { "extra data",        -1, 0, -2, S_PLAIN, "extra data" },
        { "corrupt gzip",      -1, 0, -1, S_GZIP_CORRUPT, "corrupt" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        uint8_t buf [4096 + 16];
        memcpy (buf, good, size);
        size_t len = cases [i].keep >= 0 ? (size_t) cases [i].keep : size;
        if (cases [i].patch_at >= 0)
            buf [cases [i].patch_at] = cases [i].patch;
        if (cases [i].patch_at == 7)            /* first dimension = 0 */
            buf [4] = buf [5] = buf [6] = 0;
        if (cases [i].keep == -2)
            buf [len++] = 0xAB;
        char path [512];
        s_path (path, sizeof path, "bad.idx");
        if (cases [i].form == S_PLAIN)
            gc_test_write_file (path, buf, len);
        else if (cases [i].form == S_GZIP) {
            //  a gzip stream cut short: write the full stream, then truncate it
            s_write_gz (path, buf, size);
            FILE *f = fopen (path, "rb");
            uint8_t z [8192];
            size_t zlen = fread (z, 1, sizeof z, f);
            fclose (f);
            gc_test_write_file (path, z, zlen - 12);
        }
        else {
            s_write_gz (path, buf, size);
            FILE *f = fopen (path, "rb");
            uint8_t z [8192];
            size_t zlen = fread (z, 1, sizeof z, f);
            fclose (f);
            for (size_t j = 12; j < zlen - 8; j += 3)
                z [j] ^= 0x5A;
            gc_test_write_file (path, z, zlen);
        }
        gc_idx_t idx;
        gc_err_t err = { 0 };
        int rc = gc_idx_read (path, &idx, &err);
        if (rc != -1 || !strstr (err.msg, cases [i].needle) || !strstr (err.msg, path))
            fail_msg ("%s: rc %d, message '%s' (wanted '%s' and the path)",
                      cases [i].what, rc, err.msg, cases [i].needle);
        assert_null (idx.data);
    }
    gc_err_t err = { 0 };
    gc_idx_t idx;
    assert_int_equal (gc_idx_read ("/nonexistent/file", &idx, &err), -1);
    assert_non_null (strstr (err.msg, "cannot open"));
}

static void
s_write_mnist_dir (uint32_t n_images, uint32_t n_labels, uint8_t bad_label)
{
    static uint8_t buf [1 << 16];
    const char *names [4] = { "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                              "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte" };
    for (int f = 0; f < 4; f++) {
        size_t size = f % 2 ? s_make_idx (buf, n_labels, 0, 0, 1)
                            : s_make_idx (buf, n_images, 6, 6, 3);
        if (f == 1 && bad_label)
            buf [size - 1] = bad_label;
        char path [512];
        s_path (path, sizeof path, names [f]);
        if (strstr (names [f], ".gz"))
            s_write_gz (path, buf, size);
        else
            gc_test_write_file (path, buf, size);
    }
}

static void
test_mnist_directory (void **state)
{
    s_write_mnist_dir (20, 20, 0);
    assert_true (gc_dataset_mnist_present (s_dir));
    gc_dataset_t train, test;
    gc_err_t err = { 0 };
    assert_int_equal (gc_dataset_load_mnist (s_dir, &train, &test, &err), 0);
    assert_int_equal (train.n, 20);
    assert_int_equal (train.dim, 36);
    assert_int_equal (test.n, 20);
    assert_true (train.x [1] > 0.0039f && train.x [1] < 0.0040f);   /* 1 / 255 */
    gc_dataset_free (&train);
    gc_dataset_free (&test);

    s_write_mnist_dir (20, 19, 0);
    assert_int_equal (gc_dataset_load_mnist (s_dir, &train, &test, &err), -1);
    assert_non_null (strstr (err.msg, "19 labels but"));
    assert_null (train.x);

    s_write_mnist_dir (20, 20, 12);
    assert_int_equal (gc_dataset_load_mnist (s_dir, &train, &test, &err), -1);
    assert_non_null (strstr (err.msg, "label 12"));
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_valid_plain_and_gzip),
        cmocka_unit_test (test_corrupt_files_are_refused),
        cmocka_unit_test (test_mnist_directory),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
