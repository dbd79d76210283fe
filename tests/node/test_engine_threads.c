/*  The engine under gcnode's threading: the phases on a trainer thread
    (with the real-clock wait), every message handed in on a network thread,
    and a control thread reading the stats, the rejections and the
    staleness and flipping the partition, as the control and status
    handlers do. Under ThreadSanitizer (GC_SANITIZE=thread, label threaded)
    any field the threads share without the lock or an atomic is a report;
    in every build the rounds must complete and the counters must add up. */
#include "gc_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gc_time.h"
#include "net_fixture.h"

#define S_PEERS  4
#define S_ROUNDS 12

typedef struct {
    uint32_t  to;
    uint8_t  *header, *payload;
    size_t    header_len, payload_len;
} s_msg_t;

typedef struct {
    net_t          *net;
    pthread_mutex_t lock;           /* the queue between the two threads */
    pthread_cond_t  queued;
    s_msg_t        *queue;
    size_t          head, tail, cap;
    atomic_int      stop;
    atomic_uint_fast64_t sent, delivered;
    uint64_t        stats_reads;
} s_world_t;

typedef struct { s_world_t *world; uint32_t peer; } s_io_t;
static s_io_t s_io [S_PEERS];

static int
s_send (void *ctx, const uint32_t *dests, size_t n, const uint8_t *header, size_t hlen,
        const uint8_t *payload, size_t plen)
{
    s_world_t *w = ((s_io_t *) ctx)->world;
    pthread_mutex_lock (&w->lock);
    for (size_t i = 0; i < n; i++) {
        if (w->tail == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 256;
            w->queue = realloc (w->queue, w->cap * sizeof *w->queue);
            assert_non_null (w->queue);
        }
        s_msg_t *m = &w->queue [w->tail++];
        m->to = dests [i];
        m->header = malloc (hlen);
        m->payload = malloc (plen ? plen : 1);
        assert_true (m->header && m->payload);
        memcpy (m->header, header, hlen);
        memcpy (m->payload, payload, plen);
        m->header_len = hlen;
        m->payload_len = plen;
        atomic_fetch_add (&w->sent, 1);
    }
    pthread_cond_signal (&w->queued);
    pthread_mutex_unlock (&w->lock);
    return 0;
}

static void *
s_network (void *arg)
{
    s_world_t *w = arg;
    pthread_mutex_lock (&w->lock);
    while (!atomic_load (&w->stop) || w->head < w->tail) {
        if (w->head == w->tail) {
            struct timespec ts;
            clock_gettime (CLOCK_REALTIME, &ts);
            ts.tv_nsec += 10000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait (&w->queued, &w->lock, &ts);
            continue;
        }
        s_msg_t m = w->queue [w->head++];
        pthread_mutex_unlock (&w->lock);
        gc_engine_on_message (w->net->engines [m.to], m.header, m.header_len, m.payload,
                              m.payload_len, gc_now_ns ());
        atomic_fetch_add (&w->delivered, 1);
        free (m.header);
        free (m.payload);
        pthread_mutex_lock (&w->lock);
    }
    pthread_mutex_unlock (&w->lock);
    return NULL;
}

//  What gcnode's control handler and metrics do, from a third thread.
static void *
s_control (void *arg)
{
    s_world_t *w = arg;
    gc_engine_t *e = w->net->engines [0];
    uint32_t allowed [S_PEERS] = { 0, 1, 2, 3 };
    while (!atomic_load (&w->stop)) {
        gc_engine_stats_t s;
        gc_engine_stats (e, &s);
        assert_true (s.round <= S_ROUNDS);
        const uint32_t *peers;
        size_t n = gc_engine_neighbours (e, &peers);
        for (size_t i = 0; i < n; i++) {
            gc_engine_rejections (e, peers [i], GC_REJECT_NOT_NEIGHBOUR);
            gc_engine_staleness (e, peers [i]);
        }
        //  a partition that keeps everyone: exercises the flags, drops nothing
        gc_engine_partition (e, allowed, S_PEERS);
        w->stats_reads++;
        nanosleep (&(struct timespec) { .tv_nsec = 1000000 }, NULL);
    }
    return NULL;
}

static void
test_trainer_network_control (void **state)
{
    (void) state;
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    cfg.rounds = S_ROUNDS;
    cfg.wait = "sync";
    cfg.wait_timeout_ns = 2000000000LL;     /* a bound, not a pace: deliveries end each wait */
    s_world_t w = { 0 };
    w.net = net_new (S_PEERS, "ring", &cfg, NULL);
    pthread_mutex_init (&w.lock, NULL);
    pthread_cond_init (&w.queued, NULL);
    //  the fixture's engines use its single-threaded queue: the same peers
    //  again, on this locked one
    gc_err_t err = { 0 };
    for (uint32_t i = 0; i < S_PEERS; i++) {
        gc_engine_destroy (&w.net->engines [i]);
        gc_engine_config_t c = cfg;
        c.self = i;
        c.topology = w.net->topology;
        c.key = w.net->keys [i];
        c.trust = w.net->trust;
        c.peer_ids = (const uint8_t (*) [8]) w.net->ids;
        c.train = &w.net->shards [i];
        c.test = &w.net->test;
        s_io [i] = (s_io_t) { &w, i };
        gc_engine_io_t io = { .ctx = &s_io [i], .send = s_send };
        w.net->engines [i] = gc_engine_new (&c, &io, &err);
        if (!w.net->engines [i])
            fail_msg ("engine %u: %s", i, err.msg);
    }
    pthread_t network, control;
    assert_int_equal (pthread_create (&network, NULL, s_network, &w), 0);
    assert_int_equal (pthread_create (&control, NULL, s_control, &w), 0);
    //  this thread is the trainer of every peer, one phase of each in turn
    for (uint32_t i = 0; i < S_PEERS; i++)
        assert_int_equal (gc_engine_start (w.net->engines [i], gc_now_ns ()), 0);
    for (int r = 0; r < S_ROUNDS; r++) {
        for (uint32_t i = 0; i < S_PEERS; i++) {
            gc_engine_t *e = w.net->engines [i];
            gc_engine_train (e);
            assert_int_equal (gc_engine_publish (e, gc_now_ns (), &err), 0);
            gc_engine_wait_begin (e, gc_now_ns ());
        }
        for (uint32_t i = 0; i < S_PEERS; i++) {
            gc_engine_t *e = w.net->engines [i];
            gc_engine_wait (e, NULL);
            assert_int_equal (gc_engine_mix (e, gc_now_ns (), NULL), 0);
        }
    }
    atomic_store (&w.stop, 1);
    assert_int_equal (pthread_join (network, NULL), 0);
    assert_int_equal (pthread_join (control, NULL), 0);
    assert_true (w.stats_reads > 0);
    assert_int_equal (atomic_load (&w.delivered), atomic_load (&w.sent));
    uint64_t received = 0, applied = 0;
    for (uint32_t i = 0; i < S_PEERS; i++) {
        gc_engine_stats_t s;
        gc_engine_stats (w.net->engines [i], &s);
        assert_int_equal (s.round, S_ROUNDS);
        assert_int_equal (s.rejected, 0);
        assert_int_equal (s.partitioned, 0);
        received += s.msgs_recv;
        applied += s.deltas_applied;
    }
    assert_int_equal (received, atomic_load (&w.sent));
    //  every round each peer's deltas reach its two in-neighbours
    assert_true (applied >= (uint64_t) (S_ROUNDS - 1) * S_PEERS * 2);
    net_destroy (&w.net);
    free (w.queue);
    pthread_cond_destroy (&w.queued);
    pthread_mutex_destroy (&w.lock);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_trainer_network_control),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
