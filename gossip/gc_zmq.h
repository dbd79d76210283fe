/*  gc_zmq — the ZeroMQ transport of a gcnode peer.

    Sockets (all owned by one network actor thread):
      inbox    ROUTER bound at the peer's endpoint; every neighbour's DEALER
               connects to it. Each connection gets its own routing id, so
               garbage can be attributed to a connection and muted before any
               signature is checked.
      outbox   one DEALER per neighbour, connected to that neighbour's inbox,
               ZMQ_IMMEDIATE (nothing queued for a peer that is not there) and
               a small send HWM: a slow or dead neighbour can neither block the
               sender nor grow its memory (sends that would block are dropped
               and counted).
      pipe     the actor pipe from the trainer thread. A message to send
               travels over it once (inproc: no copy); the actor then hands the
               same refcounted payload to every destination DEALER.

    Inbound messages are [routing id][header][payload]. The actor calls the
    deliver callback (in its own thread) with header and payload; the callback
    verifies, decodes and applies, and returns a verdict.

    Memory per connection. libzmq applies ZMQ_MAXMSGSIZE to each frame and
    the HWMs to complete messages only, and keeps the frames of a message
    that is not complete yet where the application cannot see them: a
    client sending frames that all carry MORE grows the receiver without
    bound. So the actor follows every TCP connection of its sockets (a
    socket monitor gives their file descriptors) and, every GC_ZMQ_GUARD_MS,
    compares what the kernel says the connection has read (TCP_INFO bytes
    received minus what waits in the kernel's queue) with what the actor
    was handed from it (ZMQ_SRCFD of each frame, 64 bytes charged per frame
    for framing). A connection holding more than its limit in libzmq is shut
    down (shutdown(2); libzmq then drops it and its half-received message)
    and blamed:
      inbox     limit (recv_hwm + 2) * (2 * max_frame + 128) + 64 KiB
                (gc_zmq_inbox_limit): the queue of complete messages the HWM
                allows, one being decoded, the handshake
      links     limit 64 KiB: a neighbour's ROUTER never sends anything after
                the handshake; ZMQ_MAXMSGSIZE 4096 on every DEALER
    Beyond the limit, at most what one connection can push in one guard
    period arrives before the cut. Inbound connections beyond
    GC_ZMQ_MAX_CONNECTIONS are refused (shut down at once). The accounting
    is in bytes on the wire: libzmq keeps at least 64 bytes per frame, so
    without CURVE a flood of empty frames costs up to 32x its bytes before
    the cut (with CURVE a frame is at least 35 wire bytes). tcp only: an ipc
    inbox is local and not guarded.

    Blame and muting ("who" a connection is): its CURVE key (ZAP User-Id)
    when authenticated; else its remote address ("Peer-Address"), except
    loopback, where every local process shares one address and the
    connection (routing id) is all there is. A muted key or address stays
    muted across reconnects: its messages are dropped before the deliver
    callback (no signature is checked) and a new connection from a muted
    address is refused at once. */
#ifndef GC_ZMQ_H
#define GC_ZMQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

typedef enum {
    GC_DELIVER_OK = 0,
    GC_DELIVER_REJECTED,        /* the authenticated author's own fault: refused, counted
                                   against it (the engine mutes it) */
    GC_DELIVER_UNAUTHENTICATED  /* not the author's fault, count against the connection:
                                   not attributable to a trusted key, relayed to a peer it
                                   has no edge with, or claiming a muted sender */
} gc_deliver_t;

typedef gc_deliver_t (*gc_zmq_deliver_fn) (void *ctx, const uint8_t *header, size_t header_len,
                                           const uint8_t *payload, size_t payload_len,
                                           int64_t now_ns);

/*  A control request (one line of text) answered into reply ("ok ..." or
    "error: ..."). Runs in the network actor thread, so it may call the
    gc_zmq_fault_* setters below. */
typedef void (*gc_zmq_control_fn) (void *ctx, const char *request, char *reply, size_t size);

#define GC_ZMQ_GUARD_MS         10
#define GC_ZMQ_MAX_CONNECTIONS  1024
#define GC_ZMQ_LINK_LIMIT       (64 * 1024)
#define GC_ZMQ_LINK_MAXMSG      4096

typedef struct {
    const char        *bind;            /* e.g. tcp://127.0.0.1:7100 */
    size_t             max_frame;       /* ZMQ_MAXMSGSIZE of the inbox */
    int                send_hwm;        /* per neighbour, messages (default 8) */
    int                recv_hwm;        /* per connection, messages (default 16) */
    gc_zmq_deliver_fn  deliver;
    void              *ctx;
    /*  Optional: called with every socket (a zsock_t *) before it binds or
        connects, e.g. CURVE (gc_curve_apply); peer is the neighbour of a
        DEALER, or UINT32_MAX for the inbox. Nonzero fails the bind/connect. */
    int              (*secure) (void *secure_ctx, void *zsock, uint32_t peer, gc_err_t *err);
    void              *secure_ctx;
    /*  Optional: every handshake event of the inbox (ZMQ_EVENT_HANDSHAKE_*),
        with secure_ctx, in the actor thread (gc_curve_event counts them).
        A failed handshake is reported when its connection closes, with
        the connection's remote address (NULL where it is not known). */
    void             (*secure_event) (void *secure_ctx, int event, const char *address);
    const char        *control;         /* REP endpoint for the control channel, or NULL */
    gc_zmq_control_fn  control_fn;      /* called with ctx */
    uint64_t           seed;            /* for the fault layer's random drops */
} gc_zmq_config_t;

typedef struct {
    uint64_t sent_frames;       /* messages handed to DEALERs */
    uint64_t sent_bytes;        /* their bytes (header + payload): not the dropped ones */
    uint64_t send_dropped;      /* would have blocked: HWM reached or no connection */
    uint64_t recv_messages;
    uint64_t recv_bytes;
    uint64_t recv_malformed;    /* wrong frame count */
    uint64_t recv_muted;        /* dropped from a muted connection */
    uint64_t connections_muted;
    uint64_t fault_dropped;     /* dropped by the fault layer (drop, full delay queue) */
    uint64_t fault_delayed;     /* held back by the fault layer (delay, rate cap) */
    uint64_t connections_cut;   /* shut down by the memory guard (held over the limit) */
    uint64_t connections_refused; /* from a muted address, or beyond GC_ZMQ_MAX_CONNECTIONS */
    uint64_t held_max;          /* the most bytes one connection held in libzmq, seen by the guard */
} gc_zmq_stats_t;

typedef struct gc_zmq_t gc_zmq_t;

gc_zmq_t *gc_zmq_new (const gc_zmq_config_t *cfg, gc_err_t *err);
/*  The guard's limit for one inbound connection, in bytes (see above). */
uint64_t  gc_zmq_inbox_limit (size_t max_frame, int recv_hwm);
/*  Before gc_zmq_start: an outgoing link to peer index `peer`. */
int       gc_zmq_add_peer (gc_zmq_t *self, uint32_t peer, const char *endpoint, gc_err_t *err);
/*  Bind the inbox and start the network actor. */
int       gc_zmq_start (gc_zmq_t *self, gc_err_t *err);
/*  From the trainer thread: queue one message for dests (peer indices).
    Copies header and payload once; never blocks on the network. */
int       gc_zmq_send (gc_zmq_t *self, const uint32_t *dests, size_t n_dests,
                       const uint8_t *header, size_t header_len,
                       const uint8_t *payload, size_t payload_len);
/*  How many neighbour links are connected (can take a message now). From
    the trainer thread; a startup wait polls it, bounded. */
int       gc_zmq_connected (gc_zmq_t *self);
/*  After start: the inbox's port for a tcp bind (the one chosen for
    tcp://HOST:*), 0 for other transports. */
int       gc_zmq_port (gc_zmq_t *self);
/*  Bytes handed to the socket of peer's link (0: no such link). Any thread. */
uint64_t  gc_zmq_peer_sent_bytes (gc_zmq_t *self, uint32_t peer);
/*  The fault layer on outgoing messages (gc_fault.h; for tests and the
    harness; off by default). Only from the control callback (the actor
    thread).
      drop     each message to each destination is dropped with probability p
      delay    held back delay_ms plus uniform jitter in [0, jitter_ms)
      rate     the link to each destination carries at most bytes_per_s
               (messages wait for their turn; 0 = unlimited)
    Delayed messages wait in a bounded queue (beyond it they are dropped).
    fault_control applies a control verb (gc_fault_control: 0 applied, 1 not
    a fault verb, -1 bad argument). */
void      gc_zmq_fault_drop (gc_zmq_t *self, double p);
void      gc_zmq_fault_delay (gc_zmq_t *self, double delay_ms, double jitter_ms);
void      gc_zmq_fault_rate (gc_zmq_t *self, double bytes_per_s);
int       gc_zmq_fault_control (gc_zmq_t *self, const char *request, gc_err_t *err);
/*  The rate cap per link (bytes/s; 0: none) the fault layer holds now,
    from any thread: what the bandwidth ratio policy plans with. */
double    gc_zmq_link_rate (gc_zmq_t *self);
/*  "drop=0.2 delay_ms=0 jitter_ms=0 rate=0 held=0" */
void      gc_zmq_fault_describe (gc_zmq_t *self, char *buf, size_t size);
/*  Counters (read from any thread; approximate while running). */
void      gc_zmq_stats (gc_zmq_t *self, gc_zmq_stats_t *out);
/*  Stop the actor, close every socket. */
void      gc_zmq_destroy (gc_zmq_t **self_p);

#endif
