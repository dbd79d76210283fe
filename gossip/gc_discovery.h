/*  gc_discovery — LAN discovery of peers' endpoints with UDP beacons (CZMQ
    zbeacon).

    Every peer broadcasts "gcnode/1 <peer_id_hex> <endpoint>" on a UDP port
    and listens for the others. A beacon is only a hint: it is used only if
    its peer id belongs to a key in the trust store AND to a peer this node
    is looking for (a neighbour whose endpoint is "discover"); other beacons
    are counted and ignored. The first endpoint seen for a peer is kept; a
    different one later is counted as a conflict. Beacons are not
    authenticated: what protects the network is that every message is
    signed (and, with CURVE, that a link only talks to the holder of the
    configured key). A forged beacon can at worst divert this node's
    messages for one neighbour, i.e. deny service; docs/OPERATIONS.md.

    An endpoint whose host is "*" means "the address this beacon came from".

    The beacon runs in its own actor thread; the queries below may be made
    from any thread. */
#ifndef GC_DISCOVERY_H
#define GC_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_DISCOVERY_PREFIX       "gcnode/1 "
#define GC_DISCOVERY_ENDPOINT_MAX 200

typedef struct {
    int          port;              /* UDP port, 1..65535 */
    int          interval_ms;       /* between own beacons */
    const char  *interface;         /* NULL or "": CZMQ's choice (ZSYS_INTERFACE) */
    const char  *announce;          /* own endpoint, tcp://HOST:PORT (HOST may be "*") */
    const uint8_t *self_id;         /* 8 bytes */
} gc_discovery_config_t;

typedef struct {
    uint64_t received;              /* beacons with the gcnode/1 prefix */
    uint64_t own;                   /* our own, looped back */
    uint64_t malformed;
    uint64_t untrusted;             /* peer id not in the trust store */
    uint64_t conflicts;             /* a found peer announced another endpoint */
    uint32_t wanted, found;
    char     last_untrusted [96];   /* "id from address", for the log */
    char     last_conflict [224];   /* "peer P: kept E1, ignored E2 from address" */
} gc_discovery_stats_t;

typedef struct gc_discovery_t gc_discovery_t;

gc_discovery_t *gc_discovery_new (const gc_discovery_config_t *cfg, gc_err_t *err);
/*  Before start: a peer id in the trust store. */
int  gc_discovery_trust (gc_discovery_t *self, const uint8_t id [8], gc_err_t *err);
/*  Before start: look for peer index `peer` with this id. */
int  gc_discovery_want (gc_discovery_t *self, uint32_t peer, const uint8_t id [8], gc_err_t *err);
/*  Start announcing and listening. Fails (naming the interface) when there
    is no broadcast-capable interface. */
int  gc_discovery_start (gc_discovery_t *self, gc_err_t *err);
/*  The address of the interface the beacon uses (after start). */
const char *gc_discovery_address (gc_discovery_t *self);
/*  The endpoint found for peer, copied to out; false if not (yet) found. */
bool gc_discovery_endpoint (gc_discovery_t *self, uint32_t peer, char *out, size_t size);
void gc_discovery_stats (gc_discovery_t *self, gc_discovery_stats_t *out);
void gc_discovery_destroy (gc_discovery_t **self_p);

/*  Parse and check a beacon (exposed for tests and fuzzing): fills id and
    endpoint (with "*" replaced by source). 0 or -1. */
int  gc_discovery_parse (const uint8_t *data, size_t size, const char *source,
                         uint8_t id [8], char endpoint [GC_DISCOVERY_ENDPOINT_MAX + 1]);

#endif
