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
    verifies, decodes and applies, and returns a verdict. */
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
} gc_zmq_stats_t;

typedef struct gc_zmq_t gc_zmq_t;

gc_zmq_t *gc_zmq_new (const gc_zmq_config_t *cfg, gc_err_t *err);
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
/*  "drop=0.2 delay_ms=0 jitter_ms=0 rate=0 held=0" */
void      gc_zmq_fault_describe (gc_zmq_t *self, char *buf, size_t size);
/*  Counters (read from any thread; approximate while running). */
void      gc_zmq_stats (gc_zmq_t *self, gc_zmq_stats_t *out);
/*  Stop the actor, close every socket. */
void      gc_zmq_destroy (gc_zmq_t **self_p);

#endif
