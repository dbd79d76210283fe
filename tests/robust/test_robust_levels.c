/*  robust/ kernel levels (generic, avx2, avx512) give the same bits: every
    rule over the same inputs, at every level this CPU has, compared with
    the generic level byte for byte (docs/ALGORITHMS.md promises it: the
    distance sums fold 16 lanes in one fixed order at every level, and so
    does the block Gram, whether formed from the inputs or a packed tile). Shapes cover
    the register kernels, the tile interpreter (k > 24) and partial blocks. */
#include "gc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <float.h>
#include <math.h>

#include "gc_cpu.h"
#include "gc_rng.h"
#include "gc_robust.h"
#include "gc_robust_internal.h"

static const char *s_specs [] = {
    "mean", "cwmed", "cwtm:1", "cwtm:2", "krum:1", "mkrum:1:3", "bulyan:1", "gm",
    "cclip:10:3", "scclip", "nnm+cwtm:1", "nnm:2+cwmed", "bucket:2+cwmed", "nnm:1+mean",
    "guard", "guard:2:10:1:1",
};
#define S_NSPECS (sizeof s_specs / sizeof s_specs [0])

static const struct {
    size_t k, d;
} s_shapes [] = { { 9, 128 * 9 + 77 }, { 16, 128 * 20 + 5 }, { 16, 3000 }, { 26, 128 * 7 + 100 } };
#define S_NSHAPES (sizeof s_shapes / sizeof s_shapes [0])

//  Inputs around a common point with two far outliers (so that clipping,
//  Krum's selection and NNM's neighbours all have something to decide).
static float *
s_inputs (size_t k, size_t d, uint64_t seed, const float **in)
{
    float *x = malloc (k * d * sizeof *x);
    assert_non_null (x);
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 1);
    gc_rng_fill_normal (&rng, x, d, 0.0f, 1.0f);
    for (size_t i = 0; i < k; i++) {
        float *row = x + i * d;
        for (size_t j = 0; j < d; j++)
            row [j] = x [j] + (i < 2 ? 3.0f : 0.05f) * (float) gc_rng_normal (&rng);
        in [i] = row;
    }
    return x;
}

static void
test_levels_bit_identical (void **state)
{
    gc_cpu_level_t top = gc_cpu_detected (), start = gc_cpu_level ();
    size_t compared = 0;
    for (size_t s = 0; s < S_NSHAPES; s++) {
        size_t k = s_shapes [s].k, d = s_shapes [s].d;
        const float *in [32];
        float *x = s_inputs (k, d, 7 + s, in);
        double *w = malloc (k * sizeof *w);
        for (size_t i = 0; i < k; i++)
            w [i] = 1.0 + (double) (i % 3);
        float *ref = malloc (S_NSPECS * d * sizeof *ref), *out = malloc (d * sizeof *out);
        for (int level = GC_CPU_GENERIC; level <= (int) top; level++) {
            assert_int_equal (gc_cpu_set_level ((gc_cpu_level_t) level), 0);
            assert_int_equal (gc_cpu_level (), level);
            for (size_t r = 0; r < S_NSPECS; r++) {
                gc_robust_t *rule = gc_robust_new (s_specs [r], NULL);
                assert_non_null (rule);
                if (k < gc_robust_min_inputs (rule)) {
                    gc_robust_destroy (&rule);
                    continue;
                }
                float *dst = level == GC_CPU_GENERIC ? ref + r * d : out;
                gc_err_t err;
                //  guard keeps state: compare after a few calls (own step,
                //  histories past their first update)
                int calls = strncmp (s_specs [r], "guard", 5) ? 1 : 5;
                for (int c = 0; c < calls; c++)
                    if (gc_robust_aggregate (rule, in, w, k, d, 0, dst, &err))
                        fail_msg ("%s k %zu: %s", s_specs [r], k, err.msg);
                if (level != GC_CPU_GENERIC && memcmp (out, ref + r * d, d * sizeof *out)) {
                    size_t j = 0;
                    while (!memcmp (out + j, ref + r * d + j, sizeof *out))
                        j++;
                    fail_msg ("%s k %zu d %zu: %s differs from generic at %zu (%.9g vs %.9g)",
                              s_specs [r], k, d, gc_cpu_name ((gc_cpu_level_t) level), j,
                              (double) out [j], (double) ref [r * d + j]);
                }
                compared += level != GC_CPU_GENERIC;
                gc_robust_destroy (&rule);
            }
        }
        free (ref);
        free (out);
        free (w);
        free (x);
    }
    printf ("levels generic .. %s: %zu aggregations compared with generic\n",
            gc_cpu_name (top), compared);
    //  On a CPU with only the generic level nothing is compared: that is
    //  not a pass of this test.
    if (top == GC_CPU_GENERIC)
        skip ();
    assert_true (compared > 0);
    assert_int_equal (gc_cpu_set_level (start), 0);
}

//  The Gram pass forms a block straight from the inputs when its diagonal
//  shows no row needing scaling, and packs (scales) it otherwise, which the
//  generic level always does: rows that need scaling in some blocks only
//  (a huge deviation, a tiny one, one equal to the centre but not it, one
//  whose squares overflow float) must give the generic level's distances
//  byte for byte, with the centre given as an input and as a copy of it;
//  a NaN in one block is reported at every level.
static void
test_levels_distances_scaled_blocks (void **state)
{
    (void) state;
    gc_cpu_level_t top = gc_cpu_detected (), start = gc_cpu_level ();
    static const struct {
        size_t k, d;
    } shapes [] = { { 16, 5 * 4096 + 16 }, { 16, 5 * 4000 + 8 }, { 9, 2 * 4096 + 1808 } };
    size_t compared = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes [0]; s++) {
        //  gb: the Gram block of gc_robust_dist.c's s_gblock (2^20 / k^2
        //  coordinates, at most 4096), 4096 for both k.
        size_t k = shapes [s].k, d = shapes [s].d, gb = 4096;
        const float *in [16];
        float *x = s_inputs (k, d, 11 + s, in), *copy = malloc (d * sizeof *copy);
        for (size_t j = gb; j < 2 * gb && j < d; j++)
            x [3 * d + j] = x [j] + 0x1p45f * (x [3 * d + j] - x [j]);
        //  The first block taken relative to row 2, the centre (an input,
        //  then a copy of it), and rows 6 and 7 tiny there (subnormal
        //  products unless scaled) and equal elsewhere: their distance is
        //  the first block's alone.
        for (size_t j = 0; j < d; j++)
            x [7 * d + j] = j < gb ? x [7 * d + j] : x [6 * d + j];
        for (size_t i = 0; i < k; i++)
            for (size_t j = 0; i != 2 && j < gb; j++)
                x [i * d + j] = (i == 6 || i == 7 ? 0x1p-68f : 1.0f)
                              * (x [i * d + j] - x [2 * d + j]);
        memset (x + 2 * d, 0, gb * sizeof *x);
        for (size_t j = 2 * gb; j < 3 * gb && j < d; j++)
            x [(k - 1) * d + j] = x [2 * d + j];
        x [4 * d + d - 3] = 0x1p70f;
        memcpy (copy, x + 2 * d, d * sizeof *copy);
        double ref [2][16 * 16], dist [16 * 16];
        for (int level = GC_CPU_GENERIC; level <= (int) top; level++) {
            assert_int_equal (gc_cpu_set_level ((gc_cpu_level_t) level), 0);
            for (int c = 0; c < 2; c++) {
                gc_robust_ws_t ws = { 0 };
                assert_int_equal (gc_robust_ws_reserve_k (&ws, k), 0);
                int passes = 0;
                double *dst = level == GC_CPU_GENERIC ? ref [c] : dist;
                assert_int_equal (gc_robust_distances (&ws, in, k, d, c ? copy : in [2], dst,
                                                       &passes), 0);
                for (size_t i = 0; i < k * k; i++)
                    assert_true (isfinite (dst [i]));
                assert_true (dst [6 * k + 7] > 0 && dst [6 * k + 7] < 0x1p-120);
                if (level != GC_CPU_GENERIC && memcmp (dist, ref [c], k * k * sizeof *dist))
                    fail_msg ("k %zu d %zu centre %d: %s distances differ from generic",
                              k, d, c, gc_cpu_name ((gc_cpu_level_t) level));
                compared += level != GC_CPU_GENERIC;
                //  A NaN in the third block, past the rows that scale.
                float keep = x [5 * d + 2 * gb + 7];
                x [5 * d + 2 * gb + 7] = NAN;
                assert_int_equal (gc_robust_distances (&ws, in, k, d, in [2], dist, &passes), 1);
                x [5 * d + 2 * gb + 7] = keep;
                gc_robust_ws_free (&ws);
            }
        }
        free (copy);
        free (x);
    }
    if (top == GC_CPU_GENERIC)
        skip ();
    assert_true (compared > 0);
    assert_int_equal (gc_cpu_set_level (start), 0);
}

static void
test_level_names_and_limits (void **state)
{
    for (int level = 0; level < GC_CPU_N_LEVELS; level++)
        assert_int_equal (gc_cpu_parse (gc_cpu_name ((gc_cpu_level_t) level)), level);
    assert_int_equal (gc_cpu_parse ("avx"), -1);
    assert_int_equal (gc_cpu_parse (""), -1);
    assert_int_equal (gc_cpu_parse (NULL), -1);
    //  A level above what the CPU has is refused, the current one kept.
    gc_cpu_level_t now = gc_cpu_level ();
    if (gc_cpu_detected () < GC_CPU_AVX512) {
        assert_int_equal (gc_cpu_set_level (GC_CPU_AVX512), -1);
        assert_int_equal (gc_cpu_level (), now);
    }
    assert_int_equal (gc_cpu_set_level (GC_CPU_N_LEVELS), -1);
    assert_int_equal (gc_cpu_level (), now);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_levels_bit_identical),
        cmocka_unit_test (test_levels_distances_scaled_blocks),
        cmocka_unit_test (test_level_names_and_limits),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
