/*  Ratio policies: the registry (examples, canonical names, malformed
    specs), the decisions on synthetic norm sequences (lazy, accordion, settle,
    bandwidth), lgreco's allocation against brute force, and the
    composition with error compensation (a skip sends an empty payload and
    keeps everything in the residual; fixed changes no byte). */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_payload.h"
#include "gc_policy.h"
#include "gc_policy_method.h"
#include "gc_rng.h"

static void
s_layout (gc_layout_t *l)
{
    gc_layout_init (l);
    assert_int_equal (gc_layout_add_matrix (l, "fc1.w", 40, 25, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "fc1.b", 40, NULL), 0);
    assert_int_equal (gc_layout_add_matrix (l, "fc2.w", 10, 40, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "fc2.b", 10, NULL), 0);
}

//  Every entry: its example parses, its name parses back to itself, its
//  malformed spec fails with a message naming the spec.
static void
test_registry (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    gc_compressor_t *comp = gc_compressor_new ("topk:0.02", &layout, 1, NULL);
    assert_non_null (comp);
    for (size_t i = 0; gc_policy_methods [i]; i++) {
        const gc_policy_method_t *m = gc_policy_methods [i];
        gc_err_t err = { 0 };
        gc_policy_t *p = gc_policy_new (m->example, comp, &err);
        if (!p)
            fail_msg ("%s: example '%s' refused: %s", m->name, m->example, err.msg);
        char name [160];
        snprintf (name, sizeof name, "%s", gc_policy_name (p));
        gc_policy_t *again = gc_policy_new (name, comp, &err);
        if (!again || strcmp (gc_policy_name (again), name))
            fail_msg ("%s: canonical '%s' does not parse back to itself", m->name, name);
        gc_policy_destroy (&again);
        gc_policy_destroy (&p);
        assert_null (p);
        assert_null (gc_policy_new (m->malformed, comp, &err));
        assert_int_equal (err.code, GC_E_SPEC);
        if (!strstr (err.msg, m->malformed))
            fail_msg ("%s: error '%s' does not name '%s'", m->name, err.msg, m->malformed);
    }
    gc_err_t err = { 0 };
    assert_null (gc_policy_new ("greedy", comp, &err));
    assert_non_null (strstr (err.msg, "known: fixed"));
    gc_compressor_destroy (&comp);
}

//  Which methods each policy can budget.
static void
test_policy_needs_its_method (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    static const struct { const char *comp, *policy; bool ok; } cases [] = {
        { "sign", "fixed", true }, { "sign", "lazy", true }, { "sign", "accordion", false },
        { "qsgd", "bandwidth", false }, { "randk:0.1", "accordion", true },
        { "randk:0.1", "lgreco", false }, { "lbs:topk:0.1", "bandwidth", true },
        { "topk:0.1:layer", "lgreco", true }, { "none", "lgreco", false },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_compressor_t *comp = gc_compressor_new (cases [c].comp, &layout, 1, NULL);
        gc_err_t err = { 0 };
        gc_policy_t *p = gc_policy_new (cases [c].policy, comp, &err);
        if ((p != NULL) != cases [c].ok)
            fail_msg ("%s over %s: %s", cases [c].policy, cases [c].comp, p ? "accepted" : err.msg);
        if (!p)
            assert_int_equal (err.code, GC_E_SPEC);
        gc_policy_destroy (&p);
        gc_compressor_destroy (&comp);
    }
}

//  A run of the policy on updates of the given norms (all entries equal).
typedef struct {
    const char *policy;
    double      compute_s, rate;
    size_t      rounds;
    double      norm [24];
    const char *want;       /* per round: 's' skip, else the budget class */
} s_seq_t;

static char
s_class (double budget, double base)
{
    if (budget == 0)
        return 's';
    if (fabs (budget - base) < 1e-12)
        return 'b';
    return budget > base ? 'H' : 'L';
}

static void
test_decisions (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    static const s_seq_t cases [] = {
        //  no skip before a full window; a small update after it is skipped
        { "lazy:window=3:K=2", 0, 0, 6, { 1, 1, 1, 0.1, 1, 1 }, "bbbsbb" },
        //  never more than K skips in a row, however small the updates
        { "lazy:window=2:K=2:theta=2", 0, 0, 10, { 1, 1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01 },
          "bbssbssbss" },
        //  theta: only updates below theta x the mean square are skipped
        { "lazy:window=2:K=5:theta=0.5", 0, 0, 5, { 1, 1, 0.8, 0.6, 0.52 }, "bbbsb" },
        //  critical for the first two windows, calm while the norm is steady,
        //  critical again after a jump of more than eta
        { "accordion:window=2:eta=0.5", 0, 0, 12, { 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3 },
          "HHHHLLLLLLHH" },
        //  a fall by eta counts too
        { "accordion:window=2:eta=0.5", 0, 0, 10, { 4, 4, 4, 4, 4, 4, 1, 1, 1, 1 }, "HHHHLLLLHH" },
        //  no link rate: the base ratio; a fast link: max; a thin one: min
        { "bandwidth", 0.01, 0, 2, { 1, 1 }, "bb" },
        { "bandwidth:rate=1e9", 0.01, 0, 2, { 1, 1 }, "HH" },
        { "bandwidth:rate=10", 0.01, 0, 2, { 1, 1 }, "LL" },
        { "bandwidth", 0.01, 10, 2, { 1, 1 }, "LL" },
        { "fixed", 0.01, 10, 3, { 1, 0, 5 }, "bbb" },
        //  settle (lo R/4, hi 4R, power 2): lo for the first windows, then
        //  lo (first |u| / window's)^2: R at half the first norm, 4R at a quarter
        { "settle:window=2", 0, 0, 10, { 4, 4, 4, 4, 2, 2, 1, 1, 1, 1 }, "LLLLLLbbHH" },
        //  a growing norm keeps lo; a fall past 4R is capped there
        { "settle:window=2", 0, 0, 6, { 1, 1, 2, 2, 4, 4 }, "LLLLLL" },
        { "settle:window=2", 0, 0, 6, { 8, 8, 1, 1, 1, 1 }, "LLLLHH" },
        //  a window of zero updates (a stopped peer) keeps the ratio it had
        { "settle:window=2", 0, 0, 8, { 4, 4, 2, 2, 0, 0, 0, 0 }, "LLLLbbbb" },
        { "settle:window=2:power=1:hi=0.1", 0, 0, 6, { 4, 4, 1, 1, 1, 1 }, "LLLLbb" },
        //  phase: its ratio in rounds [from, to) whatever the norms, the base outside
        { "phase:from=2:to=4", 0, 0, 6, { 1, 1, 1, 1, 1, 1 }, "bbHHbb" },
        { "phase:from=0:to=3:ratio=0.01", 0, 0, 5, { 9, 0, 1, 1, 1 }, "LLLbb" },
        { "phase:from=1:to=1:ratio=1", 0, 0, 3, { 1, 1, 1 }, "bbb" },
    };
    float *u = malloc (n * sizeof *u);
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        const s_seq_t *sq = &cases [c];
        gc_compressor_t *comp = gc_compressor_new ("topk:0.05", &layout, 1, NULL);
        gc_err_t err = { 0 };
        gc_policy_t *p = gc_policy_new (sq->policy, comp, &err);
        if (!p)
            fail_msg ("%s: %s", sq->policy, err.msg);
        gc_policy_set_env (p, sq->compute_s, sq->rate);
        char got [32] = { 0 };
        for (size_t t = 0; t < sq->rounds; t++) {
            for (size_t i = 0; i < n; i++)
                u [i] = (float) (sq->norm [t] / sqrt ((double) n));
            bool skip = true;
            assert_int_equal (gc_policy_decide (p, u, u, t, &skip, &err), 0);
            if (skip != (gc_policy_budget (p) == 0))
                fail_msg ("%s round %zu: skip %d, budget %g", sq->policy, t, skip, gc_policy_budget (p));
            got [t] = s_class (gc_policy_budget (p), 0.05);
        }
        if (strcmp (got, sq->want))
            fail_msg ("%s: decisions %s, want %s", sq->policy, got, sq->want);
        gc_policy_destroy (&p);
        gc_compressor_destroy (&comp);
    }
    free (u);
}

//  The bandwidth policy's budget is the rate's: frac x compute x rate bytes
//  at the measured bytes per entry, the compute time a median over rounds.
static void
test_bandwidth_follows_the_rate (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_compressor_t *comp = gc_compressor_new ("topk:0.05", &layout, 1, NULL);
    gc_policy_t *p = gc_policy_new ("bandwidth:frac=0.5:min=0.001:max=1", comp, NULL);
    assert_non_null (p);
    float *u = calloc (n, sizeof *u);
    bool skip;
    static const double rates [] = { 2000, 8000, 32000 };
    for (size_t r = 0; r < 3; r++) {
        gc_policy_set_env (p, 0.1, rates [r]);
        assert_int_equal (gc_policy_decide (p, u, u, r, &skip, NULL), 0);
        //  before any payload: 6 bytes an entry
        double want = 0.5 * 0.1 * rates [r] / 6.0 / (double) n;
        if (fabs (gc_policy_budget (p) - want) > 1e-12)
            fail_msg ("rate %g: budget %g, want %g", rates [r], gc_policy_budget (p), want);
    }
    //  a measured payload of 1000 bytes for the last k entries: that rate
    size_t k = (size_t) floor (gc_policy_budget (p) * (double) n + 0.5);
    gc_policy_note_sent (p, 1000);
    assert_int_equal (gc_policy_decide (p, u, u, 3, &skip, NULL), 0);
    double want = 0.5 * 0.1 * 32000 / (1000.0 / (double) k) / (double) n;
    assert_true (fabs (gc_policy_budget (p) - want) < 1e-12);
    gc_policy_destroy (&p);
    //  the compute time is the median of the last 9 rounds': one slow round
    //  moves nothing, a lasting change moves it once it holds 5 of them
    p = gc_policy_new ("bandwidth:frac=0.5:min=0.001:max=1:rate=32000", comp, NULL);
    static const double times [] = { 0.1, 0.1, 0.1, 0.1, 3.0, 0.1, 0.1, 0.2, 0.2, 0.2, 0.2, 0.2 };
    static const double median [] = { 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.2 };
    for (size_t t = 0; t < sizeof times / sizeof times [0]; t++) {
        gc_policy_set_env (p, times [t], 0);
        assert_int_equal (gc_policy_decide (p, u, u, t, &skip, NULL), 0);
        want = 0.5 * median [t] * 32000 / 6.0 / (double) n;
        if (fabs (gc_policy_budget (p) - want) > 1e-12)
            fail_msg ("round %zu (compute %g s): budget %g, want %g (median %g)", t, times [t],
                      gc_policy_budget (p), want, median [t]);
    }
    free (u);
    gc_policy_destroy (&p);
    gc_compressor_destroy (&comp);
}

//  round=1 budgets against the whole round (publish to publish), the compute
//  time until the driver has told one; the rounds' median, as the compute's.
//  round=0 ignores the round time.
static void
test_bandwidth_over_the_round (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_compressor_t *comp = gc_compressor_new ("topk:0.05", &layout, 1, NULL);
    float *u = calloc (n, sizeof *u);
    bool skip;
    static const struct {
        double compute_s, round_s;      /* told before the decision (0: not told) */
        double want_t;                  /* the time the budget is against, round=1 */
    } rounds [] = {
        { 0.01, 0, 0.01 },              /* no whole round yet: the compute time */
        { 0.01, 0.1, 0.1 },
        { 0.01, 0.1, 0.1 },
        { 0.01, 3.0, 0.1 },             /* one slow round moves nothing */
        { 0.02, 0.1, 0.1 },
    };
    gc_policy_t *p = gc_policy_new ("bandwidth:frac=0.5:min=0.001:max=1:rate=32000:round=1", comp, NULL);
    gc_policy_t *q = gc_policy_new ("bandwidth:frac=0.5:min=0.001:max=1:rate=32000", comp, NULL);
    assert_non_null (p);
    assert_non_null (q);
    assert_non_null (strstr (gc_policy_name (p), "round=1"));
    for (size_t r = 0; r < sizeof rounds / sizeof rounds [0]; r++) {
        gc_policy_set_env (p, rounds [r].compute_s, 0);
        gc_policy_set_round (p, rounds [r].round_s);
        gc_policy_set_env (q, rounds [r].compute_s, 0);
        gc_policy_set_round (q, rounds [r].round_s);
        assert_int_equal (gc_policy_decide (p, u, u, r, &skip, NULL), 0);
        assert_int_equal (gc_policy_decide (q, u, u, r, &skip, NULL), 0);
        double want = 0.5 * rounds [r].want_t * 32000 / 6.0 / (double) n;
        if (fabs (gc_policy_budget (p) - want) > 1e-12)
            fail_msg ("round %zu: budget %g, want %g (against %g s)", r, gc_policy_budget (p), want,
                      rounds [r].want_t);
        //  the compute basis: the median of the compute times, 0.01 s
        want = 0.5 * 0.01 * 32000 / 6.0 / (double) n;
        if (fabs (gc_policy_budget (q) - want) > 1e-12)
            fail_msg ("round %zu, round=0: budget %g, want %g", r, gc_policy_budget (q), want);
    }
    free (u);
    gc_policy_destroy (&p);
    gc_policy_destroy (&q);
    gc_compressor_destroy (&comp);
}

//  A chain's budget is the smallest of its stages' each round; a stage with
//  nothing to go on (bandwidth before a rate) caps nothing; the order of
//  the stages does not matter.
static void
test_chain_takes_the_smallest (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    static const double norm [] = { 4, 4, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1 };
    //  At 174 kB/s bandwidth allows 0.1 (half of 10 ms at 6 bytes an entry
    //  over 1450 entries): settle (0.0125 up to 0.2) is the smaller early and
    //  bandwidth late, so each stage decides some rounds (both_bind).
    static const struct { const char *a, *b; double rate; bool swaps, both_bind; } cases [] = {
        { "settle:window=2", "bandwidth:rate=174000", 0, true, true },  /* caps the late rounds */
        { "settle:window=2", "bandwidth", 174000, true, true },         /* the driver's rate */
        { "settle:window=2", "bandwidth:rate=3000", 0, true, false },   /* caps every round */
        { "settle:window=2", "bandwidth", 0, true, false },             /* no rate: no cap */
        { "accordion:window=2", "settle:window=2", 0, true, true },
        { "lazy:window=3", "bandwidth:rate=3000", 0, false, false },    /* skips: only as the head */
    };
    float *u = malloc (n * sizeof *u);
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        char ab [128], ba [128];
        snprintf (ab, sizeof ab, "%s+%s", cases [c].a, cases [c].b);
        snprintf (ba, sizeof ba, "%s+%s", cases [c].swaps ? cases [c].b : cases [c].a,
                  cases [c].swaps ? cases [c].a : cases [c].b);
        const char *specs [4] = { cases [c].a, cases [c].b, ab, ba };
        gc_compressor_t *comp [4];
        gc_policy_t *p [4];
        for (int i = 0; i < 4; i++) {
            comp [i] = gc_compressor_new ("topk:0.05", &layout, 1, NULL);
            gc_err_t err = { 0 };
            p [i] = gc_policy_new (specs [i], comp [i], &err);
            if (!p [i])
                fail_msg ("%s: %s", specs [i], err.msg);
            gc_policy_set_env (p [i], 0.01, cases [c].rate);
        }
        size_t a_binds = 0, b_binds = 0;     /* rounds where one stage was the smaller */
        for (size_t t = 0; t < sizeof norm / sizeof norm [0]; t++) {
            for (size_t i = 0; i < n; i++)
                u [i] = (float) (norm [t] / sqrt ((double) n));
            double got [4];
            for (int i = 0; i < 4; i++) {
                bool skip;
                assert_int_equal (gc_policy_decide (p [i], u, u, t, &skip, NULL), 0);
                got [i] = gc_policy_budget (p [i]);
                gc_policy_note_sent (p [i], 0);
            }
            //  the standalone bandwidth stage without a rate keeps the base
            double b = cases [c].rate == 0 && !strncmp (cases [c].b, "bandwidth", 9)
                     && !strchr (cases [c].b, ':') ? 1 : got [1];
            double want = fmin (got [0], b);     /* a skip: 0 */
            if (got [2] != want)
                fail_msg ("%s round %zu: budget %g, want %g (%g, %g)", ab, t, got [2], want,
                          got [0], got [1]);
            if (got [3] != got [2])
                fail_msg ("%s round %zu: %g, but %s gives %g", ba, t, got [3], ab, got [2]);
            a_binds += got [0] < b;
            b_binds += b < got [0];
        }
        if (cases [c].both_bind && !(a_binds && b_binds))
            fail_msg ("%s: the first stage was the smaller in %zu rounds, the second in %zu: "
                      "the case does not test the minimum", ab, a_binds, b_binds);
        for (int i = 0; i < 4; i++) {
            gc_policy_destroy (&p [i]);
            gc_compressor_destroy (&comp [i]);
        }
    }
    free (u);
}

//  Chains that cannot work are refused with a message naming the spec; a
//  chain's canonical name parses back to itself.
static void
test_chain_specs (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    static const char *bad [] = {
        "settle+", "+settle", "settle++bandwidth", "settle+lazy", "settle+fixed",
        "settle+lgreco", "lgreco+bandwidth", "settle+bandwidth:frac=2", "settle+greedy",
    };
    gc_compressor_t *comp = gc_compressor_new ("topk:0.02:layer", &layout, 1, NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_err_t err = { 0 };
        gc_policy_t *p = gc_policy_new (bad [i], comp, &err);
        if (p)
            fail_msg ("'%s' accepted as %s", bad [i], gc_policy_name (p));
        assert_int_equal (err.code, GC_E_SPEC);
        if (!strstr (err.msg, bad [i]))
            fail_msg ("'%s': error '%s' does not name it", bad [i], err.msg);
    }
    gc_err_t err = { 0 };
    gc_policy_t *p = gc_policy_new ("settle:power=3+bandwidth:frac=0.25", comp, &err);
    assert_non_null (p);
    assert_false (gc_policy_is_fixed (p));
    char name [256];
    snprintf (name, sizeof name, "%s", gc_policy_name (p));
    assert_non_null (strstr (name, "settle:lo="));
    assert_non_null (strstr (name, "+bandwidth:frac=0.25"));
    gc_policy_t *again = gc_policy_new (name, comp, &err);
    assert_non_null (again);
    assert_string_equal (gc_policy_name (again), name);
    gc_policy_destroy (&again);
    gc_policy_destroy (&p);
    gc_compressor_destroy (&comp);
}

static double
s_brute (size_t nl, size_t nc, const uint32_t *cost, const double *err, uint32_t budget)
{
    double best = -1;
    size_t total = 1;
    for (size_t l = 0; l < nl; l++)
        total *= nc;
    for (size_t code = 0; code < total; code++) {
        size_t x = code;
        double e = 0;
        uint64_t w = 0;
        for (size_t l = 0; l < nl; l++, x /= nc) {
            e += err [l * nc + x % nc];
            w += cost [l * nc + x % nc];
        }
        if (w <= budget && (best < 0 || e < best))
            best = e;
    }
    return best;
}

//  The programme finds the brute-force optimum, its choice costs what it
//  claims and fits the budget; nothing fits: -1.
static void
test_allocation_is_optimal (void **state)
{
    (void) state;
    gc_rng_t rng;
    gc_rng_init (&rng, 5, 0);
    enum { NL = 5, NC = 4 };
    uint32_t cost [NL * NC], choice [NL];
    double err [NL * NC];
    for (int trial = 0; trial < 300; trial++) {
        size_t nl = 1 + trial % NL, nc = 1 + (trial / NL) % NC;
        for (size_t i = 0; i < nl * nc; i++) {
            cost [i] = (uint32_t) (gc_rng_double (&rng) * 10);
            err [i] = floor (gc_rng_double (&rng) * 100);
        }
        uint32_t budget = (uint32_t) (gc_rng_double (&rng) * 6 * (double) nl);
        double want = s_brute (nl, nc, cost, err, budget);
        double got = gc_policy_allocate (nl, nc, cost, err, budget, choice);
        if (got != want)
            fail_msg ("trial %d (%zu layers, %zu choices, budget %u): %g, brute force %g",
                      trial, nl, nc, budget, got, want);
        if (got < 0)
            continue;
        double e = 0;
        uint64_t w = 0;
        for (size_t l = 0; l < nl; l++) {
            assert_true (choice [l] < nc);
            e += err [l * nc + choice [l]];
            w += cost [l * nc + choice [l]];
        }
        assert_true (w <= budget);
        assert_true (e == got);
    }
    uint32_t heavy [2] = { 5, 7 };
    double e2 [2] = { 1, 1 };
    assert_true (gc_policy_allocate (2, 1, heavy, e2, 11, choice) < 0);
}

//  lgreco gives the layer holding the mass more than the base ratio, takes
//  it from the others, and stays within the total budget.
static void
test_lgreco_follows_the_mass (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_compressor_t *comp = gc_compressor_new ("topk:0.05:layer", &layout, 1, NULL);
    gc_policy_t *p = gc_policy_new ("lgreco:every=1", comp, NULL);
    assert_non_null (p);
    float *u = malloc (n * sizeof *u);
    gc_rng_t rng;
    gc_rng_init (&rng, 9, 0);
    //  fc2.w (400 entries from 1040): 35 large among small noise everywhere
    for (size_t i = 0; i < n; i++)
        u [i] = (float) gc_rng_normal (&rng) * 0.01f;
    for (size_t i = 0; i < 35; i++)
        u [1040 + i * 11] = 10.0f;
    bool skip;
    assert_int_equal (gc_policy_decide (p, u, u, 0, &skip, NULL), 0);
    assert_false (skip);
    assert_true (gc_policy_budget (p) <= 0.05 * 1.01);
    gc_buf_t out;
    gc_buf_init (&out);
    assert_int_equal (gc_compressor_compress (comp, u, 0, &out, NULL), 0);
    gc_payload_info_t info;
    assert_int_equal (gc_payload_inspect (out.data, out.len, &layout, &info, NULL), 0);
    float *q = calloc (n, sizeof *q);
    assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, q, NULL), 0);
    size_t big = 0, nnz = 0;
    for (size_t i = 0; i < n; i++) {
        nnz += q [i] != 0;
        big += q [i] == 10.0f;
    }
    //  every large entry goes out (uniform 5 % would send 20 of fc2.w's 35)
    assert_int_equal (big, 35);
    assert_true ((double) nnz <= 0.05 * 1.01 * (double) n + layout.n_layers);
    gc_buf_free (&out);
    free (q);
    free (u);
    gc_policy_destroy (&p);
    gc_compressor_destroy (&comp);
}

//  Composition with EC: a skip sends a payload with no section, sent is
//  zero and the residual holds u + e; sent + e = sum of inputs throughout;
//  a skipping policy on mode none is refused; exact rounds are never skipped.
static void
test_ec_composition (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    static const struct { const char *comp, *ec, *policy; } cases [] = {
        { "topk:0.05", "ef", "lazy:window=2:theta=2:K=3" },
        { "topk:0.05", "liec:4", "lazy:window=2:theta=2:K=3" },
        { "lbs:topk:0.1", "ef", "accordion" },
        { "topk:0.05:layer", "liec:5", "lgreco:every=2" },
        { "randk:0.1:unscaled", "ef", "bandwidth:rate=1e5" },
        { "sign", "ef", "lazy" },
    };
    float *u = malloc (n * sizeof *u), *sent = malloc (n * sizeof *sent);
    double *in = malloc (n * sizeof *in), *got = malloc (n * sizeof *got);
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_compressor_t *comp = gc_compressor_new (cases [c].comp, &layout, 1, NULL);
        gc_ec_t *ec = gc_ec_new (cases [c].ec, comp, NULL);
        gc_err_t err = { 0 };
        gc_policy_t *p = gc_policy_new (cases [c].policy, comp, &err);
        if (!p || gc_ec_set_policy (ec, p, &err))
            fail_msg ("%s: %s", cases [c].policy, err.msg);
        gc_policy_set_env (p, 0.01, 0);
        memset (in, 0, n * sizeof *in);
        memset (got, 0, n * sizeof *got);
        gc_rng_t rng;
        gc_rng_init (&rng, 3, c);
        gc_buf_t out;
        gc_buf_init (&out);
        int skips = 0;
        for (int t = 0; t < 24; t++) {
            //  every third update tiny: lazy skips those
            double scale = t % 3 == 2 ? 1e-3 : 1.0;
            for (size_t i = 0; i < n; i++) {
                u [i] = (float) (scale * gc_rng_normal (&rng));
                in [i] += u [i];
            }
            bool exact = false;
            if (gc_ec_step (ec, u, (uint64_t) t, &out, sent, &exact, &err))
                fail_msg ("%s round %d: %s", cases [c].policy, t, err.msg);
            gc_payload_info_t info;
            assert_int_equal (gc_payload_inspect (out.data, out.len, &layout, &info, NULL), 0);
            if (gc_ec_skipped (ec)) {
                skips++;
                assert_false (exact);
                assert_int_equal (info.n_sections, 0);
                for (size_t i = 0; i < n; i++)
                    assert_true (sent [i] == 0.0f);
            }
            const float *e = gc_ec_residual (ec);
            for (size_t i = 0; i < n; i++) {
                got [i] += sent [i];
                if (fabs (got [i] + e [i] - in [i]) > 1e-3 * (1 + fabs (in [i])))
                    fail_msg ("%s/%s round %d entry %zu: sent + e = %g, input %g", cases [c].policy,
                              cases [c].ec, t, i, got [i] + e [i], in [i]);
            }
        }
        if (gc_policy_skips (p) != (skips > 0))
            fail_msg ("%s/%s: %d skips", cases [c].policy, cases [c].ec, skips);
        assert_int_equal (gc_policy_skipped (p), (uint64_t) skips);
        gc_buf_free (&out);
        gc_policy_destroy (&p);
        gc_ec_destroy (&ec);
        gc_compressor_destroy (&comp);
    }
    gc_compressor_t *comp = gc_compressor_new ("topk:0.05", &layout, 1, NULL);
    gc_ec_t *ec = gc_ec_new ("none", comp, NULL);
    gc_policy_t *lazy = gc_policy_new ("lazy", comp, NULL), *acc = gc_policy_new ("accordion", comp, NULL);
    gc_err_t err = { 0 };
    assert_int_equal (gc_ec_set_policy (ec, lazy, &err), -1);
    assert_non_null (strstr (err.msg, "residual"));
    assert_int_equal (gc_ec_set_policy (ec, acc, NULL), 0);
    gc_policy_destroy (&lazy);
    gc_policy_destroy (&acc);
    gc_ec_destroy (&ec);
    gc_compressor_destroy (&comp);
    free (u);
    free (sent);
    free (in);
    free (got);
}

//  fixed leaves every payload byte as without a policy.
static void
test_fixed_changes_nothing (void **state)
{
    (void) state;
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    static const char *specs [] = { "topk:0.05", "randk:0.1", "lbs:topk:0.1", "qsgd" };
    float *u = malloc (n * sizeof *u);
    for (size_t c = 0; c < sizeof specs / sizeof specs [0]; c++) {
        gc_compressor_t *a = gc_compressor_new (specs [c], &layout, 1, NULL),
                        *b = gc_compressor_new (specs [c], &layout, 1, NULL);
        gc_ec_t *ea = gc_ec_new ("ef", a, NULL), *eb = gc_ec_new ("ef", b, NULL);
        gc_policy_t *p = gc_policy_new ("fixed", b, NULL);
        assert_int_equal (gc_ec_set_policy (eb, p, NULL), 0);
        gc_buf_t oa, ob;
        gc_buf_init (&oa);
        gc_buf_init (&ob);
        for (int t = 0; t < 5; t++) {
            for (size_t i = 0; i < n; i++)
                u [i] = sinf ((float) (i * (t + 1)));
            assert_int_equal (gc_ec_step (ea, u, t, &oa, NULL, NULL, NULL), 0);
            assert_int_equal (gc_ec_step (eb, u, t, &ob, NULL, NULL, NULL), 0);
            assert_int_equal (oa.len, ob.len);
            assert_memory_equal (oa.data, ob.data, oa.len);
        }
        gc_buf_free (&oa);
        gc_buf_free (&ob);
        gc_policy_destroy (&p);
        gc_ec_destroy (&ea);
        gc_ec_destroy (&eb);
        gc_compressor_destroy (&a);
        gc_compressor_destroy (&b);
    }
    free (u);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_registry),
        cmocka_unit_test (test_policy_needs_its_method),
        cmocka_unit_test (test_decisions),
        cmocka_unit_test (test_bandwidth_follows_the_rate),
        cmocka_unit_test (test_bandwidth_over_the_round),
        cmocka_unit_test (test_chain_takes_the_smallest),
        cmocka_unit_test (test_chain_specs),
        cmocka_unit_test (test_allocation_is_optimal),
        cmocka_unit_test (test_lgreco_follows_the_mass),
        cmocka_unit_test (test_ec_composition),
        cmocka_unit_test (test_fixed_changes_nothing),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
