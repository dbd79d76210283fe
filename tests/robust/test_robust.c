/*  robust/ rules: spec parsing, hand-computed cases, permutation invariance,
    translation equivariance, robustness to outliers, references for the
    iterative and distance rules, parameter errors, NaN/Inf reporting and
    workspace reuse. */
#include "gc_test.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_rng.h"
#include "gc_robust.h"

#define S_KMAX 64

//  k inputs of d floats in one buffer, and the pointer array the API takes.
typedef struct {
    float       *buf;
    const float *in [S_KMAX];
    size_t       k, d;
} s_set_t;

static void
s_set_new (s_set_t *s, size_t k, size_t d)
{
    assert_true (k <= S_KMAX);
    s->buf = calloc (k * d, sizeof *s->buf);
    assert_non_null (s->buf);
    s->k = k;
    s->d = d;
    for (size_t i = 0; i < k; i++)
        s->in [i] = s->buf + i * d;
}

static float *
s_row (s_set_t *s, size_t i)
{
    return s->buf + i * s->d;
}

static void
s_set_free (s_set_t *s)
{
    free (s->buf);
    s->buf = NULL;
}

//  Honest inputs base + N(0, sigma^2) for i >= n_bad, outliers below.
static void
s_fill_honest (s_set_t *s, gc_rng_t *rng, size_t first, float base, float sigma)
{
    for (size_t i = first; i < s->k; i++)
        for (size_t j = 0; j < s->d; j++)
            s_row (s, i) [j] = base + sigma * (float) gc_rng_normal (rng);
}

static gc_robust_t *
s_rule (const char *spec)
{
    gc_err_t err = { 0 };
    gc_robust_t *r = gc_robust_new (spec, &err);
    if (!r)
        fail_msg ("%s: %s", spec, err.msg);
    return r;
}

static int
s_agg (gc_robust_t *r, const s_set_t *s, const double *w, int self_index, float *out)
{
    gc_err_t err = { 0 };
    int rc = gc_robust_aggregate (r, s->in, w, s->k, s->d, self_index, out, &err);
    if (rc)
        print_message ("%s: %s\n", gc_robust_name (r), err.msg);
    return rc;
}

//  --- Specs --------------------------------------------------------------------

static void
test_spec_table (void **state)
{
    static const struct {
        const char *spec, *name;
        size_t min_inputs;
        int f;
    } ok [] = {
        { "mean", "mean", 1, -1 },
        { "cwmed", "cwmed", 1, -1 },
        { "cwtm:0", "cwtm:0", 1, 0 },
        { "cwtm:3", "cwtm:3", 7, 3 },
        { "krum:0", "krum:0", 3, 0 },
        { "krum:1", "krum:1", 5, 1 },
        { "mkrum:1:3", "mkrum:1:3", 5, 1 },
        { "mkrum:2:6", "mkrum:2:6", 8, 2 },
        { "bulyan:1", "bulyan:1", 7, 1 },
        { "gm", "gm:1e-06:32:1e-06", 1, -1 },
        { "gm:0.001:10", "gm:0.001:10:1e-06", 1, -1 },
        { "cclip", "cclip:10:3", 1, -1 },
        { "cclip:2.5", "cclip:2.5:3", 1, -1 },
        { "scclip", "scclip:auto:0.25", 1, -1 },
        { "scclip:auto", "scclip:auto:0.25", 1, -1 },
        { "scclip:auto:0.1", "scclip:auto:0.1", 1, -1 },
        { "scclip:4", "scclip:4", 1, -1 },
        { "nnm+cwtm:1", "nnm:1+cwtm:1", 3, 1 },
        { "nnm:2+cwmed", "nnm:2+cwmed", 3, -1 },
        { "bucket:2+cwmed", "bucket:2+cwmed", 1, -1 },
        { "bucket:2+krum:1", "bucket:2+krum:1", 9, 1 },
        { "bucket:3+nnm+krum:1", "bucket:3+nnm:1+krum:1", 13, 1 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok [0]; i++) {
        gc_robust_t *r = s_rule (ok [i].spec);
        assert_string_equal (gc_robust_name (r), ok [i].name);
        assert_int_equal (gc_robust_min_inputs (r), ok [i].min_inputs);
        assert_int_equal (gc_robust_f (r), ok [i].f);
        //  The canonical name parses back to itself.
        gc_robust_t *again = s_rule (gc_robust_name (r));
        assert_string_equal (gc_robust_name (again), ok [i].name);
        gc_robust_destroy (&again);
        gc_robust_destroy (&r);
        assert_null (r);
    }
    static const char *bad [] = {
        "", "median", "cwtm", "cwtm:", "cwtm:x", "cwtm:-1", "cwtm:1:2", "cwtm:512",
        "krum", "krum:511", "mkrum:1", "mkrum:1:0", "bulyan:256", "gm:0", "gm:1:0",
        "gm:1:10:2", "cclip:0", "cclip:1:0", "scclip:-1", "scclip:auto:1", "scclip:auto:0",
        "scclip:1:2", "nnm+cwmed", "nnm+mean", "bucket:0+mean", "bucket+mean", "mean+",
        "+mean", "cwmed+mean", "nnm:x+krum:1", "bucket:2+bucket:600+krum:1", "mean:1",
        NULL
    };
    for (size_t i = 0; bad [i]; i++) {
        gc_err_t err = { 0 };
        assert_null (gc_robust_new (bad [i], &err));
        if (err.code != GC_E_SPEC || !err.msg [0])
            fail_msg ("'%s': code %d '%s'", bad [i], err.code, err.msg);
    }
    assert_null (gc_robust_new (NULL, NULL));
}

//  --- Hand-computed cases ---------------------------------------------------------

static void
test_hand_cases (void **state)
{
    static const struct {
        const char *spec;
        size_t k, d;
        float  in [8][2];
        double w [8];           /* all zero: uniform */
        int    self;
        float  expect [2];
        float  tol;
    } cases [] = {
        { "cwmed", 3, 2, { { 3, 1 }, { 1, 2 }, { 2, 3 } }, { 0 }, -1, { 2, 2 }, 0 },
        { "cwmed", 4, 2, { { 1, 10 }, { 4, 20 }, { 2, 30 }, { 3, 40 } }, { 0 }, -1, { 2.5f, 25 }, 0 },
        { "cwmed", 5, 1, { { 1 }, { 1 }, { 3 }, { 1 }, { 2 } }, { 0 }, -1, { 1 }, 0 },
        { "cwmed", 1, 2, { { 7, -0.5f } }, { 0 }, -1, { 7, -0.5f }, 0 },
        { "cwmed", 2, 2, { { 1, 2 }, { 3, -2 } }, { 0 }, -1, { 2, 0 }, 0 },
        { "cwtm:0", 3, 1, { { 1 }, { 2 }, { 6 } }, { 0 }, -1, { 3 }, 0 },
        { "cwtm:1", 5, 2, { { 1, -100 }, { 100, 0 }, { 3, 1 }, { 2, 3 }, { 4, 2 } }, { 0 }, -1, { 3, 1 }, 0 },
        { "cwtm:1", 4, 1, { { 10 }, { 1 }, { 3 }, { 2 } }, { 0 }, -1, { 2.5f }, 0 },
        { "cwtm:1", 3, 1, { { 5 }, { 5 }, { -5 } }, { 0 }, -1, { 5 }, 0 },
        { "mean", 3, 1, { { 1 }, { 2 }, { 6 } }, { 0 }, -1, { 3 }, 0 },
        { "mean", 3, 1, { { 1 }, { 2 }, { 4 } }, { 1, 1, 2 }, -1, { 2.75f }, 0 },
        { "mean", 2, 1, { { 1 }, { 3 } }, { 0, 5 }, -1, { 3 }, 0 },
        //  nb = k - f - 2 = 1: scores 1, 1, 81: a tie, broken by the sum of
        //  all squared distances (101, 82): the more central input.
        { "krum:0", 3, 1, { { 0 }, { 1 }, { 10 } }, { 0 }, -1, { 1 }, 0 },
        //  nb = 2: scores 5, 2, 2, 5, huge; ties by totals 9807 / 9610.
        { "krum:1", 5, 1, { { 0 }, { 1 }, { 2 }, { 3 }, { 100 } }, { 0 }, 0, { 2 }, 0 },
        { "mkrum:1:2", 5, 1, { { 0 }, { 1 }, { 2 }, { 3 }, { 100 } }, { 0 }, 0, { 1.5f }, 0 },
        //  theta = 5 chosen (0, 1, 2, 2.5, 4); beta = 3 closest to the
        //  median 2: 2, 2.5, 1.
        { "bulyan:1", 7, 1, { { 0 }, { 50 }, { 1 }, { 2 }, { 2.5f }, { -60 }, { 4 } }, { 0 }, -1,
          { 5.5f / 3 }, 1e-6f },
        //  Ties at equal distance from the median take the lower value first.
        { "bulyan:1", 7, 1, { { 0 }, { 1 }, { 2 }, { 3 }, { 4 }, { 50 }, { -60 } }, { 0 }, 0, { 2 }, 0 },
        //  In 1-D the geometric median is the median; the start already is.
        { "gm", 3, 1, { { 0 }, { 1 }, { 10 } }, { 0 }, -1, { 1 }, 0 },
        //  Equilateral triangle: the centroid (1, 1/sqrt 3).
        { "gm:1e-9:200:1e-12", 3, 2, { { 0, 0 }, { 2, 0 }, { 1, 1.7320508f } }, { 0 }, -1,
          { 1, 0.57735027f }, 1e-4f },
        //  From x0: (1/3) (0 + clip_1 ((3, 4)) + (0.5, 0)) = (1.1, 0.8) / 3.
        { "cclip:1:1", 3, 2, { { 0, 0 }, { 3, 4 }, { 0.5f, 0 } }, { 0 }, 0, { 1.1f / 3, 0.8f / 3 }, 1e-6f },
        { "scclip:1", 3, 2, { { 0, 0 }, { 3, 4 }, { 0.5f, 0 } }, { 0 }, 0, { 1.1f / 3, 0.8f / 3 }, 1e-6f },
        { "scclip:1", 3, 2, { { 0, 0 }, { 3, 4 }, { 0.5f, 0 } }, { 2, 1, 1 }, 0, { 0.275f, 0.2f }, 1e-6f },
        //  tau^2 = (0.25 * 0 + 0.25 * 1) / 0.5: every neighbour clipped to
        //  sqrt 0.5, out = 0.25 * 3 * sqrt 0.5.
        { "scclip:auto:0.5", 4, 1, { { 0 }, { 1 }, { 2 }, { 10 } }, { 0 }, 0, { 0.53033009f }, 1e-6f },
        //  Self is input 1 here: out = 1 + 0.25 ((0 - 1) + (2 - 1) + clip (9)).
        { "scclip:2", 4, 1, { { 0 }, { 1 }, { 2 }, { 10 } }, { 0 }, 1, { 1.5f }, 1e-6f },
        //  f = 1: 0 -> (0, 1), 1 -> (1, 0), 10 -> (10, 1): (0.5 + 0.5 + 5.5) / 3.
        { "nnm:1+mean", 3, 1, { { 0 }, { 1 }, { 10 } }, { 0 }, -1, { 6.5f / 3 }, 1e-6f },
        //  Mixed: 1.5, 1.5, 1.5, 1.5, 26.5; Krum picks the first.
        { "nnm+krum:1", 5, 1, { { 0 }, { 1 }, { 2 }, { 3 }, { 100 } }, { 0 }, 0, { 1.5f }, 1e-6f },
        { "bucket:1+cwmed", 3, 1, { { 3 }, { 1 }, { 2 } }, { 0 }, -1, { 2 }, 0 },
        { "bucket:3+mean", 3, 1, { { 3 }, { 1 }, { 2 } }, { 0 }, -1, { 2 }, 1e-6f },
        { "bucket:2+mean", 4, 1, { { 1 }, { 2 }, { 3 }, { 6 } }, { 1, 1, 1, 1 }, -1, { 3 }, 1e-6f },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        s_set_t s;
        s_set_new (&s, cases [c].k, cases [c].d);
        bool weighted = false;
        for (size_t i = 0; i < s.k; i++) {
            memcpy (s_row (&s, i), cases [c].in [i], s.d * sizeof (float));
            weighted |= cases [c].w [i] != 0;
        }
        gc_robust_t *r = s_rule (cases [c].spec);
        //  Both kernel paths must give the hand result.
        for (int portable = 0; portable < 2; portable++) {
            gc_robust_set_portable (r, portable);
            float out [2] = { NAN, NAN };
            assert_int_equal (s_agg (r, &s, weighted ? cases [c].w : NULL, cases [c].self, out), 0);
            for (size_t j = 0; j < s.d; j++)
                if (!(fabsf (out [j] - cases [c].expect [j]) <= cases [c].tol))
                    fail_msg ("case %zu (%s): out[%zu] = %.9g, expected %.9g",
                              c, cases [c].spec, j, out [j], cases [c].expect [j]);
        }
        gc_robust_destroy (&r);
        s_set_free (&s);
    }
}

static void
test_info_reports_choices (void **state)
{
    s_set_t s;
    s_set_new (&s, 5, 1);
    const float v [] = { 0, 1, 2, 3, 100 };
    for (size_t i = 0; i < 5; i++)
        s_row (&s, i) [0] = v [i];
    float out;
    gc_robust_t *r = s_rule ("mkrum:1:3");
    assert_int_equal (s_agg (r, &s, NULL, 0, &out), 0);
    const gc_robust_info_t *info = gc_robust_info (r);
    //  Scores 5, 2, 2, 5, huge: best first; ties go to the smaller sum of
    //  all squared distances (9610 < 9807, 9423 < 10014).
    assert_int_equal (info->n_selected, 3);
    assert_int_equal (info->selected [0], 2);
    assert_int_equal (info->selected [1], 1);
    assert_int_equal (info->selected [2], 3);
    assert_int_equal (info->gram_passes, 1);
    gc_robust_destroy (&r);
    r = s_rule ("scclip:auto:0.5");
    assert_int_equal (s_agg (r, &s, NULL, 0, &out), 0);
    //  Nearest half of the weight: self (0.2 at 0), input 1 (0.2 at 1),
    //  0.1 of input 2 (at 4): tau^2 = (0.2 + 0.4) / 0.5.
    assert_true (fabs (gc_robust_info (r)->tau - sqrt (1.2)) < 1e-12);
    assert_int_equal (gc_robust_info (r)->n_clipped, 3);
    gc_robust_destroy (&r);
    s_set_free (&s);
}

//  --- Properties ---------------------------------------------------------------------

static const char *s_all_rules [] = {
    "mean", "cwmed", "cwtm:0", "cwtm:1", "cwtm:3", "krum:1", "krum:2", "mkrum:1:4",
    "bulyan:1", "gm", "cclip:2:3", "scclip", "scclip:1.5", "nnm+cwtm:1", "nnm+krum:2",
    "nnm:2+gm", NULL
};

static float
s_max_diff (const float *a, const float *b, size_t d)
{
    float m = 0;
    for (size_t j = 0; j < d; j++)
        m = fabsf (a [j] - b [j]) > m ? fabsf (a [j] - b [j]) : m;
    return m;
}

static void
test_permutation_invariance (void **state)
{
    gc_rng_t rng;
    gc_rng_init (&rng, 21, 0);
    size_t k = 9, d = 37;
    s_set_t s, p;
    s_set_new (&s, k, d);
    s_set_new (&p, k, d);
    s_fill_honest (&s, &rng, 0, 1.0f, 1.0f);
    for (size_t j = 0; j < d; j++)
        s_row (&s, 3) [j] += 50.0f;             /* one outlier */
    size_t perm [9];
    for (size_t i = 0; i < k; i++)
        perm [i] = i;
    for (size_t i = k; i > 1; i--) {
        size_t j = gc_rng_below (&rng, i), t = perm [i - 1];
        perm [i - 1] = perm [j];
        perm [j] = t;
    }
    int self = 0, pself = -1;
    for (size_t i = 0; i < k; i++) {
        memcpy (s_row (&p, i), s_row (&s, perm [i]), d * sizeof (float));
        if ((int) perm [i] == self)
            pself = (int) i;
    }
    float a [37], b [37];
    for (size_t r = 0; s_all_rules [r]; r++) {
        gc_robust_t *rule = s_rule (s_all_rules [r]);
        assert_int_equal (s_agg (rule, &s, NULL, self, a), 0);
        assert_int_equal (s_agg (rule, &p, NULL, pself, b), 0);
        //  Only the order of floating-point sums changes (gm: also the
        //  convergence path, to within its tolerance).
        float tol = !strncmp (s_all_rules [r], "gm", 2) || strstr (s_all_rules [r], "gm") ? 1e-3f : 1e-5f;
        if (!(s_max_diff (a, b, d) <= tol))
            fail_msg ("%s: permuted inputs change the output by %g", s_all_rules [r], s_max_diff (a, b, d));
        gc_robust_destroy (&rule);
    }
    s_set_free (&s);
    s_set_free (&p);
}

static void
test_translation_equivariance (void **state)
{
    //  Multiples of 1/8 near zero plus integers up to 1000: the translated
    //  inputs are exact, so differences are rounding of the rules' own sums.
    gc_rng_t rng;
    gc_rng_init (&rng, 22, 0);
    size_t k = 9, d = 29;
    s_set_t s, t;
    s_set_new (&s, k, d);
    s_set_new (&t, k, d);
    float shift [29];
    for (size_t j = 0; j < d; j++)
        shift [j] = (float) gc_rng_below (&rng, 2001) - 1000.0f;
    for (size_t i = 0; i < k; i++)
        for (size_t j = 0; j < d; j++) {
            float v = (float) gc_rng_below (&rng, 129) / 8.0f - 8.0f + (i == 5 ? 40.0f : 0.0f);
            s_row (&s, i) [j] = v;
            s_row (&t, i) [j] = v + shift [j];
        }
    const char *rules [] = { "mean", "cwmed", "cwtm:2", "krum:1", "mkrum:2:3", "bulyan:1",
                             "gm", "cclip:4:2", "scclip", "nnm+cwtm:2", "bucket:2+cwmed", NULL };
    float a [29], b [29];
    for (size_t r = 0; rules [r]; r++) {
        gc_robust_t *rule = s_rule (rules [r]);
        gc_robust_set_seed (rule, 5);
        assert_int_equal (s_agg (rule, &s, NULL, 0, a), 0);
        gc_robust_set_seed (rule, 5);
        assert_int_equal (s_agg (rule, &t, NULL, 0, b), 0);
        for (size_t j = 0; j < d; j++) {
            //  Float rounding at magnitude 1000 is 6e-5; gm converges to 1e-6
            //  relative objective, about 1e-3 in position here.
            float tol = !strcmp (rules [r], "gm") ? 2e-3f : 2e-4f;
            if (!(fabsf (b [j] - (a [j] + shift [j])) <= tol))
                fail_msg ("%s: coordinate %zu moved by %g instead of %g", rules [r], j,
                          b [j] - a [j], shift [j]);
        }
        gc_robust_destroy (&rule);
    }
    s_set_free (&s);
    s_set_free (&t);
}

//  --- Robustness ------------------------------------------------------------------------

typedef enum { S_HUGE, S_FLTMAX, S_ALIE, S_MIMIC, S_ATTACKS } s_attack_t;

//  The first f inputs become outliers of the given kind.
static void
s_attack (s_set_t *s, gc_rng_t *rng, size_t f, s_attack_t kind)
{
    size_t d = s->d;
    for (size_t j = 0; j < d; j++) {
        //  Honest mean and spread of this coordinate (inputs f..k-1).
        double mu = 0, var = 0;
        for (size_t i = f; i < s->k; i++)
            mu += s_row (s, i) [j];
        mu /= (double) (s->k - f);
        for (size_t i = f; i < s->k; i++)
            var += (s_row (s, i) [j] - mu) * (s_row (s, i) [j] - mu);
        double sd = sqrt (var / (double) (s->k - f));
        for (size_t i = 0; i < f; i++) {
            float v;
            switch (kind) {
                case S_HUGE:   v = gc_rng_below (rng, 2) ? 1e30f : -1e30f; break;
                case S_FLTMAX: v = FLT_MAX; break;
                case S_ALIE:   v = (float) (mu - 1.5 * sd); break;
                default:       v = (float) (mu + 3 * sd) + (float) i; break;
            }
            s_row (s, i) [j] = v;
        }
    }
}

static void
test_cw_stays_in_honest_range (void **state)
{
    static const size_t ks [] = { 3, 4, 5, 7, 8, 9, 16, 17, 33 };
    gc_rng_t rng;
    gc_rng_init (&rng, 23, 0);
    size_t d = 50;
    float out [50];
    for (size_t ki = 0; ki < sizeof ks / sizeof ks [0]; ki++) {
        size_t k = ks [ki];
        for (size_t f = 1; 2 * f < k; f++)
            for (int kind = 0; kind < S_ATTACKS; kind++) {
                s_set_t s;
                s_set_new (&s, k, d);
                s_fill_honest (&s, &rng, f, 0.0f, 1.0f);
                s_attack (&s, &rng, f, (s_attack_t) kind);
                //  The median, and every trimmed mean with b >= f.
                for (size_t b = f; 2 * b < k + 1; b++) {
                    char spec [32];
                    if (2 * b >= k)
                        snprintf (spec, sizeof spec, "cwmed");
                    else
                        snprintf (spec, sizeof spec, "cwtm:%zu", b);
                    gc_robust_t *r = s_rule (spec);
                    assert_int_equal (s_agg (r, &s, NULL, -1, out), 0);
                    for (size_t j = 0; j < d; j++) {
                        float lo = INFINITY, hi = -INFINITY;
                        for (size_t i = f; i < k; i++) {
                            lo = fminf (lo, s_row (&s, i) [j]);
                            hi = fmaxf (hi, s_row (&s, i) [j]);
                        }
                        if (!(out [j] >= lo && out [j] <= hi))
                            fail_msg ("%s k=%zu f=%zu attack %d: %g outside [%g, %g]",
                                      spec, k, f, kind, out [j], lo, hi);
                    }
                    gc_robust_destroy (&r);
                }
                s_set_free (&s);
            }
    }
}

static bool
s_equal_to_input (const float *out, const s_set_t *s, size_t i)
{
    return !memcmp (out, s->in [i], s->d * sizeof *out);
}

static void
test_krum_family_picks_honest (void **state)
{
    static const size_t ks [] = { 5, 9, 16 };
    gc_rng_t rng;
    gc_rng_init (&rng, 24, 0);
    size_t d = 200;
    float out [200];
    for (size_t ki = 0; ki < 3; ki++) {
        size_t k = ks [ki], f = (k - 3) / 2;
        for (int kind = 0; kind < 3; kind++) {
            s_set_t s;
            s_set_new (&s, k, d);
            s_fill_honest (&s, &rng, f, 3.0f, 1.0f);
            //  Far outliers: 1e30, a colluding cluster 100 sigma away, FLT_MAX.
            for (size_t i = 0; i < f; i++)
                for (size_t j = 0; j < d; j++)
                    s_row (&s, i) [j] = kind == 0 ? 1e30f : kind == 1 ? 100.0f + 0.001f * (float) i : FLT_MAX;
            char spec [32];
            snprintf (spec, sizeof spec, "krum:%zu", f);
            gc_robust_t *r = s_rule (spec);
            //  The peer's own vector (last, honest) as Gram centre; and none,
            //  where input 0 (an outlier) is the first centre tried.
            for (int self = -1; self <= (int) k - 1; self += (int) k) {
                assert_int_equal (s_agg (r, &s, NULL, self, out), 0);
                const gc_robust_info_t *info = gc_robust_info (r);
                assert_true (info->selected [0] >= f);
                assert_true (s_equal_to_input (out, &s, info->selected [0]));
                if (self < 0 && f > 0)
                    assert_int_equal (info->gram_passes, 2);
            }
            gc_robust_destroy (&r);
            snprintf (spec, sizeof spec, "mkrum:%zu:%zu", f, k - 2 * f);
            r = s_rule (spec);
            assert_int_equal (s_agg (r, &s, NULL, (int) k - 1, out), 0);
            for (size_t t = 0; t < gc_robust_info (r)->n_selected; t++)
                assert_true (gc_robust_info (r)->selected [t] >= f);
            gc_robust_destroy (&r);
            if (k >= 4 * f + 3) {
                snprintf (spec, sizeof spec, "bulyan:%zu", f);
                r = s_rule (spec);
                assert_int_equal (s_agg (r, &s, NULL, -1, out), 0);
                for (size_t t = 0; t < gc_robust_info (r)->n_selected; t++)
                    assert_true (gc_robust_info (r)->selected [t] >= f);
                gc_robust_destroy (&r);
            }
            s_set_free (&s);
        }
    }
}

//  --- References for the distance and iterative rules ----------------------------

static double
s_dist2 (const float *a, const float *b, size_t d)
{
    double s = 0;
    for (size_t j = 0; j < d; j++)
        s += ((double) a [j] - b [j]) * ((double) a [j] - b [j]);
    return s;
}

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

//  Krum scores from exact distances.
static void
s_ref_krum_scores (const s_set_t *s, size_t f, double *score)
{
    double row [S_KMAX];
    for (size_t i = 0; i < s->k; i++) {
        size_t n = 0;
        for (size_t j = 0; j < s->k; j++)
            if (j != i)
                row [n++] = s_dist2 (s->in [i], s->in [j], s->d);
        qsort (row, n, sizeof *row, s_cmp_double);
        score [i] = 0;
        for (size_t t = 0; t < s->k - f - 2; t++)
            score [i] += row [t];
    }
}

static void
test_krum_matches_exact_distances (void **state)
{
    //  Nearly identical models of large norm (what gossip peers hold):
    //  Gram cancellation is the risk the centring removes. Then the same
    //  data behind a far first input with no self (the recentre path).
    gc_rng_t rng;
    gc_rng_init (&rng, 25, 0);
    size_t k = 12, d = 3000, f = 2;
    float out [3000];
    for (int scenario = 0; scenario < 2; scenario++)
        for (int rep = 0; rep < 5; rep++) {
            s_set_t s;
            s_set_new (&s, k, d);
            for (size_t j = 0; j < d; j++) {
                float base = 100.0f * (float) gc_rng_normal (&rng);
                for (size_t i = 0; i < k; i++)
                    s_row (&s, i) [j] = base + 1e-3f * (float) gc_rng_normal (&rng)
                                      + (scenario && i == 0 ? 1e6f : 0.0f);
            }
            double score [S_KMAX], best = INFINITY;
            s_ref_krum_scores (&s, f, score);
            for (size_t i = 0; i < k; i++)
                best = score [i] < best ? score [i] : best;
            gc_robust_t *r = s_rule ("krum:2");
            assert_int_equal (s_agg (r, &s, NULL, scenario ? -1 : 3, out), 0);
            size_t pick = gc_robust_info (r)->selected [0];
            //  Chosen score equal to the best to 1e-6 relative: Gram errors
            //  stay far below the 1e-2 spread of these scores.
            if (!(score [pick] <= best * (1 + 1e-6)))
                fail_msg ("scenario %d: picked %zu with score %.9g, best %.9g", scenario, pick,
                          score [pick], best);
            assert_int_equal (gc_robust_info (r)->gram_passes, scenario ? 2 : 1);
            gc_robust_destroy (&r);
            s_set_free (&s);
        }
}

//  Weiszfeld in double for many iterations: the geometric median to ~1e-10.
static void
s_ref_geomed (const s_set_t *s, double *z)
{
    size_t d = s->d;
    for (size_t j = 0; j < d; j++) {
        z [j] = 0;
        for (size_t i = 0; i < s->k; i++)
            z [j] += s->in [i][j] / (double) s->k;
    }
    double next [16];
    for (int it = 0; it < 20000; it++) {
        double bsum = 0;
        memset (next, 0, d * sizeof *next);
        for (size_t i = 0; i < s->k; i++) {
            double dist = 0;
            for (size_t j = 0; j < d; j++)
                dist += (z [j] - s->in [i][j]) * (z [j] - s->in [i][j]);
            double b = 1.0 / fmax (sqrt (dist), 1e-12);
            bsum += b;
            for (size_t j = 0; j < d; j++)
                next [j] += b * s->in [i][j];
        }
        for (size_t j = 0; j < d; j++)
            z [j] = next [j] / bsum;
    }
}

static double
s_gm_objective (const s_set_t *s, const float *z)
{
    double obj = 0;
    for (size_t i = 0; i < s->k; i++)
        obj += sqrt (s_dist2 (s->in [i], z, s->d));
    return obj;
}

static void
test_gm_matches_reference (void **state)
{
    gc_rng_t rng;
    gc_rng_init (&rng, 26, 0);
    size_t k = 7, d = 5;
    s_set_t s;
    s_set_new (&s, k, d);
    s_fill_honest (&s, &rng, 0, 0.0f, 1.0f);
    for (size_t j = 0; j < d; j++) {
        s_row (&s, 0) [j] = 40.0f;              /* two outliers */
        s_row (&s, 1) [j] = -25.0f + (float) j;
    }
    double z [5];
    s_ref_geomed (&s, z);
    float ref [5], out [5];
    for (size_t j = 0; j < d; j++)
        ref [j] = (float) z [j];
    gc_robust_t *tight = s_rule ("gm:1e-9:1000:1e-12");
    assert_int_equal (s_agg (tight, &s, NULL, -1, out), 0);
    for (size_t j = 0; j < d; j++)
        assert_true (fabs (out [j] - z [j]) < 1e-4);
    gc_robust_destroy (&tight);
    //  Defaults: the objective within 1e-5 of the optimum's.
    gc_robust_t *def = s_rule ("gm");
    assert_int_equal (s_agg (def, &s, NULL, -1, out), 0);
    assert_true (s_gm_objective (&s, out) <= s_gm_objective (&s, ref) * (1 + 1e-5));
    assert_true (gc_robust_info (def)->iterations >= 1 && gc_robust_info (def)->iterations <= 32);
    gc_robust_destroy (&def);
    s_set_free (&s);
}

//  cclip from a centre, in double: v += sum_i w_i clip_tau (x_i - v), L times.
static void
s_ref_cclip (const s_set_t *s, const double *w, const float *centre, double tau, int iters,
             double *v)
{
    size_t d = s->d;
    for (size_t j = 0; j < d; j++)
        v [j] = centre [j];
    double step [512];
    assert_true (d <= 512);
    for (int it = 0; it < iters; it++) {
        memset (step, 0, d * sizeof *step);
        for (size_t i = 0; i < s->k; i++) {
            double dist = 0;
            for (size_t j = 0; j < d; j++)
                dist += (s->in [i][j] - v [j]) * (s->in [i][j] - v [j]);
            dist = sqrt (dist);
            double c = dist > tau ? tau / dist : 1.0;
            for (size_t j = 0; j < d; j++)
                step [j] += w [i] * c * (s->in [i][j] - v [j]);
        }
        for (size_t j = 0; j < d; j++)
            v [j] += step [j];
    }
}

//  d = 300: two whole blocks of the kernels (read straight from the inputs)
//  and a partial one (through the tile); both kernel paths give the same bytes.
static void
test_clipping_matches_reference (void **state)
{
    enum { D = 300 };
    gc_rng_t rng;
    gc_rng_init (&rng, 27, 0);
    static const size_t dims [] = { 40, D };
    for (size_t t = 0; t < 2; t++) {
        size_t k = 6, d = dims [t];
        s_set_t s;
        s_set_new (&s, k, d);
        s_fill_honest (&s, &rng, 0, 0.0f, 1.0f);
        for (size_t j = 0; j < d; j++)
            s_row (&s, 4) [j] += 30.0f;
        double w [6] = { 3, 1, 2, 1, 1, 2 }, wn [6], v [D];
        for (size_t i = 0; i < k; i++)
            wn [i] = w [i] / 10.0;
        float out [D], fast [D], centre [D];
        for (size_t j = 0; j < d; j++)
            centre [j] = 0.5f;
        //  cclip from the peer's vector (input 2) and from an explicit centre;
        //  scclip is one clipping step around the peer's vector.
        static const struct { const char *spec; double tau; int iters; bool centred; } cases [] = {
            { "cclip:3:4", 3.0, 4, false }, { "cclip:3:4", 3.0, 4, true }, { "scclip:3", 3.0, 1, false },
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
            gc_robust_t *r = s_rule (cases [c].spec);
            const float *from = cases [c].centred ? centre : s.in [2];
            s_ref_cclip (&s, wn, from, cases [c].tau, cases [c].iters, v);
            for (int portable = 0; portable < 2; portable++) {
                gc_robust_set_portable (r, portable);
                gc_err_t err;
                if (cases [c].centred)
                    assert_int_equal (gc_robust_aggregate_centered (r, s.in, w, k, d, -1, centre, out, &err), 0);
                else
                    assert_int_equal (s_agg (r, &s, w, 2, out), 0);
                for (size_t j = 0; j < d; j++)
                    if (!(fabs (out [j] - v [j]) < 1e-5))
                        fail_msg ("%s d %zu portable %d: out[%zu] = %.9g, reference %.9g",
                                  cases [c].spec, d, portable, j, (double) out [j], v [j]);
                if (portable)
                    assert_memory_equal (out, fast, d * sizeof *out);
                else
                    memcpy (fast, out, d * sizeof *out);
            }
            gc_robust_destroy (&r);
        }
        //  A NaN inside a whole block, in an input of weight 0 too, is reported
        //  by both paths and names its input.
        double w0 [6] = { 3, 1, 2, 0, 1, 2 };
        for (int zero = 0; zero < 2; zero++) {
            s_row (&s, 3) [d > 256 ? 200 : d - 8] = NAN;
            gc_robust_t *r = s_rule ("scclip:3");
            for (int portable = 0; portable < 2; portable++) {
                gc_robust_set_portable (r, portable);
                gc_err_t err;
                assert_int_equal (gc_robust_aggregate (r, s.in, zero ? w0 : w, k, d, 2, out, &err), -1);
                assert_int_equal (err.code, GC_E_NONFINITE);
                assert_int_equal (gc_robust_bad_input (r), 3);
            }
            gc_robust_destroy (&r);
        }
        s_set_free (&s);
    }
}

//  NNM by exact distances, materialised.
static void
s_ref_nnm (const s_set_t *s, size_t f, s_set_t *mixed)
{
    size_t k = s->k, d = s->d;
    for (size_t i = 0; i < k; i++) {
        double key [S_KMAX];
        size_t idx [S_KMAX];
        for (size_t j = 0; j < k; j++) {
            key [j] = j == i ? -1 : s_dist2 (s->in [i], s->in [j], d);
            idx [j] = j;
        }
        for (size_t a = 1; a < k; a++)          /* insertion sort by (key, index) */
            for (size_t b = a; b > 0 && key [idx [b]] < key [idx [b - 1]]; b--) {
                size_t t = idx [b];
                idx [b] = idx [b - 1];
                idx [b - 1] = t;
            }
        for (size_t j = 0; j < d; j++) {
            double sum = 0;
            for (size_t t = 0; t < k - f; t++)
                sum += s->in [idx [t]][j];
            s_row (mixed, i) [j] = (float) (sum / (double) (k - f));
        }
    }
}

static void
test_nnm_matches_reference (void **state)
{
    gc_rng_t rng;
    gc_rng_init (&rng, 28, 0);
    size_t k = 10, d = 33, f = 2;
    s_set_t s, mixed;
    s_set_new (&s, k, d);
    s_set_new (&mixed, k, d);
    s_fill_honest (&s, &rng, 0, 1.0f, 1.0f);
    for (size_t j = 0; j < d; j++) {
        s_row (&s, 0) [j] = 1e4f;
        s_row (&s, 7) [j] *= -20.0f;
    }
    s_ref_nnm (&s, f, &mixed);
    float a [33], b [33];
    const char *pairs [][2] = { { "nnm:2+mean", "mean" }, { "nnm:2+cwtm:2", "cwtm:2" },
                                { "nnm+krum:2", "krum:2" }, { "nnm:2+gm", "gm" } };
    for (size_t p = 0; p < 4; p++) {
        gc_robust_t *with = s_rule (pairs [p][0]), *plain = s_rule (pairs [p][1]);
        assert_int_equal (s_agg (with, &s, NULL, 1, a), 0);
        assert_int_equal (s_agg (plain, &mixed, NULL, 1, b), 0);
        if (!(s_max_diff (a, b, d) <= 1e-4f))
            fail_msg ("%s differs from %s on the mixed inputs by %g", pairs [p][0], pairs [p][1],
                      s_max_diff (a, b, d));
        gc_robust_destroy (&with);
        gc_robust_destroy (&plain);
    }
    s_set_free (&s);
    s_set_free (&mixed);
}

static void
test_bucketing (void **state)
{
    gc_rng_t rng;
    gc_rng_init (&rng, 29, 0);
    size_t k = 11, d = 20;
    s_set_t s;
    s_set_new (&s, k, d);
    s_fill_honest (&s, &rng, 0, 0.0f, 1.0f);
    double w [11];
    for (size_t i = 0; i < k; i++)
        w [i] = 1.0 + (double) i;
    float a [20], b [20], c [20];
    gc_robust_t *r = s_rule ("bucket:3+cwmed");
    //  Reproducible from the seed; the next call draws other buckets.
    gc_robust_set_seed (r, 9);
    assert_int_equal (s_agg (r, &s, NULL, -1, a), 0);
    assert_int_equal (s_agg (r, &s, NULL, -1, c), 0);
    gc_robust_set_seed (r, 9);
    assert_int_equal (s_agg (r, &s, NULL, -1, b), 0);
    assert_memory_equal (a, b, sizeof a);
    assert_memory_not_equal (a, c, sizeof a);
    gc_robust_destroy (&r);
    //  Weighted bucket means, weighted by bucket weight: the weighted mean.
    r = s_rule ("bucket:3+mean");
    gc_robust_t *mean = s_rule ("mean");
    assert_int_equal (s_agg (r, &s, w, -1, a), 0);
    assert_int_equal (s_agg (mean, &s, w, -1, b), 0);
    assert_true (s_max_diff (a, b, d) < 1e-6f);
    gc_robust_destroy (&r);
    gc_robust_destroy (&mean);
    s_set_free (&s);
}

//  --- Errors ------------------------------------------------------------------------

static void
test_invalid_parameters (void **state)
{
    s_set_t s;
    s_set_new (&s, 8, 4);
    gc_rng_t rng;
    gc_rng_init (&rng, 30, 0);
    s_fill_honest (&s, &rng, 0, 0.0f, 1.0f);
    float out [4];
    double neg [8] = { 1, 1, -1, 1, 1, 1, 1, 1 }, zero [8] = { 0 }, nan_w [8] = { 1, NAN, 1, 1, 1, 1, 1, 1 };
    static const struct {
        const char *spec;
        size_t k, d;
        int self;
        int weights;            /* 0 none, 1 negative, 2 all zero, 3 NaN */
        int code;
    } cases [] = {
        { "krum:1", 4, 4, -1, 0, GC_E_INPUT },          /* k <= 2f + 2 */
        { "krum:2", 6, 4, -1, 0, GC_E_INPUT },
        { "mkrum:1:5", 5, 4, -1, 0, GC_E_INPUT },       /* m > k - f */
        { "cwtm:2", 4, 4, -1, 0, GC_E_INPUT },          /* 2b >= k */
        { "cwtm:1", 2, 4, -1, 0, GC_E_INPUT },
        { "bulyan:1", 6, 4, -1, 0, GC_E_INPUT },        /* k < 4f + 3 */
        { "bucket:2+krum:1", 8, 4, -1, 0, GC_E_INPUT }, /* 4 buckets < 5 */
        { "nnm:3+mean", 3, 4, -1, 0, GC_E_INPUT },
        { "scclip", 5, 4, -1, 0, GC_E_INPUT },          /* no own vector */
        { "cwmed", 0, 4, -1, 0, GC_E_INPUT },
        { "cwmed", 5, 0, -1, 0, GC_E_INPUT },
        { "cwmed", 5, 4, 5, 0, GC_E_INPUT },
        { "cwmed", 5, 4, -2, 0, GC_E_INPUT },
        { "mean", 5, 4, -1, 1, GC_E_WEIGHTS },
        { "mean", 5, 4, -1, 2, GC_E_WEIGHTS },
        { "gm", 5, 4, -1, 3, GC_E_WEIGHTS },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_robust_t *r = s_rule (cases [c].spec);
        const double *w = cases [c].weights == 1 ? neg : cases [c].weights == 2 ? zero
                        : cases [c].weights == 3 ? nan_w : NULL;
        gc_err_t err = { 0 };
        int rc = gc_robust_aggregate (r, s.in, w, cases [c].k, cases [c].d, cases [c].self, out, &err);
        if (rc != -1 || err.code != cases [c].code || !err.msg [0])
            fail_msg ("case %zu (%s): rc %d code %d '%s'", c, cases [c].spec, rc, err.code, err.msg);
        gc_robust_destroy (&r);
    }
    //  Pointer errors: NULL input, out overlapping an input or the centre.
    gc_robust_t *r = s_rule ("cwmed");
    gc_err_t err = { 0 };
    const float *with_null [3] = { s.in [0], NULL, s.in [2] };
    assert_int_equal (gc_robust_aggregate (r, with_null, NULL, 3, 4, -1, out, &err), -1);
    assert_int_equal (err.code, GC_E_ARG);
    assert_int_equal (gc_robust_aggregate (r, s.in, NULL, 3, 4, -1, s_row (&s, 1) + 2, &err), -1);
    assert_int_equal (err.code, GC_E_ARG);
    assert_int_equal (gc_robust_aggregate (r, NULL, NULL, 3, 4, -1, out, &err), -1);
    assert_int_equal (err.code, GC_E_ARG);
    gc_robust_destroy (&r);
    r = s_rule ("cclip");
    float centre [4] = { 0, NAN, 0, 0 };
    assert_int_equal (gc_robust_aggregate_centered (r, s.in, NULL, 3, 4, -1, centre, out, &err), -1);
    assert_int_equal (err.code, GC_E_INPUT);
    assert_int_equal (gc_robust_aggregate_centered (r, s.in, NULL, 3, 4, -1, out + 1, out, &err), -1);
    assert_int_equal (err.code, GC_E_ARG);
    gc_robust_destroy (&r);
    s_set_free (&s);
}

static void
test_nonfinite_inputs_are_reported (void **state)
{
    static const char *rules [] = { "mean", "cwmed", "cwtm:1", "krum:1", "mkrum:1:2", "bulyan:1",
                                    "gm", "cclip", "scclip", "nnm+cwtm:1", "bucket:2+cwmed",
                                    "bucket:2+nnm:1+mean", NULL };
    const float bad_values [] = { NAN, INFINITY, -INFINITY };
    size_t k = 9, d = 300;
    s_set_t s;
    s_set_new (&s, k, d);
    gc_rng_t rng;
    gc_rng_init (&rng, 31, 0);
    float out [300];
    double w [9] = { 1, 1, 1, 1, 1, 1, 0, 1, 1 };      /* input 6 has zero weight */
    for (size_t r = 0; rules [r]; r++) {
        gc_robust_t *rule = s_rule (rules [r]);
        for (int portable = 0; portable < 2; portable++) {
            gc_robust_set_portable (rule, portable);
            //  (input, coordinate): first, in the middle of a block, the tail.
            static const size_t where [][2] = { { 0, 0 }, { 4, 150 }, { 8, 299 }, { 6, 17 } };
            for (size_t p = 0; p < 4; p++) {
                s_fill_honest (&s, &rng, 0, 0.0f, 1.0f);
                s_row (&s, where [p][0]) [where [p][1]] = bad_values [(p + r) % 3];
                gc_err_t err = { 0 };
                int rc = gc_robust_aggregate (rule, s.in, w, k, d, 1, out, &err);
                if (rc != -1 || err.code != GC_E_NONFINITE
                ||  gc_robust_bad_input (rule) != (int) where [p][0])
                    fail_msg ("%s: bad input %zu not reported (rc %d, code %d, reported %d)",
                              rules [r], where [p][0], rc, err.code, gc_robust_bad_input (rule));
            }
            //  Several at once: all listed.
            s_fill_honest (&s, &rng, 0, 0.0f, 1.0f);
            s_row (&s, 2) [5] = NAN;
            s_row (&s, 7) [250] = INFINITY;
            assert_int_equal (gc_robust_aggregate (rule, s.in, NULL, k, d, 1, out, NULL), -1);
            size_t idx [9];
            assert_int_equal (gc_robust_bad_inputs (rule, idx, 9), 2);
            assert_int_equal (idx [0], 2);
            assert_int_equal (idx [1], 7);
            //  A good call clears the report.
            s_fill_honest (&s, &rng, 0, 0.0f, 1.0f);
            assert_int_equal (s_agg (rule, &s, NULL, 1, out), 0);
            assert_int_equal (gc_robust_bad_input (rule), -1);
            for (size_t j = 0; j < d; j++)
                assert_true (isfinite (out [j]));
        }
        gc_robust_destroy (&rule);
    }
    s_set_free (&s);
}

static void
test_workspace_reuse (void **state)
{
    //  A long-lived object that saw larger shapes gives the same bytes as
    //  a fresh one, for every rule.
    static const size_t shapes [][2] = { { 7, 100 }, { 33, 1000 }, { 9, 17 }, { 7, 100 } };
    gc_rng_t rng;
    gc_rng_init (&rng, 32, 0);
    for (size_t r = 0; s_all_rules [r]; r++) {
        gc_robust_t *old = s_rule (s_all_rules [r]);
        for (size_t sh = 0; sh < 4; sh++) {
            s_set_t s;
            s_set_new (&s, shapes [sh][0], shapes [sh][1]);
            s_fill_honest (&s, &rng, 0, 0.0f, 1.0f);
            float *a = malloc (s.d * sizeof *a), *b = malloc (s.d * sizeof *b);
            gc_robust_t *fresh = s_rule (s_all_rules [r]);
            assert_int_equal (s_agg (old, &s, NULL, 0, a), 0);
            assert_int_equal (s_agg (fresh, &s, NULL, 0, b), 0);
            assert_memory_equal (a, b, s.d * sizeof *a);
            gc_robust_destroy (&fresh);
            free (a);
            free (b);
            s_set_free (&s);
        }
        gc_robust_destroy (&old);
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_spec_table),
        cmocka_unit_test (test_hand_cases),
        cmocka_unit_test (test_info_reports_choices),
        cmocka_unit_test (test_permutation_invariance),
        cmocka_unit_test (test_translation_equivariance),
        cmocka_unit_test (test_cw_stays_in_honest_range),
        cmocka_unit_test (test_krum_family_picks_honest),
        cmocka_unit_test (test_krum_matches_exact_distances),
        cmocka_unit_test (test_gm_matches_reference),
        cmocka_unit_test (test_clipping_matches_reference),
        cmocka_unit_test (test_nnm_matches_reference),
        cmocka_unit_test (test_bucketing),
        cmocka_unit_test (test_invalid_parameters),
        cmocka_unit_test (test_nonfinite_inputs_are_reported),
        cmocka_unit_test (test_workspace_reuse),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
