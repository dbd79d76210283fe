#include "gc_zmq.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "gc_fault.h"
#include "gc_rng.h"
#include "gc_time.h"

#define S_MAX_PEERS      4096
#define S_CONN_SLOTS     256
//  A connection that sends this many unauthenticated messages within the
//  window is muted (its messages dropped before any signature check).
#define S_MUTE_FAILURES  20
#define S_MUTE_WINDOW_NS (10 * 1000000000LL)
#define S_MUTE_FOR_NS    (30 * 1000000000LL)

typedef struct {
    uint8_t  id [256];
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
    int64_t   link_free;        /* rate cap: when the link has sent what it holds */
    atomic_uint_fast64_t sent_bytes;    /* handed to its socket */
} s_link_t;

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
    zsock_t         *control;
    s_conn_t         conns [S_CONN_SLOTS];
    gc_rng_t         rng;
    gc_fault_t       fault;
    s_held_t        *held;          /* min-heap on due */
    size_t           n_held;
    atomic_uint_fast64_t sent_frames, sent_bytes, send_dropped, recv_messages, recv_bytes,
                         recv_malformed, recv_muted, connections_muted,
                         fault_dropped, fault_delayed;
};

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
    return self;
}

//  tcp://NAME:PORT -> tcp://ADDRESS:PORT, resolved once, here. libzmq would
//  resolve a name again on every reconnect, inside the I/O thread that
//  serves all of this peer's connections: where a lookup of a vanished name
//  takes seconds (containers whose DNS forwards to an unreachable server), the
//  whole peer stalls for that long. A name that does not resolve yet is kept
//  as it is (libzmq keeps trying). IP literals pass through unchanged.
static void
s_resolve_once (const char *endpoint, char *out, size_t size)
{
    snprintf (out, size, "%s", endpoint);
    if (strncmp (endpoint, "tcp://", 6))
        return;
    const char *host = endpoint + 6, *colon = strrchr (host, ':');
    if (!colon || *host == '[' || *host == '*')
        return;
    char name [256];
    size_t len = (size_t) (colon - host);
    if (len == 0 || len >= sizeof name)
        return;
    memcpy (name, host, len);
    name [len] = '\0';
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (getaddrinfo (name, NULL, &hints, &res) != 0 || !res)
        return;
    char addr [INET_ADDRSTRLEN];
    if (inet_ntop (AF_INET, &((struct sockaddr_in *) res->ai_addr)->sin_addr, addr, sizeof addr))
        snprintf (out, size, "tcp://%s%s", addr, colon);
    freeaddrinfo (res);
}

int
gc_zmq_add_peer (gc_zmq_t *self, uint32_t peer, const char *endpoint_given, gc_err_t *err)
{
    char endpoint [512];
    s_resolve_once (endpoint_given, endpoint, sizeof endpoint);
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
    if (self->cfg.secure && self->cfg.secure (self->cfg.secure_ctx, link->dealer, peer, err)) {
        free (link->endpoint);
        zsock_destroy (&link->dealer);
        return gc_err_prefix (err, "transport: peer %u: ", peer);
    }
    if (zsock_connect (link->dealer, "%s", endpoint) != 0) {
        free (link->endpoint);
        zsock_destroy (&link->dealer);
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

//  The connection slot for a routing id (least recently seen slot reused).
static s_conn_t *
s_conn (gc_zmq_t *self, const uint8_t *id, size_t len, int64_t now)
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
    memset (oldest, 0, sizeof *oldest);
    memcpy (oldest->id, id, len);
    oldest->id_len = len;
    oldest->last_seen = now;
    return oldest;
}

static void
s_count_failure (gc_zmq_t *self, s_conn_t *conn, int64_t now)
{
    if (now - conn->window_start > S_MUTE_WINDOW_NS) {
        conn->window_start = now;
        conn->failures = 0;
    }
    if (++conn->failures >= S_MUTE_FAILURES) {
        conn->muted_until = now + S_MUTE_FOR_NS;
        conn->failures = 0;
        atomic_fetch_add (&self->connections_muted, 1);
    }
}

//  Receive the rest of a multipart message into parts[]; returns the number of
//  parts (all parts are always consumed; at most max are kept).
static int
s_recv_parts (void *sock, zmq_msg_t *parts, int max)
{
    int n = 0, more = 1;
    while (more) {
        zmq_msg_t scratch;
        zmq_msg_t *msg = n < max ? &parts [n] : &scratch;
        zmq_msg_init (msg);
        if (zmq_msg_recv (msg, sock, 0) < 0) {
            zmq_msg_close (msg);
            break;
        }
        more = zmq_msg_more (msg);
        if (n >= max)
            zmq_msg_close (msg);
        n++;
    }
    return n;
}

static void
s_handle_inbox (gc_zmq_t *self, void *inbox)
{
    zmq_msg_t parts [3];
    int n = s_recv_parts (inbox, parts, 3);
    int kept = n < 3 ? n : 3;
    int64_t now = gc_now_ns ();
    if (kept >= 1) {
        s_conn_t *conn = s_conn (self, zmq_msg_data (&parts [0]), zmq_msg_size (&parts [0]), now);
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
}

int
gc_zmq_fault_control (gc_zmq_t *self, const char *request, gc_err_t *err)
{
    return gc_fault_control (&self->fault, request, err);
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

static void
s_actor (zsock_t *pipe, void *arg)
{
    gc_zmq_t *self = arg;
    void *p = zsock_resolve (pipe), *inbox = zsock_resolve (self->inbox);
    zmq_pollitem_t items [3] = { { p, 0, ZMQ_POLLIN, 0 }, { inbox, 0, ZMQ_POLLIN, 0 },
                                 { self->control ? zsock_resolve (self->control) : NULL, 0, ZMQ_POLLIN, 0 } };
    int n_items = self->control ? 3 : 2;
    bool running = true;
    while (running) {
        if (zmq_poll (items, n_items, s_next_due_ms (self, gc_now_ns ())) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        s_release_due (self, gc_now_ns ());
        if (items [0].revents & ZMQ_POLLIN) {
            zmq_msg_t parts [4];
            int n = s_recv_parts (p, parts, 4);
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
        if (n_items == 3 && (items [2].revents & ZMQ_POLLIN))
            s_handle_control (self);
        //  Drain a bounded batch of inbound messages per wake-up, so the pipe
        //  (our own sends) is never starved by a busy inbox.
        for (int i = 0; running && i < 64 && (items [1].revents & ZMQ_POLLIN); i++) {
            s_handle_inbox (self, inbox);
            int events;
            size_t len = sizeof events;
            if (zmq_getsockopt (inbox, ZMQ_EVENTS, &events, &len) || !(events & ZMQ_POLLIN))
                break;
        }
    }
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
    if (zsock_bind (self->inbox, "%s", self->bind) < 0)
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
    zsock_destroy (&self->control);
    zsock_destroy (&self->inbox);
    for (size_t i = 0; self->links && i < self->n_links; i++) {
        zsock_destroy (&self->links [i].dealer);
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
