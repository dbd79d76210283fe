/*  Local validation (node/gc_validate): a neighbour whose model does much
    worse on the held-out samples loses its weight to the peer's own model, honest ones keep
    theirs; one only somewhat worse than the inputs' median loses it to the relative test
    (REL = 1, the default; REL = 0 keeps it) unless the peer's own labels are as skewed, and
    comes back only at full weight; the held-out split and the schedule are deterministic;
    bad specs name gossip/validate. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_dataset.h"
#include "gc_mem.h"
#include "gc_model.h"
#include "gc_rng.h"
#include "gc_validate.h"
#include "net_fixture.h"

#define S_DIM 20
#define S_SPEC "mlp:20-16-4"

typedef struct {
    gc_dataset_t train, test, held, rest;
    gc_model_t  *model;
    size_t       n;
    float       *own, *honest, *bad, *grad;
} s_fix_t;

static void
s_train (s_fix_t *f, float *params, const uint8_t *y)
{
    for (int step = 0; step < 200; step++) {
        size_t at = (size_t) (step * 32) % (f->rest.n - 32);
        gc_model_loss_grad (f->model, params, f->rest.x + at * S_DIM, y + at, 32, f->grad, 1, 0, NULL);
        for (size_t i = 0; i < f->n; i++)
            params [i] -= 0.1f * f->grad [i];
    }
}

//  Held-out samples two models score unlike (one right, the other wrong).
static size_t
s_unlike (s_fix_t *f, const float *a, const float *b)
{
    size_t classes = (size_t) gc_model_n_classes (f->model), n = 0;
    float *za = gc_falloc (f->held.n * classes);
    assert_non_null (za);
    memcpy (za, gc_model_forward (f->model, a, f->held.x, f->held.n), f->held.n * classes * sizeof *za);
    const float *zb = gc_model_forward (f->model, b, f->held.x, f->held.n);
    for (size_t r = 0; r < f->held.n; r++) {
        size_t ia = 0, ib = 0;
        for (size_t c = 1; c < classes; c++) {
            ia = za [r * classes + c] > za [r * classes + ia] ? c : ia;
            ib = zb [r * classes + c] > zb [r * classes + ib] ? c : ib;
        }
        n += (ia == f->held.y [r]) != (ib == f->held.y [r]);
    }
    gc_mem_free (za);
    return n;
}

static double s_held_accuracy (s_fix_t *f, const float *params);

//  An honest neighbour: own plus noise, the least of 0.05, 0.1, 0.2, ... that
//  makes it score at least 3 of the 64 held-out samples unlike own, as
//  another peer's model does (3-30 % of them on the malicious ring), not a
//  copy (gc_validate.c, s_copies); it falls short of own by at most 10 %.
static void
s_honest (s_fix_t *f)
{
    double a_own = s_held_accuracy (f, f->own);
    for (float scale = 0.05f; scale < 10; scale *= 2) {
        gc_rng_t rng;
        gc_rng_init (&rng, 5, 0);
        for (size_t i = 0; i < f->n; i++)
            f->honest [i] = f->own [i] + scale * (float) gc_rng_normal (&rng);
        if (s_unlike (f, f->own, f->honest) >= 3)
            break;
    }
    assert_true (s_unlike (f, f->own, f->honest) >= 3);
    assert_true (s_held_accuracy (f, f->honest) >= 0.9 * a_own);
}

//  A model trained on the rest of a synthetic shard, an honest neighbour
//  (s_honest) and a bad one (trained on flipped labels).
static void
s_fix_init (s_fix_t *f)
{
    memset (f, 0, sizeof *f);
    assert_int_equal (gc_dataset_synthetic (7, 800, 10, S_DIM, 4, &f->train, &f->test, NULL), 0);
    assert_int_equal (gc_validate_split (&f->train, 64, 11, &f->held, &f->rest, NULL), 0);
    f->model = gc_model_new (S_SPEC, NULL);
    assert_non_null (f->model);
    f->n = gc_model_n_params (f->model);
    f->own = gc_falloc (f->n);
    f->honest = gc_falloc (f->n);
    f->bad = gc_falloc (f->n);
    f->grad = gc_falloc (f->n);
    gc_model_init_params (f->model, f->own, 3);
    gc_model_init_params (f->model, f->bad, 3);
    uint8_t *flipped = malloc (f->rest.n);
    assert_non_null (flipped);
    for (size_t i = 0; i < f->rest.n; i++)
        flipped [i] = (uint8_t) (3 - f->rest.y [i]);
    s_train (f, f->own, f->rest.y);
    s_train (f, f->bad, flipped);       /* a label-flipping neighbour */
    free (flipped);
    s_honest (f);
}

static void
s_fix_fini (s_fix_t *f)
{
    float *bufs [] = { f->own, f->honest, f->bad, f->grad };
    for (size_t i = 0; i < 4; i++)
        gc_mem_free (bufs [i]);
    gc_model_destroy (&f->model);
    gc_dataset_free (&f->train);
    gc_dataset_free (&f->test);
    gc_dataset_free (&f->held);
    gc_dataset_free (&f->rest);
}

static void
test_split (void **state)
{
    (void) state;
    s_fix_t f;
    s_fix_init (&f);
    assert_int_equal (f.held.n, 64);
    assert_int_equal (f.rest.n, f.train.n - 64);
    //  every sample is in exactly one part: the label counts add up and no
    //  held-out row is also a training row
    size_t count [4] = { 0 };
    for (size_t i = 0; i < f.held.n; i++)
        count [f.held.y [i]]++;
    for (size_t i = 0; i < f.rest.n; i++)
        count [f.rest.y [i]]++;
    size_t all [4] = { 0 };
    for (size_t i = 0; i < f.train.n; i++)
        all [f.train.y [i]]++;
    assert_memory_equal (count, all, sizeof count);
    for (size_t h = 0; h < f.held.n; h++)
        for (size_t r = 0; r < f.rest.n; r++)
            assert_true (memcmp (f.held.x + h * S_DIM, f.rest.x + r * S_DIM, S_DIM * sizeof (float)));
    //  the same seed gives the same bytes, another seed other samples
    gc_dataset_t h2, r2, h3, r3;
    assert_int_equal (gc_validate_split (&f.train, 64, 11, &h2, &r2, NULL), 0);
    assert_memory_equal (h2.x, f.held.x, 64 * S_DIM * sizeof (float));
    assert_memory_equal (r2.y, f.rest.y, f.rest.n);
    assert_int_equal (gc_validate_split (&f.train, 64, 12, &h3, &r3, NULL), 0);
    assert_true (memcmp (h3.x, f.held.x, 64 * S_DIM * sizeof (float)));
    //  at most an eighth of the shard; under 8 samples nothing is held out
    gc_dataset_t small = f.train, h4, r4;
    small.n = 200;
    assert_int_equal (gc_validate_split (&small, 64, 11, &h4, &r4, NULL), 0);
    assert_int_equal (h4.n, 25);
    assert_int_equal (r4.n, 175);
    gc_dataset_t h5, r5;
    small.n = 60;
    assert_int_equal (gc_validate_split (&small, 64, 11, &h5, &r5, NULL), 0);
    assert_int_equal (h5.n, 0);
    assert_int_equal (r5.n, 60);
    gc_dataset_t *frees [] = { &h2, &r2, &h3, &r3, &h4, &r4, &h5, &r5 };
    for (size_t i = 0; i < 8; i++)
        gc_dataset_free (frees [i]);
    s_fix_fini (&f);
}

//  Inputs: own, honest, bad, honest again (two honest neighbours keep the
//  median an honest loss).
static void
test_bad_neighbour_loses_weight (void **state)
{
    (void) state;
    s_fix_t f;
    s_fix_init (&f);
    gc_validate_cfg_t cfg;
    assert_int_equal (gc_validate_parse ("64:1", "guard", &cfg, NULL), 0);
    gc_validate_t *v = gc_validate_new (&cfg, &f.held, 3, 9);
    assert_non_null (v);
    const float *x [4] = { f.own, f.honest, f.bad, f.honest };
    int slot [4] = { -1, 0, 1, 2 };
    double w [4];
    for (int call = 0; call < 5; call++) {
        for (size_t j = 0; j < 4; j++)
            w [j] = 0.25;
        assert_true (gc_validate_weigh (v, f.model, x, slot, NULL, w, 4));     /* R = 1: every call */
    }
    assert_int_equal (gc_validate_runs (v), 5);
    assert_true (gc_validate_factor (v, 0) == 1.0);
    assert_true (gc_validate_factor (v, 2) == 1.0);
    assert_true (gc_validate_factor (v, 1) == 0.0);
    //  the bad neighbour's weight is shared by the inputs kept; the sum is 1
    assert_true (w [2] == 0.0);
    for (size_t j = 0; j < 4; j += 1 + (j == 1))
        assert_true (fabs (w [j] - 1.0 / 3) < 1e-12);
    gc_validate_destroy (&v);
    assert_null (v);
    s_fix_fini (&f);
}

//  Accuracy of params on the held-out samples.
static double
s_held_accuracy (s_fix_t *f, const float *params)
{
    size_t correct = 0;
    gc_model_loss_grad (f->model, params, f->held.x, f->held.y, f->held.n, NULL, 1, 0, &correct);
    return (double) correct / (double) f->held.n;
}

//  A neighbour that falls 15-40 % short of the own model on the held-out
//  samples: the own model moved toward the label flipper until it does.
static float *
s_mild (s_fix_t *f)
{
    float *mild = gc_falloc (f->n);
    double a_own = s_held_accuracy (f, f->own), deficit = 0;
    for (int step = 1; step <= 20 && deficit < 0.15; step++) {
        float t = 0.05f * (float) step;
        for (size_t i = 0; i < f->n; i++)
            mild [i] = f->own [i] + t * (f->bad [i] - f->own [i]);
        deficit = (a_own - s_held_accuracy (f, mild)) / a_own;
    }
    assert_true (deficit >= 0.15 && deficit <= 0.4);
    return mild;
}

//  The four neighbours' factors after `calls` validations of inputs x (own
//  and four neighbours) under spec, with the peer's labels (NULL: none given).
static void
s_factors_after (s_fix_t *f, int calls, const char *spec, const gc_dataset_t *labels,
                 const float *const *x, const int *slot, const bool *suspect, double factor [4])
{
    gc_validate_cfg_t cfg;
    assert_int_equal (gc_validate_parse (spec, "guard", &cfg, NULL), 0);
    gc_validate_t *v = gc_validate_new (&cfg, &f->held, 4, 9);
    assert_non_null (v);
    gc_validate_set_labels (v, labels);
    for (int call = 0; call < calls; call++) {
        double w [5] = { 0.2, 0.2, 0.2, 0.2, 0.2 };
        assert_true (gc_validate_weigh (v, f->model, x, slot, suspect, w, 5));
    }
    for (size_t s = 0; s < 4; s++)
        factor [s] = gc_validate_factor (v, s);
    gc_validate_destroy (&v);
}

//  The same after 12 validations.
static void
s_factors (s_fix_t *f, const char *spec, const gc_dataset_t *labels, const float *const *x,
           const int *slot, const bool *suspect, double factor [4])
{
    s_factors_after (f, 12, spec, labels, x, slot, suspect, factor);
}

//  The relative test (the malicious ring's case: own, two honest, two
//  attackers): neighbours whose models fall short of the others by 15-40 %
//  on the held-out samples, far inside the absolute LO = 0.5, lose their
//  weight with the test on (the default) and keep it with REL = 0; the honest keep theirs.
static void
test_relative_deficit (void **state)
{
    (void) state;
    s_fix_t f;
    s_fix_init (&f);
    float *mild = s_mild (&f);
    const float *x [5] = { f.own, f.honest, f.honest, mild, mild };
    int slot [5] = { -1, 0, 1, 2, 3 };
    double factor [2][4];
    for (int rel = 0; rel < 2; rel++)
        s_factors (&f, rel ? "64:1" : "64:1:0.5:0.9:0", NULL, x, slot, NULL, factor [rel]);
    for (size_t s = 0; s < 4; s++)
        assert_true (factor [0][s] == 1.0);             /* the absolute test alone */
    assert_true (factor [1][0] == 1.0 && factor [1][1] == 1.0);
    assert_true (factor [1][2] == 0.0 && factor [1][3] == 0.0);
    gc_mem_free (mild);
    s_fix_fini (&f);
}

//  The robust rule's suspects leave the relative test's medians (the
//  malicious ring under an attack that validation cannot see: own, two
//  attackers whose models score like an honest one, two honest neighbours
//  that fall 15-40 % short of them on the held-out samples, as models of
//  other shards do): with the attackers among them the honest neighbours'
//  shortfall is beyond the level and they lose their weight; with the
//  attackers marked suspect the honest keep it (the reference accuracy is
//  still the upper median of all five). The suspects themselves are still
//  scored (they keep theirs here: they do no worse; cutting them is the
//  rule's business). With one suspect of four the factors are those with no
//  suspects (a minority; this case cannot tell whether it stayed in the
//  medians, since one value fewer at the bottom of five would not move them).
static void
test_suspects_leave_the_levels (void **state)
{
    (void) state;
    s_fix_t f;
    s_fix_init (&f);
    float *mild = s_mild (&f);
    const float *x [5] = { f.own, f.honest, f.honest, mild, mild };
    int slot [5] = { -1, 0, 1, 2, 3 };
    const bool suspect [5] = { false, true, true, false, false };
    const bool one [5] = { false, true, false, false, false };
    double factor [3][4];
    s_factors (&f, "64:1", NULL, x, slot, NULL, factor [0]);
    s_factors (&f, "64:1", NULL, x, slot, suspect, factor [1]);
    s_factors (&f, "64:1", NULL, x, slot, one, factor [2]);
    assert_true (factor [0][2] == 0.0 && factor [0][3] == 0.0);
    for (size_t s = 0; s < 4; s++) {
        assert_true (factor [1][s] == 1.0);
        assert_true (factor [2][s] == factor [0][s]);
    }
    gc_mem_free (mild);
    s_fix_fini (&f);
}

//  Copies of the own model leave the medians as suspects do, with no rule
//  to say so (the stealth attack on the malicious ring sends the peer's own
//  model back with noise): own, two exact copies and two neighbours 15-40 %
//  short keep every weight, where two honest models in the copies' places
//  set a level that cuts the short ones (test_suspects_leave_the_levels).
//  A copy is known as one only from its fifth validation: after four, the
//  copies still set the level and the short ones are cut.
//  With one copy of four the short ones are cut. (Whether that copy stayed
//  in the medians this case cannot tell: one value fewer at the bottom of
//  five leaves the lower median where it was.)
static void
test_copies_leave_the_levels (void **state)
{
    (void) state;
    s_fix_t f;
    s_fix_init (&f);
    float *mild = s_mild (&f);
    const float *copies [5] = { f.own, f.own, f.own, mild, mild };
    const float *one [5] = { f.own, f.own, f.honest, mild, mild };
    int slot [5] = { -1, 0, 1, 2, 3 };
    double factor [3][4];
    s_factors (&f, "64:1", NULL, copies, slot, NULL, factor [0]);
    s_factors (&f, "64:1", NULL, one, slot, NULL, factor [1]);
    s_factors_after (&f, 4, "64:1", NULL, copies, slot, NULL, factor [2]);
    for (size_t s = 0; s < 4; s++)
        assert_true (factor [0][s] == 1.0);
    assert_true (factor [2][2] == 0.0 && factor [2][3] == 0.0);
    assert_true (factor [1][0] == 1.0 && factor [1][1] == 1.0);
    assert_true (factor [1][2] == 0.0 && factor [1][3] == 0.0);
    gc_mem_free (mild);
    s_fix_fini (&f);
}

//  The label skew: the total variation distance of a shard's label mix from
//  the uniform one (worked by hand: all of one class of four is 3/4 away,
//  two classes of four half each 1/2, 3:1 over two classes 1/4).
static void
test_skew_cases (void **state)
{
    (void) state;
    static const struct {
        const char *labels;     /* one digit a sample */
        int         classes;
        double      skew;
    } cases [] = {
        { "0123012301230123", 4, 0.0  },
        { "0000",             4, 0.75 },
        { "00110011",         4, 0.5  },
        { "0001",             2, 0.25 },
        { "0101",             2, 0.0  },
        { "0000",             1, 0.0  },        /* one class: nothing to be skewed from */
        { "",                 4, 0.0  },        /* no samples */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        size_t n = strlen (cases [i].labels);
        uint8_t y [32];
        for (size_t j = 0; j < n; j++)
            y [j] = (uint8_t) (cases [i].labels [j] - '0');
        double got = gc_validate_skew (y, n, cases [i].classes);
        if (fabs (got - cases [i].skew) > 1e-12)
            fail_msg ("skew of '%s' over %d classes: %g, expected %g", cases [i].labels,
                      cases [i].classes, got, cases [i].skew);
    }
}

//  The relative test's margin, worked by hand from its definition
//  max(2·sqrt(2·max(d, 1/B)·max(1/n, b/(2-b)) / B) / max(a, 1/B), skew),
//  b = 1/30: which of its two terms sets it, how it narrows over the first
//  validations and then stays (b/(2-b) = 1/59), and its floors.
static void
test_margin_cases (void **state)
{
    (void) state;
    static const struct {
        double   a;
        size_t   b;
        double   disagree, skew;
        uint64_t n;
        double   margin;
    } cases [] = {
        { 0.8,  64, 0.05, 0,   100, 0.012865 },   /* the standard error sets it */
        { 0.8,  64, 0.05, 0,    59, 0.012865 },   /* 1/59 = b/(2-b): already the long-run width */
        { 0.8,  64, 0.05, 0,     4, 0.049411 },   /* wider over the first validations */
        { 0.8,  64, 0.05, 0,     1, 0.098821 },
        { 0.8,  64, 0.05, 0,     0, 0.098821 },   /* none yet: as after one */
        { 0.8,  64, 0,    0,   100, 0.007192 },   /* agreeing models: one sample in B */
        { 0.9, 256, 0.2,  0,    10, 0.027778 },
        { 0.8,  64, 0.05, 0.4, 100, 0.4      },   /* a skewed shard's label mix */
        { 0.8,  64, 0.05, 0.01, 100, 0.012865 },  /* an iid shard's: the noise sets it */
        { 0,    64, 0.05, 0,   100, 0.658710 },   /* no accuracy: one sample in B */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        double got = gc_validate_margin (cases [i].a, cases [i].b, cases [i].disagree, cases [i].skew,
                                         cases [i].n);
        if (fabs (got - cases [i].margin) > 1e-6)
            fail_msg ("margin case %zu: %.6f, expected %.6f", i, got, cases [i].margin);
    }
    //  the noisier the honest pairs, the wider; never narrower than the skew
    assert_true (gc_validate_margin (0.8, 64, 0.2, 0, 100) > gc_validate_margin (0.8, 64, 0.1, 0, 100));
    assert_true (gc_validate_margin (0.8, 64, 0.2, 0.6, 100) == 0.6);
}

//  A neighbour the relative test cut comes back only at full weight once it
//  is as good as the others again: its factor goes from 0 straight to 1, never
//  up the ramp (an attacker that keeps its shortfall just past the margin
//  gets nothing), and it does come back.
static void
test_cut_returns_whole (void **state)
{
    (void) state;
    s_fix_t f;
    s_fix_init (&f);
    float *mild = s_mild (&f);
    gc_validate_cfg_t cfg;
    assert_int_equal (gc_validate_parse ("64:1:0.5:0.9:1", "guard", &cfg, NULL), 0);
    gc_validate_t *v = gc_validate_new (&cfg, &f.held, 4, 9);
    assert_non_null (v);
    const float *x [5] = { f.own, f.honest, f.honest, mild, mild };
    int slot [5] = { -1, 0, 1, 2, 3 };
    for (int call = 0; call < 12; call++) {
        double w [5] = { 0.2, 0.2, 0.2, 0.2, 0.2 };
        gc_validate_weigh (v, f.model, x, slot, NULL, w, 5);
    }
    assert_true (gc_validate_factor (v, 2) == 0.0);
    x [3] = f.honest;                   /* neighbour 2 mends its ways, 3 does not */
    int back = -1;
    for (int call = 0; call < 400 && back < 0; call++) {
        double w [5] = { 0.2, 0.2, 0.2, 0.2, 0.2 };
        gc_validate_weigh (v, f.model, x, slot, NULL, w, 5);
        double g = gc_validate_factor (v, 2);
        assert_true (g == 0.0 || g == 1.0);
        if (g == 1.0)
            back = call;
    }
    assert_true (back > 0);
    assert_true (gc_validate_factor (v, 3) == 0.0);
    gc_validate_destroy (&v);
    gc_mem_free (mild);
    s_fix_fini (&f);
}

//  A peer whose labels are skewed keeps neighbours that fall as far short as
//  the mix is skewed (an honest neighbour with other classes does), which the
//  same peer with balanced labels cuts; the attackers' share of the inputs
//  cannot widen the margin (it comes from the peer's own labels).
static void
test_skew_keeps_heterogeneous (void **state)
{
    (void) state;
    s_fix_t f;
    s_fix_init (&f);
    float *mild = s_mild (&f);
    //  labels: balanced, and all but a few of class 0 (skew near 3/4)
    uint8_t y_flat [400], y_skew [400];
    for (size_t i = 0; i < 400; i++) {
        y_flat [i] = (uint8_t) (i % 4);
        y_skew [i] = (uint8_t) (i % 40 ? 0 : 1 + i % 3);
    }
    gc_dataset_t flat = { .n = 400, .n_classes = 4, .y = y_flat };
    gc_dataset_t skew = { .n = 400, .n_classes = 4, .y = y_skew };
    assert_true (gc_validate_skew (y_skew, 400, 4) > 0.7);
    const float *x [5] = { f.own, f.honest, f.honest, mild, mild };
    int slot [5] = { -1, 0, 1, 2, 3 };
    gc_dataset_t *labels [2] = { &flat, &skew };
    double factor [2][4];
    for (int l = 0; l < 2; l++)
        s_factors (&f, "64:1:0.5:0.9:1", labels [l], x, slot, NULL, factor [l]);
    assert_true (factor [0][0] == 1.0 && factor [0][1] == 1.0);
    assert_true (factor [0][2] == 0.0 && factor [0][3] == 0.0);
    for (size_t s = 0; s < 4; s++)
        assert_true (factor [1][s] == 1.0);
    gc_mem_free (mild);
    s_fix_fini (&f);
}

//  The same seed and inputs give the same schedule and weights, call by
//  call; about one call in R validates.
static void
test_deterministic_schedule (void **state)
{
    (void) state;
    s_fix_t f;
    s_fix_init (&f);
    gc_validate_cfg_t cfg;
    assert_int_equal (gc_validate_parse ("32:5", "guard", &cfg, NULL), 0);
    gc_validate_t *a = gc_validate_new (&cfg, &f.held, 3, 21);
    gc_validate_t *b = gc_validate_new (&cfg, &f.held, 3, 21);
    gc_validate_t *c = gc_validate_new (&cfg, &f.held, 3, 22);
    const float *x [4] = { f.own, f.honest, f.bad, f.honest };
    int slot [4] = { -1, 0, 1, 2 };
    int differ = 0;
    for (int call = 0; call < 200; call++) {
        double wa [4] = { 0.25, 0.25, 0.25, 0.25 }, wb [4], wc [4];
        memcpy (wb, wa, sizeof wa);
        memcpy (wc, wa, sizeof wa);
        bool ra = gc_validate_weigh (a, f.model, x, slot, NULL, wa, 4);
        bool rb = gc_validate_weigh (b, f.model, x, slot, NULL, wb, 4);
        differ += ra != gc_validate_weigh (c, f.model, x, slot, NULL, wc, 4);
        assert_true (ra == rb);
        assert_memory_equal (wa, wb, sizeof wa);
    }
    assert_true (gc_validate_runs (a) >= 20 && gc_validate_runs (a) <= 70);
    assert_true (differ > 0);
    gc_validate_destroy (&a);
    gc_validate_destroy (&b);
    gc_validate_destroy (&c);
    s_fix_fini (&f);
}

static void
test_specs (void **state)
{
    (void) state;
    gc_validate_cfg_t cfg;
    assert_int_equal (gc_validate_parse ("auto", "guard", &cfg, NULL), 0);
    assert_int_equal (cfg.samples, GC_VALIDATE_DEFAULT_SAMPLES);
    assert_int_equal (cfg.every, GC_VALIDATE_DEFAULT_EVERY);
    assert_true (cfg.relative);             /* the relative test is the default's */
    assert_int_equal (gc_validate_parse (NULL, "guard:2:200:0.15:0.3", &cfg, NULL), 0);
    assert_int_equal (cfg.samples, GC_VALIDATE_DEFAULT_SAMPLES);
    //  auto is off with other rules, off and 0 always
    const char *off [][2] = { { "auto", "mean" }, { "auto", "guardian" }, { "auto", "nnm+guard" },
                              { "off", "guard" }, { "0", "guard" } };
    for (size_t i = 0; i < sizeof off / sizeof off [0]; i++) {
        assert_int_equal (gc_validate_parse (off [i][0], off [i][1], &cfg, NULL), 0);
        assert_int_equal (cfg.samples, 0);
    }
    assert_int_equal (gc_validate_parse ("128:4:0.2:0.5", "mean", &cfg, NULL), 0);
    assert_int_equal (cfg.samples, 128);
    assert_int_equal (cfg.every, 4);
    assert_true (cfg.lo == 0.2 && cfg.hi == 0.5);
    //  LO alone: the default HI, or a step at LO above it
    assert_int_equal (gc_validate_parse ("128:4:0.5", "mean", &cfg, NULL), 0);
    assert_true (cfg.lo == 0.5 && cfg.hi == GC_VALIDATE_DEFAULT_HI);
    assert_int_equal (gc_validate_parse ("128:4:0.9", "mean", &cfg, NULL), 0);
    assert_true (cfg.lo == 0.9 && cfg.hi == 0.9);
    //  REL: the relative test on or off
    assert_int_equal (gc_validate_parse ("64:1:0.5:0.9:1", "guard", &cfg, NULL), 0);
    assert_true (cfg.relative);
    assert_int_equal (gc_validate_parse ("64:1:0.5:0.9:0", "guard", &cfg, NULL), 0);
    assert_true (!cfg.relative);
    const char *bad [] = { "on", "7", "64:0", "64:x", "64:10:0.5:0.1", "64:10:-1", "64:10:2",
                           "1:2:3:4:5", "64:10:0.5:0.9:2", "64:10:0.5:0.9:1:0", "64:", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        if (!*bad [i])
            continue;               /* empty is auto */
        gc_err_t err = { 0 };
        assert_int_equal (gc_validate_parse (bad [i], "guard", &cfg, &err), -1);
        assert_int_equal (err.code != 0, 1);
        assert_non_null (strstr (err.msg, "gossip/validate"));
    }
}

//  In the engine: four peers, one sending sign-flipped models. The same
//  seed gives the same bytes with validation on; validation changes the
//  honest peers' models (it runs in gc_engine_mix), and off it leaves the
//  engine exactly as without the key.
static void
s_run_net (const char *validate, float **model, size_t *d)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.compress = "none";
    cfg.ec = "none";
    cfg.aggregator = "guard";
    cfg.validate = validate;
    const char *attacks [4] = { NULL, NULL, NULL, "signflip" };
    net_t *net = net_new (4, "complete", &cfg, attacks);
    for (int r = 0; r < 30; r++)
        net_round (net);
    *d = gc_engine_n_params (net->engines [0]);
    *model = malloc (*d * sizeof (float));
    assert_non_null (*model);
    memcpy (*model, gc_engine_params (net->engines [0]), *d * sizeof (float));
    net_destroy (&net);
}

static void
test_engine_deterministic (void **state)
{
    (void) state;
    float *on [2], *off [2];
    size_t d;
    s_run_net ("32:2", &on [0], &d);
    s_run_net ("32:2", &on [1], &d);
    s_run_net ("off", &off [0], &d);
    s_run_net ("0", &off [1], &d);
    assert_memory_equal (on [0], on [1], d * sizeof (float));
    assert_memory_equal (off [0], off [1], d * sizeof (float));
    assert_true (memcmp (on [0], off [0], d * sizeof (float)));
    for (int i = 0; i < 2; i++) {
        free (on [i]);
        free (off [i]);
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_split),
        cmocka_unit_test (test_bad_neighbour_loses_weight),
        cmocka_unit_test (test_relative_deficit),
        cmocka_unit_test (test_suspects_leave_the_levels),
        cmocka_unit_test (test_copies_leave_the_levels),
        cmocka_unit_test (test_skew_cases),
        cmocka_unit_test (test_margin_cases),
        cmocka_unit_test (test_skew_keeps_heterogeneous),
        cmocka_unit_test (test_cut_returns_whole),
        cmocka_unit_test (test_deterministic_schedule),
        cmocka_unit_test (test_specs),
        cmocka_unit_test (test_engine_deterministic),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
