/*  Byzantine roles against honest engines on the in-memory network.
    Protocol attacks: every bad message is refused with its reason and the
    honest peers learn anyway. Model attacks: a robust rule keeps the honest
    peers learning, and the plain mean does not (so the attacks bite). */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_attack.h"
#include "gc_attack_adaptive.h"
#include "gc_vec.h"
#include "gc_wire_reason.h"
#include "net_fixture.h"

#define S_PEERS 6
#define S_BYZ   0       /* the attacker's index; on a ring its victims are 1 and 5 */

static net_t *
s_run (const char *attack, const char *aggregator, int rounds)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.aggregator = aggregator;
    cfg.keyframe_interval_ns = 100 * 1000000LL;
    const char *attacks [S_PEERS] = { NULL };
    attacks [S_BYZ] = attack;
    net_t *net = net_new (S_PEERS, "ring", &cfg, attacks);
    for (int r = 0; r < rounds; r++)
        net_round (net);
    return net;
}

//  Rejections the victims counted against the attacker (or unattributed).
static uint64_t
s_rejected (net_t *net, int reason, bool attributed)
{
    uint64_t total = 0;
    for (uint32_t v = 1; v < S_PEERS; v++)
        total += gc_engine_rejections (net->engines [v], attributed ? S_BYZ : UINT32_MAX, reason);
    return total;
}

static void
test_protocol_attacks_are_refused (void **state)
{
    static const struct {
        const char *attack;
        int         reason;         /* counted by the victims */
        bool        attributed;     /* against the attacker's index */
    } cases [] = {
        { "untrusted", GC_WIRE_UNKNOWN_SENDER, false },
        { "malformed", GC_WIRE_TRUNCATED, false },
        { "malformed", GC_WIRE_OVERSIZE, false },
        { "malformed", GC_WIRE_BAD_MAGIC, false },
        { "flood", GC_REJECT_BAD_PAYLOAD, true },
        { "flood", GC_REJECT_RATE_LIMITED, true },
        { "flood", GC_REJECT_MUTED, true },
        { "nan", GC_REJECT_BAD_PAYLOAD, true },
        { "nan", GC_REJECT_NONFINITE, true },
        { "replay", GC_WIRE_REPLAY, false },     /* a replay proves nothing of who sent it */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        net_t *net = s_run (cases [c].attack, "cwtm:1", 40);
        uint64_t n = s_rejected (net, cases [c].reason, cases [c].attributed);
        double acc = net_mean_accuracy (net);
        print_message ("%-10s %-16s %6llu rejected, honest accuracy %.3f\n", cases [c].attack,
                       gc_engine_reason_name (cases [c].reason), (unsigned long long) n, acc);
        if (n == 0)
            fail_msg ("%s: no %s rejections counted", cases [c].attack,
                      gc_engine_reason_name (cases [c].reason));
        assert_true (acc > 0.85);
        net_destroy (&net);
    }
}

//  Silence: nothing arrives from the attacker, the honest peers carry on.
static void
test_silent_peer (void **state)
{
    net_t *net = s_run ("silent", "cwtm:1", 40);
    gc_engine_stats_t s;
    gc_engine_stats (net->engines [S_BYZ], &s);
    assert_int_equal (s.msgs_sent, 0);
    //  the victims cannot mix under cwtm:1 (3 inputs needed, they have 2):
    //  they mix under cwtm:0 (gossip/fallback) and say so
    gc_engine_stats (net->engines [1], &s);
    assert_true (s.mix_fallbacks > 0);
    assert_int_equal (s.mix_skipped, 0);
    assert_true (net_mean_accuracy (net) > 0.85);
    net_destroy (&net);
}

static void
test_model_attacks_against_robust_and_plain_rules (void **state)
{
    static const struct {
        const char *attack;
        bool        breaks_mean;    /* the plain mean must visibly suffer */
    } cases [] = {
        { "signflip", true }, { "noise:10", true }, { "alie", false }, { "ipm:0.5", false },
        { "dissensus:2", true }, { "mimic", false }, { "equivocate:10", true }, { "labelflip", false },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        net_t *robust = s_run (cases [c].attack, "cwtm:1", 60);
        double acc = net_mean_accuracy (robust), low = net_min_accuracy (robust);
        double spread = net_consensus_distance (robust);
        net_destroy (&robust);
        net_t *plain = s_run (cases [c].attack, "mean", 60);
        double plain_acc = net_mean_accuracy (plain);
        net_destroy (&plain);
        print_message ("%-14s cwtm:1 mean %.3f min %.3f spread %.3f | mean rule %.3f\n",
                       cases [c].attack, acc, low, spread, plain_acc);
        if (low < 0.85)
            fail_msg ("%s: an honest peer fell to %.3f under cwtm:1", cases [c].attack, low);
        if (cases [c].breaks_mean && plain_acc > acc - 0.1)
            fail_msg ("%s: the plain mean kept %.3f (robust %.3f): the attack does not bite",
                      cases [c].attack, plain_acc, acc);
    }
}

static void
test_attack_specs (void **state)
{
    static const struct { const char *spec; int ok; } cases [] = {
        { "alie", 1 }, { "alie:1.5", 1 }, { "noise:0.1", 1 }, { "labelflip", 1 },
        { "labelflip:2", 0 }, { "alie:x", 0 }, { "sybil", 0 }, { "noise:1:2", 0 },
        { "minmax", 1 }, { "minsum", 1 }, { "minmax:1", 0 }, { "late:100:alie:1", 1 },
        { "late:0:minsum", 1 }, { "late:100", 0 }, { "late:x:alie", 0 }, { "late:5:labelflip", 0 },
        { "late:5:late:6:alie", 0 }, { "late:5:silent", 0 }, { "late:-1:alie", 0 },
        { "fork", 1 }, { "fork:1", 0 }, { "late:5:fork", 0 },
        { "stealth", 1 }, { "stealth:2.5", 1 }, { "stealth:2:0.3", 1 }, { "stealth:2:1.5", 0 },
        { "stealth:-1", 0 }, { "stealth:2:0.5:1", 0 }, { "late:50:stealth:3:0.2", 1 },
        { "stealth:3:0.3:balanced", 1 }, { "stealth:balanced", 1 }, { "stealth:balanced:2", 0 },
        { "stealth:2:0.5:1:balanced", 0 }, { "stealth:3:0.3:balanced:balanced", 0 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_attack_t a;
        gc_err_t err = { 0 };
        assert_int_equal (gc_attack_parse (cases [c].spec, &a, &err), cases [c].ok ? 0 : -1);
    }
    gc_attack_t late;
    assert_int_equal (gc_attack_parse ("late:150:alie:1.5", &late, NULL), 0);
    assert_int_equal (late.kind, GC_ATTACK_ALIE);
    assert_true (late.start == 150 && late.param == 1.5 && late.param_given);
    gc_attack_t st;
    assert_int_equal (gc_attack_parse ("stealth", &st, NULL), 0);
    assert_true (st.kind == GC_ATTACK_STEALTH && st.param == 2.0 && st.param2 == 0.5);
    assert_int_equal (gc_attack_parse ("stealth:3:0.25", &st, NULL), 0);
    assert_true (st.param == 3.0 && st.param2 == 0.25 && !st.balanced);
    assert_int_equal (gc_attack_parse ("stealth:3:0.25:balanced", &st, NULL), 0);
    assert_true (st.param == 3.0 && st.param2 == 0.25 && st.balanced);
    //  ALIE's z for the usual example: n = 50, f = 24 -> s = 2, Phi^-1(48/50) = 1.75
    double z = gc_attack_alie_z (50, 24);
    assert_true (z > 1.74 && z < 1.76);
    z = gc_attack_alie_z (3, 1);                      /* s = 1: Phi^-1(2/3) = 0.4307 */
    assert_true (z > 0.430 && z < 0.431);
    assert_true (gc_attack_alie_z (4, 0) == 0);       /* s = 3, p = 1/4: no shift */
}

//  Stealth's push: K times the victim's step long, at cosine RHO with ALIE's
//  direction -sigma, the rest orthogonal to it and different every round.
static void
test_stealth_push_has_its_size_and_angle (void **state)
{
    enum { D = 4096 };
    static const double rhos [] = { 0.0, 0.3, 0.5, 1.0 };
    float *std = malloc (4 * D * sizeof (float)), *e = std + D, *xi = e + D, *z = xi + D;
    float *victim = calloc (D, sizeof (float)), *xi0 = calloc (D, sizeof (float));
    gc_rng_t rng;
    gc_rng_init (&rng, 7, 0);
    for (size_t i = 0; i < D; i++) {
        std [i] = (float) (0.01 + 0.001 * (double) (i % 17));
        victim [i] = (float) gc_rng_normal (&rng);
    }
    for (size_t r = 0; r < sizeof rhos / sizeof rhos [0]; r++) {
        gc_attack_stealth_dirs (std, D, false, &rng, e, xi);
        assert_true (fabs (gc_vec_dot (e, e, D) - 1) < 1e-5 && fabs (gc_vec_dot (xi, xi, D) - 1) < 1e-5);
        assert_true (fabs (gc_vec_dot (e, xi, D)) < 1e-5);
        assert_true (gc_vec_dot (e, std, D) < 0);                   /* against sigma */
        assert_true (r == 0 || fabs (gc_vec_dot (xi, xi0, D)) < 0.1);  /* a new draw */
        memcpy (xi0, xi, D * sizeof (float));
        gc_attack_stealth (2.0, rhos [r], 0.5, victim, e, xi, D, z);
        for (size_t i = 0; i < D; i++)
            z [i] -= victim [i];
        double len = sqrt (gc_vec_dot (z, z, D));
        assert_true (fabs (len - 1.0) < 1e-4);                      /* K * step */
        assert_true (fabs (gc_vec_dot (z, e, D) / len - rhos [r]) < 1e-4);
    }
    //  balanced: the same magnitudes, about as many coordinates up as down
    gc_attack_stealth_dirs (std, D, false, &rng, xi0, xi);
    gc_attack_stealth_dirs (std, D, true, &rng, e, xi);
    size_t up = 0;
    for (size_t i = 0; i < D; i++) {
        assert_true (fabsf (e [i]) == fabsf (xi0 [i]));
        up += e [i] > 0;
    }
    assert_true (up > D * 45 / 100 && up < D * 55 / 100);
    assert_true (fabs (gc_vec_dot (e, xi, D)) < 1e-5);
    free (std);
    free (victim);
    free (xi0);
}

//  The noise scale is the median of the observed models' rms: one colluder's
//  huge model among five does not move it, so noise cannot feed on itself.
static void
test_noise_scale_ignores_a_colluder (void **state)
{
    (void) state;
    enum { D = 1000 };
    static float honest [4][D], colluder [D];
    for (size_t i = 0; i < D; i++) {
        for (int j = 0; j < 4; j++)
            honest [j][i] = (float) (j + 1) * ((i % 2) ? 1.0f : -1.0f);      /* rms j + 1 */
        colluder [i] = 1e30f;
    }
    const float *models [5] = { honest [0], colluder, honest [1], honest [2], honest [3] };
    float rms [5];
    assert_float_equal (gc_attack_scale (models, 5, D, rms), 3.0f, 1e-5);       /* of 1, 2, 3, 4, 1e30 */
    assert_float_equal (gc_attack_scale (models, 1, D, rms), 1.0f, 1e-5);
    float mean [D], stdv [D], z [D];
    const float *honest_only [4] = { honest [0], honest [1], honest [2], honest [3] };
    gc_attack_moments (honest_only, 4, D, mean, stdv);
    gc_attack_t noise;
    assert_int_equal (gc_attack_parse ("noise:10", &noise, NULL), 0);
    gc_rng_t rng;
    gc_rng_init (&rng, 1, 2);
    float scale = gc_attack_scale (models, 5, D, rms);
    gc_attack_target (&noise, 0, mean, stdv, mean, scale, D, &rng, z);
    double dev = 0;                     /* rms of z - mean: 10 x 3 */
    for (size_t i = 0; i < D; i++)
        dev += ((double) z [i] - mean [i]) * ((double) z [i] - mean [i]);
    assert_true (fabs (sqrt (dev / D) - 30.0) < 3.0);
}

//  Mean and standard deviation (n - 1) of k models, against a double
//  reference, for lengths around the kernel's block size.
static void
test_moments_match_reference (void **state)
{
    (void) state;
    static const size_t lengths [] = { 1, 7, 2047, 2048, 2049, 5000 };
    static const size_t ks [] = { 1, 2, 5 };
    enum { MAXD = 5000, MAXK = 5 };
    static float models [MAXK][MAXD], mean [MAXD], stdv [MAXD];
    for (size_t j = 0; j < MAXK; j++)
        for (size_t i = 0; i < MAXD; i++)
            models [j][i] = sinf ((float) (i * 7 + j * 13)) * (float) (j + 1);
    const float *in [MAXK] = { models [0], models [1], models [2], models [3], models [4] };
    for (size_t l = 0; l < sizeof lengths / sizeof lengths [0]; l++)
        for (size_t c = 0; c < sizeof ks / sizeof ks [0]; c++) {
            size_t d = lengths [l], k = ks [c];
            gc_attack_moments (in, k, d, mean, stdv);
            for (size_t i = 0; i < d; i++) {
                double m = 0, v = 0;
                for (size_t j = 0; j < k; j++)
                    m += models [j][i];
                m /= (double) k;
                for (size_t j = 0; j < k; j++)
                    v += (models [j][i] - m) * (models [j][i] - m);
                double sd = k > 1 ? sqrt (v / (double) (k - 1)) : 0;
                if (fabs (mean [i] - m) > 1e-5 || fabs (stdv [i] - sd) > 1e-5)
                    fail_msg ("d %zu k %zu entry %zu: mean %g std %g, reference %g %g", d, k, i,
                              (double) mean [i], (double) stdv [i], m, sd);
            }
        }
}

//  minmax / minsum: the chosen z meets its condition with equality (up to
//  the bisection's resolution), and minsum's bound is looser than minmax's
//  only in the direction the paper says (sum of distances).
static void
test_minmax_meets_its_bound (void **state)
{
    (void) state;
    enum { K = 6, D = 40 };
    static float buf [K][D];
    const float *in [K];
    float mean [D], stdv [D], z [D];
    gc_rng_t rng;
    gc_rng_init (&rng, 7, 1);
    for (size_t j = 0; j < K; j++) {
        for (size_t i = 0; i < D; i++)
            buf [j][i] = (float) (0.5 * i + gc_rng_normal (&rng));
        in [j] = buf [j];
    }
    gc_attack_moments (in, K, D, mean, stdv);
    for (int sum = 0; sum < 2; sum++) {
        double g = gc_attack_minmax (in, K, D, mean, stdv, sum, z);
        assert_true (g > 0);
        double bound = 0, got = 0;
        for (size_t a = 0; a < K; a++) {
            double row = 0, dz = 0;
            for (size_t b = 0; b < K; b++) {
                double dd = 0;
                for (size_t i = 0; i < D; i++)
                    dd += (buf [a][i] - buf [b][i]) * (buf [a][i] - buf [b][i]);
                row += dd;
                bound = sum ? bound : fmax (bound, dd);
            }
            bound = sum ? fmax (bound, row) : bound;
            for (size_t i = 0; i < D; i++)
                dz += (z [i] - buf [a][i]) * (z [i] - buf [a][i]);
            got = sum ? got + dz : fmax (got, dz);
        }
        if (got > bound * (1 + 1e-5) || got < bound * (1 - 1e-3))
            fail_msg ("%s: condition %g against bound %g", sum ? "minsum" : "minmax", got, bound);
        //  z moves against the spread: mean - g sigma/||sigma||
        double off = 0;
        for (size_t i = 0; i < D; i++)
            off += (mean [i] - z [i]) * (mean [i] - z [i]);
        assert_true (fabs (sqrt (off) - g) < 1e-3 * g);
    }
    //  one model, or no spread: z is the mean
    assert_true (gc_attack_minmax (in, 1, D, mean, stdv, false, z) == 0);
    assert_memory_equal (z, mean, sizeof z);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_attack_specs),
        cmocka_unit_test (test_minmax_meets_its_bound),
        cmocka_unit_test (test_moments_match_reference),
        cmocka_unit_test (test_noise_scale_ignores_a_colluder),
        cmocka_unit_test (test_protocol_attacks_are_refused),
        cmocka_unit_test (test_silent_peer),
        cmocka_unit_test (test_model_attacks_against_robust_and_plain_rules),
        cmocka_unit_test (test_stealth_push_has_its_size_and_angle),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
