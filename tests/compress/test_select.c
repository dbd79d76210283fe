/*  Top-k and threshold selection: exact equals a sort-based reference
    (ties to the lower index), sampled lands within 5 % of k and keeps the
    top-count entries, on several distributions, with and without SIMD. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_rng.h"
#include "gc_select.h"

typedef enum { D_GAUSS, D_HEAVY, D_EQUAL, D_QUANT, D_ZEROS, D_SPARSE, D_COUNT } dist_t;
static const char *s_dist_names [] = { "gauss", "heavy", "equal", "quantised", "zeros", "sparse" };

static void
s_fill (float *x, size_t m, dist_t d, uint64_t seed)
{
    gc_rng_t rng;
    gc_rng_init (&rng, seed, d);
    for (size_t i = 0; i < m; i++) {
        double g = gc_rng_normal (&rng);
        switch (d) {
            case D_GAUSS:  x [i] = (float) g; break;
            //  Pareto tail, alpha 1.2: a few huge values.
            case D_HEAVY:  x [i] = (float) ((g < 0 ? -1 : 1) * pow (1.0 - gc_rng_double (&rng), -1 / 1.2)); break;
            //  60 % exactly +-1, the rest small: the top 1 % are all ties.
            case D_EQUAL:  x [i] = gc_rng_double (&rng) < 0.6 ? (g < 0 ? -1.0f : 1.0f) : (float) (0.1 * g); break;
            //  Eight levels: the boundary falls inside a huge tie.
            case D_QUANT:  x [i] = (float) (round (g * 2.0) / 2.0); break;
            case D_ZEROS:  x [i] = 0.0f; break;
            case D_SPARSE: x [i] = gc_rng_double (&rng) < 0.05 ? (float) g : 0.0f; break;
            default: break;
        }
    }
}

static const float *s_sort_x;

static int
s_cmp_desc (const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *) a, j = *(const uint32_t *) b;
    float x = fabsf (s_sort_x [i]), y = fabsf (s_sort_x [j]);
    if (x != y)
        return x > y ? -1 : 1;
    return i < j ? -1 : 1;
}

static int
s_cmp_u32 (const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *) a, j = *(const uint32_t *) b;
    return i < j ? -1 : i > j;
}

//  The reference: sort by |x| descending, index ascending; first k, by index.
static uint32_t *
s_reference (const float *x, size_t m, size_t k)
{
    uint32_t *order = malloc (m * sizeof *order);
    for (size_t i = 0; i < m; i++)
        order [i] = (uint32_t) i;
    s_sort_x = x;
    qsort (order, m, sizeof *order, s_cmp_desc);
    qsort (order, k, sizeof *order, s_cmp_u32);
    return order;
}

//  O(m) check that sel holds the top-count entries under the tie rule:
//  ascending indices with their values, nothing unselected above the
//  smallest selected |x|, and ties at that value taken from the lowest
//  indices first.
static void
s_check_equals_reference (const gc_select_t *sel, const float *x, size_t m, size_t count)
{
    assert_int_equal (sel->count, count);
    if (count == 0)
        return;
    float tmin = INFINITY;
    for (size_t i = 0; i < count; i++) {
        assert_true (sel->idx [i] < m);
        if (i > 0)
            assert_true (sel->idx [i] > sel->idx [i - 1]);
        assert_memory_equal (&sel->val [i], &x [sel->idx [i]], sizeof (float));
        tmin = fminf (tmin, fabsf (sel->val [i]));
    }
    size_t j = 0;
    bool tie_skipped = false;
    for (size_t i = 0; i < m; i++) {
        bool selected = j < count && sel->idx [j] == i;
        j += selected;
        float a = fabsf (x [i]);
        if (!selected && a > tmin)
            fail_msg ("entry %zu (|x| = %g) left out, selected down to %g", i, (double) a, (double) tmin);
        if (!selected && a == tmin)
            tie_skipped = true;
        if (selected && a == tmin && tie_skipped)
            fail_msg ("tie at %g: entry %zu taken after a lower index was left out", (double) a, i);
    }
}

static void
test_exact_equals_reference (void **state)
{
    static const size_t sizes [] = { 1000, 140000 };
    static const double ratios [] = { 0.01, 0.1, 0.3 };
    gc_select_t *sel = gc_select_new ();
    for (int simd = 0; simd < 2; simd++) {
        gc_compress_simd = simd;
        for (size_t si = 0; si < 2; si++)
            for (int d = 0; d < D_COUNT; d++)
                for (size_t ri = 0; ri < 3; ri++) {
                    size_t m = sizes [si], k = (size_t) (ratios [ri] * m);
                    float *x = malloc (m * sizeof *x);
                    s_fill (x, m, d, 11 + si);
                    assert_int_equal (gc_select_topk (sel, x, m, k, true, 5, NULL), 0);
                    s_check_equals_reference (sel, x, m, k);
                    if (m <= 1000) {
                        //  And against a plain sort, which the checker above stands for.
                        uint32_t *ref = s_reference (x, m, k);
                        assert_memory_equal (sel->idx, ref, k * sizeof *ref);
                        free (ref);
                    }
                    free (x);
                }
    }
    gc_compress_simd = true;
    gc_select_destroy (&sel);
    assert_null (sel);
}

//  Which path the selection took, to be sure the tests reach each one.
static void
test_paths_are_reached (void **state)
{
    size_t mmax = 200000;
    float *x = malloc (mmax * sizeof *x);
    gc_select_t *sel = gc_select_new ();
    struct { dist_t d; size_t m, k; bool exact; int path; } cases [] = {
        { D_GAUSS, 200000, 2000, true, GC_SELECT_PATH_PRUNED },
        { D_GAUSS, 200000, 2000, false, GC_SELECT_PATH_PRUNED },
        { D_ZEROS, 200000, 2000, true, GC_SELECT_PATH_FALLBACK },
        { D_EQUAL, 200000, 2000, true, GC_SELECT_PATH_FALLBACK },
        { D_GAUSS, 200000, 50000, true, GC_SELECT_PATH_RADIX_BIN },
        { D_EQUAL, 130000, 1300, true, GC_SELECT_PATH_RADIX_LEVELS },
        { D_GAUSS, 200000, 200000, true, GC_SELECT_PATH_ALL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        s_fill (x, cases [i].m, cases [i].d, 3);
        assert_int_equal (gc_select_topk (sel, x, cases [i].m, cases [i].k, cases [i].exact, 1, NULL), 0);
        if (sel->path != cases [i].path)
            fail_msg ("case %zu (%s): path %d, expected %d", i, s_dist_names [cases [i].d],
                      sel->path, cases [i].path);
        s_check_equals_reference (sel, x, cases [i].m, cases [i].k);
    }
    free (x);
    gc_select_destroy (&sel);
}

static void
test_sampled_within_five_percent (void **state)
{
    size_t m = 300000;
    float *x = malloc (m * sizeof *x);
    gc_select_t *sel = gc_select_new ();
    static const double ratios [] = { 0.01, 0.001, 0.05 };
    for (int d = 0; d < D_COUNT; d++)
        for (size_t ri = 0; ri < 3; ri++)
            for (uint64_t round = 0; round < 4; round++) {
                size_t k = (size_t) (ratios [ri] * m);
                s_fill (x, m, d, 100 + round);
                assert_int_equal (gc_select_topk (sel, x, m, k, false, round, NULL), 0);
                if (sel->count * 20 < k * 19 || sel->count > k)
                    fail_msg ("%s ratio %g round %llu: %zu entries for k = %zu",
                              s_dist_names [d], ratios [ri], (unsigned long long) round,
                              sel->count, k);
                //  Whatever the count, it is the top-count set.
                s_check_equals_reference (sel, x, m, sel->count);
            }
    free (x);
    gc_select_destroy (&sel);
}

static void
test_ties_go_to_lower_indices (void **state)
{
    gc_select_t *sel = gc_select_new ();
    for (size_t m = 100; m <= 300000; m *= 3000) {
        float *x = malloc (m * sizeof *x);
        for (size_t i = 0; i < m; i++)
            x [i] = i % 2 ? -2.5f : 2.5f;
        x [m - 1] = 3.0f;           /* one strictly larger, at the end */
        size_t k = m / 100;
        for (int exact = 0; exact < 2; exact++) {
            assert_int_equal (gc_select_topk (sel, x, m, k, exact, 9, NULL), 0);
            assert_int_equal (sel->count, k);
            for (size_t i = 0; i + 1 < k; i++)
                assert_int_equal (sel->idx [i], i);
            assert_int_equal (sel->idx [k - 1], m - 1);
        }
        free (x);
    }
    gc_select_destroy (&sel);
}

static void
test_threshold_selects_strictly_greater (void **state)
{
    size_t m = 50000;
    float *x = malloc (m * sizeof *x);
    s_fill (x, m, D_QUANT, 4);
    gc_select_t *sel = gc_select_new ();
    static const float taus [] = { 0.0f, 0.5f, 1.0f, 1.7f, 100.0f };
    for (int simd = 0; simd < 2; simd++) {
        gc_compress_simd = simd;
        for (size_t t = 0; t < 5; t++) {
            assert_int_equal (gc_select_threshold (sel, x, m, taus [t], NULL), 0);
            size_t j = 0;
            for (size_t i = 0; i < m; i++)
                if (fabsf (x [i]) > taus [t]) {
                    assert_true (j < sel->count);
                    assert_int_equal (sel->idx [j], i);
                    j++;
                }
            assert_int_equal (j, sel->count);
        }
    }
    gc_compress_simd = true;
    gc_err_t err;
    assert_int_equal (gc_select_threshold (sel, x, m, -1.0f, &err), -1);
    assert_int_equal (err.code, GC_E_INPUT);
    free (x);
    gc_select_destroy (&sel);
}

static void
test_nonfinite_input_is_refused (void **state)
{
    size_t m = 200000;
    float *x = malloc (m * sizeof *x);
    s_fill (x, m, D_GAUSS, 8);
    gc_select_t *sel = gc_select_new ();
    static const size_t where [] = { 0, 777, 199999 };
    static const float bad [] = { NAN, INFINITY, -INFINITY };
    for (int simd = 0; simd < 2; simd++) {
        gc_compress_simd = simd;
        for (size_t w = 0; w < 3; w++)
            for (size_t b = 0; b < 3; b++)
                for (int exact = 0; exact < 2; exact++)
                    for (size_t mm = 1000; mm <= m; mm += m - 1000) {
                        size_t pos = where [w] < mm ? where [w] : mm - 1;
                        float saved = x [pos];
                        x [pos] = bad [b];
                        gc_err_t err;
                        assert_int_equal (gc_select_topk (sel, x, mm, mm / 100, exact, 1, &err), -1);
                        assert_int_equal (err.code, GC_E_NONFINITE);
                        assert_int_equal (gc_select_threshold (sel, x, mm, 0.5f, &err), -1);
                        x [pos] = saved;
                    }
    }
    gc_compress_simd = true;
    free (x);
    gc_select_destroy (&sel);
}

static void
test_kth_key_matches_sort (void **state)
{
    size_t m = 5000;
    float *x = malloc (m * sizeof *x);
    for (int d = 0; d < D_COUNT; d++) {
        s_fill (x, m, d, 21);
        uint32_t *ref = malloc (m * sizeof *ref);
        for (size_t i = 0; i < m; i++)
            ref [i] = (uint32_t) i;
        s_sort_x = x;
        qsort (ref, m, sizeof *ref, s_cmp_desc);
        for (size_t k = 1; k <= m; k += 499) {
            size_t above;
            uint32_t key = gc_select_kth_key (x, m, k, &above);
            float kth = fabsf (x [ref [k - 1]]);
            uint32_t want;
            memcpy (&want, &kth, 4);
            assert_int_equal (key, want);
            size_t gt = 0;
            for (size_t i = 0; i < m; i++)
                gt += fabsf (x [i]) > kth;
            assert_int_equal (above, gt);
        }
        free (ref);
    }
    free (x);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_exact_equals_reference),
        cmocka_unit_test (test_paths_are_reached),
        cmocka_unit_test (test_sampled_within_five_percent),
        cmocka_unit_test (test_ties_go_to_lower_indices),
        cmocka_unit_test (test_threshold_selects_strictly_greater),
        cmocka_unit_test (test_nonfinite_input_is_refused),
        cmocka_unit_test (test_kth_key_matches_sort),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
