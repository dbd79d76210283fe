/*  toy_peer — the smallest embedder of libgcnode: one peer of a gossip
    network whose "model" is a 4x8 matrix and an 8-vector that it trains
    itself, by gradient steps towards a target of its own (peer i pulls every
    parameter towards i). Alone, peer i would end at i; gossiping, the peers
    agree on a model between their targets. Uses only gcnode.h.

        toy_peer CONFIG INDEX [KEY=VALUE...]

    Prints `peer=I rounds=R x=...` (every parameter) when the rounds are done.
    tests/embed/test_c_example.py runs three of them on loopback. */
#include <gcnode.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 4, COLS = 8, N = ROWS * COLS + COLS };

static int
s_fail (const char *what)
{
    fprintf (stderr, "toy_peer: %s: %s (%s)\n", what, gcnode_last_error (),
             gcnode_error_name (gcnode_last_error_code ()));
    return 1;
}

int
main (int argc, char **argv)
{
    if (argc < 3) {
        fprintf (stderr, "usage: toy_peer CONFIG INDEX [KEY=VALUE...]\n");
        return 2;
    }
    if (gcnode_version_number () / 10000 != GCNODE_VERSION_MAJOR) {
        fprintf (stderr, "toy_peer: built for libgcnode %d.x, loaded %s\n", GCNODE_VERSION_MAJOR,
                 gcnode_version ());
        return 1;
    }
    gcnode_config_t *config = gcnode_config_new ();
    if (!config || gcnode_config_load (config, argv [1]))
        return s_fail (argv [1]);
    if (gcnode_config_set (config, "node/index", argv [2]))
        return s_fail ("INDEX");
    for (int i = 3; i < argc; i++) {
        char key [256];
        const char *eq = strchr (argv [i], '=');
        if (!eq || (size_t) (eq - argv [i]) >= sizeof key) {
            fprintf (stderr, "toy_peer: '%s': expected KEY=VALUE\n", argv [i]);
            return 2;
        }
        snprintf (key, sizeof key, "%.*s", (int) (eq - argv [i]), argv [i]);
        if (gcnode_config_set (config, key, eq + 1))
            return s_fail (argv [i]);
    }
    static float params [N];
    const gcnode_layer_t layers [] = {
        { .name = "w", .offset = 0, .rows = ROWS, .cols = COLS, .matrix = 1 },
        { .name = "b", .offset = ROWS * COLS, .rows = COLS, .cols = 1, .matrix = 0 },
    };
    //  the buffer as the peer opens it is its initial model: its own target
    //  here, as far from the others' as it gets
    const float target = (float) atoi (argv [2]), lr = 0.05f;
    for (int i = 0; i < N; i++)
        params [i] = target;
    gcnode_peer_t *peer = gcnode_peer_open (config, params, N, layers, 2, 0);
    if (!peer)
        return s_fail ("open");
    while (!gcnode_peer_done (peer)) {
        for (int i = 0; i < N; i++)         /* local training: one step of (x - target)^2 / 2 */
            params [i] -= lr * (params [i] - target);
        if (gcnode_peer_step (peer))
            return s_fail ("step");
    }
    gcnode_stats_t s;
    uint64_t rejected = 0;
    if (gcnode_peer_stats (peer, &s, sizeof s) || gcnode_peer_rejections (peer, -1, NULL, &rejected))
        return s_fail ("stats");
    printf ("peer=%d rounds=%llu sent=%llu dense=%llu rejected=%llu x=", gcnode_peer_index (peer),
            (unsigned long long) s.round, (unsigned long long) s.bytes_sent,
            (unsigned long long) s.dense_equiv_bytes, (unsigned long long) s.rejected);
    for (int i = 0; i < N; i++)
        printf ("%s%.6f", i ? "," : "", params [i]);
    printf ("\n");
    gcnode_peer_close (&peer);
    gcnode_config_destroy (&config);
    return 0;
}
