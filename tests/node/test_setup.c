/*  The peer setup: every key reaches its engine setting, the engine's
    defaults are the key table's, the parts are the driver's, the role picks
    the attack, a bad schedule names its key; the data is cut and
    standardised as configured. */
#include "gc_test.h"

#include <math.h>
#include <string.h>

#include "gc_setup.h"

static gc_config_t *
s_config (const char *const *sets)
{
    gc_config_t *cfg = gc_config_new ();
    assert_non_null (cfg);
    for (size_t k = 0; sets && sets [k]; k += 2) {
        gc_err_t err = { 0 };
        if (gc_config_set (cfg, sets [k], sets [k + 1], &err))
            fail_msg ("%s", err.msg);
    }
    return cfg;
}

//  Each key, set to a value other than its default, changes its setting.
static void
test_keys (void **state)
{
    static const char *const sets [] = {
        "node/index", "3", "node/network", "lab", "node/seed", "77", "train/model", "8-4-2",
        "train/lr", "0.5", "train/momentum", "0.5", "train/nesterov", "1", "train/weight_decay", "0.01",
        "train/warmup", "7", "train/schedule", "step:10:0.5", "train/batch", "9", "train/local_steps", "3",
        "train/rounds", "42", "train/augment", "crop:2,flip", "train/label_smoothing", "0.1", "gossip/compress", "dense", "gossip/ec", "ef", "gossip/aggregator", "mean",
        "gossip/wait", "sync", "gossip/gamma", "0.5", "gossip/staleness", "2", "gossip/keyframe_every", "5",
        "gossip/keyframe_fp16", "1", "gossip/timeout_ms", "250", "gossip/keyframe_interval_ms", "40",
        "gossip/mute_after", "6", "gossip/mute_for_s", "11", "role/kind", "byzantine", "role/attack", "alie",
        NULL
    };
    gc_config_t *cfg = s_config (sets);
    gc_dataset_t train = { 0 }, test = { 0 };
    uint8_t ids [4][8] = { { 0 } };
    gc_setup_parts_t parts = { .key = (gc_key_t *) 0x10, .trust = (gc_trust_t *) 0x20,
                               .topology = (const gc_topology_t *) 0x30,
                               .peer_ids = (const uint8_t (*) [8]) ids, .train = &train, .test = &test };
    gc_engine_config_t ec;
    assert_int_equal (gc_setup_engine (cfg, &parts, &ec, NULL), 0);
    assert_int_equal (ec.self, 3);
    assert_string_equal (ec.network, "lab");
    assert_true (ec.seed == 77);
    assert_string_equal (ec.model, "8-4-2");
    assert_true (ec.optim.lr == 0.5 && ec.optim.momentum == 0.5 && ec.optim.nesterov);
    assert_true (ec.optim.weight_decay == 0.01 && ec.optim.warmup == 7);
    assert_int_equal (ec.optim.schedule, GC_LR_STEP);
    assert_true (ec.optim.step_every == 10 && ec.optim.step_gamma == 0.5);
    assert_true (ec.batch == 9 && ec.local_steps == 3 && ec.rounds == 42);
    assert_true (ec.augment.crop == 2 && ec.augment.flip);
    assert_true (ec.optim.label_smoothing == 0.1);
    assert_string_equal (ec.compress, "dense");
    assert_string_equal (ec.ec, "ef");
    assert_string_equal (ec.aggregator, "mean");
    assert_string_equal (ec.wait, "sync");
    assert_true (ec.gamma == 0.5 && ec.staleness == 2 && ec.keyframe_every == 5 && ec.keyframe_fp16);
    assert_true (ec.wait_timeout_ns == 250000000LL && ec.keyframe_interval_ns == 40000000LL);
    assert_true (ec.mute_after == 6 && ec.mute_for_ns == 11000000000LL);
    assert_string_equal (ec.attack, "alie");
    assert_ptr_equal (ec.key, parts.key);
    assert_ptr_equal (ec.trust, parts.trust);
    assert_ptr_equal (ec.topology, parts.topology);
    assert_ptr_equal (ec.peer_ids, parts.peer_ids);
    assert_ptr_equal (ec.train, &train);
    assert_ptr_equal (ec.test, &test);
    //  the simulator's own settings are the driver's
    assert_null (ec.observer);
    assert_false (ec.skip_crypto);
    assert_true (ec.seq_start == 0);
    gc_config_destroy (&cfg);
}

//  gc_engine_config_defaults is the key table's defaults; an attack is only
//  a Byzantine peer's.
static void
test_defaults_and_role (void **state)
{
    gc_config_t *cfg = s_config (NULL);
    gc_engine_config_t a, b;
    gc_engine_config_defaults (&a);
    assert_int_equal (gc_setup_engine (cfg, NULL, &b, NULL), 0);
    assert_string_equal (a.network, b.network);
    assert_string_equal (a.model, b.model);
    assert_string_equal (a.compress, b.compress);
    assert_string_equal (a.ec, b.ec);
    assert_string_equal (a.aggregator, b.aggregator);
    assert_string_equal (a.wait, b.wait);
    assert_memory_equal (&a.optim, &b.optim, sizeof a.optim);
    assert_true (a.batch == b.batch && a.local_steps == b.local_steps && a.rounds == b.rounds);
    assert_true (a.seed == b.seed && a.gamma == b.gamma && a.staleness == b.staleness);
    assert_true (a.wait_timeout_ns == b.wait_timeout_ns && a.mute_for_ns == b.mute_for_ns);
    assert_int_equal (a.self, 0);               /* node/index unset */
    assert_null (a.attack);
    assert_null (a.key);
    gc_config_destroy (&cfg);
    static const char *const honest [] = { "role/attack", "alie", NULL };
    cfg = s_config (honest);
    assert_int_equal (gc_setup_engine (cfg, NULL, &b, NULL), 0);
    assert_null (b.attack);                     /* role/kind honest: no attack */
    gc_config_destroy (&cfg);
}

//  A bad value of a key the setup parses is refused with the key's name.
static void
test_bad_values (void **state)
{
    static const struct {
        const char *key, *value;
    } cases [] = {
        { "train/schedule", "wobbly" },
        { "train/augment", "crop:-1" },
        { "train/augment", "rotate" },
        { "train/label_smoothing", "1" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        const char *sets [] = { cases [i].key, cases [i].value, NULL };
        gc_config_t *cfg = s_config (sets);
        gc_engine_config_t ec;
        gc_err_t err = { 0 };
        assert_int_equal (gc_setup_engine (cfg, NULL, &ec, &err), -1);
        size_t len = strlen (cases [i].key);
        if (strncmp (err.msg, cases [i].key, len) || strncmp (err.msg + len, ": ", 2))
            fail_msg ("%s = %s: '%s'", cases [i].key, cases [i].value, err.msg);
        gc_config_destroy (&cfg);
    }
}

//  train_samples / test_samples cut the sets; both are standardised with
//  the training statistics (the training features end up centred).
static void
test_data (void **state)
{
    static const struct { const char *train, *test; size_t n_train, n_test; } cases [] = {
        { "0", "0", 600, 200 }, { "100", "50", 100, 50 }, { "5000", "5000", 600, 200 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        const char *const sets [] = { "train/data", "synthetic:600:200:20", "train/train_samples",
                                      cases [c].train, "train/test_samples", cases [c].test, NULL };
        gc_config_t *cfg = s_config (sets);
        gc_dataset_t train, test;
        bool fell_back = true;
        gc_err_t err = { 0 };
        if (gc_setup_data (cfg, &train, &test, &fell_back, &err))
            fail_msg ("%s", err.msg);
        assert_false (fell_back);
        assert_int_equal (train.n, cases [c].n_train);
        assert_int_equal (test.n, cases [c].n_test);
        double sum = 0;
        for (size_t i = 0; i < train.n * train.dim; i++)
            sum += train.x [i];
        assert_true (fabs (sum / (double) (train.n * train.dim)) < 1e-3);
        gc_dataset_free (&train);
        gc_dataset_free (&test);
        gc_config_destroy (&cfg);
    }
    static const char *const missing [] = { "train/data", "/nonexistent/dir", NULL };
    gc_config_t *cfg = s_config (missing);
    gc_dataset_t train, test;
    bool fell_back;
    gc_err_t err = { 0 };
    assert_int_equal (gc_setup_data (cfg, &train, &test, &fell_back, &err), -1);
    assert_non_null (strstr (err.msg, "train/data: "));
    gc_config_destroy (&cfg);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_keys),
        cmocka_unit_test (test_defaults_and_role),
        cmocka_unit_test (test_bad_values),
        cmocka_unit_test (test_data),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
