/*  LAN discovery between real peers. Loopback cannot broadcast, so the test
    moves itself into a fresh network namespace with a veth pair (needs root
    or CAP_NET_ADMIN + CAP_SYS_ADMIN; skipped otherwise, saying why): two
    peers whose endpoints are "discover" find each other by beacon and
    train; a beacon from a key outside the trust store is counted and never
    used, so a peer that only hears such beacons gives up with exit 1. */
#include "gc_test.h"

#include <czmq.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_key.h"
#include "ops_fixture.h"

#define S_IFACE "gcv0"
#define S_UDP   17099

static bool s_have_netns;
static char s_why [256];

//  Before any thread exists: unshare affects the calling thread, and every
//  child the test forks inherits it.
static void
s_enter_netns (void)
{
    if (unshare (CLONE_NEWNET) != 0) {
        snprintf (s_why, sizeof s_why, "unshare(CLONE_NEWNET): %s (needs root)", strerror (errno));
        return;
    }
    char *out = NULL;
    int rc = gc_test_run ("ip link set lo up && ip link add " S_IFACE " type veth peer name gcv1 && "
                          "ip addr add 10.77.0.1/24 dev " S_IFACE " && ip addr add 10.77.0.2/24 dev gcv1 && "
                          "ip link set " S_IFACE " up && ip link set gcv1 up", &out);
    if (rc != 0)
        snprintf (s_why, sizeof s_why, "cannot make a veth pair: %.200s", out);
    else
        s_have_netns = true;
    free (out);
}

//  Beacons from this test process, as an untrusted stranger would send them.
static zactor_t *
s_beacon (const char *text)
{
    zsys_set_interface (S_IFACE);
    zactor_t *b = zactor_new (zbeacon, NULL);
    assert_non_null (b);
    assert_int_equal (zsock_send (b, "si", "CONFIGURE", S_UDP), 0);
    char *host = zstr_recv (b);
    assert_non_null (host);
    assert_string_equal (host, "10.77.0.1");
    zstr_free (&host);
    assert_int_equal (zsock_send (b, "sbi", "PUBLISH", text, strlen (text), 100), 0);
    return b;
}

static char *
s_stranger_beacon (ops_net_t *net)
{
    char cmd [1024], *out = NULL;
    snprintf (cmd, sizeof cmd, "%s keygen --out %s/keys --name stranger", net->gcnode, net->dir);
    assert_int_equal (gc_test_run (cmd, &out), 0);
    char *id = strstr (out, "peer_id=");
    assert_non_null (id);
    char *beacon = malloc (128);
    snprintf (beacon, 128, "gcnode/1 %.16s tcp://*:5", id + 8);
    free (out);
    return beacon;
}

static char *
s_discovery_config (ops_net_t *net, int i, int wait_s)
{
    char *extra = malloc (1024);
    snprintf (extra, 1024, "node\n    bind = \"tcp://*:%d\"\ndiscovery\n    enabled = 1\n    port = %d\n"
              "    interface = \"" S_IFACE "\"\n    interval_ms = 100\n    wait_s = %d\n",
              net->ports [i], S_UDP, wait_s);
    return extra;
}

static void
test_peers_find_each_other (void **state)
{
    if (!s_have_netns) {
        printf ("skipped: %s\n", s_why);
        skip ();
    }
    ops_net_t *net = ops_new ("opsdisc", 2);
    char *stranger = s_stranger_beacon (net);
    zactor_t *noise = s_beacon (stranger);
    zactor_t *garbage = s_beacon ("gcnode/1 not-a-beacon");
    const char *endpoints [2] = { "discover", "discover" };
    for (int i = 0; i < 2; i++) {
        char *extra = s_discovery_config (net, i, 30);
        ops_write_config (net, i, "ring", endpoints, extra);
        free (extra);
    }
    //  Peer 0 first: it has to wait for peer 1's beacons.
    ops_start (net, 0, NULL, NULL);
    zclock_sleep (1000);
    ops_start (net, 1, NULL, NULL);
    for (int i = 0; i < 2; i++)
        if (ops_wait (net, i, 90) != 0)
            fail_msg ("peer %d failed; see %s/p%d.log", i, net->dir, i);
    for (int i = 0; i < 2; i++) {
        char name [32], needle [128];
        snprintf (name, sizeof name, "p%d.log", i);
        char *path = ops_path (net, name);
        char *log = ops_read (path);
        snprintf (needle, sizeof needle, "discovery: peer %d is at tcp://10.77.0.1:%d", 1 - i, net->ports [1 - i]);
        if (!log || !strstr (log, needle))
            fail_msg ("peer %d log lacks '%s':\n%s", i, needle, log ? log : "(none)");
        free (log);
        free (path);
        snprintf (name, sizeof name, "p%d.jsonl", i);
        path = ops_path (net, name);
        char *metrics = ops_read (path);
        assert_non_null (metrics);
        const char *last = ops_last_line (metrics);
        assert_non_null (strstr (last, "\"peers_wanted\":1,\"peers_found\":1"));
        //  It applied at least half of the deltas the other peer sent while
        //  it ran (a delta a round: about 20, fewer when a peer that fell
        //  behind on a loaded machine caught up and skipped rounds).
        snprintf (name, sizeof name, "p%d.jsonl", 1 - i);
        char *other_path = ops_path (net, name), *other = ops_read (other_path);
        assert_non_null (other);
        int offered = ops_rounds_before (other, ops_line_value (last, "unix_s"));
        double applied = ops_line_value (last, "deltas_applied");
        if (applied < 1 || 2 * applied < offered)
            fail_msg ("peer %d applied %.0f deltas of the %d peer %d sent meanwhile", i, applied, offered, 1 - i);
        free (other);
        free (other_path);
        if (i == 0) {
            //  Peer 0 listened for a second before peer 1 came: it heard the
            //  stranger and the garbage, and counted them.
            const char *u = strstr (last, "\"beacons_untrusted\":"), *m = strstr (last, "\"beacons_malformed\":");
            assert_true (u && atoi (u + 20) > 0);
            assert_true (m && atoi (m + 20) > 0);
        }
        free (metrics);
        free (path);
    }
    zactor_destroy (&noise);
    zactor_destroy (&garbage);
    free (stranger);
    ops_destroy (&net);
}

static void
test_untrusted_beacon_is_not_used (void **state)
{
    if (!s_have_netns) {
        printf ("skipped: %s\n", s_why);
        skip ();
    }
    ops_net_t *net = ops_new ("opsdisc", 2);
    char *stranger = s_stranger_beacon (net);
    zactor_t *noise = s_beacon (stranger);
    const char *endpoints [2] = { "discover", "discover" };
    char *extra = s_discovery_config (net, 0, 2);
    ops_write_config (net, 0, "ring", endpoints, extra);
    free (extra);
    //  Only the stranger announces itself: peer 0 must give up.
    ops_start (net, 0, NULL, NULL);
    int rc = ops_wait (net, 0, 30);
    char *path = ops_path (net, "p0.log");
    char *log = ops_read (path);
    char needle [128];
    snprintf (needle, sizeof needle, "untrusted, last %.16s from 10.77.0.1", stranger + 9);
    if (rc != 1 || !log || !strstr (log, "peer(s) 1 not found within discovery/wait_s = 2 s")
    ||  !strstr (log, needle))
        fail_msg ("exit %d, log:\n%s", rc, log ? log : "(none)");
    free (log);
    free (path);
    zactor_destroy (&noise);
    free (stranger);
    ops_destroy (&net);
}

int
main (void)
{
    s_enter_netns ();
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_peers_find_each_other),
        cmocka_unit_test (test_untrusted_beacon_is_not_used),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
