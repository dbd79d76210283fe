/*  Too few inputs for a rule: gc_robust_new_fallback gives the same stages
    with f lowered to what k inputs support, or nothing when no variant of
    the rule works with k; the fallback aggregates like the rule it names. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_robust.h"

static void
test_fallback_table (void **state)
{
    static const struct {
        const char *spec;
        size_t      k;
        const char *want;           /* NULL: none */
    } cases [] = {
        { "cwtm:1", 2, "cwtm:0" },                  /* the ring with one neighbour down */
        { "cwtm:2", 4, "cwtm:1" },
        { "cwtm:2", 3, "cwtm:1" },
        { "cwtm:2", 2, "cwtm:0" },
        { "cwtm:1", 3, NULL },                      /* not too few */
        { "cwtm:0", 1, NULL },                      /* nothing weaker */
        { "krum:1", 4, "krum:0" },
        { "krum:2", 6, "krum:1" },
        { "krum:1", 2, NULL },                      /* krum needs 3 */
        { "mkrum:1:3", 4, "mkrum:0:3" },
        { "mkrum:1:4", 4, "mkrum:0:4" },
        { "mkrum:2:4", 5, "mkrum:1:4" },            /* need max(2f+3, f+m) = 5 */
        { "mkrum:1:5", 4, "mkrum:0:4" },            /* M cut to k - f */
        { "bulyan:1", 6, "bulyan:0" },
        { "bulyan:2", 8, "bulyan:1" },
        { "nnm+cwtm:1", 2, "nnm:0+cwtm:0" },        /* nnm's F follows the rule's f */
        { "nnm:1+cwtm:2", 4, "nnm:1+cwtm:1" },
        { "nnm:2+cwtm:2", 4, "nnm:1+cwtm:1" },
        { "bucket:2+cwtm:1", 4, "bucket:2+cwtm:0" },
        { "cwmed", 1, NULL },                       /* rules without f never lack inputs */
        { "mean", 1, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_err_t err = { 0 };
        gc_robust_t *rule = gc_robust_new (cases [i].spec, &err);
        if (!rule)
            fail_msg ("%s: %s", cases [i].spec, err.msg);
        gc_robust_t *weak = gc_robust_new_fallback (rule, cases [i].k, &err);
        if (!cases [i].want) {
            if (weak)
                fail_msg ("%s with %zu inputs: got %s, expected none", cases [i].spec, cases [i].k,
                          gc_robust_name (weak));
            assert_int_equal (err.code, GC_E_INPUT);
        }
        else {
            if (!weak)
                fail_msg ("%s with %zu inputs: none (%s), expected %s", cases [i].spec, cases [i].k, err.msg,
                          cases [i].want);
            assert_string_equal (gc_robust_name (weak), cases [i].want);
            assert_true (gc_robust_min_inputs (weak) <= cases [i].k);
            //  the weakest that fits: one more f would not
            gc_robust_t *named = gc_robust_new (cases [i].want, NULL);
            assert_non_null (named);
            assert_int_equal (gc_robust_min_inputs (named), gc_robust_min_inputs (weak));
            gc_robust_destroy (&named);
        }
        gc_robust_destroy (&weak);
        gc_robust_destroy (&rule);
    }
}

//  The fallback computes what its name says: cwtm:0 of own and one
//  neighbour is their mean, bit for bit the rule parsed from the name.
static void
test_fallback_aggregates_as_named (void **state)
{
    enum { D = 37 };
    float a [D], b [D], c [D], got [D], want [D];
    for (int i = 0; i < D; i++) {
        a [i] = (float) sin (i);
        b [i] = (float) cos (3 * i);
        c [i] = 100.0f + (float) i;
    }
    static const struct { const char *spec; size_t k; } cases [] = {
        { "cwtm:1", 2 }, { "nnm+cwtm:1", 2 }, { "krum:1", 3 }, { "cwtm:2", 3 },
    };
    for (size_t n = 0; n < sizeof cases / sizeof cases [0]; n++) {
        const float *in [3] = { a, b, c };
        gc_robust_t *rule = gc_robust_new (cases [n].spec, NULL);
        gc_robust_t *weak = gc_robust_new_fallback (rule, cases [n].k, NULL);
        assert_non_null (weak);
        gc_robust_t *named = gc_robust_new (gc_robust_name (weak), NULL);
        gc_err_t err = { 0 };
        //  the configured rule refuses these inputs
        assert_int_equal (gc_robust_aggregate (rule, in, NULL, cases [n].k, D, 0, got, &err), -1);
        assert_int_equal (err.code, GC_E_INPUT);
        assert_int_equal (gc_robust_aggregate (weak, in, NULL, cases [n].k, D, 0, got, &err), 0);
        assert_int_equal (gc_robust_aggregate (named, in, NULL, cases [n].k, D, 0, want, &err), 0);
        assert_memory_equal (got, want, sizeof got);
        if (!strcmp (cases [n].spec, "cwtm:1"))
            for (int i = 0; i < D; i++)
                assert_true (fabsf (got [i] - 0.5f * (a [i] + b [i])) < 1e-6f);
        gc_robust_destroy (&named);
        gc_robust_destroy (&weak);
        gc_robust_destroy (&rule);
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_fallback_table),
        cmocka_unit_test (test_fallback_aggregates_as_named),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
