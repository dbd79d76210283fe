/*  gc_topology — who talks to whom.

    A directed graph over peer indices 0..n-1, built the same way by every
    peer from a spec and a shared seed:
      ring               i <-> i±1
      torus[:RxC]        2-D wrap-around grid (default: the most square R x C = n)
      complete           everyone
      exponential        i -> i + 2^k mod n for 2^k < n (directed; Ying et al.)
      regular:D          random D-regular undirected graph from the seed
      edges:LIST         explicit, e.g. "0-1,1-2,2>0" ('-' both ways, '>' one way)
    out(i): the peers i sends to; in(i): the peers i receives from. */
#ifndef GC_TOPOLOGY_H
#define GC_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_TOPOLOGY_MAX_PEERS 65536

typedef struct gc_topology_t gc_topology_t;

gc_topology_t *gc_topology_new (const char *spec, uint32_t n, uint64_t seed, gc_err_t *err);
void           gc_topology_destroy (gc_topology_t **self_p);
uint32_t       gc_topology_size (const gc_topology_t *self);
/*  Neighbour lists, sorted ascending; the pointer stays valid. */
size_t         gc_topology_out (const gc_topology_t *self, uint32_t i, const uint32_t **list);
size_t         gc_topology_in (const gc_topology_t *self, uint32_t i, const uint32_t **list);
bool           gc_topology_has_edge (const gc_topology_t *self, uint32_t from, uint32_t to);
bool           gc_topology_undirected (const gc_topology_t *self);
/*  Every peer reachable from every other along directed edges. */
bool           gc_topology_connected (const gc_topology_t *self);
/*  Mixing weight peer i gives to in-neighbour j (j != i) and to itself
    (j == i). Metropolis-Hastings 1 / (1 + max(deg i, deg j)) on undirected
    graphs (doubly stochastic), uniform 1 / (in-degree + 1) otherwise. */
double         gc_topology_weight (const gc_topology_t *self, uint32_t i, uint32_t j);
const char    *gc_topology_name (const gc_topology_t *self);

#endif
