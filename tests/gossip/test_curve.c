/*  gc_curve in one process: certificate files (modes, checks that refuse
    damaged or misplaced keys), and the socket hook: a ROUTER secured as an
    inbox admits a DEALER with an allowed key, refuses one with another key,
    one of a revoked peer and one without CURVE, counts the refusals and
    names each one's address and key (and the revoked peer); a second ZAP handler
    in the process is refused. No timing assertion:
    the refusals are awaited through their counters (bounded).

    The reconnect flood (issue 19): an allowed key that reconnects after
    every 19 forged messages is muted by its key, not by the connection:
    the deliver callback (which verifies each message's signature) runs
    at most S_VERIFY_BUDGET times for S_CYCLES * 19 forgeries. Without
    CURVE the same holds by remote address (off loopback), and the muted
    address's new connections are refused. */
#include "gc_test.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_curve.h"
#include "gc_zmq.h"

static char *s_dir;

static int
s_setup (void **state)
{
    s_dir = gc_test_tmpdir ("curve");
    return 0;
}

static int
s_teardown (void **state)
{
    gc_test_rmtree (s_dir);
    free (s_dir);
    return 0;
}

static char *
s_path (const char *name)
{
    char *p = malloc (512);
    snprintf (p, 512, "%s/%s", s_dir, name);
    return p;
}

static void
test_key_files (void **state)
{
    char *sec = s_path ("a.curve"), *pub = s_path ("a.curve.pub");
    gc_err_t err = { 0 };
    assert_int_equal (gc_curve_keygen (sec, "0123456789abcdef", &err), 0);
    struct stat st;
    assert_int_equal (stat (sec, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0600);
    assert_int_equal (stat (pub, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0644);
    char k1 [GC_CURVE_KEY_TXT], k2 [GC_CURVE_KEY_TXT];
    assert_int_equal (gc_curve_read_key (sec, true, k1, &err), 0);
    assert_int_equal (gc_curve_read_key (pub, false, k2, &err), 0);
    assert_string_equal (k1, k2);
    assert_int_equal (strlen (k1), 40);
    //  The public file holds no secret; the secret file's public half reads too.
    assert_int_equal (gc_curve_read_key (pub, true, k2, &err), -1);
    assert_non_null (strstr (err.msg, "no valid curve/secret-key"));
    assert_int_equal (gc_curve_read_key (sec, false, k2, &err), 0);
    //  A secret others can read is refused (like ssh).
    assert_int_equal (chmod (sec, 0640), 0);
    assert_int_equal (gc_curve_read_key (sec, true, k2, &err), -1);
    assert_non_null (strstr (err.msg, "accessible by group or others"));
    assert_int_equal (chmod (sec, 0600), 0);

    //  Damaged files: each refused with a message, none crashes.
    static const char *bad [] = {
        "",
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n",
        "curve\n    public-key = \"short\"\n",
        ("curve\n    public-key = \"0000000000000000000000000000000000000000\"\n"
         "    secret-key = \"~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\"\n"),
        "metadata\n    public-key = \"0000000000000000000000000000000000000000\"\n",   /* wrong section */
    };
    char *path = s_path ("bad.curve");
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_test_write_file (path, bad [i], strlen (bad [i]));
        assert_int_equal (chmod (path, 0600), 0);
        gc_err_clear (&err);
        if (gc_curve_read_key (path, true, k2, &err) == 0)
            fail_msg ("case %zu accepted", i);
        assert_true (strlen (err.msg) > 0);
    }
    gc_curve_t *c = gc_curve_new (path, &err);
    assert_null (c);
    //  Two valid keys that do not belong together: a's public, b's secret.
    char *b = s_path ("b.curve");
    assert_int_equal (gc_curve_keygen (b, NULL, &err), 0);
    zconfig_t *ca = zconfig_load (sec), *cb = zconfig_load (b);
    assert_non_null (ca);
    assert_non_null (cb);
    zconfig_put (ca, "curve/secret-key", zconfig_get (cb, "curve/secret-key", ""));
    assert_int_equal (zconfig_save (ca, path), 0);
    assert_int_equal (chmod (path, 0600), 0);
    assert_int_equal (gc_curve_read_key (path, true, k2, &err), -1);
    assert_non_null (strstr (err.msg, "does not match"));
    zconfig_destroy (&ca);
    zconfig_destroy (&cb);
    free (b);
    char *missing = s_path ("missing.curve");
    assert_int_equal (gc_curve_read_key (missing, false, k2, &err), -1);
    free (missing);
    free (path);
    free (sec);
    free (pub);
}

static gc_deliver_t
s_deliver (void *ctx, const uint8_t *header, size_t header_len, const uint8_t *payload,
           size_t payload_len, int64_t now_ns)
{
    (void) ctx; (void) header; (void) header_len; (void) payload; (void) payload_len; (void) now_ns;
    return GC_DELIVER_OK;
}

//  Messages (of any shape) the inbox took, waiting up to timeout_ms for
//  more than `seen`.
static uint64_t
s_received (gc_zmq_t *inbox, uint64_t seen, int timeout_ms)
{
    gc_zmq_stats_t st;
    for (int waited = 0;; waited += 10) {
        gc_zmq_stats (inbox, &st);
        if (st.recv_messages + st.recv_malformed + st.recv_muted > seen || waited >= timeout_ms)
            return st.recv_messages + st.recv_malformed + st.recv_muted;
        zclock_sleep (10);
    }
}

static zsock_t *
s_dealer (gc_curve_t *curve, int port)
{
    zsock_t *d = zsock_new (ZMQ_DEALER);
    assert_non_null (d);
    gc_err_t err = { 0 };
    if (curve)
        assert_int_equal (gc_curve_apply (curve, d, 0, &err), 0);
    assert_int_equal (zsock_connect (d, "tcp://127.0.0.1:%d", port), 0);
    zstr_send (d, "hello");
    return d;
}

//  A raw TCP client that connects, waits until the inbox has seen the
//  connection, then greets as ZMTP 3.0 with the NULL mechanism: signature,
//  version, mechanism padded to 20 bytes, as-server, filler (64 bytes).
static int
s_late_null_greeting (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    assert_true (fd >= 0);
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    to.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    assert_int_equal (connect (fd, (struct sockaddr *) &to, sizeof to), 0);
    zclock_sleep (300);
    uint8_t greeting [64] = { 0xff, [9] = 0x7f, [10] = 3, [11] = 0, [12] = 'N', 'U', 'L', 'L' };
    assert_int_equal (write (fd, greeting, sizeof greeting), (ssize_t) sizeof greeting);
    return fd;
}

static void
test_inbox_admits_only_allowed_keys (void **state)
{
    if (!gc_curve_available ())
        skip ();
    const char *names [] = { "server", "good", "bad", "revoked" };
    for (int i = 0; i < 4; i++) {
        char *p = s_path (names [i]);
        assert_int_equal (gc_curve_keygen (p, NULL, NULL), 0);
        free (p);
    }
    char *server_sec = s_path ("server"), *server_pub = s_path ("server.pub");
    char *good_sec = s_path ("good"), *good_pub = s_path ("good.pub"), *bad_sec = s_path ("bad");
    gc_err_t err = { 0 };
    //  The inbox allows peer 1 = "good".
    gc_curve_t *server = gc_curve_new (server_sec, &err);
    assert_non_null (server);
    assert_int_equal (gc_curve_add_peer (server, 1, good_pub, &err), 0);
    char *revoked_sec = s_path ("revoked"), *revoked_pub = s_path ("revoked.pub");
    assert_int_equal (gc_curve_add_revoked (server, 3, revoked_pub, &err), 0);
    zsock_t *early = zsock_new (ZMQ_ROUTER);
    assert_int_equal (gc_curve_apply (server, early, GC_CURVE_INBOX, &err), -1);    /* not started */
    zsock_destroy (&early);
    assert_int_equal (gc_curve_start (server, &err), 0);
    assert_int_equal (gc_curve_add_peer (server, 2, good_pub, &err), -1);          /* too late */
    //  One ZAP handler per process (zauth would abort on a second): a second
    //  peer with CURVE in this process is refused, by name (libgcnode).
    gc_curve_t *second = gc_curve_new (good_sec, &err);
    assert_non_null (second);
    assert_int_equal (gc_curve_start (second, &err), -1);
    assert_non_null (strstr (err.msg, "another peer of this process has CURVE on"));
    gc_curve_destroy (&second);                         /* the first's handler stays */
    //  The inbox is a gc_zmq one: its socket monitor reports handshakes.
    gc_zmq_config_t zc = { .bind = "tcp://127.0.0.1:*", .max_frame = 4096, .deliver = s_deliver,
                           .secure = gc_curve_apply, .secure_ctx = server,
                           .secure_event = gc_curve_event };
    gc_zmq_t *router = gc_zmq_new (&zc, &err);
    assert_non_null (router);
    if (gc_zmq_start (router, &err))
        fail_msg ("%s", err.msg);
    int port = gc_zmq_port (router);
    assert_true (port > 0);

    //  Clients know the server as their peer 0.
    gc_curve_t *good = gc_curve_new (good_sec, &err), *bad = gc_curve_new (bad_sec, &err);
    assert_non_null (good);
    assert_non_null (bad);
    assert_int_equal (gc_curve_add_peer (good, 0, server_pub, &err), 0);
    assert_int_equal (gc_curve_add_peer (bad, 0, server_pub, &err), 0);
    zsock_t *stray = zsock_new (ZMQ_DEALER);
    assert_int_equal (gc_curve_apply (good, stray, 5, &err), -1);                   /* no key for 5 */
    assert_non_null (strstr (err.msg, "peer 5"));
    zsock_destroy (&stray);

    zsock_t *d_good = s_dealer (good, port);
    uint64_t got = s_received (router, 0, 10000);
    assert_int_equal (got, 1);

    zsock_t *d_bad = s_dealer (bad, port), *d_plain = s_dealer (NULL, port);
    //  The client without CURVE fails as a protocol error when the inbox
    //  reads its mechanism, or with no detail when it hangs up first (it
    //  reads the inbox's CURVE greeting before it has sent all of its own):
    //  a race between the two I/O threads. The late greeting below is the
    //  one that must be a protocol error.
    gc_curve_stats_t st = { 0 };
    for (int i = 0; i < 500 && (st.handshake_failed_auth == 0
                            ||  st.handshake_failed_protocol + st.handshake_failed_other == 0); i++) {
        zclock_sleep (20);
        gc_curve_stats (server, &st);
    }
    assert_true (st.handshake_failed_auth >= 1);
    assert_true (st.handshake_failed_protocol + st.handshake_failed_other >= 1);
    assert_true (st.handshake_succeeded >= 1);
    //  The warnings can name who was refused, and from where.
    assert_string_equal (st.refused_address, "127.0.0.1");
    assert_string_equal (st.refused_key, gc_curve_public_txt (bad));
    assert_int_equal (st.refused_peer, UINT32_MAX);     /* no configured peer's key */
    //  A client without CURVE is named by its address when its connection
    //  lived long enough to be read (zsock's plain DEALER above may fail
    //  before that): a ZMTP greeting with the NULL mechanism, sent late.
    uint64_t failed = st.handshake_failed_protocol;
    int raw = s_late_null_greeting (port);
    for (int i = 0; i < 500 && st.handshake_failed_protocol == failed; i++) {
        zclock_sleep (20);
        gc_curve_stats (server, &st);
    }
    close (raw);
    assert_true (st.handshake_failed_protocol > failed);
    assert_string_equal (st.failed_address, "127.0.0.1");
    //  A revoked peer's key is refused and named as that peer's.
    gc_curve_t *rev = gc_curve_new (revoked_sec, &err);
    assert_non_null (rev);
    assert_int_equal (gc_curve_add_peer (rev, 0, server_pub, &err), 0);
    uint64_t refused = st.handshake_failed_auth;
    zsock_t *d_rev = s_dealer (rev, port);
    for (int i = 0; i < 500 && st.handshake_failed_auth == refused; i++) {
        zclock_sleep (20);
        gc_curve_stats (server, &st);
    }
    assert_true (st.handshake_failed_auth > refused);
    assert_int_equal (st.refused_peer, 3);
    assert_string_equal (st.refused_key, gc_curve_public_txt (rev));
    zsock_destroy (&d_rev);
    gc_curve_destroy (&rev);
    //  Refused handshakes: their messages can never have arrived.
    assert_int_equal (s_received (router, got, 0), got);
    //  The allowed client still gets through afterwards.
    zstr_send (d_good, "again");
    assert_int_equal (s_received (router, got, 10000), got + 1);

    zsock_destroy (&d_good);
    zsock_destroy (&d_bad);
    zsock_destroy (&d_plain);
    gc_zmq_destroy (&router);
    gc_curve_destroy (&good);
    gc_curve_destroy (&bad);
    gc_curve_destroy (&server);
    assert_null (server);
    //  The handler is free again once its owner is gone.
    second = gc_curve_new (good_sec, &err);
    assert_non_null (second);
    assert_int_equal (gc_curve_start (second, &err), 0);
    gc_curve_destroy (&second);
    free (server_sec);
    free (server_pub);
    free (good_sec);
    free (good_pub);
    free (bad_sec);
    free (revoked_sec);
    free (revoked_pub);
}

#define S_CYCLES        50
#define S_PER_CYCLE     19
#define S_VERIFY_BUDGET 20      /* gc_zmq mutes after 20 failures in 10 s */

static atomic_int s_verifies;

//  Every message is a forgery: the signature check fails, which the
//  engine reports as not the author's fault (counted on the connection).
static gc_deliver_t
s_forged (void *ctx, const uint8_t *header, size_t header_len, const uint8_t *payload,
          size_t payload_len, int64_t now_ns)
{
    (void) ctx; (void) header; (void) header_len; (void) payload; (void) payload_len; (void) now_ns;
    atomic_fetch_add (&s_verifies, 1);
    return GC_DELIVER_UNAUTHENTICATED;
}

//  S_CYCLES connections (a CURVE client of byz's key, or plain), each
//  sending S_PER_CYCLE forgeries and waiting until the inbox took them (or
//  refused the connection) before it goes. Returns the forgeries sent.
static uint64_t
s_reconnect_flood (gc_zmq_t *inbox, gc_curve_t *byz, const char *host, int port, gc_zmq_stats_t *st)
{
    uint64_t sent = 0;
    gc_err_t err = { 0 };
    for (int c = 0; c < S_CYCLES; c++) {
        gc_zmq_stats (inbox, st);
        uint64_t refused = st->connections_refused;
        zsock_t *d = zsock_new (ZMQ_DEALER);
        assert_non_null (d);
        if (byz)
            assert_int_equal (gc_curve_apply (byz, d, 0, &err), 0);
        assert_int_equal (zsock_connect (d, "tcp://%s:%d", host, port), 0);
        for (int i = 0; i < S_PER_CYCLE; i++) {
            zstr_sendm (d, "forged header");
            zstr_send (d, "payload");
        }
        sent += S_PER_CYCLE;
        for (int w = 0; w < 1000; w++) {
            gc_zmq_stats (inbox, st);
            if (st->recv_messages + st->recv_muted >= sent || st->connections_refused > refused)
                break;
            zclock_sleep (5);
        }
        zsock_destroy (&d);
    }
    gc_zmq_stats (inbox, st);
    return sent;
}

//  Without CURVE, off loopback: muted by the remote address, and new
//  connections from it refused. Needs a non-loopback address of this
//  machine to connect from and to (a host with only lo cannot run it).
static void
test_reconnect_flood_muted_by_address (void **state)
{
    (void) state;
    char host [INET_ADDRSTRLEN] = "";
    struct ifaddrs *ifs = NULL, *i;
    if (getifaddrs (&ifs) == 0)
        for (i = ifs; i && !*host; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP)
            &&  !(i->ifa_flags & IFF_LOOPBACK))
                inet_ntop (AF_INET, &((struct sockaddr_in *) i->ifa_addr)->sin_addr, host, sizeof host);
    freeifaddrs (ifs);
    if (!*host) {
        printf ("SKIPPED: test_reconnect_flood_muted_by_address: no non-loopback IPv4 address here\n");
        skip ();
    }
    char bind [64];
    snprintf (bind, sizeof bind, "tcp://%s:*", host);
    gc_zmq_config_t zc = { .bind = bind, .max_frame = 4096, .deliver = s_forged };
    gc_err_t err = { 0 };
    gc_zmq_t *inbox = gc_zmq_new (&zc, &err);
    assert_non_null (inbox);
    if (gc_zmq_start (inbox, &err))
        fail_msg ("%s", err.msg);
    atomic_store (&s_verifies, 0);
    gc_zmq_stats_t st = { 0 };
    uint64_t sent = s_reconnect_flood (inbox, NULL, host, gc_zmq_port (inbox), &st);
    printf ("reconnect flood from %s: %llu forged messages over %d connections, %d verified, %llu muted, "
            "%llu connections refused\n", host, (unsigned long long) sent, S_CYCLES, atomic_load (&s_verifies),
            (unsigned long long) st.recv_muted, (unsigned long long) st.connections_refused);
    assert_true (atomic_load (&s_verifies) <= S_VERIFY_BUDGET);
    assert_true (st.connections_refused >= 1);
    assert_true (st.connections_muted >= 1);
    gc_zmq_destroy (&inbox);
}

static void
test_reconnect_flood_muted_by_key (void **state)
{
    (void) state;
    if (!gc_curve_available ())
        skip ();
    char *server_sec = s_path ("fserver"), *server_pub = s_path ("fserver.pub");
    char *byz_sec = s_path ("fbyz"), *byz_pub = s_path ("fbyz.pub");
    assert_int_equal (gc_curve_keygen (server_sec, NULL, NULL), 0);
    assert_int_equal (gc_curve_keygen (byz_sec, NULL, NULL), 0);
    gc_err_t err = { 0 };
    gc_curve_t *server = gc_curve_new (server_sec, &err), *byz = gc_curve_new (byz_sec, &err);
    assert_non_null (server);
    assert_non_null (byz);
    assert_int_equal (gc_curve_add_peer (server, 1, byz_pub, &err), 0);     /* a trusted key */
    assert_int_equal (gc_curve_start (server, &err), 0);
    assert_int_equal (gc_curve_add_peer (byz, 0, server_pub, &err), 0);
    gc_zmq_config_t zc = { .bind = "tcp://127.0.0.1:*", .max_frame = 4096, .deliver = s_forged,
                           .secure = gc_curve_apply, .secure_ctx = server, .secure_event = gc_curve_event };
    gc_zmq_t *inbox = gc_zmq_new (&zc, &err);
    assert_non_null (inbox);
    if (gc_zmq_start (inbox, &err))
        fail_msg ("%s", err.msg);
    int port = gc_zmq_port (inbox);
    atomic_store (&s_verifies, 0);

    gc_zmq_stats_t st = { 0 };
    uint64_t sent = s_reconnect_flood (inbox, byz, "127.0.0.1", port, &st);
    printf ("reconnect flood, CURVE: %llu forged messages over %d connections, %d verified, %llu muted\n",
            (unsigned long long) sent, S_CYCLES, atomic_load (&s_verifies), (unsigned long long) st.recv_muted);
    assert_true (atomic_load (&s_verifies) <= S_VERIFY_BUDGET);
    assert_int_equal (st.recv_muted, sent - (uint64_t) atomic_load (&s_verifies));
    assert_true (st.connections_muted >= 1);

    gc_zmq_destroy (&inbox);
    gc_curve_destroy (&byz);
    gc_curve_destroy (&server);
    free (server_sec);
    free (server_pub);
    free (byz_sec);
    free (byz_pub);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_key_files),
        cmocka_unit_test (test_inbox_admits_only_allowed_keys),
        cmocka_unit_test (test_reconnect_flood_muted_by_key),
        cmocka_unit_test (test_reconnect_flood_muted_by_address),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
