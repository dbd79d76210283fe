#include "gc_zmq.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>

#include "gc_endpoint.h"
#include "gc_fault.h"
#include "gc_rng.h"
#include "gc_tcp.h"
#include "gc_time.h"

#define S_MAX_PEERS      4096
#define S_CONN_SLOTS     256
//  A connection that sends this many unauthenticated messages within the
//  window is muted (its messages dropped before any signature check).
#define S_MUTE_FAILURES  20
#define S_MUTE_WINDOW_NS (10 * 1000000000LL)
#define S_MUTE_FOR_NS    (30 * 1000000000LL)
//  Framing charged per frame handed to the actor: more than any frame's
//  ZMTP header (2 or 9 bytes) plus a CURVE MESSAGE box (33 bytes), so honest
//  traffic never looks held.
#define S_FRAME_CHARGE   64
#define S_HANDSHAKE_SLACK (64 * 1024)
#define S_INBOX          UINT32_MAX

//  Who a connection is, for muting: 'k' + CURVE key, 'a' + remote address,
//  or 'r' + routing id (see gc_zmq.h).
#define S_WHO_MAX        300

typedef struct {
    uint8_t  id [S_WHO_MAX];
    size_t   id_len;
    uint32_t failures;
    int64_t  window_start;
    int64_t  muted_until;
    int64_t  last_seen;
} s_conn_t;

typedef struct {
    uint32_t  peer;
    char     *endpoint;
    zsock_t  *dealer;
    zsock_t  *monitor;          /* the PAIR end of the DEALER's socket monitor */
    int64_t   link_free;        /* rate cap: when the link has sent what it holds */
    atomic_uint_fast64_t sent_bytes;    /* handed to its socket */
} s_link_t;

//  A TCP connection the memory guard follows (gc_zmq.h).
typedef struct {
    int       fd;
    uint32_t  link;             /* S_INBOX, or the index of its link */
    struct sockaddr_storage peer;
    socklen_t peer_len;
    uint64_t  charged;          /* bytes handed to the actor, framing included */
    uint64_t  limit;
    char      addr [INET6_ADDRSTRLEN];
    char      user [64];        /* its CURVE key, once a message showed it */
} s_track_t;

//  A message the fault layer holds back until `due`.
typedef struct {
    int64_t    due;
    s_link_t  *link;
    zmq_msg_t  header, payload;
} s_held_t;

#define S_HELD_MAX 4096

struct gc_zmq_t {
    gc_zmq_config_t  cfg;
    char            *bind;
    s_link_t        *links;
    size_t           n_links;
    //  The network thread and the pipe to it (our end; the thread owns and
    //  closes the other). A joined thread, not a detached zactor: see s_thread.
    zsock_t         *actor;
    zsock_t         *actor_end;
    pthread_t        thread;
    atomic_bool      thread_ended;
    //  actor-owned
    zsock_t         *inbox;
    zsock_t         *inbox_monitor;
    int              failed_handshake;  /* its event, until its connection closes */
    int              port;          /* what the inbox bound (tcp) */
    zsock_t         *control;
    s_conn_t         conns [S_CONN_SLOTS];
    s_track_t       *tracks;
    size_t           n_tracks, max_tracks, n_inbound;
    uint64_t         inbox_limit;
    int64_t          next_guard;
    gc_rng_t         rng;
    gc_fault_t       fault;
    _Atomic double   rate_cap;      /* fault.rate, for other threads (gc_zmq_link_rate) */
    s_held_t        *held;          /* min-heap on due */
    size_t           n_held;
    atomic_uint_fast64_t sent_frames, sent_bytes, send_dropped, recv_messages, recv_bytes,
                         recv_malformed, recv_muted, connections_muted,
                         fault_dropped, fault_delayed, connections_cut,
                         connections_refused, held_max;
};

uint64_t
gc_zmq_inbox_limit (size_t max_frame, int recv_hwm)
{
    return (uint64_t) (recv_hwm + 2) * (2 * (uint64_t) max_frame + 2 * S_FRAME_CHARGE) + S_HANDSHAKE_SLACK;
}

gc_zmq_t *
gc_zmq_new (const gc_zmq_config_t *cfg, gc_err_t *err)
{
    if (!cfg->bind || !cfg->deliver) {
        gc_err_set (err, GC_E_ARG, "transport: bind endpoint and deliver callback are required");
        return NULL;
    }
    gc_zmq_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "transport: out of memory");
        return NULL;
    }
    self->cfg = *cfg;
    self->bind = strdup (cfg->bind);
    self->cfg.control = cfg->control ? strdup (cfg->control) : NULL;     /* ours: the caller's may go */
    self->links = calloc (S_MAX_PEERS, sizeof *self->links);
    if (!self->bind || !self->links || (cfg->control && !self->cfg.control)) {
        gc_zmq_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "transport: out of memory");
        return NULL;
    }
    if (self->cfg.send_hwm <= 0)
        self->cfg.send_hwm = 8;
    if (self->cfg.recv_hwm <= 0)
        self->cfg.recv_hwm = 16;
    gc_rng_init (&self->rng, cfg->seed, 0xFA17);
    self->inbox_limit = gc_zmq_inbox_limit (self->cfg.max_frame, self->cfg.recv_hwm);
    return self;
}

//  A socket monitor on sock (before it binds or connects, so no connection
//  is missed) and the PAIR that reads it in the actor.
static zsock_t *
s_monitor (zsock_t *sock, int events)
{
    //  A number never used before in this process: a closed socket's
    //  monitor endpoint stays bound until libzmq's reaper got to it.
    static atomic_uint_fast64_t serial;
    char endpoint [96];
    snprintf (endpoint, sizeof endpoint, "inproc://gc-zmq-monitor-%llu",
              (unsigned long long) atomic_fetch_add (&serial, 1));
    if (zmq_socket_monitor (zsock_resolve (sock), endpoint, events) != 0)
        return NULL;
    zsock_t *pair = zsock_new (ZMQ_PAIR);
    if (pair && zsock_connect (pair, "%s", endpoint) != 0)
        zsock_destroy (&pair);
    return pair;
}

//  The monitor first: libzmq's I/O thread sends monitor events blocking,
//  and would wait forever for a reader that is gone (a closing socket
//  still reports its connections closing).
static void
s_close_monitored (zsock_t **sock, zsock_t **monitor)
{
    if (*sock && *monitor)
        zmq_socket_monitor (zsock_resolve (*sock), NULL, 0);
    zsock_destroy (sock);
    zsock_destroy (monitor);
}

int
gc_zmq_add_peer (gc_zmq_t *self, uint32_t peer, const char *endpoint_given, gc_err_t *err)
{
    //  a name resolved once, here (gc_endpoint.h); one that does not resolve
    //  yet is kept as it is, and libzmq keeps trying
    char endpoint [512];
    gc_endpoint_resolve (endpoint_given, endpoint, sizeof endpoint, NULL);
    if (self->actor)
        return gc_err_set (err, GC_E_ARG, "transport: peers must be added before start");
    if (self->n_links == S_MAX_PEERS)
        return gc_err_set (err, GC_E_CONFIG, "transport: more than %d neighbours", S_MAX_PEERS);
    for (size_t i = 0; i < self->n_links; i++)
        if (self->links [i].peer == peer)
            return 0;
    s_link_t *link = &self->links [self->n_links];
    link->peer = peer;
    link->endpoint = strdup (endpoint);
    link->dealer = zsock_new (ZMQ_DEALER);
    if (!link->endpoint || !link->dealer) {
        free (link->endpoint);
        zsock_destroy (&link->dealer);
        return gc_err_set (err, GC_E_SYS, "transport: cannot create a socket for peer %u", peer);
    }
    zsock_set_linger (link->dealer, 0);
    zsock_set_immediate (link->dealer, 1);
    zsock_set_sndhwm (link->dealer, self->cfg.send_hwm);
    zsock_set_rcvhwm (link->dealer, 1);
    //  Reconnect quickly after a neighbour restarts, backing off to 1 s.
    zsock_set_reconnect_ivl (link->dealer, 100);
    zsock_set_reconnect_ivl_max (link->dealer, 1000);
    //  A neighbour's ROUTER sends nothing after the handshake: no frame
    //  bigger than a handshake command, and the guard watches the rest.
    zsock_set_maxmsgsize (link->dealer, GC_ZMQ_LINK_MAXMSG);
    if (self->cfg.secure && self->cfg.secure (self->cfg.secure_ctx, link->dealer, peer, err)) {
        free (link->endpoint);
        zsock_destroy (&link->dealer);
        return gc_err_prefix (err, "transport: peer %u: ", peer);
    }
    link->monitor = s_monitor (link->dealer,
                               ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CLOSED);
    if (!link->monitor || zsock_connect (link->dealer, "%s", endpoint) != 0) {
        bool monitored = link->monitor != NULL;
        free (link->endpoint);
        s_close_monitored (&link->dealer, &link->monitor);
        if (!monitored)
            return gc_err_set (err, GC_E_SYS, "transport: cannot monitor the link to peer %u", peer);
        return gc_err_set (err, GC_E_CONFIG, "transport: peer %u endpoint '%s' is not a valid ZeroMQ endpoint",
                           peer, endpoint);
    }
    self->n_links++;
    return 0;
}

static s_link_t *
s_link (gc_zmq_t *self, uint32_t peer)
{
    for (size_t i = 0; i < self->n_links; i++)
        if (self->links [i].peer == peer)
            return &self->links [i];
    return NULL;
}

//  The mute slot of `who` (least recently seen slot reused), or with
//  create false NULL when it has none.
static s_conn_t *
s_conn (gc_zmq_t *self, const uint8_t *id, size_t len, int64_t now, bool create)
{
    s_conn_t *oldest = &self->conns [0];
    for (size_t i = 0; i < S_CONN_SLOTS; i++) {
        s_conn_t *c = &self->conns [i];
        if (c->id_len == len && !memcmp (c->id, id, len)) {
            c->last_seen = now;
            return c;
        }
        if (c->last_seen < oldest->last_seen)
            oldest = c;
    }
    if (!create)
        return NULL;
    memset (oldest, 0, sizeof *oldest);
    memcpy (oldest->id, id, len);
    oldest->id_len = len;
    oldest->last_seen = now;
    return oldest;
}

static bool
s_loopback (const char *addr)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton (AF_INET, addr, &v4) == 1)
        return (ntohl (v4.s_addr) >> 24) == 127;
    if (inet_pton (AF_INET6, addr, &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK (&v6)
            || (IN6_IS_ADDR_V4MAPPED (&v6) && v6.s6_addr [12] == 127);
    return false;
}

//  who = tag + text; false if it does not fit (then it is not used).
static bool
s_who (uint8_t who [S_WHO_MAX], size_t *len, char tag, const void *data, size_t size)
{
    if (size == 0 || size + 1 > S_WHO_MAX)
        return false;
    who [0] = (uint8_t) tag;
    memcpy (who + 1, data, size);
    *len = size + 1;
    return true;
}

//  Who sent a message: its CURVE key, else its address unless loopback,
//  else its connection (routing id).
static void
s_who_of (zmq_msg_t *routing_id, zmq_msg_t *data, uint8_t who [S_WHO_MAX], size_t *len)
{
    const char *user = data ? zmq_msg_gets (data, "User-Id") : NULL;
    const char *addr = data ? zmq_msg_gets (data, "Peer-Address") : NULL;
    if (user && s_who (who, len, 'k', user, strlen (user)))
        return;
    if (addr && !s_loopback (addr) && s_who (who, len, 'a', addr, strlen (addr)))
        return;
    if (!s_who (who, len, 'r', zmq_msg_data (routing_id), zmq_msg_size (routing_id))) {
        who [0] = 'r';
        *len = 1;
    }
}

static void
s_mute (gc_zmq_t *self, s_conn_t *conn, int64_t now)
{
    conn->muted_until = now + S_MUTE_FOR_NS;
    conn->failures = 0;
    atomic_fetch_add (&self->connections_muted, 1);
}

static void
s_count_failure (gc_zmq_t *self, s_conn_t *conn, int64_t now)
{
    if (now - conn->window_start > S_MUTE_WINDOW_NS) {
        conn->window_start = now;
        conn->failures = 0;
    }
    if (++conn->failures >= S_MUTE_FAILURES)
        s_mute (self, conn, now);
}

//  ---------------------------------------------------------------------------
//  The memory guard (gc_zmq.h).

static s_track_t *
s_track_find (gc_zmq_t *self, int fd)
{
    for (size_t i = 0; i < self->n_tracks; i++)
        if (self->tracks [i].fd == fd)
            return &self->tracks [i];
    return NULL;
}

static void
s_track_drop (gc_zmq_t *self, s_track_t *t)
{
    if (t->link == S_INBOX)
        self->n_inbound--;
    *t = self->tracks [--self->n_tracks];
}

//  Is fd still the connection we started following? (libzmq may have closed
//  it and the number been reused before its monitor event reached us.)
static bool
s_track_same (const s_track_t *t)
{
    struct sockaddr_storage peer;
    socklen_t len = sizeof peer;
    return getpeername (t->fd, (struct sockaddr *) &peer, &len) == 0
        && len == t->peer_len && !memcmp (&peer, &t->peer, len);
}

static bool
s_address_muted (gc_zmq_t *self, const char *addr, int64_t now)
{
    uint8_t who [S_WHO_MAX];
    size_t len;
    if (s_loopback (addr) || !s_who (who, &len, 'a', addr, strlen (addr)))
        return false;
    s_conn_t *conn = s_conn (self, who, len, now, false);
    return conn && conn->muted_until > now;
}

//  Cut a connection: libzmq sees the end of the stream, drops the
//  connection and rolls back its half-received message; its close then
//  resets the connection (linger 0), so the sender learns at once instead
//  of pushing into a window that never opens.
static void
s_cut (int fd)
{
    struct linger abort = { .l_onoff = 1, .l_linger = 0 };
    setsockopt (fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    shutdown (fd, SHUT_RDWR);
}

static void
s_track_add (gc_zmq_t *self, int fd, uint32_t link, int64_t now)
{
    s_track_t *t = s_track_find (self, fd);
    if (t)
        s_track_drop (self, t);         /* a reused number: the old one ended */
    if (self->n_tracks == self->max_tracks
    ||  (link == S_INBOX && self->n_inbound >= GC_ZMQ_MAX_CONNECTIONS)) {
        atomic_fetch_add (&self->connections_refused, 1);
        s_cut (fd);
        return;
    }
    t = &self->tracks [self->n_tracks];
    memset (t, 0, sizeof *t);
    t->fd = fd;
    t->link = link;
    t->limit = link == S_INBOX ? self->inbox_limit : GC_ZMQ_LINK_LIMIT;
    t->peer_len = sizeof t->peer;
    if (getpeername (fd, (struct sockaddr *) &t->peer, &t->peer_len) != 0)
        return;                         /* not a connected socket (any more) */
    const void *in = t->peer.ss_family == AF_INET6 ? (const void *) &((struct sockaddr_in6 *) &t->peer)->sin6_addr
                                                   : (const void *) &((struct sockaddr_in *) &t->peer)->sin_addr;
    if (!inet_ntop (t->peer.ss_family, in, t->addr, sizeof t->addr))
        snprintf (t->addr, sizeof t->addr, "?");
    if (link == S_INBOX && s_address_muted (self, t->addr, now)) {
        atomic_fetch_add (&self->connections_refused, 1);
        s_cut (fd);
        return;
    }
    self->n_tracks++;
    if (link == S_INBOX)
        self->n_inbound++;
}

//  What the connection has read from the kernel and not handed to us.
static bool
s_track_held (s_track_t *t, uint64_t *held)
{
    uint64_t read;
    if (gc_tcp_bytes_read (t->fd, &read))
        return false;                   /* not TCP, or a kernel before 4.1 */
    //  Charging more framing than was on the wire must not become credit.
    if (t->charged > read)
        t->charged = read;
    *held = read - t->charged;
    return true;
}

static void
s_guard (gc_zmq_t *self, int64_t now)
{
    for (size_t i = 0; i < self->n_tracks;) {
        s_track_t *t = &self->tracks [i];
        uint64_t held;
        if (!s_track_same (t)) {
            s_track_drop (self, t);
            continue;
        }
        if (s_track_held (t, &held)) {
            if (held > atomic_load (&self->held_max))
                atomic_store (&self->held_max, held);
            if (held > t->limit) {
                atomic_fetch_add (&self->connections_cut, 1);
                uint8_t who [S_WHO_MAX];
                size_t len;
                if ((*t->user && s_who (who, &len, 'k', t->user, strlen (t->user)))
                ||  (!s_loopback (t->addr) && s_who (who, &len, 'a', t->addr, strlen (t->addr))))
                    s_mute (self, s_conn (self, who, len, now, true), now);
                s_cut (t->fd);
                s_track_drop (self, t);
                continue;
            }
        }
        i++;
    }
}

//  A handshake that fails on the protocol (ZMQ_EVENT_HANDSHAKE_FAILED_
//  PROTOCOL or _NO_DETAIL, whose value is an error code, not the fd, and
//  whose endpoint is our own) is followed at once by the close of its
//  connection (DISCONNECTED with the fd): libzmq emits both in one call of
//  the one I/O thread (CZMQ's default). So that failure is passed on at the
//  close, with the address of that fd. A refused key (_FAILED_AUTH) is
//  closed later, after the ERROR command is flushed, and is passed on at
//  once: the ZAP handler names it.
static void
s_handshake_event (gc_zmq_t *self, int event)
{
#ifdef ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) {
        if (self->failed_handshake)                 /* its close never came */
            self->cfg.secure_event (self->cfg.secure_ctx, self->failed_handshake, NULL);
        self->failed_handshake = event;
        return;
    }
#endif
    self->cfg.secure_event (self->cfg.secure_ctx, event, NULL);
}

static void
s_handshake_closed (gc_zmq_t *self, uint32_t link, const s_track_t *t)
{
    if (link != S_INBOX || !self->failed_handshake || !self->cfg.secure_event)
        return;
    self->cfg.secure_event (self->cfg.secure_ctx, self->failed_handshake, t && *t->addr ? t->addr : NULL);
    self->failed_handshake = 0;
}

//  One monitor event: [event u16, value u32][endpoint].
static void
s_handle_event (gc_zmq_t *self, zsock_t *monitor, uint32_t link)
{
    zmsg_t *msg = zmsg_recv (monitor);
    zframe_t *f = msg ? zmsg_first (msg) : NULL;
    if (f && zframe_size (f) >= 6) {
        uint16_t event;
        uint32_t value;
        memcpy (&event, zframe_data (f), 2);
        memcpy (&value, zframe_data (f) + 2, 4);
        int64_t now = gc_now_ns ();
        if (event == ZMQ_EVENT_ACCEPTED || event == ZMQ_EVENT_CONNECTED)
            s_track_add (self, (int) value, link, now);
        else
        if (event == ZMQ_EVENT_DISCONNECTED || event == ZMQ_EVENT_CLOSED) {
            s_track_t *t = s_track_find (self, (int) value);
            s_handshake_closed (self, link, t);
            if (t)
                s_track_drop (self, t);
        }
        else
        if (link == S_INBOX && self->cfg.secure_event)
            s_handshake_event (self, event);
    }
    zmsg_destroy (&msg);
}

//  A batch of monitor events: libzmq's I/O thread blocks on sending them
//  once the monitor's queue is full, so they are read faster than a
//  client can make them by connecting and hanging up.
static void
s_handle_monitor (gc_zmq_t *self, zsock_t *monitor, uint32_t link)
{
    for (int i = 0; i < 256; i++) {
        s_handle_event (self, monitor, link);
        int events;
        size_t len = sizeof events;
        if (zmq_getsockopt (zsock_resolve (monitor), ZMQ_EVENTS, &events, &len) || !(events & ZMQ_POLLIN))
            break;
    }
}

//  Receive the rest of a multipart message into parts[]; returns the number of
//  parts (all parts are always consumed; at most max are kept); bytes: the
//  size of all of them.
static int
s_recv_parts (void *sock, zmq_msg_t *parts, int max, size_t *bytes)
{
    int n = 0, more = 1;
    *bytes = 0;
    while (more) {
        zmq_msg_t scratch;
        zmq_msg_t *msg = n < max ? &parts [n] : &scratch;
        zmq_msg_init (msg);
        if (zmq_msg_recv (msg, sock, 0) < 0) {
            zmq_msg_close (msg);
            break;
        }
        more = zmq_msg_more (msg);
        *bytes += zmq_msg_size (msg);
        if (n >= max)
            zmq_msg_close (msg);
        n++;
    }
    return n;
}

//  Charge what a connection handed us (frames after the routing id, which
//  the ROUTER makes itself), and learn its CURVE key.
static void
s_charge (gc_zmq_t *self, zmq_msg_t *data, int frames, size_t bytes)
{
    int fd = zmq_msg_get (data, ZMQ_SRCFD);
    s_track_t *t = fd >= 0 ? s_track_find (self, fd) : NULL;
    if (!t)
        return;
    t->charged += bytes + (uint64_t) frames * S_FRAME_CHARGE;
    const char *user = zmq_msg_gets (data, "User-Id");
    if (user && !*t->user && strlen (user) < sizeof t->user)
        snprintf (t->user, sizeof t->user, "%s", user);
}

static void
s_handle_inbox (gc_zmq_t *self, void *inbox)
{
    zmq_msg_t parts [3];
    size_t bytes;
    int n = s_recv_parts (inbox, parts, 3, &bytes);
    int kept = n < 3 ? n : 3;
    int64_t now = gc_now_ns ();
    if (kept >= 2)
        s_charge (self, &parts [1], n - 1, bytes - zmq_msg_size (&parts [0]));
    if (kept >= 1) {
        uint8_t who [S_WHO_MAX];
        size_t who_len;
        s_who_of (&parts [0], kept >= 2 ? &parts [1] : NULL, who, &who_len);
        s_conn_t *conn = s_conn (self, who, who_len, now, true);
        if (conn->muted_until > now)
            atomic_fetch_add (&self->recv_muted, 1);
        else
        if (n != 3) {
            atomic_fetch_add (&self->recv_malformed, 1);
            s_count_failure (self, conn, now);
        }
        else {
            size_t hlen = zmq_msg_size (&parts [1]), plen = zmq_msg_size (&parts [2]);
            atomic_fetch_add (&self->recv_messages, 1);
            atomic_fetch_add (&self->recv_bytes, hlen + plen);
            gc_deliver_t verdict = self->cfg.deliver (self->cfg.ctx, zmq_msg_data (&parts [1]), hlen,
                                                      zmq_msg_data (&parts [2]), plen, now);
            if (verdict == GC_DELIVER_UNAUTHENTICATED)
                s_count_failure (self, conn, now);
        }
    }
    for (int i = 0; i < kept; i++)
        zmq_msg_close (&parts [i]);
}

static void
s_send_now (gc_zmq_t *self, s_link_t *link, zmq_msg_t *h, zmq_msg_t *p)
{
    void *dealer = zsock_resolve (link->dealer);
    size_t bytes = zmq_msg_size (h) + zmq_msg_size (p);
    if (zmq_msg_send (h, dealer, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        atomic_fetch_add (&self->send_dropped, 1);
        zmq_msg_close (h);
        zmq_msg_close (p);
        return;
    }
    if (zmq_msg_send (p, dealer, ZMQ_DONTWAIT) < 0) {
        atomic_fetch_add (&self->send_dropped, 1);
        zmq_msg_close (p);
        return;
    }
    atomic_fetch_add (&self->sent_frames, 1);
    atomic_fetch_add (&self->sent_bytes, bytes);
    atomic_fetch_add (&link->sent_bytes, bytes);
}

//  Held messages: a binary min-heap on the due time.
static void
s_held_swap (s_held_t *a, s_held_t *b)
{
    s_held_t t = *a;
    *a = *b;
    *b = t;
}

static void
s_hold (gc_zmq_t *self, int64_t due, s_link_t *link, zmq_msg_t *h, zmq_msg_t *p)
{
    if (self->n_held == S_HELD_MAX) {
        atomic_fetch_add (&self->fault_dropped, 1);
        zmq_msg_close (h);
        zmq_msg_close (p);
        return;
    }
    size_t i = self->n_held++;
    s_held_t *slot = &self->held [i];
    slot->due = due;
    slot->link = link;
    zmq_msg_init (&slot->header);
    zmq_msg_init (&slot->payload);
    zmq_msg_move (&slot->header, h);
    zmq_msg_move (&slot->payload, p);
    zmq_msg_close (h);
    zmq_msg_close (p);
    while (i > 0 && self->held [(i - 1) / 2].due > self->held [i].due) {
        s_held_swap (&self->held [(i - 1) / 2], &self->held [i]);
        i = (i - 1) / 2;
    }
    atomic_fetch_add (&self->fault_delayed, 1);
}

static void
s_release_due (gc_zmq_t *self, int64_t now)
{
    while (self->n_held && self->held [0].due <= now) {
        s_held_t top = self->held [0];
        self->held [0] = self->held [--self->n_held];
        for (size_t i = 0;;) {
            size_t l = 2 * i + 1, r = l + 1, m = i;
            if (l < self->n_held && self->held [l].due < self->held [m].due) m = l;
            if (r < self->n_held && self->held [r].due < self->held [m].due) m = r;
            if (m == i)
                break;
            s_held_swap (&self->held [i], &self->held [m]);
            i = m;
        }
        s_send_now (self, top.link, &top.header, &top.payload);
    }
}

//  Milliseconds until the next held message is due (-1: none).
static long
s_next_due_ms (gc_zmq_t *self, int64_t now)
{
    if (!self->n_held)
        return -1;
    int64_t wait = self->held [0].due - now;
    return wait <= 0 ? 0 : (long) ((wait + 999999) / 1000000);
}

//  Through the fault layer: drop, or hold back for delay and rate, or send.
static void
s_route (gc_zmq_t *self, s_link_t *link, zmq_msg_t *h, zmq_msg_t *p, int64_t now)
{
    int64_t due;
    double bytes = (double) (zmq_msg_size (h) + zmq_msg_size (p));
    if (!gc_fault_route (&self->fault, &self->rng, &link->link_free, bytes, now, &due)) {
        atomic_fetch_add (&self->fault_dropped, 1);
        zmq_msg_close (h);
        zmq_msg_close (p);
        return;
    }
    if (due > now)
        s_hold (self, due, link, h, p);
    else
        s_send_now (self, link, h, p);
}

//  [ "SEND" ][ dests ][ header ][ payload ] from the trainer
static void
s_handle_send (gc_zmq_t *self, zmq_msg_t *parts)
{
    size_t n = zmq_msg_size (&parts [1]) / sizeof (uint32_t);
    const uint32_t *dests = zmq_msg_data (&parts [1]);
    int64_t now = gc_now_ns ();
    for (size_t i = 0; i < n; i++) {
        s_link_t *link = s_link (self, dests [i]);
        if (!link)
            continue;
        zmq_msg_t h, p;
        zmq_msg_init (&h);
        zmq_msg_init (&p);
        zmq_msg_copy (&h, &parts [2]);      /* refcounted: no copy of large bodies */
        zmq_msg_copy (&p, &parts [3]);
        s_route (self, link, &h, &p, now);
    }
}

static void
s_handle_control (gc_zmq_t *self)
{
    char *request = zstr_recv (self->control);
    if (!request)
        return;
    char reply [4096] = "error: no control handler";
    if (self->cfg.control_fn)
        self->cfg.control_fn (self->cfg.ctx, request, reply, sizeof reply);
    zstr_send (self->control, reply);
    zstr_free (&request);
}

void
gc_zmq_fault_drop (gc_zmq_t *self, double p)
{
    gc_fault_set_drop (&self->fault, p);
}

void
gc_zmq_fault_delay (gc_zmq_t *self, double delay_ms, double jitter_ms)
{
    gc_fault_set_delay (&self->fault, delay_ms, jitter_ms);
}

void
gc_zmq_fault_rate (gc_zmq_t *self, double bytes_per_s)
{
    gc_fault_set_rate (&self->fault, bytes_per_s);
    atomic_store (&self->rate_cap, self->fault.rate);
}

int
gc_zmq_fault_control (gc_zmq_t *self, const char *request, gc_err_t *err)
{
    int rc = gc_fault_control (&self->fault, request, err);
    atomic_store (&self->rate_cap, self->fault.rate);
    return rc;
}

double
gc_zmq_link_rate (gc_zmq_t *self)
{
    return atomic_load (&self->rate_cap);
}

void
gc_zmq_fault_describe (gc_zmq_t *self, char *buf, size_t size)
{
    char layer [200];
    gc_fault_describe (&self->fault, layer, sizeof layer);
    snprintf (buf, size, "%s held=%zu", layer, self->n_held);
}

//  A DEALER with ZMQ_IMMEDIATE accepts a message only once connected.
static int
s_count_connected (gc_zmq_t *self)
{
    int connected = 0;
    for (size_t i = 0; i < self->n_links; i++) {
        int events = 0;
        size_t len = sizeof events;
        if (zmq_getsockopt (zsock_resolve (self->links [i].dealer), ZMQ_EVENTS, &events, &len) == 0
        &&  (events & ZMQ_POLLOUT))
            connected++;
    }
    return connected;
}

//  Milliseconds the poll may sleep: until the next held message or the
//  next guard tick, whichever comes first (-1: neither).
static long
s_poll_ms (gc_zmq_t *self, int64_t now)
{
    long due = s_next_due_ms (self, now);
    if (!self->n_tracks)
        return due;
    int64_t wait = self->next_guard - now;
    long guard = wait <= 0 ? 0 : (long) ((wait + 999999) / 1000000);
    return due < 0 || guard < due ? guard : due;
}

static void
s_actor (zsock_t *pipe, void *arg)
{
    gc_zmq_t *self = arg;
    //  pipe, inbox, inbox monitor, one monitor per link, the control
    //  channel if any (last: an item without a socket would poll fd 0)
    enum { S_PIPE, S_INBOX_ITEM, S_INBOX_MONITOR, S_LINKS };
    size_t S_CONTROL = S_LINKS + self->n_links;
    size_t n_items = S_CONTROL + (self->control ? 1 : 0);
    zmq_pollitem_t *items = calloc (S_CONTROL + 1, sizeof *items);
    if (!items)
        return;
    items [S_PIPE] = (zmq_pollitem_t) { zsock_resolve (pipe), 0, ZMQ_POLLIN, 0 };
    void *inbox = zsock_resolve (self->inbox);
    items [S_INBOX_ITEM] = (zmq_pollitem_t) { inbox, 0, ZMQ_POLLIN, 0 };
    items [S_INBOX_MONITOR] = (zmq_pollitem_t) { zsock_resolve (self->inbox_monitor), 0, ZMQ_POLLIN, 0 };
    if (self->control)
        items [S_CONTROL] = (zmq_pollitem_t) { zsock_resolve (self->control), 0, ZMQ_POLLIN, 0 };
    for (size_t i = 0; i < self->n_links; i++)
        items [S_LINKS + i] = (zmq_pollitem_t) { zsock_resolve (self->links [i].monitor), 0, ZMQ_POLLIN, 0 };
    bool running = true;
    while (running) {
        if (zmq_poll (items, (int) n_items, s_poll_ms (self, gc_now_ns ())) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        int64_t now = gc_now_ns ();
        s_release_due (self, now);
        if (items [S_PIPE].revents & ZMQ_POLLIN) {
            zmq_msg_t parts [4];
            size_t bytes;
            int n = s_recv_parts (items [S_PIPE].socket, parts, 4, &bytes);
            int kept = n < 4 ? n : 4;
            if (kept >= 1 && zmq_msg_size (&parts [0]) == 5 && !memcmp (zmq_msg_data (&parts [0]), "$TERM", 5))
                running = false;
            else
            if (kept == 1 && zmq_msg_size (&parts [0]) == 4 && !memcmp (zmq_msg_data (&parts [0]), "CONN", 4))
                zsock_send (pipe, "i", s_count_connected (self));
            else
            if (n == 4)
                s_handle_send (self, parts);
            for (int i = 0; i < kept; i++)
                zmq_msg_close (&parts [i]);
        }
        if (self->control && (items [S_CONTROL].revents & ZMQ_POLLIN))
            s_handle_control (self);
        //  Monitor events before messages: a connection is followed before
        //  its first message is charged to it.
        if (items [S_INBOX_MONITOR].revents & ZMQ_POLLIN)
            s_handle_monitor (self, self->inbox_monitor, S_INBOX);
        for (size_t i = 0; i < self->n_links; i++)
            if (items [S_LINKS + i].revents & ZMQ_POLLIN)
                s_handle_monitor (self, self->links [i].monitor, (uint32_t) i);
        //  Drain a bounded batch of inbound messages per wake-up, so the pipe
        //  (our own sends) is never starved by a busy inbox.
        for (int i = 0; running && i < 64 && (items [S_INBOX_ITEM].revents & ZMQ_POLLIN); i++) {
            s_handle_inbox (self, inbox);
            int events;
            size_t len = sizeof events;
            if (zmq_getsockopt (inbox, ZMQ_EVENTS, &events, &len) || !(events & ZMQ_POLLIN))
                break;
        }
        now = gc_now_ns ();
        if (self->n_tracks && now >= self->next_guard) {
            s_guard (self, now);
            self->next_guard = now + GC_ZMQ_GUARD_MS * 1000000LL;
        }
    }
    free (items);
}

//  The network thread is joined by gc_zmq_destroy, so that nothing of it
//  runs once destroy has returned, not even what a thread does after its
//  function returned: its thread-local destructors (OpenSSL's per-thread
//  state from verifying signatures, gc_sha256's context). A CZMQ zactor
//  thread is detached and goes on with those after zactor_destroy returned
//  (or earlier: a signal interrupts zactor_destroy's wait); the process then
//  reaches exit(), where OPENSSL_cleanup frees every thread's OpenSSL state
//  without a lock while the still-running thread frees its own: "double free
//  or corruption (fasttop)" on a busy machine.
static void *
s_thread (void *arg)
{
    gc_zmq_t *self = arg;
    s_actor (self->actor_end, self);
    zsock_destroy (&self->actor_end);
    atomic_store (&self->thread_ended, true);
    return NULL;
}

//  $TERM to the thread (retried while the pipe is full or a signal
//  interrupts), then wait for the thread's end.
static void
s_stop_thread (gc_zmq_t *self)
{
    void *pipe = zsock_resolve (self->actor);
    while (!atomic_load (&self->thread_ended)) {
        if (zmq_send (pipe, "$TERM", 5, ZMQ_DONTWAIT) == 5)
            break;
        if (zmq_errno () != EAGAIN && zmq_errno () != EINTR)
            break;
        zclock_sleep (1);
    }
    pthread_join (self->thread, NULL);
}

int
gc_zmq_start (gc_zmq_t *self, gc_err_t *err)
{
    self->inbox = zsock_new (ZMQ_ROUTER);
    if (!self->inbox)
        return gc_err_set (err, GC_E_SYS, "transport: cannot create the inbox socket");
    zsock_set_linger (self->inbox, 0);
    zsock_set_rcvhwm (self->inbox, self->cfg.recv_hwm);
    zsock_set_maxmsgsize (self->inbox, (int) (self->cfg.max_frame > INT32_MAX ? INT32_MAX
                                                                               : self->cfg.max_frame));
    if (self->cfg.secure && self->cfg.secure (self->cfg.secure_ctx, self->inbox, UINT32_MAX, err))
        return gc_err_prefix (err, "transport: inbox: ");
    self->inbox_monitor = s_monitor (self->inbox,
                                     ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CLOSED
#ifdef ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                                     | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                     | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_SUCCEEDED
#endif
                                     );
    self->max_tracks = GC_ZMQ_MAX_CONNECTIONS + 2 * self->n_links;
    self->tracks = calloc (self->max_tracks, sizeof *self->tracks);
    if (!self->inbox_monitor || !self->tracks)
        return gc_err_set (err, GC_E_SYS, "transport: cannot monitor the inbox");
    self->port = zsock_bind (self->inbox, "%s", self->bind);
    if (self->port < 0)
        return gc_err_set (err, GC_E_SYS, "transport: cannot bind %s (%s)", self->bind, zmq_strerror (zmq_errno ()));
    if (self->cfg.control) {
        self->control = zsock_new (ZMQ_REP);
        if (!self->control || zsock_bind (self->control, "%s", self->cfg.control) < 0)
            return gc_err_set (err, GC_E_SYS, "transport: cannot bind the control endpoint %s (%s)",
                               self->cfg.control, zmq_strerror (zmq_errno ()));
        zsock_set_linger (self->control, 0);
    }
    self->held = calloc (S_HELD_MAX, sizeof *self->held);
    if (!self->held)
        return gc_err_set (err, GC_E_NOMEM, "transport: out of memory");
    self->actor = zsys_create_pipe (&self->actor_end);
    if (!self->actor)
        return gc_err_set (err, GC_E_SYS, "transport: cannot create the network thread's pipe");
    if (pthread_create (&self->thread, NULL, s_thread, self)) {
        zsock_destroy (&self->actor_end);
        zsock_destroy (&self->actor);
        return gc_err_set (err, GC_E_SYS, "transport: cannot start the network thread");
    }
    return 0;
}

static int
s_msg_from (zmq_msg_t *msg, const void *data, size_t len)
{
    if (zmq_msg_init_size (msg, len))
        return -1;
    if (len)
        memcpy (zmq_msg_data (msg), data, len);
    return 0;
}

int
gc_zmq_send (gc_zmq_t *self, const uint32_t *dests, size_t n_dests,
             const uint8_t *header, size_t header_len, const uint8_t *payload, size_t payload_len)
{
    if (!self->actor || n_dests == 0)
        return n_dests ? -1 : 0;
    void *pipe = zsock_resolve (self->actor);
    zmq_msg_t parts [4];
    if (s_msg_from (&parts [0], "SEND", 4)
    ||  s_msg_from (&parts [1], dests, n_dests * sizeof *dests)
    ||  s_msg_from (&parts [2], header, header_len)
    ||  s_msg_from (&parts [3], payload, payload_len))
        return -1;
    for (int i = 0; i < 4; i++)
        if (zmq_msg_send (&parts [i], pipe, i < 3 ? ZMQ_SNDMORE : 0) < 0) {
            for (int j = i; j < 4; j++)
                zmq_msg_close (&parts [j]);
            return -1;
        }
    return 0;
}

int
gc_zmq_port (gc_zmq_t *self)
{
    return self->port;
}

int
gc_zmq_connected (gc_zmq_t *self)
{
    if (!self->actor)
        return 0;
    int connected = 0;
    if (zstr_send (self->actor, "CONN") || zsock_recv (self->actor, "i", &connected))
        return 0;
    return connected;
}

void
gc_zmq_stats (gc_zmq_t *self, gc_zmq_stats_t *out)
{
    out->sent_frames = atomic_load (&self->sent_frames);
    out->sent_bytes = atomic_load (&self->sent_bytes);
    out->send_dropped = atomic_load (&self->send_dropped);
    out->recv_messages = atomic_load (&self->recv_messages);
    out->recv_bytes = atomic_load (&self->recv_bytes);
    out->recv_malformed = atomic_load (&self->recv_malformed);
    out->recv_muted = atomic_load (&self->recv_muted);
    out->connections_muted = atomic_load (&self->connections_muted);
    out->fault_dropped = atomic_load (&self->fault_dropped);
    out->fault_delayed = atomic_load (&self->fault_delayed);
    out->connections_cut = atomic_load (&self->connections_cut);
    out->connections_refused = atomic_load (&self->connections_refused);
    out->held_max = atomic_load (&self->held_max);
}

void
gc_zmq_destroy (gc_zmq_t **self_p)
{
    gc_zmq_t *self = *self_p;
    if (!self)
        return;
    if (self->actor) {
        s_stop_thread (self);
        zsock_destroy (&self->actor);
    }
    for (size_t i = 0; i < self->n_held; i++) {
        zmq_msg_close (&self->held [i].header);
        zmq_msg_close (&self->held [i].payload);
    }
    free (self->held);
    free (self->tracks);
    zsock_destroy (&self->control);
    s_close_monitored (&self->inbox, &self->inbox_monitor);
    for (size_t i = 0; self->links && i < self->n_links; i++) {
        s_close_monitored (&self->links [i].dealer, &self->links [i].monitor);
        free (self->links [i].endpoint);
    }
    free (self->links);
    free (self->bind);
    free ((char *) self->cfg.control);
    free (self);
    *self_p = NULL;
}

uint64_t
gc_zmq_peer_sent_bytes (gc_zmq_t *self, uint32_t peer)
{
    //  links are fixed once started; the counter is atomic
    s_link_t *link = s_link (self, peer);
    return link ? atomic_load (&link->sent_bytes) : 0;
}
