/*  CURVE between real peers: two peers with each other's CURVE keys
    exchange updates; a third that is in everyone's peer list (a valid
    Ed25519 identity) but presents the wrong CURVE key, or no CURVE at all,
    gets no message through either way, and the honest peers count the
    refused handshakes. Real gcnode processes on loopback. */
#include "gc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_fixture.h"

//  The value of "key": in the last line of a metrics file (-1 if absent).
static long long
s_last_value (const char *text, const char *key)
{
    return (long long) ops_line_value (ops_last_line (text), key);
}

//  The last line's "staleness" object, e.g. {"1":1} (malloc'd).
static char *
s_last_staleness (const char *text)
{
    const char *at = strstr (ops_last_line (text), "\"staleness\":{");
    assert_non_null (at);
    return strndup (at + 12, strcspn (at + 12, "}") + 1);
}

static void
test_curve_admits_only_the_right_keys (void **state)
{
    static const struct {
        const char *name;
        const char *intruder;           /* peer 2's extra config; KEY: its wrong key */
        bool        auth;               /* refused by the allowlist (else: by the protocol) */
    } cases [] = {
        { "wrong CURVE key", "node\n    curve = 1\n    curve_key = \"KEY\"\n", true },
        //  whether the server sees the mechanism mismatch or the client
        //  hanging up first is a race: either counts as a failed handshake
        { "CURVE off", "node\n    curve = 0\n", false },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        ops_net_t *net = ops_new ("opscurve", 3);
        char cmd [1024], *out = NULL;
        snprintf (cmd, sizeof cmd, "%s keygen --out %s/keys --name intruder", net->gcnode, net->dir);
        assert_int_equal (gc_test_run (cmd, &out), 0);
        free (out);
        const char *common = "node\n    curve = 1\ngossip\n    wait = \"quorum:1\"\n";
        for (int i = 0; i < 2; i++)
            ops_write_config (net, i, "complete", NULL, common);
        char extra [1024], key [512];
        snprintf (key, sizeof key, "%s/keys/intruder.curve", net->dir);
        const char *t = cases [c].intruder, *k = strstr (t, "KEY");
        if (k)
            snprintf (extra, sizeof extra, "gossip\n    wait = \"quorum:1\"\n%.*s%s%s", (int) (k - t), t, key, k + 3);
        else
            snprintf (extra, sizeof extra, "gossip\n    wait = \"quorum:1\"\n%s", t);
        ops_write_config (net, 2, "complete", NULL, extra);
        for (int i = 0; i < 3; i++)
            ops_start (net, i, NULL, NULL);
        for (int i = 0; i < 3; i++)
            if (ops_wait (net, i, 90) != 0)
                fail_msg ("%s: peer %d failed; see %s/p%d.log", cases [c].name, i, net->dir, i);
        char *metrics [3];
        for (int i = 0; i < 3; i++) {
            char name [32];
            snprintf (name, sizeof name, "p%d.jsonl", i);
            char *path = ops_path (net, name);
            metrics [i] = ops_read (path);
            assert_non_null (metrics [i]);
            free (path);
        }
        //  The honest pair applied each other's updates (deltas_applied): at
        //  least half of the deltas the other one sent while this one ran (a
        //  delta a round, so its rounds that ended before this one's last
        //  line; about 20, fewer when a peer that fell behind on a loaded
        //  machine caught up and skipped rounds), and nothing of peer 2's:
        //  its replica is still the shared initial model (staleness = every
        //  round, or no state at all).
        for (int i = 0; i < 2; i++) {
            char *staleness = s_last_staleness (metrics [i]);
            const char *of_2 = strstr (staleness, "\"2\":");
            long long rounds = s_last_value (metrics [i], "round");
            if (of_2 && atoll (of_2 + 4) < rounds)
                fail_msg ("%s: peer %d staleness %s after %lld rounds", cases [c].name, i, staleness, rounds);
            free (staleness);
            long long applied = s_last_value (metrics [i], "deltas_applied");
            long long auth = s_last_value (metrics [i], "handshake_failed_auth");
            long long others = s_last_value (metrics [i], "handshake_failed_protocol")
                            + s_last_value (metrics [i], "handshake_failed_other");
            long long refused = cases [c].auth ? auth : auth + others;
            int offered = ops_rounds_before (metrics [1 - i], ops_line_value (ops_last_line (metrics [i]), "unix_s"));
            if (applied < 1 || 2 * applied < offered || refused < 1)
                fail_msg ("%s: peer %d applied %lld deltas of the %d peer %d sent meanwhile, "
                          "failed handshakes: auth %lld, other %lld",
                          cases [c].name, i, applied, offered, 1 - i, auth, others);
            if (i == 0)
                printf ("%s: peer 0 applied %lld deltas of the %d peer 1 sent meanwhile; failed handshakes: "
                        "auth %lld, protocol %lld, other %lld\n", cases [c].name, applied, offered, auth,
                        s_last_value (metrics [0], "handshake_failed_protocol"),
                        s_last_value (metrics [0], "handshake_failed_other"));
        }
        //  ...and peer 2 received nothing at all.
        if (s_last_value (metrics [2], "msgs_recv") != 0 || s_last_value (metrics [2], "deltas_applied") != 0)
            fail_msg ("%s: peer 2 got messages through", cases [c].name);
        for (int i = 0; i < 3; i++)
            free (metrics [i]);
        ops_destroy (&net);
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_curve_admits_only_the_right_keys),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
