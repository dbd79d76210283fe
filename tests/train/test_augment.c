/*  gc_augment: the spec, and that every augmented image is the original
    shifted (border repeated) and perhaps mirrored, within the bounds asked,
    the same for the same seed; that erasing zeroes one rectangle of the asked
    size in about the asked share of samples; the sampler refuses data without
    an image shape. */
#include "gc_test.h"

#include <stdlib.h>
#include <string.h>

#include "gc_augment.h"
#include "gc_mem.h"
#include "gc_sampler.h"

static void
test_parse (void **state)
{
    static const struct { const char *spec; int crop; bool flip; int erase; const char *err; } cases [] = {
        { NULL, 0, false, 0, NULL },          { "none", 0, false, 0, NULL },
        { "flip", 0, true, 0, NULL },         { "crop:4", 4, false, 0, NULL },
        { "crop:2,flip", 2, true, 0, NULL },  { "flip,crop:16", 16, true, 0, NULL },
        { "erase:50", 0, false, 50, NULL },   { "flip,erase:100,crop:1", 1, true, 100, NULL },
        { "crop:0", 0, false, 0, "outside" }, { "crop:17", 0, false, 0, "outside" },
        { "erase:0", 0, false, 0, "outside" }, { "erase:101", 0, false, 0, "erase percentage" },
        { "erase:5,erase:5", 0, false, 0, "at most once" }, { "erase", 0, false, 0, "erase:P" },
        { "crop:x", 0, false, 0, "crop padding" }, { "crop", 0, false, 0, "not crop:P" },
        { "flip,flip", 0, false, 0, "at most once" }, { "", 0, false, 0, "not crop:P" },
        { "rotate", 0, false, 0, "'rotate'" }, { "none,flip", 0, false, 0, "'none'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_augment_t a;
        gc_err_t err = { 0 };
        int rc = gc_augment_parse (cases [i].spec, &a, &err);
        if (cases [i].err) {
            assert_int_equal (rc, -1);
            if (!strstr (err.msg, cases [i].err))
                fail_msg ("%s: '%s' lacks '%s'", cases [i].spec, err.msg, cases [i].err);
        }
        else {
            assert_int_equal (rc, 0);
            assert_int_equal (a.crop, cases [i].crop);
            assert_int_equal (a.flip, cases [i].flip);
            assert_int_equal (a.erase, cases [i].erase);
        }
    }
}

//  Whether out is in shifted by (dy, dx), border repeated, mirrored if flip.
static bool
s_is_shift (const float *in, const float *out, long c, long h, long w, long dy, long dx, bool flip)
{
    for (long ch = 0; ch < c; ch++)
        for (long y = 0; y < h; y++)
            for (long x = 0; x < w; x++) {
                long sy = y + dy, sx = (flip ? w - 1 - x : x) + dx;
                sy = sy < 0 ? 0 : sy >= h ? h - 1 : sy;
                sx = sx < 0 ? 0 : sx >= w ? w - 1 : sx;
                if (out [(ch * h + y) * w + x] != in [(ch * h + sy) * w + sx])
                    return false;
            }
    return true;
}

static void
test_apply (void **state)
{
    enum { N = 200, C = 2, H = 5, W = 6 };
    static const gc_augment_t cases [] = { { 1, false, 0 }, { 0, true, 0 }, { 2, true, 0 } };
    float *x = gc_falloc (N * C * H * W), *orig = gc_falloc (N * C * H * W);
    float *again = gc_falloc (N * C * H * W), scratch [H * W];
    for (size_t i = 0; i < N * C * H * W; i++)
        orig [i] = (float) (i % 97) + 0.5f;
    for (size_t k = 0; k < sizeof cases / sizeof cases [0]; k++) {
        const gc_augment_t *a = &cases [k];
        gc_rng_t rng;
        memcpy (x, orig, sizeof (float) * N * C * H * W);
        gc_rng_init (&rng, 3, 0);
        gc_augment_apply (a, x, N, C, H, W, &rng, scratch);
        memcpy (again, orig, sizeof (float) * N * C * H * W);
        gc_rng_init (&rng, 3, 0);
        gc_augment_apply (a, again, N, C, H, W, &rng, scratch);
        assert_memory_equal (x, again, sizeof (float) * N * C * H * W);
        size_t changed = 0;
        for (size_t n = 0; n < N; n++) {
            const float *in = orig + n * C * H * W, *out = x + n * C * H * W;
            bool found = false;
            for (long dy = -a->crop; dy <= a->crop && !found; dy++)
                for (long dx = -a->crop; dx <= a->crop && !found; dx++)
                    for (int f = 0; f <= (int) a->flip && !found; f++)
                        found = s_is_shift (in, out, C, H, W, dy, dx, f);
            assert_true (found);
            changed += memcmp (in, out, sizeof (float) * C * H * W) != 0;
        }
        //  most samples move: no augmentation would fail here
        assert_true (changed > N / 3);
    }
    gc_mem_free (x);
    gc_mem_free (orig);
    gc_mem_free (again);
}

//  The erased rectangle of one sample (every channel zero there, nothing
//  else changed), as its area in pixels; 0 if none; -1 if not a rectangle.
static long
s_erased_area (const float *in, const float *out, long c, long h, long w)
{
    long y0 = h, y1 = -1, x0 = w, x1 = -1, zeros = 0;
    for (long y = 0; y < h; y++)
        for (long x = 0; x < w; x++)
            if (out [y * w + x] == 0) {
                zeros++;
                y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
                x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
            }
    if (!zeros)
        return memcmp (in, out, sizeof (float) * (size_t) (c * h * w)) ? -1 : 0;
    if (zeros != (y1 - y0 + 1) * (x1 - x0 + 1))
        return -1;
    for (long ch = 0; ch < c; ch++)
        for (long y = 0; y < h; y++)
            for (long x = 0; x < w; x++) {
                long i = (ch * h + y) * w + x;
                bool inside = y >= y0 && y <= y1 && x >= x0 && x <= x1;
                if (out [i] != (inside ? 0.0f : in [i]))
                    return -1;
            }
    return zeros;
}

static void
test_erase (void **state)
{
    enum { N = 400, C = 2, H = 28, W = 28 };
    static const int percent [] = { 100, 30 };
    float *x = gc_falloc (N * C * H * W), *orig = gc_falloc (N * C * H * W), scratch [H * W];
    for (size_t i = 0; i < N * C * H * W; i++)
        orig [i] = (float) (i % 97) + 0.5f;
    for (size_t k = 0; k < sizeof percent / sizeof percent [0]; k++) {
        gc_augment_t a = { .erase = percent [k] };
        gc_rng_t rng;
        memcpy (x, orig, sizeof (float) * N * C * H * W);
        gc_rng_init (&rng, 5, 0);
        gc_augment_apply (&a, x, N, C, H, W, &rng, scratch);
        long erased = 0;
        for (size_t n = 0; n < N; n++) {
            long area = s_erased_area (orig + n * C * H * W, x + n * C * H * W, C, H, W);
            assert_true (area >= 0);
            if (area) {
                //  2 - 40 % of 784 pixels, give or take the rounding of each side
                assert_true (area >= 10 && area <= 360);
                erased++;
            }
        }
        //  the share asked, within a wide binomial margin (a run that never draws fails)
        double share = (double) erased / N, want = percent [k] / 100.0;
        if (share < want - 0.1 || share > want + 0.1)
            fail_msg ("erase:%d erased %.2f of the samples", percent [k], share);
    }
    gc_mem_free (x);
    gc_mem_free (orig);
}

static void
test_sampler (void **state)
{
    gc_dataset_t train, test;
    assert_int_equal (gc_dataset_synthetic (1, 64, 8, 12, 3, &train, &test, NULL), 0);
    gc_sampler_t *s = gc_sampler_new (&train, 8, 1, NULL);
    gc_augment_t a = { .crop = 1, .flip = true };
    gc_err_t err = { 0 };
    assert_int_equal (gc_sampler_set_augment (s, &a, 1, &err), -1);
    assert_non_null (strstr (err.msg, "needs images"));
    gc_sampler_destroy (&s);
    //  the same features as a 3x2x2 image: accepted, and batches change
    train.channels = 3;
    train.height = 2;
    train.width = 2;
    gc_sampler_t *plain = gc_sampler_new (&train, 8, 1, NULL);
    s = gc_sampler_new (&train, 8, 1, NULL);
    assert_int_equal (gc_sampler_set_augment (s, &a, 1, &err), 0);
    int differ = 0;
    for (int i = 0; i < 4; i++) {
        const float *x1, *x2;
        const uint8_t *y1, *y2;
        gc_sampler_next (plain, &x1, &y1);
        gc_sampler_next (s, &x2, &y2);
        assert_memory_equal (y1, y2, 8);
        differ |= memcmp (x1, x2, 8 * 12 * sizeof (float)) != 0;
    }
    assert_true (differ);
    gc_sampler_destroy (&s);
    gc_sampler_destroy (&plain);
    gc_dataset_free (&train);
    gc_dataset_free (&test);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_parse),
        cmocka_unit_test (test_apply),
        cmocka_unit_test (test_erase),
        cmocka_unit_test (test_sampler),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
