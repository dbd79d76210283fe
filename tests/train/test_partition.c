/*  Partition invariants: every sample goes to exactly one peer; iid is
    balanced; Dirichlet skew shows in label histograms and shrinks as alpha
    grows; shards give few labels per peer; same seed, same split. */
#include "gc_test.h"

#include <stdlib.h>
#include <string.h>

#include "gc_partition.h"
#include "gc_rng.h"

#define S_N       6000
#define S_CLASSES 10

static uint8_t s_labels [S_N];

static int
s_setup (void **state)
{
    gc_rng_t rng;
    gc_rng_init (&rng, 9, 0);
    for (size_t i = 0; i < S_N; i++)
        s_labels [i] = (uint8_t) gc_rng_below (&rng, S_CLASSES);
    return 0;
}

//  Histogram hist[peer][class] from the per-peer index lists; checks that
//  the lists are disjoint and cover every sample.
static void
s_histograms (const gc_split_t *split, uint32_t peers, uint64_t seed, size_t hist [][S_CLASSES])
{
    static uint8_t seen [S_N];
    memset (seen, 0, sizeof seen);
    for (uint32_t p = 0; p < peers; p++) {
        uint32_t *idx;
        size_t count;
        gc_err_t err = { 0 };
        assert_int_equal (gc_partition_peer (s_labels, S_N, S_CLASSES, split, peers, seed, p,
                                             &idx, &count, &err), 0);
        memset (hist [p], 0, sizeof hist [p]);
        for (size_t i = 0; i < count; i++) {
            assert_true (idx [i] < S_N);
            assert_int_equal (seen [idx [i]], 0);
            seen [idx [i]] = 1;
            hist [p][s_labels [idx [i]]]++;
        }
        free (idx);
    }
    for (size_t i = 0; i < S_N; i++)
        assert_int_equal (seen [i], 1);
}

//  Mean over peers of the share of the peer's most common label.
static double
s_mean_top_share (size_t hist [][S_CLASSES], uint32_t peers)
{
    double total = 0;
    for (uint32_t p = 0; p < peers; p++) {
        size_t sum = 0, top = 0;
        for (int c = 0; c < S_CLASSES; c++) {
            sum += hist [p][c];
            top = hist [p][c] > top ? hist [p][c] : top;
        }
        total += sum ? (double) top / (double) sum : 0;
    }
    return total / peers;
}

static void
test_iid_is_balanced (void **state)
{
    size_t hist [16][S_CLASSES];
    gc_split_t split;
    assert_int_equal (gc_split_parse ("iid", &split, NULL), 0);
    s_histograms (&split, 16, 1, hist);
    for (uint32_t p = 0; p < 16; p++) {
        size_t sum = 0;
        for (int c = 0; c < S_CLASSES; c++)
            sum += hist [p][c];
        assert_true (sum == S_N / 16 || sum == S_N / 16 + 1);
    }
    //  375 samples per peer: the top class share of a uniform draw is ~0.13
    assert_true (s_mean_top_share (hist, 16) < 0.2);
}

static void
test_dirichlet_skew_follows_alpha (void **state)
{
    static const struct { const char *spec; double lo, hi; } cases [] = {
        { "dirichlet:0.1", 0.45, 1.01 },    /* a few dominant classes per peer */
        { "dirichlet:0.5", 0.2, 0.8 },
        { "dirichlet:100", 0.0, 0.2 },      /* close to iid (uniform: ~0.12) */
    };
    double previous = 2;
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        size_t hist [8][S_CLASSES];
        gc_split_t split;
        assert_int_equal (gc_split_parse (cases [i].spec, &split, NULL), 0);
        s_histograms (&split, 8, 3, hist);
        double share = s_mean_top_share (hist, 8);
        if (share < cases [i].lo || share > cases [i].hi)
            fail_msg ("%s: mean top-class share %.3f outside [%.2f, %.2f]",
                      cases [i].spec, share, cases [i].lo, cases [i].hi);
        print_message ("%s: mean top-class share %.3f\n", cases [i].spec, share);
        assert_true (share < previous);     /* skew shrinks as alpha grows */
        previous = share;
    }
}

static void
test_shards_limit_labels_per_peer (void **state)
{
    size_t hist [10][S_CLASSES];
    gc_split_t split;
    assert_int_equal (gc_split_parse ("shards:2", &split, NULL), 0);
    s_histograms (&split, 10, 4, hist);
    for (uint32_t p = 0; p < 10; p++) {
        int labels = 0;
        for (int c = 0; c < S_CLASSES; c++)
            labels += hist [p][c] > 0;
        //  two shards, each spanning at most two adjacent labels
        assert_true (labels >= 1 && labels <= 4);
    }
}

static void
test_same_seed_same_split (void **state)
{
    static uint32_t a [S_N], b [S_N], c [S_N];
    gc_split_t split;
    gc_split_parse ("dirichlet:0.5", &split, NULL);
    assert_int_equal (gc_partition_assign (s_labels, S_N, S_CLASSES, &split, 8, 11, a, NULL), 0);
    assert_int_equal (gc_partition_assign (s_labels, S_N, S_CLASSES, &split, 8, 11, b, NULL), 0);
    assert_int_equal (gc_partition_assign (s_labels, S_N, S_CLASSES, &split, 8, 12, c, NULL), 0);
    assert_memory_equal (a, b, sizeof a);
    assert_true (memcmp (a, c, sizeof a) != 0);
}

static void
test_bad_specs_and_arguments (void **state)
{
    static const struct { const char *spec; const char *needle; } cases [] = {
        { "iid:3", "expected iid" }, { "dirichlet", "expected" }, { "dirichlet:-1", "outside" },
        { "dirichlet:x", "not a number" }, { "shards:0", "outside" }, { "random", "expected" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_split_t split;
        gc_err_t err = { 0 };
        assert_int_equal (gc_split_parse (cases [i].spec, &split, &err), -1);
        assert_non_null (strstr (err.msg, cases [i].needle));
    }
    gc_split_t iid = { .kind = GC_SPLIT_IID };
    uint32_t *idx;
    size_t count;
    gc_err_t err = { 0 };
    assert_int_equal (gc_partition_peer (s_labels, S_N, S_CLASSES, &iid, 4, 1, 4, &idx, &count, &err), -1);
    assert_non_null (strstr (err.msg, "peer index 4"));
    assert_int_equal (gc_partition_peer (s_labels, 3, S_CLASSES, &iid, 4, 1, 0, &idx, &count, &err), -1);
    assert_non_null (strstr (err.msg, "cannot split"));
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_iid_is_balanced),
        cmocka_unit_test (test_dirichlet_skew_follows_alpha),
        cmocka_unit_test (test_shards_limit_labels_per_peer),
        cmocka_unit_test (test_same_seed_same_split),
        cmocka_unit_test (test_bad_specs_and_arguments),
    };
    return cmocka_run_group_tests (tests, s_setup, NULL);
}
