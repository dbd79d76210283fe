/*  gc_engine_bind_params (an embedder's buffer as the engine's model) and the
    engines of kind external: on the in-memory network of net_fixture. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "net_fixture.h"

//  A 4-peer network of cfg's defaults for `rounds` rounds and a buffer of
//  its model's size for peer 0.
static net_t *
s_net (uint64_t rounds, float **buf, size_t *n)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.rounds = rounds;
    net_t *net = net_new (4, "complete", &cfg, NULL);
    *n = gc_engine_n_params (net->engines [0]);
    *buf = gc_falloc (*n);
    assert_non_null (*buf);
    return net;
}

//  Not adopted: the seeded initial model is written into the buffer, the
//  engine's model is the buffer from then on (every mix lands in it), and
//  the network learns as it does without binding.
static void
test_bind_seeded (void **state)
{
    float *buf;
    size_t n;
    net_t *net = s_net (30, &buf, &n);
    for (size_t i = 0; i < n; i++)
        buf [i] = 7.0f;
    gc_engine_bind_params (net->engines [0], buf, false);
    assert_ptr_equal (gc_engine_params (net->engines [0]), buf);
    assert_memory_equal (buf, gc_engine_params (net->engines [1]), n * sizeof (float));
    for (int r = 0; r < 30; r++)
        net_round (net);
    assert_ptr_equal (gc_engine_params (net->engines [0]), buf);
    assert_true (net_mean_accuracy (net) > 0.6);
    assert_true (net_consensus_distance (net) < 0.1);
    gc_engine_stats_t s;
    gc_engine_stats (net->engines [0], &s);
    assert_int_equal (s.keyframes_sent, 0);     /* nothing to announce: the seeded model */
    net_destroy (&net);                         /* the engine does not free buf */
    gc_mem_free (buf);
}

//  Adopted, and different from the seeded model: announced by keyframe at
//  the first publish, the neighbours' replicas take it, and the peers come
//  to agree although one started elsewhere.
static void
test_bind_adopted (void **state)
{
    float *buf;
    size_t n;
    net_t *net = s_net (40, &buf, &n);
    memcpy (buf, gc_engine_params (net->engines [0]), n * sizeof (float));
    for (size_t i = 0; i < n; i++)
        buf [i] += 0.05f * ((float) (i % 7) - 3.0f);
    gc_engine_bind_params (net->engines [0], buf, true);
    net_round (net);
    gc_engine_stats_t s0, s1;
    gc_engine_stats (net->engines [0], &s0);
    gc_engine_stats (net->engines [1], &s1);
    assert_true (s0.keyframes_sent >= 3);       /* one per out-neighbour */
    assert_int_equal (s1.keyframes_sent, 0);    /* the others had nothing new */
    for (int r = 1; r < 40; r++)
        net_round (net);
    assert_true (net_consensus_distance (net) < 0.1);
    assert_true (net_mean_accuracy (net) > 0.6);
    net_destroy (&net);
    gc_mem_free (buf);
}

//  An external model is the embedder's to train: an engine given training
//  data for one is refused by name; without data it builds, never trains
//  (train returns at once) and gossips the borrowed table.
static void
test_external_engine (void **state)
{
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.model = "external:64-32-10";
    gc_err_t err = { 0 };
    gc_dataset_t data = { .n = 1, .dim = 64, .n_classes = 10 };
    cfg.train = &data;
    gc_key_t *key = gc_key_generate (&err);
    assert_non_null (key);
    gc_trust_t *trust = gc_trust_new ();
    gc_topology_t *top = gc_topology_new ("complete", 1, 1, &err);
    assert_non_null (top);
    uint8_t ids [1][8];
    memcpy (ids [0], gc_key_peer_id (key), 8);
    cfg.topology = top;
    cfg.key = key;
    cfg.trust = trust;
    cfg.peer_ids = (const uint8_t (*) [8]) ids;
    gc_engine_io_t io = { 0 };
    assert_null (gc_engine_new (&cfg, &io, &err));
    assert_non_null (strstr (err.msg, "trained by its embedder"));
    cfg.train = NULL;
    gc_engine_t *e = gc_engine_new (&cfg, &io, &err);
    assert_non_null (e);
    assert_string_equal (gc_engine_model_spec (e), "external:64-32-10");
    float before = gc_engine_params (e) [5];
    assert_true (gc_engine_train (e) == 0);
    assert_true (gc_engine_params (e) [5] == before);
    gc_engine_destroy (&e);
    gc_topology_destroy (&top);
    gc_trust_destroy (&trust);
    gc_key_destroy (&key);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_bind_seeded),
        cmocka_unit_test (test_bind_adopted),
        cmocka_unit_test (test_external_engine),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
