/*  gc_zmq: the end of the network thread, and the fault layer's held
    messages at destroy.

    gc_zmq_destroy must return only once the network thread has ended
    completely, thread-local destructors included: gcnode calls exit() right
    after it, and exit's OPENSSL_cleanup frees the OpenSSL state of every
    thread without a lock, so a network thread still running its own
    destructors then frees the same memory twice ("double free or corruption
    (fasttop)" seen once at the end of a bandwidth-capped gcnet run). */
#include "gc_test.h"

#include <czmq.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_zmq.h"

#define S_BODY      4000
#define S_MAX_SEEN  64
#define S_WAIT_MS   20000       /* bound of every wait: a failure, never a pass */

typedef struct {
    gc_zmq_t   *zmq;
    char        ctl [600];          /* gc_zmq keeps the pointer, not a copy */
    atomic_int  delivered;
    atomic_int  corrupt;
    uint32_t    seen [S_MAX_SEEN];  /* message indices in arrival order */
    //  test_destroy_interrupted: the callback is busy while destroy waits
    int         slow_ms;
    atomic_int  in_deliver, deliver_done;
} s_side_t;

static char *s_dir;

static int
s_setup (void **state)
{
    (void) state;
    s_dir = gc_test_tmpdir ("zmq");
    return 0;
}

static int
s_teardown (void **state)
{
    (void) state;
    gc_test_rmtree (s_dir);
    free (s_dir);
    return 0;
}

//  ipc://DIR/NAME, or its control channel ipc://DIR/NAME.ctl
static void
s_endpoint (char *out, size_t size, const char *name, bool control)
{
    int n = snprintf (out, size, "ipc://%s/%s%s", s_dir, name, control ? ".ctl" : "");
    assert_true (n > 0 && (size_t) n < size);
}

static void
s_nap (int ms)
{
    zclock_sleep (ms);
}

//  ---------------------------------------------------------------------------
//  Runs in the network thread.

static pthread_key_t s_key;
static atomic_int    s_tls_ended;

//  A thread-local destructor that takes a while, as OpenSSL's may under load.
static void
s_tls_end (void *value)
{
    (void) value;
    s_nap (200);
    atomic_store (&s_tls_ended, 1);
}

static gc_deliver_t
s_deliver (void *ctx, const uint8_t *header, size_t header_len, const uint8_t *payload,
           size_t payload_len, int64_t now_ns)
{
    (void) now_ns;
    s_side_t *side = ctx;
    if (!pthread_getspecific (s_key))
        pthread_setspecific (s_key, &s_key);
    if (side->slow_ms) {
        atomic_store (&side->in_deliver, 1);
        s_nap (side->slow_ms);
        atomic_store (&side->deliver_done, 1);
    }
    uint32_t index;
    bool ok = header_len == sizeof index && payload_len == S_BODY;
    if (ok) {
        memcpy (&index, header, sizeof index);
        for (size_t i = 0; ok && i < payload_len; i++)
            ok = payload [i] == (uint8_t) (index * 7 + i);
    }
    int n = atomic_load (&side->delivered);
    if (!ok)
        atomic_fetch_add (&side->corrupt, 1);
    else
    if (n < S_MAX_SEEN)
        side->seen [n] = index;
    atomic_fetch_add (&side->delivered, 1);
    return GC_DELIVER_OK;
}

//  "rate B/S" or "held"
static void
s_control (void *ctx, const char *request, char *reply, size_t size)
{
    s_side_t *side = ctx;
    double rate;
    if (sscanf (request, "rate %lf", &rate) == 1) {
        gc_zmq_fault_rate (side->zmq, rate);
        snprintf (reply, size, "ok");
    }
    else {
        char faults [256];
        gc_zmq_fault_describe (side->zmq, faults, sizeof faults);
        const char *held = strstr (faults, "held=");
        snprintf (reply, size, "%s", held ? held + 5 : "?");
    }
}

//  ---------------------------------------------------------------------------

static gc_zmq_t *
s_transport (s_side_t *side, const char *name, bool control)
{
    char bind [600];
    s_endpoint (bind, sizeof bind, name, false);
    s_endpoint (side->ctl, sizeof side->ctl, name, true);
    gc_zmq_config_t cfg = { .bind = bind, .max_frame = 1 << 20, .deliver = s_deliver, .ctx = side,
                            .control = control ? side->ctl : NULL, .control_fn = s_control };
    gc_err_t err = { 0 };
    side->zmq = gc_zmq_new (&cfg, &err);
    assert_non_null (side->zmq);
    return side->zmq;
}

static void
s_start (s_side_t *side)
{
    gc_err_t err = { 0 };
    if (gc_zmq_start (side->zmq, &err))
        fail_msg ("%s", err.msg);
}

static void
s_link (s_side_t *side, uint32_t peer, const char *name)
{
    char endpoint [600];
    s_endpoint (endpoint, sizeof endpoint, name, false);
    gc_err_t err = { 0 };
    if (gc_zmq_add_peer (side->zmq, peer, endpoint, &err))
        fail_msg ("%s", err.msg);
}

static void
s_wait_connected (s_side_t *side, int links)
{
    int waited = 0;
    while (gc_zmq_connected (side->zmq) < links) {
        assert_true (waited < S_WAIT_MS);
        s_nap (10);
        waited += 10;
    }
}

static void
s_wait_count (atomic_int *count, int at_least)
{
    int waited = 0;
    while (atomic_load (count) < at_least) {
        assert_true (waited < S_WAIT_MS);
        s_nap (5);
        waited += 5;
    }
}

static void
s_send (s_side_t *side, uint32_t dest, uint32_t index)
{
    uint8_t body [S_BODY];
    for (size_t i = 0; i < sizeof body; i++)
        body [i] = (uint8_t) (index * 7 + i);
    assert_int_equal (gc_zmq_send (side->zmq, &dest, 1, (const uint8_t *) &index, sizeof index,
                                   body, sizeof body), 0);
}

static void
s_wait_delayed (s_side_t *side, uint64_t at_least)
{
    int waited = 0;
    gc_zmq_stats_t st;
    for (gc_zmq_stats (side->zmq, &st); st.fault_delayed < at_least; gc_zmq_stats (side->zmq, &st)) {
        assert_true (waited < S_WAIT_MS);
        s_nap (5);
        waited += 5;
    }
}

//  One request on the control channel, the reply (caller frees).
static char *
s_ask (const char *name, const char *request)
{
    char ctl [600];
    s_endpoint (ctl, sizeof ctl, name, true);
    zsock_t *req = zsock_new_req (ctl);
    assert_non_null (req);
    zsock_set_rcvtimeo (req, S_WAIT_MS);
    zsock_set_linger (req, 0);
    assert_int_equal (zstr_send (req, request), 0);
    char *reply = zstr_recv (req);
    zsock_destroy (&req);
    assert_non_null (reply);
    return reply;
}

//  ---------------------------------------------------------------------------

//  The network thread's thread-local destructors have run when destroy
//  returns (a detached zactor thread still runs them afterwards).
static void
test_destroy_joins_thread (void **state)
{
    (void) state;
    static s_side_t a;
    memset (&a, 0, sizeof a);
    atomic_store (&s_tls_ended, 0);
    s_transport (&a, "self", false);
    s_link (&a, 0, "self");             /* to its own inbox */
    s_start (&a);
    s_wait_connected (&a, 1);
    s_send (&a, 0, 1);
    s_wait_count (&a.delivered, 1);
    gc_zmq_destroy (&a.zmq);
    assert_null (a.zmq);
    assert_int_equal (atomic_load (&s_tls_ended), 1);
    assert_int_equal (atomic_load (&a.corrupt), 0);
}

static void
s_on_signal (int sig)
{
    (void) sig;
}

typedef struct {
    pthread_t  target;
    s_side_t  *side;
} s_kicker_t;

static void *
s_kicker (void *arg)
{
    s_kicker_t *k = arg;
    s_nap (50);                         /* the target is waiting in destroy by now */
    pthread_kill (k->target, SIGUSR1);
    return NULL;
}

//  A signal while destroy waits for the network thread (SIGTERM from gcnet
//  while a peer tears down) must not end the wait: zactor_destroy's did, and
//  the transport was then freed under the running thread.
static void
test_destroy_interrupted (void **state)
{
    (void) state;
    struct sigaction sa = { .sa_handler = s_on_signal }, old;
    sigemptyset (&sa.sa_mask);
    sa.sa_flags = 0;                    /* no SA_RESTART: blocking calls see EINTR */
    assert_int_equal (sigaction (SIGUSR1, &sa, &old), 0);
    static s_side_t a;
    memset (&a, 0, sizeof a);
    a.slow_ms = 400;
    s_transport (&a, "busy", false);
    s_link (&a, 0, "busy");
    s_start (&a);
    s_wait_connected (&a, 1);
    s_send (&a, 0, 1);
    s_wait_count (&a.in_deliver, 1);
    s_kicker_t k = { pthread_self (), &a };
    pthread_t kicker;
    assert_int_equal (pthread_create (&kicker, NULL, s_kicker, &k), 0);
    gc_zmq_destroy (&a.zmq);
    assert_int_equal (atomic_load (&a.deliver_done), 1);
    pthread_join (kicker, NULL);
    sigaction (SIGUSR1, &old, NULL);
}

//  Messages held by the rate cap when the transport goes, with the
//  neighbour up, gone before, or never there. What was released arrives
//  intact and in order (the heap moves zmq_msg_t by struct copy).
typedef enum { S_NO_NEIGHBOUR, S_NEIGHBOUR_ENDS_FIRST, S_NEIGHBOUR_ENDS_LAST } s_case_t;

static void
s_held_case (s_case_t c)
{
    static s_side_t a, b;
    memset (&a, 0, sizeof a);
    memset (&b, 0, sizeof b);
    s_transport (&a, "a", true);
    s_link (&a, 1, "b");
    s_start (&a);
    uint32_t sent = 0;
    if (c != S_NO_NEIGHBOUR) {
        s_transport (&b, "b", false);
        s_start (&b);
        s_wait_connected (&a, 1);
        //  20 kB/s: a message every 0.2 s, some arrive before the cap tightens
        free (s_ask ("a", "rate 20000"));
        for (; sent < 10; sent++)
            s_send (&a, 1, sent);
        s_wait_count (&b.delivered, 2);
    }
    //  1 B/s: whatever is sent now stays held for hours
    free (s_ask ("a", "rate 1"));
    for (uint32_t i = 0; i < 5; i++, sent++)
        s_send (&a, 1, sent);
    s_wait_delayed (&a, sent);
    char *held = s_ask ("a", "held");
    assert_true (atol (held) >= 5);
    assert_true (atol (held) <= (long) sent);
    free (held);
    if (c == S_NEIGHBOUR_ENDS_FIRST) {
        gc_zmq_destroy (&b.zmq);
        s_nap (300);                    /* releases now go to a neighbour that is gone */
    }
    gc_zmq_destroy (&a.zmq);
    gc_zmq_destroy (&b.zmq);
    assert_null (a.zmq);
    int got = atomic_load (&b.delivered);
    assert_int_equal (atomic_load (&b.corrupt), 0);
    assert_true (got <= 10);
    assert_true (c == S_NO_NEIGHBOUR ? got == 0 : got >= 2);
    for (int i = 0; i < got && i < S_MAX_SEEN; i++)
        assert_int_equal (b.seen [i], (uint32_t) i);
}

static void
test_destroy_with_held (void **state)
{
    (void) state;
    static const s_case_t cases [] = { S_NO_NEIGHBOUR, S_NEIGHBOUR_ENDS_FIRST, S_NEIGHBOUR_ENDS_LAST };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++)
        s_held_case (cases [i]);
}

int
main (void)
{
    zsys_init ();
    if (pthread_key_create (&s_key, s_tls_end))
        return 1;
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_destroy_joins_thread),
        cmocka_unit_test (test_destroy_interrupted),
        cmocka_unit_test (test_destroy_with_held),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
