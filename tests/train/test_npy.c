/*  gc_npy and the npy:DIR data source: well-formed arrays of every accepted
    dtype and version, a table of malformed files each refused with the
    reason, and a dataset directory read back with its shape and classes. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_dataset.h"
#include "gc_npy.h"

//  An .npy image: magic, version, header (padded with spaces to 64 bytes
//  with the newline), then data. Returns the size.
static size_t
s_npy (uint8_t *out, int version, const char *dict, const void *data, size_t n)
{
    size_t pre = version == 1 ? 10 : 12, len = strlen (dict);
    size_t hlen = ((pre + len + 1 + 63) / 64) * 64 - pre;
    memcpy (out, "\x93NUMPY", 6);
    out [6] = (uint8_t) version;
    out [7] = 0;
    out [8] = (uint8_t) hlen;
    out [9] = (uint8_t) (hlen >> 8);
    if (version > 1)
        out [10] = out [11] = 0;
    memset (out + pre, ' ', hlen);
    memcpy (out + pre, dict, len);
    out [pre + hlen - 1] = '\n';
    memcpy (out + pre + hlen, data, n);
    return pre + hlen + n;
}

static void
test_parse (void **state)
{
    static uint8_t data [64];
    for (int i = 0; i < 64; i++)
        data [i] = (uint8_t) i;
    static const struct {
        int version;
        const char *dict;
        size_t bytes;           /* data bytes appended */
        const char *err;        /* NULL: accepted */
        int ndim;
        size_t count;
    } cases [] = {
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, NULL, 2, 6 },
        { 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, NULL, 2, 6 },
        { 3, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 2, 3), }", 12, NULL, 4, 12 },
        { 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", 40, NULL, 1, 5 },
        { 1, "{'shape': (4,), 'fortran_order': False, 'descr': '|u1'}", 4, NULL, 1, 4 },
        { 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, "big-endian", 0, 0 },
        { 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16, "dtype", 0, 0 },
        { 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, "dtype", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, "Fortran", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20, "truncated", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28, "trailing", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, "scalar", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", 0, "empty", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }", 4, "1 to 4", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, "whole numbers", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", 24, "tuple", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", 24, "not a tuple", 0, 0 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", 0, "too large", 0, 0 },
        { 1, "{'descr': '<f4', 'shape': (2,), }", 8, "lacks", 0, 0 },
        { 1, "{'fortran_order': False, 'shape': (2,), }", 8, "lacks", 0, 0 },
        { 1, "{}", 0, "lacks", 0, 0 },
    };
    uint8_t buf [512];
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        size_t n = s_npy (buf, cases [i].version, cases [i].dict, data, cases [i].bytes);
        gc_npy_t a;
        gc_err_t err = { 0 };
        int rc = gc_npy_parse (buf, n, "x.npy", &a, &err);
        if (cases [i].err) {
            if (rc == 0)
                fail_msg ("case %zu (%s) accepted", i, cases [i].dict);
            if (!strstr (err.msg, cases [i].err) || !strstr (err.msg, "x.npy"))
                fail_msg ("case %zu: '%s' lacks '%s'", i, err.msg, cases [i].err);
        }
        else {
            if (rc)
                fail_msg ("case %zu: %s", i, err.msg);
            assert_int_equal (a.ndim, cases [i].ndim);
            assert_int_equal (a.count, cases [i].count);
            assert_memory_equal (a.data, data, cases [i].bytes);
        }
        gc_npy_free (&a);
    }
    //  damage to the preamble itself
    size_t n = s_npy (buf, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (4,), }", data, 4);
    static const struct { size_t at; uint8_t value; size_t size; const char *err; } bad [] = {
        { 0, 'X', 0, "magic" }, { 6, 4, 0, "version 4" }, { 9, 0x7f, 0, "header" },
        { 0, 0x93, 8, "magic" }, { 0, 0x93, 40, "header" }, { 20, 0, 0, "NUL" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        uint8_t copy [512];
        memcpy (copy, buf, n);
        copy [bad [i].at] = bad [i].value;
        gc_npy_t a;
        gc_err_t err = { 0 };
        assert_int_equal (gc_npy_parse (copy, bad [i].size ? bad [i].size : n, "x.npy", &a, &err), -1);
        if (!strstr (err.msg, bad [i].err))
            fail_msg ("damage %zu: '%s' lacks '%s'", i, err.msg, bad [i].err);
    }
}

static void
s_write_npy (const char *dir, const char *file, const char *dict, const void *data, size_t n)
{
    static uint8_t buf [4096];
    char path [512];
    snprintf (path, sizeof path, "%s/%s", dir, file);
    gc_test_write_file (path, buf, s_npy (buf, 1, dict, data, n));
}

static void
test_dataset (void **state)
{
    char *dir = gc_test_tmpdir ("npy");
    uint8_t img [3 * 2 * 3];
    for (size_t i = 0; i < sizeof img; i++)
        img [i] = (uint8_t) (i * 15);
    int64_t lab [3] = { 0, 4, 2 };
    float fimg [2 * 6];
    for (int i = 0; i < 12; i++)
        fimg [i] = (float) i - 3.0f;
    uint8_t flab [2] = { 1, 0 };
    s_write_npy (dir, "train_x.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 2, 3), }", img, sizeof img);
    s_write_npy (dir, "train_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", lab, sizeof lab);
    s_write_npy (dir, "test_x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 2, 3), }", fimg, sizeof fimg);
    s_write_npy (dir, "test_y.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", flab, sizeof flab);
    char source [600];
    snprintf (source, sizeof source, "npy:%s", dir);
    gc_dataset_t train, test;
    bool fell;
    gc_err_t err = { 0 };
    if (gc_dataset_open (source, 1, &train, &test, &fell, &err))
        fail_msg ("%s", err.msg);
    assert_int_equal (train.n, 3);
    assert_int_equal (train.dim, 6);
    assert_int_equal (train.channels, 1);
    assert_int_equal (train.height, 2);
    assert_int_equal (train.width, 3);
    assert_int_equal (train.n_classes, 5);
    assert_true (fabsf (train.x [1] - 15.0f / 255.0f) < 1e-7f);
    assert_int_equal (train.y [1], 4);
    assert_true (test.x [11] == 8.0f);
    assert_int_equal (test.y [0], 1);
    gc_dataset_free (&train);
    gc_dataset_free (&test);
    //  what is wrong with a split is named with its file
    const struct { const char *file, *dict; const void *data; size_t n; const char *err; } bad [] = {
        { "train_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
          (int64_t [3]) { 0, 256, 1 }, 24, "label 256 of sample 1" },
        { "train_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
          (int64_t [3]) { 0, -1, 1 }, 24, "label -1" },
        { "train_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
          (int64_t [2]) { 0, 1 }, 16, "2 labels but" },
        { "train_y.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
          (float [3]) { 0, 1, 1 }, 12, "uint8 or int64" },
        { "train_y.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }",
          (uint8_t [3]) { 0, 0, 0 }, 3, "test images" },   /* test_x below is 1x2x2 */
        { "train_x.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3, 1), }",
          (int64_t [3]) { 0, 1, 2 }, 24, "float32 or uint8" },
        { "train_x.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }",
          (uint8_t [3]) { 0, 1, 2 }, 3, "(N, D)" },
    };
    s_write_npy (dir, "test_x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 2, 2), }", fimg, 32);
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        if (i == 4)
            s_write_npy (dir, "train_y.npy", bad [i].dict, bad [i].data, bad [i].n);
        else {
            s_write_npy (dir, "train_x.npy", "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 2, 3), }", img, sizeof img);
            s_write_npy (dir, "train_y.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", lab, sizeof lab);
            s_write_npy (dir, bad [i].file, bad [i].dict, bad [i].data, bad [i].n);
        }
        assert_int_equal (gc_dataset_open (source, 1, &train, &test, &fell, &err), -1);
        if (!strstr (err.msg, bad [i].err))
            fail_msg ("bad %zu: '%s' lacks '%s'", i, err.msg, bad [i].err);
        assert_null (train.x);
        assert_null (test.x);
    }
    snprintf (source, sizeof source, "npy:%s/absent", dir);
    assert_int_equal (gc_dataset_open (source, 1, &train, &test, &fell, &err), -1);
    assert_non_null (strstr (err.msg, "cannot open"));
    gc_test_rmtree (dir);
    free (dir);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_parse),
        cmocka_unit_test (test_dataset),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
