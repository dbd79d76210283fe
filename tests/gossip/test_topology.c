/*  Topologies: degrees, symmetry, connectivity, mixing weights, bad specs. */
#include "gc_test.h"

#include <math.h>
#include <string.h>

#include "gc_topology.h"

static void
test_shapes (void **state)
{
    static const struct {
        const char *spec; uint32_t n; size_t in_deg; bool undirected;
    } cases [] = {
        { "ring", 8, 2, true },
        { "ring", 2, 1, true },             /* both sides are the same peer */
        { "torus", 16, 4, true },           /* 4x4 */
        { "torus:2x4", 8, 3, true },        /* up and down coincide */
        { "complete", 5, 4, true },
        { "exponential", 16, 4, false },    /* hops 1, 2, 4, 8 */
        { "regular:3", 10, 3, true },
        { "regular:6", 16, 6, true },       /* the pairing fallback: rejection rarely */
        { "regular:8", 16, 8, true },       /* gives a simple graph at these degrees */
        { "regular:15", 16, 15, true },     /* complete */
        { "edges:0-1,1-2,2-0", 3, 2, true },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_err_t err = { 0 };
        gc_topology_t *t = gc_topology_new (cases [c].spec, cases [c].n, 7, &err);
        if (!t)
            fail_msg ("%s: %s", cases [c].spec, err.msg);
        assert_true (gc_topology_connected (t));
        if (gc_topology_undirected (t) != cases [c].undirected)
            fail_msg ("%s: undirected is %d", cases [c].spec, gc_topology_undirected (t));
        for (uint32_t i = 0; i < cases [c].n; i++) {
            const uint32_t *in;
            size_t deg = gc_topology_in (t, i, &in);
            if (deg != cases [c].in_deg)
                fail_msg ("%s: peer %u has in-degree %zu, wanted %zu", cases [c].spec, i, deg,
                          cases [c].in_deg);
            double total = gc_topology_weight (t, i, i);
            for (size_t k = 0; k < deg; k++) {
                assert_true (in [k] != i);
                for (size_t l = 0; l < k; l++)
                    if (in [l] == in [k])
                        fail_msg ("%s: peer %u hears %u twice", cases [c].spec, i, in [k]);
                assert_true (gc_topology_has_edge (t, in [k], i));
                total += gc_topology_weight (t, i, in [k]);
                if (cases [c].undirected)       /* Metropolis-Hastings: symmetric */
                    assert_true (fabs (gc_topology_weight (t, i, in [k])
                                       - gc_topology_weight (t, in [k], i)) < 1e-12);
            }
            assert_true (fabs (total - 1.0) < 1e-12);
            assert_true (gc_topology_weight (t, i, i) > 0);
        }
        gc_topology_destroy (&t);
        assert_null (t);
    }
}

static void
test_regular_is_reproducible (void **state)
{
    gc_topology_t *a = gc_topology_new ("regular:4", 20, 11, NULL);
    gc_topology_t *b = gc_topology_new ("regular:4", 20, 11, NULL);
    gc_topology_t *c = gc_topology_new ("regular:4", 20, 12, NULL);
    int differ = 0;
    for (uint32_t i = 0; i < 20; i++) {
        const uint32_t *la, *lb, *lc;
        assert_int_equal (gc_topology_out (a, i, &la), 4);
        gc_topology_out (b, i, &lb);
        gc_topology_out (c, i, &lc);
        assert_memory_equal (la, lb, 4 * sizeof (uint32_t));
        differ += memcmp (la, lc, 4 * sizeof (uint32_t)) != 0;
    }
    assert_true (differ > 0);
    gc_topology_destroy (&a);
    gc_topology_destroy (&b);
    gc_topology_destroy (&c);
}

static void
test_bad_specs (void **state)
{
    static const struct { const char *spec; uint32_t n; const char *needle; } cases [] = {
        { "star", 4, "expected ring" },
        { "torus:3x3", 8, "9 places but there are 8" },
        { "torus:3", 9, "expected torus:RxC" },
        { "regular:3", 5, "n*D even" },
        { "regular:x", 5, "not an integer" },
        { "edges:0-1,1-9", 4, "outside" },
        { "edges:0+1", 4, "bad edge" },
        { "ring", 0, "outside" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_err_t err = { 0 };
        assert_null (gc_topology_new (cases [c].spec, cases [c].n, 1, &err));
        if (!strstr (err.msg, cases [c].needle))
            fail_msg ("%s: '%s' lacks '%s'", cases [c].spec, err.msg, cases [c].needle);
    }
    gc_topology_t *t = gc_topology_new ("edges:0-1,2-3", 4, 1, NULL);
    assert_non_null (t);
    assert_false (gc_topology_connected (t));
    gc_topology_destroy (&t);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_shapes),
        cmocka_unit_test (test_regular_is_reproducible),
        cmocka_unit_test (test_bad_specs),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
