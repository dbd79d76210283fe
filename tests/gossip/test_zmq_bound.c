/*  gc_zmq's memory bound per connection (gc_zmq.h), against clients that
    speak ZMTP by hand, as an attacker would: libzmq itself never puts the
    frames of an unfinished message on the wire, and keeps the ones it
    receives where the application cannot see them.

      multipart flood    a client of the inbox sends frames just under
                         ZMQ_MAXMSGSIZE, every one with MORE, for ever
      large-frame        a neighbour's ROUTER (the endpoint a DEALER of ours
      neighbour          connects to) sends one 1000 MiB frame, or endless
                         frames under the DEALER's ZMQ_MAXMSGSIZE

    Each asserts a bound on this process's peak resident memory while the
    attacker pushes at least S_FLOOD_MIN bytes (so without the guard the
    bound would be broken many times over), that the guard cut the
    connection, and that honest traffic still flows. */
#include "gc_test.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gc_zmq.h"

#define S_MIB           (1024LL * 1024)
#define S_MAX_FRAME     (64 * 1024 + 4096)      /* the inbox's ZMQ_MAXMSGSIZE */
#define S_CHUNK         (60 * 1024)             /* the flood's frames: under it */
#define S_FLOOD_MIN     (256 * S_MIB)           /* what the attacker pushes at least */
#define S_FLOOD_MAX_S   30                      /* ... or for this long */
//  The bound asserted: the guard's limit (2.6 MB for the inbox here, 64 KiB
//  for a link) plus what arrives at loopback speed before the guard runs
//  (every 10 ms, later on a loaded machine), plus allocator slack (ASan's
//  included). Measured: 7-20 MiB in release, 26-33 MiB under ASan. Without
//  the guard the flood holds >= 256 MiB.
#define S_RSS_BOUND     (96 * S_MIB)

//  Freed memory goes back to ASan's allocator at once, so the peak measures
//  what is held, not the quarantine (the default keeps 256 MiB).
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
    return "quarantine_size_mb=8";
}

//  ---------------------------------------------------------------------------
//  Memory of this process.

static long long
s_status_kb (const char *field)
{
    FILE *f = fopen ("/proc/self/status", "r");
    assert_non_null (f);
    char line [256];
    long long kb = -1;
    size_t len = strlen (field);
    while (fgets (line, sizeof line, f))
        if (!strncmp (line, field, len) && line [len] == ':')
            kb = atoll (line + len + 1);
    fclose (f);
    assert_true (kb >= 0);
    return kb;
}

//  Reset the peak (VmHWM) to the current resident size (Linux >= 4.0).
static void
s_reset_peak (void)
{
    FILE *f = fopen ("/proc/self/clear_refs", "w");
    assert_non_null (f);
    assert_true (fputs ("5", f) >= 0);
    assert_int_equal (fclose (f), 0);
}

//  ---------------------------------------------------------------------------
//  ZMTP 3.0 by hand (RFC 23): greeting, READY, frames.

//  False once the peer hung up, or stopped reading for S_STALL_MS (which
//  the caller tells apart with s_hung_up).
#define S_STALL_MS 500

static bool
s_write (int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t) n;
    }
    return true;
}

static bool
s_read (int fd, void *buf, size_t len)
{
    return recv (fd, buf, len, MSG_WAITALL) == (ssize_t) len;
}

//  The peer's greeting and its READY command: only then is the handshake
//  over on its side too (libzmq takes a message frame that arrives before
//  it has sent its own READY for an unexpected command and drops us).
static bool
s_await_ready (int fd)
{
    uint8_t buf [4096], flags;
    uint64_t size = 0;
    if (!s_read (fd, buf, 64) || !s_read (fd, &flags, 1) || !(flags & 0x04))
        return false;
    if (flags & 0x02) {
        if (!s_read (fd, buf, 8))
            return false;
        for (int i = 0; i < 8; i++)
            size = size << 8 | buf [i];
    }
    else {
        if (!s_read (fd, buf, 1))
            return false;
        size = buf [0];
    }
    return size <= sizeof buf && s_read (fd, buf, (size_t) size) && size >= 6 && !memcmp (buf, "\x05READY", 6);
}

static bool
s_handshake (int fd, const char *socket_type)
{
    uint8_t greeting [64] = { 0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 0, 'N', 'U', 'L', 'L' };
    uint8_t ready [64];
    size_t type_len = strlen (socket_type), n = 0;
    ready [n++] = 0x04;                                 /* command, short */
    ready [n++] = (uint8_t) (6 + 1 + 11 + 4 + type_len);
    ready [n++] = 5;
    memcpy (ready + n, "READY", 5);
    n += 5;
    ready [n++] = 11;
    memcpy (ready + n, "Socket-Type", 11);
    n += 11;
    uint32_t be = htonl ((uint32_t) type_len);
    memcpy (ready + n, &be, 4);
    n += 4;
    memcpy (ready + n, socket_type, type_len);
    n += type_len;
    return s_write (fd, greeting, sizeof greeting) && s_write (fd, ready, n) && s_await_ready (fd);
}

//  A long frame's header: flags (MORE when more), 8-byte size.
static bool
s_frame_header (int fd, uint64_t size, bool more)
{
    uint8_t h [9] = { (uint8_t) (0x02 | (more ? 0x01 : 0)) };
    for (int i = 0; i < 8; i++)
        h [1 + i] = (uint8_t) (size >> (56 - 8 * i));
    return s_write (fd, h, sizeof h);
}

//  Did the peer end the connection? (Drains what it sent us.)
static bool
s_hung_up (int fd)
{
    uint8_t buf [4096];
    for (;;) {
        ssize_t n = recv (fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0)
            continue;
        return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }
}

static void
s_stall_timeout (int fd)
{
    struct timeval tv = { .tv_sec = 0, .tv_usec = S_STALL_MS * 1000 }, handshake = { .tv_sec = 10 };
    assert_int_equal (setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
    assert_int_equal (setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &handshake, sizeof handshake), 0);
}

typedef enum { S_ENDLESS_MORE, S_ONE_HUGE_FRAME } s_flood_t;

//  Push until the peer cuts us or S_FLOOD_MIN bytes are out; returns the
//  bytes pushed (*cut: the connection ended under us).
static long long
s_flood (int fd, s_flood_t kind, size_t chunk, bool *cut)
{
    static uint8_t data [S_CHUNK];
    long long pushed = 0;
    *cut = false;
    bool stopped = kind == S_ONE_HUGE_FRAME && !s_frame_header (fd, 1000 * S_MIB, false);
    while (!stopped && pushed < S_FLOOD_MIN) {
        if (kind == S_ENDLESS_MORE && !s_frame_header (fd, chunk, true))
            stopped = true;
        else
        if (!s_write (fd, data, chunk))
            stopped = true;
        else
            pushed += (long long) chunk;
    }
    *cut = stopped && s_hung_up (fd);
    return pushed;
}

static int
s_connect (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    assert_true (fd >= 0);
    s_stall_timeout (fd);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    assert_int_equal (connect (fd, (struct sockaddr *) &a, sizeof a), 0);
    return fd;
}

//  ---------------------------------------------------------------------------

static atomic_int s_delivered;

static gc_deliver_t
s_deliver (void *ctx, const uint8_t *header, size_t header_len, const uint8_t *payload,
           size_t payload_len, int64_t now_ns)
{
    (void) ctx; (void) header; (void) header_len; (void) payload; (void) payload_len; (void) now_ns;
    atomic_fetch_add (&s_delivered, 1);
    return GC_DELIVER_OK;
}

static gc_zmq_t *
s_inbox (void)
{
    gc_zmq_config_t cfg = { .bind = "tcp://127.0.0.1:*", .max_frame = S_MAX_FRAME, .deliver = s_deliver };
    gc_err_t err = { 0 };
    gc_zmq_t *zmq = gc_zmq_new (&cfg, &err);
    assert_non_null (zmq);
    return zmq;
}

static void
s_start (gc_zmq_t *zmq)
{
    gc_err_t err = { 0 };
    if (gc_zmq_start (zmq, &err))
        fail_msg ("%s", err.msg);
}

//  An honest message from a libzmq DEALER arrives.
static void
s_honest_gets_through (int port)
{
    int before = atomic_load (&s_delivered);
    zsock_t *d = zsock_new (ZMQ_DEALER);
    assert_non_null (d);
    assert_int_equal (zsock_connect (d, "tcp://127.0.0.1:%d", port), 0);
    zstr_sendm (d, "header");
    zstr_send (d, "payload");
    for (int i = 0; i < 1000 && atomic_load (&s_delivered) == before; i++)
        zclock_sleep (10);
    zsock_destroy (&d);
    assert_true (atomic_load (&s_delivered) > before);
}

static void
test_multipart_flood (void **state)
{
    (void) state;
    assert_true (gc_zmq_inbox_limit (S_MAX_FRAME, 16) < 4 * S_MIB);
    gc_zmq_t *zmq = s_inbox ();
    s_start (zmq);
    int port = gc_zmq_port (zmq);
    assert_true (port > 0);
    s_reset_peak ();
    long long base_kb = s_status_kb ("VmRSS");

    //  Reconnect after every cut, until the flood pushed its share.
    long long pushed = 0;
    int cuts = 0;
    int64_t end = zclock_mono () + S_FLOOD_MAX_S * 1000;
    while (pushed < S_FLOOD_MIN && zclock_mono () < end) {
        int fd = s_connect (port);
        bool cut = false;
        if (s_handshake (fd, "DEALER"))
            pushed += s_flood (fd, S_ENDLESS_MORE, S_CHUNK, &cut);
        cuts += cut;
        close (fd);
    }
    long long peak_kb = s_status_kb ("VmHWM");
    gc_zmq_stats_t st;
    gc_zmq_stats (zmq, &st);
    printf ("multipart flood: pushed %lld MiB, hung up on %d times, guard cuts %llu, refused %llu, "
            "held at most %llu KiB, peak RSS +%lld KiB (bound %lld KiB)\n",
            pushed / S_MIB, cuts, (unsigned long long) st.connections_cut,
            (unsigned long long) st.connections_refused,
            (unsigned long long) st.held_max / 1024, peak_kb - base_kb, S_RSS_BOUND / 1024);
    assert_true (pushed >= S_FLOOD_MIN);
    assert_true (st.connections_cut >= 1);
    assert_true (cuts >= 1 && (uint64_t) cuts <= st.connections_cut);    /* each hang-up the guard's */
    assert_true ((peak_kb - base_kb) * 1024 <= S_RSS_BOUND);
    assert_int_equal (st.recv_messages, 0);         /* none of it became a message */
    s_honest_gets_through (port);
    gc_zmq_destroy (&zmq);
}

//  The neighbour: a listener that speaks ZMTP as a ROUTER to whoever
//  connects, and floods it.
typedef struct {
    int        listener;
    s_flood_t  kind;
    long long  pushed;
    bool       cut;
} s_neighbour_t;

static void *
s_neighbour (void *arg)
{
    s_neighbour_t *n = arg;
    int fd = accept (n->listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    s_stall_timeout (fd);
    if (s_handshake (fd, "ROUTER"))
        n->pushed = s_flood (fd, n->kind, n->kind == S_ENDLESS_MORE ? 4000 : S_CHUNK, &n->cut);
    close (fd);
    return NULL;
}

static void
s_large_frame_case (s_flood_t kind)
{
    s_neighbour_t n = { .kind = kind };
    n.listener = socket (AF_INET, SOCK_STREAM, 0);
    assert_true (n.listener >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    assert_int_equal (bind (n.listener, (struct sockaddr *) &a, sizeof a), 0);
    assert_int_equal (listen (n.listener, 4), 0);
    assert_int_equal (getsockname (n.listener, (struct sockaddr *) &a, &len), 0);

    gc_zmq_t *zmq = s_inbox ();
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", ntohs (a.sin_port));
    gc_err_t err = { 0 };
    assert_int_equal (gc_zmq_add_peer (zmq, 1, endpoint, &err), 0);
    s_reset_peak ();
    long long base_kb = s_status_kb ("VmRSS");
    pthread_t t;
    assert_int_equal (pthread_create (&t, NULL, s_neighbour, &n), 0);
    s_start (zmq);
    pthread_join (t, NULL);
    long long peak_kb = s_status_kb ("VmHWM");
    gc_zmq_stats_t st;
    gc_zmq_stats (zmq, &st);
    printf ("large-frame neighbour (%s): pushed %lld KiB before the cut, guard cuts %llu, "
            "peak RSS +%lld KiB (bound %lld KiB)\n",
            kind == S_ENDLESS_MORE ? "endless MORE frames" : "one 1000 MiB frame",
            n.pushed / 1024, (unsigned long long) st.connections_cut, peak_kb - base_kb, S_RSS_BOUND / 1024);
    //  Hung up on long before the flood was out: by ZMQ_MAXMSGSIZE for the
    //  huge frame, by the guard for the endless frames.
    assert_true (n.cut);
    assert_true (n.pushed < S_FLOOD_MIN);
    if (kind == S_ENDLESS_MORE)
        assert_true (st.connections_cut >= 1);
    assert_true ((peak_kb - base_kb) * 1024 <= S_RSS_BOUND);
    gc_zmq_destroy (&zmq);
    close (n.listener);
}

static void
test_large_frame_neighbour (void **state)
{
    (void) state;
    static const s_flood_t cases [] = { S_ONE_HUGE_FRAME, S_ENDLESS_MORE };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++)
        s_large_frame_case (cases [i]);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_multipart_flood),
        cmocka_unit_test (test_large_frame_neighbour),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
