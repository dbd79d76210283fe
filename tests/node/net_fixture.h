/*  net_fixture — N engines on an in-memory network, stepped in lock-step:
    every peer trains and publishes, every queued message is delivered (a
    hook may drop or alter it), every peer mixes. Deterministic. */
#ifndef NET_FIXTURE_H
#define NET_FIXTURE_H

#include <stdbool.h>

#include "gc_dataset.h"
#include "gc_engine.h"
#include "gc_key.h"
#include "gc_topology.h"
#include "gc_trust.h"

#define NET_MAX_PEERS 16

typedef struct net_msg_t {
    uint32_t  from, to;
    uint8_t  *header;
    size_t    header_len;
    uint8_t  *payload;
    size_t    payload_len;
} net_msg_t;

typedef struct net_t net_t;
typedef struct { net_t *net; uint32_t peer; } net_io_t;     /* one peer's send context */
/*  Return false to drop the message (it may also be altered in place). */
typedef bool (*net_filter_fn) (net_t *net, net_msg_t *msg, void *arg);

struct net_t {
    uint32_t            n;
    gc_topology_t      *topology;
    gc_key_t           *keys [NET_MAX_PEERS];
    uint8_t             ids [NET_MAX_PEERS][8];
    gc_trust_t         *trust;
    gc_dataset_t        train, test;
    gc_dataset_t        shards [NET_MAX_PEERS];
    gc_engine_t        *engines [NET_MAX_PEERS];
    gc_engine_config_t  cfgs [NET_MAX_PEERS];  /* what each engine was built with */
    net_io_t            io_ctx [NET_MAX_PEERS];
    bool                byzantine [NET_MAX_PEERS];
    net_msg_t          *queue;
    size_t              queued, cap;
    net_filter_fn       filter;
    void               *filter_arg;
    int64_t             now;
    uint64_t            delivered, dropped;
    uint64_t            taken;          /* payloads the transport took (net_new_taking) */
};

/*  cfg: engine settings to use (self, topology, keys, data are filled in);
    attacks: NULL, or per peer NULL (honest) or an attack spec. */
net_t *net_new (uint32_t n, const char *topology, const gc_engine_config_t *cfg,
                const char *const *attacks);
/*  The same, with a transport that takes the engines' delta payloads
    (gc_engine_io_t.send_owned) instead of copying them. */
net_t *net_new_taking (uint32_t n, const char *topology, const gc_engine_config_t *cfg,
                       const char *const *attacks);
void   net_destroy (net_t **self_p);
/*  A restart of peer: its engine is destroyed and built again from the same
    settings with seq_start (what the wall clock says now), not started (set
    a lease first, then gc_engine_start). */
gc_engine_t *net_replace (net_t *self, uint32_t peer, uint64_t seq_start);
/*  One lock-step round of every peer. */
void   net_round (net_t *self);
/*  Deliver one message from outside (e.g. garbage) to peer `to`. */
gc_deliver_t net_inject (net_t *self, uint32_t to, const uint8_t *header, size_t hlen,
                         const uint8_t *payload, size_t plen);
/*  Mean and minimum test accuracy of the honest peers, and the largest
    distance of an honest peer's model from the honest average, relative to
    the average's norm. */
double net_mean_accuracy (net_t *self);
double net_min_accuracy (net_t *self);
double net_consensus_distance (net_t *self);
/*  Engine defaults scaled down for tests (synthetic 64-feature task). */
void   net_config_defaults (gc_engine_config_t *cfg);

#endif
