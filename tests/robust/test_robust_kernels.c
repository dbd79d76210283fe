/*  robust/ kernels: the compare-exchange networks (0-1 principle, exhaustive
    for small n), and the coordinate-wise median / trimmed mean of the fast
    paths (register kernels, tile interpreter) and of the portable path
    against a plain sort-based reference, for every k from 1 to 64 and
    dimensions that are not multiples of the vector width; the mixing
    kernels (NNM's and bucketing's virtual inputs) against an exact mean and
    the fused mixing window against mixing then the window; non-finite
    inputs reported at every position. */
#include "gc_test.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_cpu.h"
#include "gc_rng.h"
#include "gc_robust.h"
#include "gc_robust_internal.h"
#include "gc_robust_net.h"

//  --- Networks -------------------------------------------------------------

static int
s_cmp_float (const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;
    return (x > y) - (x < y);
}

//  The kept wires must hold the order statistics lo..hi: as a sorted list
//  when the network is ordered, as a multiset otherwise.
static void
s_check_net_on (const gc_robust_net_t *net, const float *values)
{
    size_t n = net->n;
    float v [128], sorted [128], kept [128];
    memcpy (v, values, n * sizeof *v);
    memcpy (sorted, values, n * sizeof *v);
    qsort (sorted, n, sizeof *sorted, s_cmp_float);
    gc_robust_net_apply (net, v);
    size_t m = net->hi - net->lo + 1;
    memcpy (kept, v + net->lo, m * sizeof *kept);
    if (!net->ordered)
        qsort (kept, m, sizeof *kept, s_cmp_float);
    for (size_t i = 0; i < m; i++)
        assert_true (kept [i] == sorted [net->lo + i]);
}

static void
test_networks_zero_one_exhaustive (void **state)
{
    //  0-1 principle: a comparator network that selects correctly on every
    //  0/1 input selects correctly on every input. All windows, n <= 12.
    gc_robust_net_t net = { 0 };
    for (size_t n = 1; n <= 12; n++)
        for (size_t lo = 0; lo < n; lo++)
            for (size_t hi = lo; hi < n; hi++)
                for (int ordered = 0; ordered < 2; ordered++) {
                    assert_int_equal (gc_robust_net_build (&net, n, lo, hi, ordered), 0);
                    for (unsigned bits = 0; bits < 1u << n; bits++) {
                        float v [16];
                        for (size_t i = 0; i < n; i++)
                            v [i] = (float) ((bits >> i) & 1);
                        s_check_net_on (&net, v);
                    }
                }
    gc_robust_net_free (&net);
}

static void
test_networks_random_large (void **state)
{
    gc_robust_net_t net = { 0 };
    gc_rng_t rng;
    gc_rng_init (&rng, 3, 0);
    for (size_t n = 13; n <= 100; n += 3) {
        size_t windows [][2] = { { (n - 1) / 2, n / 2 }, { 1, n - 2 }, { 0, n - 1 }, { n / 4, n - 1 - n / 4 } };
        for (size_t w = 0; w < 4; w++)
            for (int ordered = 0; ordered < 2; ordered++) {
                assert_int_equal (gc_robust_net_build (&net, n, windows [w][0], windows [w][1], ordered), 0);
                for (int rep = 0; rep < 20; rep++) {
                    float v [128];
                    for (size_t i = 0; i < n; i++)
                        //  Few distinct values, so ties are frequent.
                        v [i] = (float) gc_rng_below (&rng, rep % 2 ? 5 : 1000) - 2.0f;
                    s_check_net_on (&net, v);
                }
            }
    }
    gc_robust_net_free (&net);
}

static void
test_networks_are_cheap (void **state)
{
    //  Known sizes: Batcher sorts 16 in 63 comparators (126 ops); the median
    //  needs fewer; a trimmed mean with b = 1 uses extraction (about 4k ops).
    gc_robust_net_t net = { 0 };
    assert_int_equal (gc_robust_net_build (&net, 16, 0, 15, true), 0);
    assert_int_equal (net.n_ce, 63);
    assert_int_equal (gc_robust_net_build (&net, 16, 7, 8, false), 0);
    assert_true (gc_robust_net_cost (&net) < 126);
    assert_int_equal (gc_robust_net_build (&net, 16, 1, 14, false), 0);
    assert_true (gc_robust_net_cost (&net) <= 4 * 16);
    assert_int_equal (gc_robust_net_build (&net, 5, 0, 4, false), 0);
    assert_int_equal (net.n_ce, 0);
    assert_int_equal (gc_robust_net_build (&net, 0, 0, 0, false), -1);
    assert_int_equal (gc_robust_net_build (&net, 4, 3, 2, false), -1);
    gc_robust_net_free (&net);
}

//  --- Coordinate-wise rules against the reference ---------------------------

//  Per coordinate: sort, then the mean of sorted[lo..hi] summed in double
//  in ascending order and rounded once (the kernels' definition).
static void
s_ref_window (const float *const *in, size_t k, size_t d, size_t lo, size_t hi, float *out)
{
    float col [64];
    for (size_t j = 0; j < d; j++) {
        for (size_t i = 0; i < k; i++)
            col [i] = in [i][j];
        qsort (col, k, sizeof *col, s_cmp_float);
        double sum = col [lo];
        for (size_t r = lo + 1; r <= hi; r++)
            sum += col [r];
        out [j] = (float) (sum * (1.0 / (double) (hi - lo + 1)));
    }
}

typedef enum { S_NORMAL, S_TIES, S_EXTREME } s_data_t;

static void
s_fill (gc_rng_t *rng, float *x, size_t n, s_data_t kind)
{
    static const float extremes [] = { FLT_MAX, -FLT_MAX, 1e30f, -1e30f, 0.0f, -0.0f,
                                       1e-42f, -1e-42f, FLT_MIN, 1.0f, -1.0f, 3.0f };
    for (size_t i = 0; i < n; i++)
        switch (kind) {
            case S_NORMAL:  x [i] = (float) gc_rng_normal (rng); break;
            case S_TIES:    x [i] = (float) gc_rng_below (rng, 4); break;
            case S_EXTREME: x [i] = extremes [gc_rng_below (rng, 12)]; break;
        }
}

//  The largest |value| a kept window can hold, for the trimmed-mean
//  tolerance: the summation order of an unordered window may differ from
//  the reference's by rounding in double, i.e. far below one float ulp of
//  the largest kept value.
static float
s_max_abs (const float *const *in, size_t k, size_t j)
{
    float m = 0;
    for (size_t i = 0; i < k; i++)
        m = fabsf (in [i][j]) > m ? fabsf (in [i][j]) : m;
    return m;
}

static void
s_check_window (gc_robust_t *fast, gc_robust_t *portable, const float *const *in,
                size_t k, size_t d, size_t lo, size_t hi)
{
    float *ref = malloc (d * sizeof *ref), *a = malloc (d * sizeof *a), *b = malloc (d * sizeof *b);
    assert_non_null (ref);
    s_ref_window (in, k, d, lo, hi, ref);
    gc_err_t err;
    assert_int_equal (gc_robust_aggregate (fast, in, NULL, k, d, -1, a, &err), 0);
    assert_int_equal (gc_robust_aggregate (portable, in, NULL, k, d, -1, b, &err), 0);
    //  Fast and portable paths run the same network in the same order.
    assert_memory_equal (a, b, d * sizeof *a);
    for (size_t j = 0; j < d; j++) {
        if (hi - lo < 2)
            assert_true (a [j] == ref [j]);
        else
            assert_true (fabsf (a [j] - ref [j]) <= FLT_EPSILON * s_max_abs (in, k, j));
    }
    free (ref);
    free (a);
    free (b);
}

static void
test_cw_matches_reference_all_k (void **state)
{
    static const size_t ds [] = { 1, 15, 17, 130, 257 };
    gc_rng_t rng;
    gc_rng_init (&rng, 11, 0);
    float *buf = malloc (64 * 257 * sizeof *buf);
    const float *in [64];
    for (size_t k = 1; k <= 64; k++) {
        //  Windows: median, b = 0, 1, 2, and the widest b below k/2.
        size_t bs [] = { 0, 1, 2, (k - 1) / 2 };
        for (size_t di = 0; di < sizeof ds / sizeof ds [0]; di++) {
            size_t d = ds [di];
            s_data_t kind = (s_data_t) ((k + di) % 3);
            s_fill (&rng, buf, k * d, kind);
            for (size_t i = 0; i < k; i++)
                in [i] = buf + i * d;
            gc_robust_t *med = gc_robust_new ("cwmed", NULL), *med_p = gc_robust_new ("cwmed", NULL);
            gc_robust_set_portable (med_p, true);
            s_check_window (med, med_p, in, k, d, (k - 1) / 2, k / 2);
            gc_robust_destroy (&med);
            gc_robust_destroy (&med_p);
            for (size_t bi = 0; bi < 4; bi++) {
                size_t b = bs [bi];
                if (2 * b >= k || (bi == 3 && b <= 2))
                    continue;
                char spec [32];
                snprintf (spec, sizeof spec, "cwtm:%zu", b);
                gc_robust_t *tm = gc_robust_new (spec, NULL), *tm_p = gc_robust_new (spec, NULL);
                gc_robust_set_portable (tm_p, true);
                s_check_window (tm, tm_p, in, k, d, b, k - 1 - b);
                gc_robust_destroy (&tm);
                gc_robust_destroy (&tm_p);
            }
        }
    }
    free (buf);
}

//  Every kind of non-finite value (both signs of Inf and NaN), in any input
//  and in every lane position of one or two register columns and of the
//  tail, is reported by the window kernels; the largest finite values,
//  whose high bits are next to Inf's, are not.
static void
test_cw_window_reports_nonfinite (void **state)
{
    static const struct { size_t k, lo, hi; } windows [] = {
        { 5, 2, 2 }, { 16, 7, 8 }, { 16, 1, 14 }, { 17, 8, 8 }, { 17, 2, 14 }, { 30, 1, 28 },
    };
    static const float bad [] = { INFINITY, -INFINITY, NAN, -NAN };
    static const float edge [] = { FLT_MAX, -FLT_MAX, 0x1.ffp127f, -0x1.ffp127f };
    const size_t d = 37;    /* two 16-lane columns, then a tail */
    gc_rng_t rng;
    gc_rng_init (&rng, 17, 0);
    float *x = malloc (30 * d * sizeof *x), *out = malloc (d * sizeof *out);
    const float *in [30];
    gc_robust_ws_t ws;
    memset (&ws, 0, sizeof ws);
    for (size_t w = 0; w < sizeof windows / sizeof windows [0]; w++) {
        size_t k = windows [w].k, lo = windows [w].lo, hi = windows [w].hi;
        assert_int_equal (gc_robust_ws_reserve_k (&ws, k), 0);
        for (size_t i = 0; i < k; i++)
            in [i] = x + i * d;
        for (size_t i = 0; i < k; i += k / 3 + 1)
            for (size_t j = 0; j < d; j++)
                for (size_t v = 0; v < 4; v++) {
                    gc_rng_fill_normal (&rng, x, k * d, 0.0f, 1.0f);
                    x [i * d + j] = edge [v];
                    assert_int_equal (gc_robust_cw_window (&ws, in, k, d, lo, hi, out), 0);
                    x [i * d + j] = bad [v];
                    if (gc_robust_cw_window (&ws, in, k, d, lo, hi, out) != 1)
                        fail_msg ("k %zu window [%zu, %zu]: %g in input %zu at %zu not reported",
                                  k, lo, hi, (double) bad [v], i, j);
                }
        //  Finite inputs whose sum overflows float (the generic paired
        //  kernels' cheap check sums them) are not reported.
        for (size_t j = 0; j < k * d; j++)
            x [j] = j % 3 ? FLT_MAX : 0x1.ffp127f;
        assert_int_equal (gc_robust_cw_window (&ws, in, k, d, lo, hi, out), 0);
    }
    gc_robust_ws_free (&ws);
    free (x);
    free (out);
}

//  guard's median of four neighbours in float (the scan's fast path) against
//  the window kernel's double mean, bit for bit, at this level: values of
//  every class drawn at random per coordinate (signed zeros, subnormals,
//  sums that turn subnormal, exponents far apart, ties, sums near and past
//  FLT_MAX); the fast path may decline (1) only where a middle pair's float
//  sum overflows, and must where one does.
static void
test_guard_med4_matches_window (void **state)
{
    (void) state;
    static const float classes [] = {
        0.0f, -0.0f, 1.0f, -1.0f, 0x1p-149f, -0x1p-149f, 0x1.8p-126f, -0x1.8p-127f,
        0x1p-125f, 0x1.fffffep-126f, 0x1p30f, 0x1p-30f, 1e30f, -1e-30f, 0x1p126f,
        -0x1p126f, 0x1p127f, FLT_MAX, -FLT_MAX, 3.0f, 0x1.000002p0f, -0x1.fffffep-1f,
    };
    static const size_t dims [] = { 1024, 37, 16, 5 };
    const size_t nc = sizeof classes / sizeof classes [0];
    const gc_robust_guard_kern_t *kern = gc_robust_guard_kern ();
    gc_rng_t rng;
    gc_rng_init (&rng, 23, 0);
    float *x = malloc (4 * 1024 * sizeof *x), fast [1024], ref [1024];
    const float *in [4] = { x, x + 1024, x + 2048, x + 3072 };
    gc_robust_ws_t ws;
    memset (&ws, 0, sizeof ws);
    assert_int_equal (gc_robust_ws_reserve_k (&ws, 4), 0);
    size_t declined = 0, compared = 0;
    for (size_t t = 0; t < 400; t++) {
        size_t n = dims [t % (sizeof dims / sizeof dims [0])];
        //  every fourth trial random normals only, the others one class in
        //  four coordinates (rarer with the large classes, so that some
        //  blocks hold them without an overflow)
        for (size_t i = 0; i < 4; i++)
            for (size_t c = 0; c < n; c++) {
                float v = (float) gc_rng_normal (&rng);
                size_t pick = (size_t) (gc_rng_float (&rng) * (float) nc) % nc;
                bool large = fabsf (classes [pick]) >= 0x1p126f;
                if (t % 4 && gc_rng_float (&rng) < (large ? 0.02f : 0.25f))
                    v = classes [pick];
                x [i * 1024 + c] = v;
            }
        bool overflow = false;
        for (size_t c = 0; c < n; c++) {
            float v [4] = { in [0][c], in [1][c], in [2][c], in [3][c] };
            qsort (v, 4, sizeof *v, s_cmp_float);
            overflow |= isinf (v [1] + v [2]);
        }
        assert_int_equal (gc_robust_cw_window (&ws, in, 4, n, 1, 2, ref), 0);
        int rc = kern->med4 (in, n, fast);
        if (rc != overflow)
            fail_msg ("trial %zu n %zu: med4 returned %d with%s an overflowing pair", t, n, rc,
                      overflow ? "" : "out");
        declined += rc;
        if (rc)
            continue;
        for (size_t c = 0; c < n; c++)
            if (memcmp (&fast [c], &ref [c], sizeof *fast))
                fail_msg ("trial %zu n %zu at %zu: %a, the window %a", t, n, c,
                          (double) fast [c], (double) ref [c]);
        compared++;
    }
    assert_true (compared > 100);
    //  A middle pair whose sum overflows (three inputs at FLT_MAX in one
    //  coordinate) is declined, and so is an Inf that reaches the middle
    //  (the window reports it); one that does not is guard's d2's to report.
    for (size_t i = 0; i < 4 * 1024; i++)
        x [i] = (float) (i % 7);
    for (size_t i = 0; i < 3; i++)
        x [i * 1024 + 20] = FLT_MAX;
    assert_int_equal (gc_robust_cw_window (&ws, in, 4, 37, 1, 2, ref), 0);
    assert_int_equal (kern->med4 (in, 37, fast), 1);
    x [20] = 1.0f;
    for (size_t i = 1; i < 4; i++)
        x [i * 1024 + 7] = INFINITY;
    assert_int_equal (kern->med4 (in, 37, fast), 1);
    x [1024 + 7] = x [2048 + 7] = 1.0f;
    assert_int_equal (kern->med4 (in, 37, fast), 0);
    printf ("guard med4: %zu blocks bit-identical, %zu declined\n", compared, declined);
    gc_robust_ws_free (&ws);
    free (x);
}

static const char *
s_level (size_t l)
{
    return gc_cpu_name ((gc_cpu_level_t) l);
}

//  guard's scan gives the same sums at every level this CPU has, bit for
//  bit (docs/ALGORITHMS.md: guard is exact across levels): per input d2,
//  dot, pos, nz, above, below and its sketch, and own's sketch and med2;
//  over two whole blocks and a tail, with 4 neighbours (the float median)
//  and 5 (the window kernel), inputs with and without a sketch, coordinates
//  equal to own and to the median (the counts' ties).
static void
test_guard_scan_same_at_every_level (void **state)
{
    (void) state;
    enum { D = 2500, N = 6, SK = GC_ROBUST_SKETCH };
    float *x = malloc (N * D * sizeof *x);
    uint8_t *sign = malloc (D);
    gc_rng_t rng;
    gc_rng_init (&rng, 29, 0);
    gc_rng_fill_normal (&rng, x, N * D, 0.0f, 1.0f);
    for (size_t c = 0; c < D; c += 7)
        x [1 * D + c] = x [c];                  /* input 1 equals own there */
    for (size_t c = 0; c < D; c += 11)
        for (size_t i = 2; i < N; i++)
            x [i * D + c] = x [2 * D + c];      /* the median equals them there */
    for (uint32_t c = 0; c < D; c++) {          /* gc_robust_guard.c's sketch signs */
        uint32_t h = c * 0x9e3779b1u;
        h ^= h >> 15;
        h *= 0x85ebca77u;
        h ^= h >> 13;
        sign [c] = (uint8_t) (h >> 31);
    }
    const float *in [N], *nb [N], *blk [N];
    for (size_t i = 0; i < N; i++)
        in [i] = x + i * D;
    for (size_t i = 1; i < N; i++)
        nb [i - 1] = in [i];
    const gc_robust_guard_kern_t *levels [] = {
        &gc_robust_guard_kern_generic,
#if GC_X86_LEVELS
        &gc_robust_guard_kern_avx2, &gc_robust_guard_kern_avx512,
#endif
    };
    size_t n_levels = sizeof levels / sizeof levels [0];
    if ((size_t) gc_cpu_detected () + 1 < n_levels)
        n_levels = (size_t) gc_cpu_detected () + 1;
    //  per level: the sums of N inputs (6 arrays), the sketches, sown, med2
    typedef struct { double d2 [N], dot [N]; int64_t cnt [4][N]; float sk [N][SK], sown [SK]; double med2; } s_out_t;
    s_out_t *out = calloc (n_levels, sizeof *out);
    for (size_t kn = 4; kn <= 5; kn++) {
        for (size_t l = 0; l < n_levels; l++) {
            gc_robust_ws_t ws;
            memset (&ws, 0, sizeof ws);
            assert_int_equal (gc_robust_ws_reserve_k (&ws, N), 0);
            s_out_t *o = &out [l];
            memset (o, 0, sizeof *o);
            float *sx [N];
            for (size_t i = 0; i < N; i++)
                sx [i] = i % 3 == 2 ? NULL : o->sk [i];     /* inputs 2 and 5 without a sketch */
            uint32_t big [N];
            gc_robust_guard_sums_t s = { .d2 = o->d2, .dot = o->dot, .pos = o->cnt [0],
                                         .nz = o->cnt [1], .above = o->cnt [2], .below = o->cnt [3],
                                         .big = big, .sown = o->sown };
            gc_robust_guard_io_t io = { .x = in, .n = N, .own = in [0], .nb = nb, .kn = kn,
                                        .nb_blk = blk, .sx = sx, .sign = sign };
            assert_int_equal (levels [l]->scan (&ws, &io, D, &s), 0);
            o->med2 = s.med2;
            gc_robust_ws_free (&ws);
            if (l == 0 || !memcmp (o, &out [0], sizeof *o))
                continue;
            for (size_t j = 0; j < N; j++) {
                if (o->d2 [j] != out [0].d2 [j] || o->dot [j] != out [0].dot [j])
                    fail_msg ("kn %zu, %s, input %zu: d2 %a dot %a, generic %a %a", kn, s_level (l), j,
                              o->d2 [j], o->dot [j], out [0].d2 [j], out [0].dot [j]);
                for (size_t q = 0; q < 4; q++)
                    if (o->cnt [q][j] != out [0].cnt [q][j])
                        fail_msg ("kn %zu, %s, input %zu: count %zu (pos, nz, above, below) "
                                  "%lld, generic %lld", kn, s_level (l), j, q, (long long) o->cnt [q][j],
                                  (long long) out [0].cnt [q][j]);
            }
            fail_msg ("kn %zu, %s: a sketch or med2 differs from generic", kn, s_level (l));
        }
        //  the counts saw the ties: input 1 equals own on every 7th coordinate
        assert_true (out [0].cnt [1][1] < D - D / 7 + 1 && out [0].cnt [1][1] > D / 2);
    }
    printf ("guard scan: %zu levels bit-identical\n", n_levels);
    free (out);
    free (sign);
    free (x);
}

//  cwtm:1 sums all inputs minus the min and the max (at every x86 level)
//  where the exponents' span makes every sum exact: columns of random spans
//  around that limit (29 - ceil(log2 k)), of one sign or mixed, full mantissas,
//  some with a zero, -0, a subnormal or values cancelling to 0, must give the
//  network's bits (the portable path). The first column of k = 4 is one where
//  the sum of all four in double loses the middle pair's low bits (span 55):
//  the network's mean is 2^23 + 2, the exact-sum shortcut would give 2^23.
static void
test_cw_trim1_exponent_spans (void **state)
{
    static const size_t ks [] = { 4, 5, 8, 15, 16, 17, 24 };
    const size_t d = 1027;
    gc_rng_t rng;
    gc_rng_init (&rng, 29, 0);
    float *buf = malloc (24 * d * sizeof *buf);
    const float *in [24];
    for (size_t ki = 0; ki < sizeof ks / sizeof ks [0]; ki++) {
        size_t k = ks [ki];
        for (size_t i = 0; i < k; i++)
            in [i] = buf + i * d;
        int span = 0, base = 0;
        uint32_t special = 0;
        for (size_t j = 0; j < d; j++) {
            //  span, base and whether to plant a special value change every
            //  16 coordinates, so that whole columns of every level's width
            //  (4, 8, 16 lanes) take the shortcut, and some fail it
            if (j % 16 == 0) {
                span = (int) gc_rng_below (&rng, 34);
                base = (int) gc_rng_below (&rng, 200) - 140;
                special = gc_rng_below (&rng, 2);
            }
            for (size_t i = 0; i < k; i++) {
                float m = 1.0f + (float) gc_rng_below (&rng, 1u << 23) / 0x1p23f;
                int e = base + (int) gc_rng_below (&rng, (uint32_t) span + 1);
                //  columns of one sign (either) and of mixed signs
                float sign = j % 3 == 2 ? (gc_rng_below (&rng, 2) ? -1.0f : 1.0f)
                                        : (j % 3 ? -1.0f : 1.0f);
                buf [i * d + j] = sign * ldexpf (m, e);
            }
            size_t at = gc_rng_below (&rng, (uint32_t) k);
            switch (special ? gc_rng_below (&rng, 8) : 8) {
                case 0: buf [at * d + j] = 0.0f; break;
                case 1: buf [at * d + j] = -0.0f; break;
                case 2: buf [at * d + j] = 0x1p-140f; break;
                case 3: buf [at * d + j] = -buf [((at + 1) % k) * d + j]; break;
                default: break;
            }
        }
        if (k == 4) {
            const float col [] = { 0x1p55f, 0x1p24f + 2.0f, 1.0f, -(0x1p55f - 0x1p32f) };
            for (size_t i = 0; i < 4; i++)
                buf [i * d] = col [i];
        }
        gc_robust_t *tm = gc_robust_new ("cwtm:1", NULL), *tm_p = gc_robust_new ("cwtm:1", NULL);
        gc_robust_set_portable (tm_p, true);
        s_check_window (tm, tm_p, in, k, d, 1, k - 2);
        if (k == 4) {
            float out;
            const float *one [4] = { in [0], in [1], in [2], in [3] };
            gc_err_t err;
            assert_int_equal (gc_robust_aggregate (tm, one, NULL, 4, 1, -1, &out, &err), 0);
            assert_true (out == 0x1p23f + 2.0f);
        }
        gc_robust_destroy (&tm);
        gc_robust_destroy (&tm_p);
    }
    free (buf);
}

//  Inputs at arbitrary (unaligned, odd) addresses and tails after a block.
static void
test_cw_unaligned_inputs (void **state)
{
    gc_rng_t rng;
    gc_rng_init (&rng, 12, 0);
    size_t k = 9, d = 1000;
    float *buf = malloc ((k * (d + 3) + 1) * sizeof *buf);
    s_fill (&rng, buf, k * (d + 3) + 1, S_NORMAL);
    const float *in [9];
    for (size_t i = 0; i < k; i++)
        in [i] = buf + 1 + i * (d + 3);
    gc_robust_t *r = gc_robust_new ("cwtm:1", NULL), *p = gc_robust_new ("cwtm:1", NULL);
    gc_robust_set_portable (p, true);
    s_check_window (r, p, in, k, d, 1, k - 2);
    gc_robust_destroy (&r);
    gc_robust_destroy (&p);
    free (buf);
}

//  --- Mixing -----------------------------------------------------------------

typedef enum { S_MIX_NNM, S_MIX_NNM_FEW, S_MIX_BUCKET, S_MIX_WEIGHTED } s_mix_t;

//  A kv x k mixing matrix of the shape the pre-aggregations build: NNM (row
//  a: the mean of all but f inputs, a kept), NNM whose rows leave out only a
//  few distinct sets (f of the first f + 2 inputs: the grouped window),
//  buckets of 3, or weighted rows.
static size_t
s_mix_matrix (gc_rng_t *rng, s_mix_t kind, size_t k, size_t f, double *mix)
{
    size_t kv = kind == S_MIX_BUCKET ? (k + 2) / 3 : k;
    memset (mix, 0, kv * k * sizeof *mix);
    for (size_t a = 0; a < kv; a++) {
        double *m = mix + a * k;
        if (kind == S_MIX_NNM) {
            for (size_t j = 0; j < k; j++)
                m [j] = 1;
            for (size_t left = 0; left < f; ) {
                size_t j = (size_t) gc_rng_below (rng, k);
                if (j != a && m [j] != 0) {
                    m [j] = 0;
                    left++;
                }
            }
            for (size_t j = 0; j < k; j++)
                m [j] /= (double) (k - f);
        } else
        if (kind == S_MIX_NNM_FEW) {
            for (size_t j = 0; j < k; j++)
                m [j] = 1;
            for (size_t j = 0, left = 0; left < f; j++)
                if (j != a) {
                    m [j] = 0;
                    left++;
                }
            for (size_t j = 0; j < k; j++)
                m [j] /= (double) (k - f);
        } else
        if (kind == S_MIX_BUCKET) {
            size_t last = 3 * a + 3 < k ? 3 * a + 3 : k;
            for (size_t j = 3 * a; j < last; j++)
                m [j] = 1.0 / (double) (last - 3 * a);
        } else {
            double sum = 0;
            for (size_t j = 0; j < k; j++)
                sum += m [j] = gc_rng_below (rng, 3) ? (double) (1 + gc_rng_below (rng, 5)) : 0;
            for (size_t j = 0; j < k; j++)
                m [j] = sum > 0 ? m [j] / sum : (j == a);
        }
    }
    return kv;
}

//  Every mixed value against the exact weighted sum (long double over at
//  most 64 terms of 24-bit mantissas is exact enough), within one float
//  rounding of the largest kept |x| plus one of the value.
static void
s_check_mixed (const float *const *in, size_t k, size_t d, const double *mix, size_t kv,
               float *const *rows)
{
    for (size_t a = 0; a < kv; a++)
        for (size_t j = 0; j < d; j++) {
            long double exact = 0;
            float big = 0;
            for (size_t i = 0; i < k; i++)
                if (mix [a * k + i] != 0) {
                    exact += (long double) mix [a * k + i] * in [i][j];
                    big = fabsf (in [i][j]) > big ? fabsf (in [i][j]) : big;
                }
            double err = fabs ((double) (rows [a][j] - exact));
            if (!(err <= FLT_EPSILON * (fabs ((double) exact) + (double) big * 1e-6)))
                fail_msg ("row %zu coordinate %zu: %.9g, exact %.9Lg", a, j, (double) rows [a][j],
                          exact);
        }
}

//  The window lo..hi of the exact mixed values (long double, sorted) against
//  out, within one float rounding of the window's largest |value| plus one
//  of the mean: the fused window of NNM's rows may form the mean without
//  rounding each row to float first.
static void
s_check_window_exact (const float *const *in, size_t k, size_t d, const double *mix,
                      size_t kv, size_t lo, size_t hi, const float *out)
{
    long double v [32];
    for (size_t j = 0; j < d; j++) {
        for (size_t a = 0; a < kv; a++) {
            v [a] = 0;
            for (size_t i = 0; i < k; i++)
                v [a] += (long double) mix [a * k + i] * in [i][j];
        }
        for (size_t a = 1; a < kv; a++)
            for (size_t b = a; b > 0 && v [b - 1] > v [b]; b--) {
                long double t = v [b];
                v [b] = v [b - 1];
                v [b - 1] = t;
            }
        long double mean = 0, big = 0;
        for (size_t r = lo; r <= hi; r++) {
            mean += v [r];
            big = fabsl (v [r]) > big ? fabsl (v [r]) : big;
        }
        mean /= (long double) (hi - lo + 1);
        double err = fabs ((double) (out [j] - mean));
        if (!(err <= FLT_EPSILON * (double) (fabsl (mean) + big)))
            fail_msg ("window %zu..%zu coordinate %zu: %.9g, exact %.9Lg", lo, hi, j,
                      (double) out [j], mean);
    }
}

//  Mixed rows (gc_robust_mix) close to the exact sums, the same bits from the
//  fast and the portable kernels; the fused window (gc_robust_mix_window)
//  the same bits from both, bit for bit the window of those rows except for
//  NNM's rows (which it may form by groups, docs/ALGORITHMS.md "Mixing"), and
//  there within rounding of the exact window. Shapes: register kernels, the tile
//  interpreter (k > 24), partial blocks, blocks with an outlier that NNM
//  leaves out (the complement sum must not cancel the kept values), and equal
//  rows.
static void
test_mix_window_matches_mix_then_window (void **state)
{
    static const struct {
        size_t k, d, f;
    } shapes [] = { { 5, 300, 1 }, { 16, 128 * 3 + 7, 1 }, { 16, 128, 3 }, { 9, 17, 2 },
                    { 30, 128 * 2 + 1, 2 }, { 3, 5, 1 } };
    gc_rng_t rng;
    gc_rng_init (&rng, 31, 0);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes [0]; s++)
        for (int kind = S_MIX_NNM; kind <= S_MIX_WEIGHTED; kind++)
            for (int outlier = 0; outlier < 2; outlier++) {
                size_t k = shapes [s].k, d = shapes [s].d, f = shapes [s].f;
                float *x = malloc (k * d * sizeof *x), *mixed = malloc (2 * k * d * sizeof *mixed);
                float *a = malloc (d * sizeof *a), *b = malloc (d * sizeof *b);
                double *mix = malloc (k * k * sizeof *mix);
                const float *in [32];
                float *rows [32], *rows_p [32];
                gc_rng_fill_normal (&rng, x, k * d, 0.0f, 1.0f);
                for (size_t i = 0; i < k; i++) {
                    in [i] = x + i * d;
                    rows [i] = mixed + i * d;
                    rows_p [i] = mixed + (k + i) * d;
                }
                size_t kv = s_mix_matrix (&rng, (s_mix_t) kind, k, f, mix);
                //  With the outlier, NNM's odd rows repeat row 0 (all leave it
                //  out, as when several inputs have one attacker farthest):
                //  the fused window forms equal rows once.
                if (outlier && kind == S_MIX_NNM)
                    for (size_t r = 1; r < kv; r += 2)
                        memcpy (mix + r * k, mix, k * sizeof *mix);
                if (outlier)                    /* an input NNM's row 0 leaves out */
                    for (size_t i = 0; i < k; i++)
                        if (mix [i] == 0)
                            for (size_t j = 0; j < d; j += 3)
                                x [i * d + j] = j % 2 ? 3e30f : -1e25f;
                gc_robust_ws_t ws, ws_p;
                memset (&ws, 0, sizeof ws);
                memset (&ws_p, 0, sizeof ws_p);
                ws_p.portable = true;
                assert_int_equal (gc_robust_ws_reserve_k (&ws, k), 0);
                assert_int_equal (gc_robust_ws_reserve_k (&ws_p, k), 0);
                assert_int_equal (gc_robust_mix (&ws, in, k, d, mix, kv, rows), 0);
                assert_int_equal (gc_robust_mix (&ws_p, in, k, d, mix, kv, rows_p), 0);
                assert_memory_equal (mixed, mixed + k * d, kv * d * sizeof *mixed);
                s_check_mixed (in, k, d, mix, kv, rows);
                size_t windows [][2] = { { (kv - 1) / 2, kv / 2 }, { kv > 2 ? 1 : 0, kv > 2 ? kv - 2 : kv - 1 },
                                         { 0, kv - 1 } };
                for (size_t w = 0; w < 3; w++) {
                    size_t lo = windows [w][0], hi = windows [w][1];
                    assert_int_equal (gc_robust_cw_window (&ws, (const float *const *) rows, kv, d,
                                                           lo, hi, a), 0);
                    assert_int_equal (gc_robust_mix_window (&ws, in, k, d, mix, kv, lo, hi, b), 0);
                    if (kind == S_MIX_NNM || kind == S_MIX_NNM_FEW)
                        s_check_window_exact (in, k, d, mix, kv, lo, hi, b);
                    else
                        assert_memory_equal (a, b, d * sizeof *a);
                    assert_int_equal (gc_robust_mix_window (&ws_p, in, k, d, mix, kv, lo, hi, a), 0);
                    assert_memory_equal (a, b, d * sizeof *a);
                }
                //  A NaN anywhere is reported by both kernels.
                x [(k - 1) * d + d - 1] = NAN;
                assert_int_equal (gc_robust_mix (&ws, in, k, d, mix, kv, rows), 1);
                assert_int_equal (gc_robust_mix_window (&ws, in, k, d, mix, kv, 0, kv - 1, b), 1);
                gc_robust_ws_free (&ws);
                gc_robust_ws_free (&ws_p);
                free (x);
                free (mixed);
                free (a);
                free (b);
                free (mix);
            }
}


//  The weighted sum (mean, Krum's output) against its definition: per
//  coordinate sum coef[i] * x_i[c] over the non-zero coefficients in double,
//  in index order from +0, rounded once; at every level this CPU has, for
//  whole columns and tails, zero coefficients (skipped, their NaN included),
//  signed zeros (-0 inputs sum to +0), and sums a float cannot hold (+Inf
//  out, not an error). A non-finite input with a non-zero coefficient is
//  reported wherever it lies.
static void
test_combine_matches_definition (void **state)
{
    static const size_t ks [] = { 1, 3, 16, 40 }, ds [] = { 1, 15, 16, 17, 128 * 3 + 9 };
    gc_cpu_level_t top = gc_cpu_detected (), start = gc_cpu_level ();
    gc_rng_t rng;
    gc_rng_init (&rng, 41, 0);
    for (int level = GC_CPU_GENERIC; level <= (int) top; level++) {
        assert_int_equal (gc_cpu_set_level ((gc_cpu_level_t) level), 0);
        for (size_t a = 0; a < sizeof ks / sizeof ks [0]; a++)
            for (size_t b = 0; b < sizeof ds / sizeof ds [0]; b++)
                for (int kind = S_NORMAL; kind <= S_EXTREME; kind++) {
                    size_t k = ks [a], d = ds [b];
                    float *x = malloc (k * d * sizeof *x), *out = malloc (d * sizeof *out);
                    double coef [40];
                    const float *in [40];
                    s_fill (&rng, x, k * d, (s_data_t) kind);
                    for (size_t i = 0; i < k; i++) {
                        in [i] = x + i * d;
                        coef [i] = i % 5 == 2 ? 0.0 : (double) (i % 3 + 1) / (double) (2 * k);
                        if (coef [i] == 0)
                            x [i * d + d / 2] = NAN;   /* not read: no error */
                    }
                    gc_robust_ws_t ws;
                    memset (&ws, 0, sizeof ws);
                    assert_int_equal (gc_robust_ws_reserve_k (&ws, k), 0);
                    assert_int_equal (gc_robust_combine (&ws, in, coef, k, d, out), 0);
                    for (size_t c = 0; c < d; c++) {
                        double sum = 0;
                        for (size_t i = 0; i < k; i++)
                            if (coef [i] != 0)
                                sum += coef [i] * (double) in [i][c];
                        float want = (float) sum;
                        if (memcmp (&want, out + c, sizeof want))
                            fail_msg ("%s k %zu d %zu kind %d at %zu: %.9g, want %.9g",
                                      gc_cpu_name ((gc_cpu_level_t) level), k, d, kind, c,
                                      (double) out [c], (double) want);
                    }
                    //  -0 everywhere: +0 out; FLT_MAX with weights summing
                    //  past 1: +Inf out, no error
                    for (size_t i = 0; i < k * d; i++)
                        x [i] = -0.0f;
                    assert_int_equal (gc_robust_combine (&ws, in, coef, k, d, out), 0);
                    for (size_t c = 0; c < d; c++)
                        assert_false (signbit (out [c]));
                    double two [40];
                    for (size_t i = 0; i < k; i++) {
                        two [i] = 2.0;
                        x [i * d + d - 1] = FLT_MAX;
                    }
                    assert_int_equal (gc_robust_combine (&ws, in, two, k, d, out), 0);
                    assert_true (isinf (out [d - 1]) && out [d - 1] > 0);
                    //  a non-finite input that is read: reported
                    for (size_t at = 0; at < d; at += d / 3 + 1) {
                        x [(k - 1) * d + at] = at % 2 ? -INFINITY : NAN;
                        assert_int_equal (gc_robust_combine (&ws, in, two, k, d, out), 1);
                        x [(k - 1) * d + at] = 1.0f;
                    }
                    gc_robust_ws_free (&ws);
                    free (x);
                    free (out);
                }
    }
    assert_int_equal (gc_cpu_set_level (start), 0);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_networks_zero_one_exhaustive),
        cmocka_unit_test (test_networks_random_large),
        cmocka_unit_test (test_networks_are_cheap),
        cmocka_unit_test (test_cw_matches_reference_all_k),
        cmocka_unit_test (test_cw_unaligned_inputs),
        cmocka_unit_test (test_cw_trim1_exponent_spans),
        cmocka_unit_test (test_cw_window_reports_nonfinite),
        cmocka_unit_test (test_guard_med4_matches_window),
        cmocka_unit_test (test_guard_scan_same_at_every_level),
        cmocka_unit_test (test_mix_window_matches_mix_then_window),
        cmocka_unit_test (test_combine_matches_definition),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
