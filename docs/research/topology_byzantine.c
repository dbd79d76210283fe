/*  Which honest peers of a gcsim graph have how many Byzantine neighbours
    (docs/RESULTS.md 1l, "A graph no table has"). Scratch, not built by the
    project; after a release build:

      gcc -O1 -Igossip -Icommon -Iinclude -o /tmp/topo docs/research/topology_byzantine.c \
          build/gossip/libgcgossip.a build/common/libgccommon.a -lm -lcrypto -lczmq -lzmq -lsodium -lz
      /tmp/topo regular:6 24 3 2,9,14,21

    Arguments: topology spec, peers, seed (gcsim's --seed, which draws the
    graph), Byzantine peers. Prints every peer's neighbours and the count
    of Byzantine ones among them. */
#include "gc_topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
    if (argc != 5) {
        fprintf (stderr, "usage: %s SPEC PEERS SEED BYZANTINE\n", argv [0]);
        return 2;
    }
    uint32_t n = (uint32_t) strtoul (argv [2], NULL, 10);
    gc_err_t err;
    gc_topology_t *t = gc_topology_new (argv [1], n, strtoull (argv [3], NULL, 10), &err);
    if (!t) {
        fprintf (stderr, "%s\n", err.msg);
        return 1;
    }
    bool *byz = calloc (n, sizeof *byz);
    for (char *tok = strtok (argv [4], ","); tok && byz; tok = strtok (NULL, ","))
        if (strtoul (tok, NULL, 10) < n)
            byz [strtoul (tok, NULL, 10)] = true;
    for (uint32_t i = 0; byz && i < n; i++) {
        const uint32_t *list;
        size_t k = gc_topology_out (t, i, &list), b = 0;
        printf ("%3u%s:", i, byz [i] ? "B" : " ");
        for (size_t j = 0; j < k; j++) {
            printf (" %u", list [j]);
            b += byz [list [j]];
        }
        printf ("  byzantine neighbours %zu of %zu\n", b, k);
    }
    free (byz);
    return 0;
}
