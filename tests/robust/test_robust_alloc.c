/*  gc_robust_aggregate does not allocate once its workspace has grown: the
    library is linked with malloc, calloc, realloc and aligned_alloc wrapped
    (-Wl,--wrap=...), and the wrappers count calls while aggregating. */
#include "gc_test.h"

#include <stdlib.h>

#include "gc_rng.h"
#include "gc_robust.h"

void *__real_malloc (size_t n);
void *__real_calloc (size_t n, size_t size);
void *__real_realloc (void *p, size_t n);
void *__real_aligned_alloc (size_t align, size_t n);

static int s_counting, s_allocs;

void *
__wrap_malloc (size_t n)
{
    s_allocs += s_counting;
    return __real_malloc (n);
}

void *
__wrap_calloc (size_t n, size_t size)
{
    s_allocs += s_counting;
    return __real_calloc (n, size);
}

void *
__wrap_realloc (void *p, size_t n)
{
    s_allocs += s_counting;
    return __real_realloc (p, n);
}

void *
__wrap_aligned_alloc (size_t align, size_t n)
{
    s_allocs += s_counting;
    return __real_aligned_alloc (align, n);
}

static void
test_no_allocation_in_steady_state (void **state)
{
    static const char *rules [] = { "mean", "cwmed", "cwtm:1", "cwtm:3", "krum:2", "mkrum:2:5",
                                    "bulyan:2", "gm", "cclip", "scclip", "nnm+cwtm:2",
                                    "bucket:2+cwmed", "bucket:2+nnm:1+krum:1", NULL };
    //  Shapes in the order a round engine may see them as neighbours come
    //  and go; k = 150 takes the tile paths and sorts beyond 1 KB.
    static const size_t shapes [][2] = { { 150, 300 }, { 16, 3000 }, { 11, 3000 }, { 33, 500 }, { 16, 3000 } };
    size_t k_max = 150, d_max = 3000;
    float *buf = malloc (k_max * d_max * sizeof *buf), *out = malloc (d_max * sizeof *out);
    const float **in = malloc (k_max * sizeof *in);
    gc_rng_t rng;
    gc_rng_init (&rng, 40, 0);
    gc_rng_fill_normal (&rng, buf, k_max * d_max, 0.0f, 1.0f);
    for (size_t i = 0; i < k_max; i++)
        in [i] = buf + i * d_max;
    for (size_t r = 0; rules [r]; r++) {
        gc_robust_t *rule = gc_robust_new (rules [r], NULL);
        assert_non_null (rule);
        //  Grow: the largest k and the largest d once each.
        assert_int_equal (gc_robust_aggregate (rule, in, NULL, 150, 300, 0, out, NULL), 0);
        assert_int_equal (gc_robust_aggregate (rule, in, NULL, 33, d_max, 0, out, NULL), 0);
        s_allocs = 0;
        s_counting = 1;
        for (int rep = 0; rep < 2; rep++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes [0]; s++)
                assert_int_equal (gc_robust_aggregate (rule, in, NULL, shapes [s][0], shapes [s][1],
                                                       0, out, NULL), 0);
        s_counting = 0;
        if (s_allocs)
            fail_msg ("%s: %d allocations after the workspace had grown", rules [r], s_allocs);
        gc_robust_destroy (&rule);
    }
    free (buf);
    free (out);
    free (in);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_no_allocation_in_steady_state),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
