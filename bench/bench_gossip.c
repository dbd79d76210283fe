/*  gcbench gossip — where a round's time goes, for one peer with 4
    neighbours and the default model (784-256-128-10), over an in-memory
    network of 5 engines (complete graph), with the default algorithms
    (top-k 1 % fp16 + liec, the default rule guard, 4 local steps of batch 32).

    round_overhead_ratio = (compress + sign + verify + decode + aggregate)
                           / train: below 1 means gossip costs less than
    the learning it carries. gossip_aggregate_over_train = aggregate / train:
    what the robust rule (and the mix around it) costs against the round's
    training. Waiting is 0 here (no network delay).

    Those figures are wall time, which swings with the other processes on a
    shared machine, so the *_cpu_ms figures time peer 0's calls on the
    thread's CPU clock, each the median over the rounds, and
    gossip_aggregate_over_train_cpu is the ratio of those medians (the mix
    over the training): what another process takes from the CPU is not
    counted, what it takes from the shared caches is.

    Training runs on one OpenBLAS thread, as a peer does by default
    (node/threads = 1): with OpenBLAS's own default, a thread per core, the
    thread's CPU clock saw only its share of the products and the spinning
    of the wait for the others (perf: a quarter of the run in sched_yield
    on 2 cores), so the training it timed depended on the core count. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_bench.h"
#include "gc_dataset.h"
#include "gc_engine.h"
#include "gc_key.h"
#include "gc_partition.h"
#include "gc_time.h"
#include "gc_topology.h"
#include "gc_trust.h"

#define S_PEERS 5
#define S_ROUNDS_MAX 200      /* the full run's rounds; --quick runs 20 */

/*  Peer 0's per-round CPU seconds, by the engine call that does the work. */
typedef enum { S_TRAIN, S_PUBLISH, S_RECEIVE, S_MIX, S_PHASES } s_phase_t;

typedef struct { uint32_t to; uint8_t *header, *payload; size_t hlen, plen; } s_msg_t;

typedef struct {
    s_msg_t  *queue;
    size_t    queued, cap;
} s_net_t;

typedef struct { s_net_t *net; } s_io_t;

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

//  The median is robust to the first rounds' cold caches and to the rounds a
//  neighbour on the machine thrashed the L3.
static double
s_median (double *v, size_t n)
{
    qsort (v, n, sizeof *v, s_cmp_double);
    return n % 2 ? v [n / 2] : 0.5 * (v [n / 2 - 1] + v [n / 2]);
}

static int
s_send (void *ctx, const uint32_t *dests, size_t n, const uint8_t *h, size_t hlen,
        const uint8_t *p, size_t plen)
{
    s_net_t *net = ((s_io_t *) ctx)->net;
    for (size_t i = 0; i < n; i++) {
        if (net->queued == net->cap) {
            net->cap = net->cap ? 2 * net->cap : 64;
            net->queue = realloc (net->queue, net->cap * sizeof *net->queue);
        }
        s_msg_t *m = &net->queue [net->queued++];
        m->to = dests [i];
        m->header = malloc (hlen);
        m->payload = malloc (plen ? plen : 1);
        memcpy (m->header, h, hlen);
        memcpy (m->payload, p, plen);
        m->hlen = hlen;
        m->plen = plen;
    }
    return 0;
}

int
gc_bench_gossip (const gc_bench_opts_t *opts)
{
    gc_err_t err = { 0 };
    openblas_set_num_threads (1);
    gc_topology_t *topo = gc_topology_new ("complete", S_PEERS, 1, &err);
    gc_trust_t *trust = gc_trust_new ();
    gc_key_t *keys [S_PEERS];
    uint8_t ids [S_PEERS][8];
    for (int i = 0; i < S_PEERS; i++) {
        uint8_t seed [32] = { (uint8_t) (i + 1) };
        keys [i] = gc_key_from_seed (seed, &err);
        memcpy (ids [i], gc_key_peer_id (keys [i]), 8);
        gc_trust_add_raw (trust, gc_key_public_raw (keys [i]), "bench", &err);
    }
    gc_dataset_t train, test, shards [S_PEERS];
    if (gc_dataset_synthetic (1, 2000 * S_PEERS, 100, 784, 10, &train, &test, &err)) {
        fprintf (stderr, "gcbench gossip: %s\n", err.msg);
        return 1;
    }
    gc_split_t split = { .kind = GC_SPLIT_IID };
    s_net_t net = { 0 };
    s_io_t io_ctx = { &net };
    gc_engine_t *engines [S_PEERS];
    for (int i = 0; i < S_PEERS; i++) {
        uint32_t *idx;
        size_t count;
        gc_partition_peer (train.y, train.n, 10, &split, S_PEERS, 1, (uint32_t) i, &idx, &count, NULL);
        gc_dataset_subset (&train, idx, count, &shards [i], NULL);
        free (idx);
        gc_engine_config_t cfg;
        gc_engine_config_defaults (&cfg);
        cfg.self = (uint32_t) i;
        cfg.topology = topo;
        cfg.key = keys [i];
        cfg.trust = trust;
        cfg.peer_ids = (const uint8_t (*) [8]) ids;
        cfg.train = &shards [i];
        cfg.rounds = 1000000;
        gc_engine_io_t io = { .ctx = &io_ctx, .send = s_send };
        engines [i] = gc_engine_new (&cfg, &io, &err);
        if (!engines [i]) {
            fprintf (stderr, "gcbench gossip: %s\n", err.msg);
            return 1;
        }
    }
    int rounds = opts->quick ? 20 : S_ROUNDS_MAX;
    double cpu [S_PHASES][S_ROUNDS_MAX] = { { 0 } };
    int64_t now = 0;
    for (int r = 0; r < rounds; r++) {
        now += 1000000;
        for (int i = 0; i < S_PEERS; i++) {
            double t0 = gc_thread_cpu_s ();
            gc_engine_train (engines [i]);
            double t1 = gc_thread_cpu_s ();
            gc_engine_publish (engines [i], now, NULL);
            if (i == 0) {
                cpu [S_TRAIN][r] = t1 - t0;
                cpu [S_PUBLISH][r] = gc_thread_cpu_s () - t1;
            }
            gc_engine_wait_begin (engines [i], now);
        }
        for (size_t m = 0; m < net.queued; m++) {
            s_msg_t *msg = &net.queue [m];
            double t0 = gc_thread_cpu_s ();
            gc_engine_on_message (engines [msg->to], msg->header, msg->hlen, msg->payload, msg->plen, now);
            if (msg->to == 0)
                cpu [S_RECEIVE][r] += gc_thread_cpu_s () - t0;
            free (msg->header);
            free (msg->payload);
        }
        net.queued = 0;
        for (int i = 0; i < S_PEERS; i++) {
            double t0 = gc_thread_cpu_s ();
            gc_engine_mix (engines [i], now, NULL);
            if (i == 0)
                cpu [S_MIX][r] = gc_thread_cpu_s () - t0;
        }
    }
    gc_engine_stats_t s;
    gc_engine_stats (engines [0], &s);
    gc_engine_config_t defaults;
    gc_engine_config_defaults (&defaults);
    char extra [256];
    snprintf (extra, sizeof extra, "\"peer\":0,\"neighbours\":4,\"model\":\"784-256-128-10\","
              "\"compress\":\"%s\",\"ec\":\"%s\",\"aggregator\":\"%s\",\"local_steps\":%d",
              defaults.compress, defaults.ec, defaults.aggregator, (int) defaults.local_steps);
    struct { const char *name; double seconds; } parts [] = {
        { "gossip_round_train_ms", s.time_train_s },
        { "gossip_round_compress_ms", s.time_compress_s },
        { "gossip_round_sign_ms", s.time_sign_s },
        { "gossip_round_verify_ms", s.time_verify_s },
        { "gossip_round_decode_ms", s.time_decode_s },
        { "gossip_round_aggregate_ms", s.time_aggregate_s },
        { "gossip_round_wait_ms", s.total_wait_s },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts [0]; i++)
        gc_bench_emit (opts, parts [i].name, parts [i].seconds * 1e3 / rounds, "ms", extra);
    double overhead = s.time_compress_s + s.time_sign_s + s.time_verify_s + s.time_decode_s
                    + s.time_aggregate_s;
    gc_bench_emit (opts, "round_overhead_ratio", overhead / s.time_train_s, "ratio", extra);
    gc_bench_emit (opts, "gossip_aggregate_over_train", s.time_aggregate_s / s.time_train_s, "ratio", extra);
    double med [S_PHASES];
    for (int p = 0; p < S_PHASES; p++) {
        med [p] = s_median (cpu [p], (size_t) rounds);
    }
    struct { const char *name; double seconds; } cpu_parts [] = {
        { "gossip_round_train_cpu_ms", med [S_TRAIN] },
        { "gossip_round_publish_cpu_ms", med [S_PUBLISH] },
        { "gossip_round_receive_cpu_ms", med [S_RECEIVE] },
        { "gossip_round_aggregate_cpu_ms", med [S_MIX] },
    };
    for (size_t i = 0; i < sizeof cpu_parts / sizeof cpu_parts [0]; i++)
        gc_bench_emit (opts, cpu_parts [i].name, cpu_parts [i].seconds * 1e3, "ms", extra);
    gc_bench_emit (opts, "gossip_aggregate_over_train_cpu", med [S_MIX] / med [S_TRAIN], "ratio", extra);
    gc_bench_emit (opts, "gossip_bytes_per_round", (double) s.bytes_sent / rounds, "B", extra);
    gc_bench_emit (opts, "gossip_dense_over_sent", (double) s.dense_equiv_bytes / (double) s.bytes_sent,
                   "ratio", extra);
    for (int i = 0; i < S_PEERS; i++) {
        gc_engine_destroy (&engines [i]);
        gc_key_destroy (&keys [i]);
        gc_dataset_free (&shards [i]);
    }
    free (net.queue);
    gc_trust_destroy (&trust);
    gc_topology_destroy (&topo);
    gc_dataset_free (&train);
    gc_dataset_free (&test);
    return 0;
}
