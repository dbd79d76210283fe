/*  gc_netns — one network namespace per peer, joined by veth links (root).

    Peer i lives in namespace gcnet<PID>-p<i> with the address 10.A.B.(i+1)/32
    on its loopback; each edge of the topology is a veth pair whose ends sit
    in the two peers' namespaces (named v<j> in peer i's, v<i> in peer j's),
    with a host route to the other peer through it. Only neighbours can reach
    each other, and every link has its own queue, so `tc ... tbf` on a veth
    end caps one direction of one link. The /24 exists only inside these
    namespaces. Everything is removed by gc_netns_destroy; namespaces left by
    a gcnet that died are removed by gc_netns_sweep. */
#ifndef GC_NETNS_H
#define GC_NETNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_topology.h"

typedef struct gc_netns_t gc_netns_t;

/*  Can namespaces be made here? false with the reason (not root, no ip). */
bool        gc_netns_available (char *why, size_t size);
/*  Remove namespaces of gcnet processes that no longer exist; returns how many. */
int         gc_netns_sweep (void);

gc_netns_t *gc_netns_new (const gc_topology_t *topology, gc_err_t *err);
/*  Deletes the namespaces (their links go with them). */
void        gc_netns_destroy (gc_netns_t **self_p);

/*  /run/netns/NAME of peer i (to setns into) and its address. */
const char *gc_netns_file (const gc_netns_t *self, uint32_t peer);
const char *gc_netns_address (const gc_netns_t *self, uint32_t peer);
/*  Cap everything peer sends, on each of its links (tbf; 0 removes the cap). */
int         gc_netns_rate (gc_netns_t *self, uint32_t peer, double bytes_per_s, gc_err_t *err);

#endif
