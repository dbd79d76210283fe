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
    GC_DELIVER_REJECTED,        /* authenticated sender, message refused */
    GC_DELIVER_UNAUTHENTICATED  /* could not be attributed to a trusted key */
} gc_deliver_t;

typedef gc_deliver_t (*gc_zmq_deliver_fn) (void *ctx, const uint8_t *header, size_t header_len,
                                           const uint8_t *payload, size_t payload_len,
                                           int64_t now_ns);

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
} gc_zmq_config_t;

typedef struct {
    uint64_t sent_frames;       /* messages handed to DEALERs */
    uint64_t send_dropped;      /* would have blocked: HWM reached or no connection */
    uint64_t recv_messages;
    uint64_t recv_bytes;
    uint64_t recv_malformed;    /* wrong frame count */
    uint64_t recv_muted;        /* dropped from a muted connection */
    uint64_t connections_muted;
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
/*  Counters (read from any thread; approximate while running). */
void      gc_zmq_stats (gc_zmq_t *self, gc_zmq_stats_t *out);
/*  Stop the actor, close every socket. */
void      gc_zmq_destroy (gc_zmq_t **self_p);

#endif
