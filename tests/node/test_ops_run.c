/*  A running peer as its operator sees it: the metrics file (every line
    JSON, counters never going down), the Prometheus endpoint (answers,
    parses, counters grow between scrapes), `gcnode status` (exit 0 while
    alive, 2 CRITICAL once stopped by SIGSTOP, killed or ended), systemd notifications against a fake
    NOTIFY_SOCKET, the shipped unit file (systemd-analyze verify), and one
    clear line for misconfigured operational keys. Real gcnode processes on
    loopback. */
#include "gc_test.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "gc_json.h"
#include "gc_status.h"
#include "ops_fixture.h"
#include "prom_check.h"

#ifndef GC_PYTHON
#define GC_PYTHON "python3"
#endif

//  `gcnode ARGS` -> exit code; output (malloc'd) in *out if out.
static int
s_gcnode (const ops_net_t *net, const char *args, char **out)
{
    char cmd [2048], *o = NULL;
    snprintf (cmd, sizeof cmd, "%s %s", net->gcnode, args);
    int rc = gc_test_run (cmd, &o);
    if (out)
        *out = o;
    else
        free (o);
    return rc;
}

//  `gcnode ARGS` until it exits rc with needle in its output (a signal
//  takes effect soon, not at once); fails after timeout_s.
static void
s_gcnode_until (const ops_net_t *net, const char *args, int rc, const char *needle, double timeout_s)
{
    char *out = NULL;
    int got = -1;
    for (double waited = 0; waited <= timeout_s; waited += 0.1) {
        free (out);
        got = s_gcnode (net, args, &out);
        if (got == rc && strstr (out, needle))
            break;
        usleep (100000);
    }
    if (got != rc || !strstr (out, needle))
        fail_msg ("%s: exit %d, expected %d with '%s': %s", args, got, rc, needle, out);
    free (out);
}

//  final_round > 0: the last line must be that round.
static void
s_check_metrics_file (const ops_net_t *net, int i, int min_lines, int final_round)
{
    char cmd [1024], *out = NULL;
    char *script = gc_test_source_path ("tests/node/check_metrics.py");
    char final [32] = "";
    if (final_round > 0)
        snprintf (final, sizeof final, " --final-round %d", final_round);
    snprintf (cmd, sizeof cmd, GC_PYTHON " %s --min-lines %d%s %s/p%d.jsonl", script, min_lines,
              final, net->dir, i);
    if (gc_test_run (cmd, &out) != 0)
        fail_msg ("metrics file of peer %d:\n%s", i, out);
    free (out);
    free (script);
}

#ifdef GC_HAVE_MHD
//  The scrape parses, and the counters of the second did not go down.
static void
s_check_scrapes (const char *first, const char *second, const char *peer_id)
{
    char msg [256];
    if (prom_check (first, msg, sizeof msg) || prom_check (second, msg, sizeof msg))
        fail_msg ("exposition: %s", msg);
    static const char *counters [] = {
        "gcnode_rounds_total", "gcnode_bytes_sent_total", "gcnode_bytes_received_total",
        "gcnode_messages_sent_total", "gcnode_messages_received_total", "gcnode_deltas_applied_total",
        "gcnode_rejected_total", "gcnode_keyframes_sent_total", "gcnode_transport_sent_frames_total",
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters [0]; i++) {
        char series [256];
        snprintf (series, sizeof series, "%s{peer=\"0\",peer_id=\"%s\"}", counters [i], peer_id);
        double a = prom_value (first, series), b = prom_value (second, series);
        if (isnan (a) || isnan (b) || b < a)
            fail_msg ("%s: %g then %g", series, a, b);
    }
    char series [256];
    snprintf (series, sizeof series, "gcnode_rounds_total{peer=\"0\",peer_id=\"%s\"}", peer_id);
    assert_true (prom_value (second, series) > prom_value (first, series));
    snprintf (series, sizeof series, "gcnode_bytes_sent_total{peer=\"0\",peer_id=\"%s\"}", peer_id);
    assert_true (prom_value (second, series) > 0);
}
#endif

static void
test_metrics_endpoint_and_status (void **state)
{
    ops_net_t *net = ops_new ("opsrun", 2);
#ifdef GC_HAVE_MHD
    ops_write_config (net, 0, "ring", NULL, "node\n    metrics_http = \"127.0.0.1:0\"\n");
#else
    ops_write_config (net, 0, "ring", NULL, NULL);
#endif
    ops_write_config (net, 1, "ring", NULL, NULL);
    for (int i = 0; i < 2; i++)
        ops_start (net, i, "--rounds 1000000", NULL);
    if (!ops_wait_round (net, 0, 10, 60))
        fail_msg ("peer 0 made no progress; see %s/p0.log", net->dir);

    //  gcnode status: healthy while running, from the file and the config.
    char args [1024], *out = NULL;
    snprintf (args, sizeof args, "status --file %s/p0.status", net->dir);
    if (s_gcnode (net, args, &out) != 0 || !strstr (out, " running round ") || strncmp (out, "OK: ", 4))
        fail_msg ("%s: %s", args, out);
    free (out);
    snprintf (args, sizeof args, "status --config %s/p1.zpl --json", net->dir);
    if (s_gcnode (net, args, &out) != 0 || !strstr (out, "\"healthy\":true"))
        fail_msg ("%s: %s", args, out);
    free (out);

    gc_status_t st;
    char *status_path = ops_path (net, "p0.status");
    assert_int_equal (gc_status_load (status_path, &st, NULL), 0);
#ifdef GC_HAVE_MHD
    //  Two scrapes some rounds apart; the port is the one the peer picked.
    assert_true (strlen (st.http) > 0);
    char *first = ops_http_get (st.http, "/metrics");
    assert_non_null (first);
    //  Rounds past the one the first scrape shows: the status read before it
    //  may be rounds behind by then (a slow scrape, a catch-up), and a second
    //  scrape of the same round would show no round more.
    char round_series [256];
    snprintf (round_series, sizeof round_series, "gcnode_round{peer=\"0\",peer_id=\"%s\"}", st.peer_id);
    double scraped_round = prom_value (first, round_series);
    if (isnan (scraped_round))
        fail_msg ("no %s in the first scrape", round_series);
    assert_true (ops_wait_round (net, 0, (unsigned long) scraped_round + 5, 60));
    char *second = ops_http_get (st.http, "/metrics");
    assert_non_null (second);
    s_check_scrapes (first, second, st.peer_id);
    assert_null (ops_http_get (st.http, "/nothing-here"));
    char *body = ops_http_get (st.http, "/status");
    gc_status_t over_http;
    assert_non_null (body);
    assert_int_equal (gc_status_parse (body, strlen (body), &over_http, NULL), 0);
    assert_string_equal (over_http.peer_id, st.peer_id);
    free (body);
    snprintf (args, sizeof args, "status --url http://%s", st.http);
    if (s_gcnode (net, args, &out) != 0)
        fail_msg ("%s: %s", args, out);
    free (out);
    printf ("scraped %zu bytes, %s\n", strlen (second), st.http);
    free (first);
    free (second);
#endif

    //  A stopped process (SIGSTOP) still has a fresh file: CRITICAL at once,
    //  OK again once it continues.
    snprintf (args, sizeof args, "status --config %s/p1.zpl", net->dir);
    ops_signal (net, 1, SIGSTOP);
    s_gcnode_until (net, args, 2, "is stopped (SIGSTOP", 5);
    ops_signal (net, 1, SIGCONT);
    s_gcnode_until (net, args, 0, "OK: ", 10);
    //  kill -9: the file still says running, the process is gone.
    ops_signal (net, 1, SIGKILL);
    assert_int_equal (ops_wait (net, 1, 30), 128 + SIGKILL);
    s_gcnode_until (net, args, 2, "is gone (killed or crashed)", 5);
    //  ... and its neighbour, with 0 of 1 connected, says so (ZeroMQ sees
    //  the link drop within a heartbeat or two).
    snprintf (args, sizeof args, "status --file %s/p0.status", net->dir);
    s_gcnode_until (net, args, 2, "0 of 1 neighbours connected", 30);
    gc_status_t before;
    assert_int_equal (gc_status_load (status_path, &before, NULL), 0);
    assert_true (ops_wait_round (net, 0, before.round + 3, 60));

    //  SIGTERM: a clean stop; the status says stopped, CRITICAL.
    ops_signal (net, 0, SIGTERM);
    if (ops_wait (net, 0, 30) != 0)
        fail_msg ("peer 0 did not stop cleanly; see %s/p0.log", net->dir);
    if (s_gcnode (net, args, &out) != 2 || !strstr (out, "state stopped"))
        fail_msg ("%s after SIGTERM: %s", args, out);
    free (out);
    snprintf (args, sizeof args, "status --file %s/nonexistent.status --json", net->dir);
    if (s_gcnode (net, args, &out) != 2 || !strstr (out, "\"healthy\":false") || !strstr (out, "\"level\":\"CRITICAL\""))
        fail_msg ("%s: %s", args, out);
    free (out);
    snprintf (args, sizeof args, "status --file %s/p0.status --max-age nope", net->dir);
    assert_int_equal (s_gcnode (net, args, NULL), 3);                 /* UNKNOWN: bad usage */

    //  One line per round peer 0 ran (check_metrics.py: the round goes up by
    //  one a line, by more only with a catch-up). How many that is depends on
    //  the catch-ups (a peer that fell behind skips rounds), so the count
    //  asserted is what none can take away: a round before the status showed
    //  round 10, one after peer 1 was killed, and the line of the stop.
    s_check_metrics_file (net, 0, 3, 0);
    //  With its only link down, what peer 0 sent went nowhere: bytes_sent
    //  (handed to the socket) stopped, bytes_offered (the engine's) did not.
    char *jsonl = ops_path (net, "p0.jsonl"), *lines = ops_read (jsonl);
    assert_non_null (lines);
    char *last = lines + strlen (lines) - 1;
    while (last > lines && last [-1] != '\n')
        last--;
    gc_json_t *line = gc_json_parse (last, strlen (last), NULL);
    assert_non_null (line);
    double sent = gc_json_num (line, "bytes_sent", -1), offered = gc_json_num (line, "bytes_offered", -1);
    if (!(sent > 0 && offered > sent) || gc_json_num (line, "send_dropped", 0) < 1)
        fail_msg ("bytes_sent %g, bytes_offered %g: %s", sent, offered, last);
    gc_json_destroy (&line);
    free (lines);
    free (jsonl);
    free (status_path);
    ops_destroy (&net);
}

//  A finished run: the last status is "done", the metrics file still passes.
static void
test_finished_run_reports_done (void **state)
{
    ops_net_t *net = ops_new ("opsdone", 2);
    for (int i = 0; i < 2; i++) {
        ops_write_config (net, i, "ring", NULL, NULL);
        ops_start (net, i, NULL, NULL);
    }
    for (int i = 0; i < 2; i++)
        if (ops_wait (net, i, 60) != 0)
            fail_msg ("peer %d failed; see %s/p%d.log", i, net->dir, i);
    char args [1024], *out = NULL;
    snprintf (args, sizeof args, "status --file %s/p1.status", net->dir);
    if (s_gcnode (net, args, &out) != 1 || !strstr (out, "round 20/20") || !strstr (out, "run is finished"))
        fail_msg ("%s: %s", args, out);
    free (out);
    //  One line per completed round, but a peer that came up late (a loaded
    //  machine) catches up on its neighbour's round and skips the rounds in
    //  between (docs/ALGORITHMS.md, round catch-up): so at least two lines,
    //  and the last one is round 20.
    for (int i = 0; i < 2; i++)
        s_check_metrics_file (net, i, 2, 20);
    ops_destroy (&net);
}

//  Whether the net's file NAME holds needle.
static bool
s_file_has (const ops_net_t *net, const char *name, const char *needle)
{
    char *path = ops_path (net, name), *text = ops_read (path);
    bool has = text && strstr (text, needle);
    free (text);
    free (path);
    return has;
}

//  Revoking a peer (docs/OPERATIONS.md, "Revoking a machine"): its public
//  key removed and peers/N/revoked = 1. The peer starts, trusts neither
//  the key nor the connections, sends nothing to it, and status does not
//  count it as a missing neighbour. Without revoked, a removed key is a
//  configuration error that says how to revoke.
static void
test_revoked_peer (void **state)
{
    ops_net_t *net = ops_new ("opsrevoke", 3);
    static const char *revoke = "peers\n    1\n        key = \"/nonexistent/p1.pub\"\n        revoked = 1\n";
    ops_write_config (net, 2, "ring", NULL, "peers\n    1\n        key = \"/nonexistent/p1.pub\"\n");
    char args [1024], *out = NULL;
    snprintf (args, sizeof args, "run --config %s/p2.zpl --log-level error", net->dir);
    int rc = s_gcnode (net, args, &out);
    if (rc != 2 || !strstr (out, "peers/1/key: ") || !strstr (out, "peers/1/revoked = 1 revokes that peer"))
        fail_msg ("a removed key without revoked: exit %d: %s", rc, out);
    free (out);

    for (int i = 0; i < 3; i++) {
        ops_write_config (net, i, "ring", NULL, i == 2 ? revoke : NULL);
        ops_start (net, i, "--rounds 1000000", NULL);
    }
    if (!ops_wait_round (net, 2, 15, 60))
        fail_msg ("peer 2 made no progress; see %s/p2.log", net->dir);
    char *path = ops_path (net, "p2.status");
    gc_status_t st;
    //  peer 1 still connects to 2: with CURVE (the default) its handshake is
    //  refused, its key no longer allowed, so no message of it arrives
    bool refused = false;
    for (int tries = 0; tries < 100 && !refused; tries++) {
        assert_int_equal (gc_status_load (path, &st, NULL), 0);
        refused = st.no_state == 0 && s_file_has (net, "p2.jsonl", "\"handshake_failed_auth\":1");
        if (!refused)
            usleep (100000);
    }
    if (st.revoked != 1 || st.neighbours != 2 || st.in_neighbours != 1 || st.connected != 1 || !refused
    ||  st.no_state != 0 || st.rejected != 0)
        fail_msg ("peer 2: revoked %ld neighbours %ld in %ld connected %ld rejected %llu no_state %ld, "
                  "peer 1's handshake %srefused", st.revoked, st.neighbours, st.in_neighbours, st.connected,
                  (unsigned long long) st.rejected, st.no_state, refused ? "" : "not ");
    snprintf (args, sizeof args, "status --file %s --warn-rejections 1000000", path);
    if (s_gcnode (net, args, &out) != 0)
        fail_msg ("%s: %s", args, out);
    free (out);
    for (int i = 0; i < 3; i++)
        ops_signal (net, i, SIGTERM);
    for (int i = 0; i < 3; i++)
        if (ops_wait (net, i, 30) != 0)
            fail_msg ("peer %d did not stop cleanly; see %s/p%d.log", i, net->dir, i);
    char *log_path = ops_path (net, "p2.log"), *log = ops_read (log_path);
    assert_non_null (log);
    if (!strstr (log, "peer 1 is revoked") || !strstr (log, "CURVE: refused"))
        fail_msg ("p2.log:\n%s", log);
    free (log);
    free (log_path);
    //  its last metrics line: nothing from peer 1 was ever applied, and the
    //  refusals are not held against it (they prove no sender)
    char *jsonl = ops_path (net, "p2.jsonl"), *lines = ops_read (jsonl);
    assert_non_null (lines);
    char *last = lines + strlen (lines) - 1;
    while (last > lines && last [-1] != '\n')
        last--;
    if (!strstr (last, "\"never_delivered\":[1]") || strstr (last, "\"rejections_by_peer\":{\"1\""))
        fail_msg ("p2's last metrics line: %s", last);
    free (lines);
    free (jsonl);
    free (path);
    ops_destroy (&net);
}

//  A neighbour that is not there at start: after the bounded wait the peer
//  says so at error level, naming the neighbour and its endpoint, and runs
//  on (peers start in any order).
static void
test_unreachable_neighbour_is_named (void **state)
{
    ops_net_t *net = ops_new ("opsalone", 2);
    ops_write_config (net, 0, "ring", NULL, NULL);
    ops_start (net, 0, "--rounds 2", NULL);           /* peer 1 never starts */
    if (ops_wait (net, 0, 60) != 0)
        fail_msg ("peer 0 failed; see %s/p0.log", net->dir);
    char *path = ops_path (net, "p0.log"), *log = ops_read (path);
    assert_non_null (log);
    //  The wait is 10 s; the line says how long it took, which a loaded
    //  machine may print as 11 s.
    static const char *head = "0 of 1 neighbours reachable after ";
    char tail [256];
    snprintf (tail, sizeof tail, " s (none of peer 1 at tcp://127.0.0.1:%d)", net->ports [1]);
    const char *at = strstr (log, head), *line = at;
    char *end = NULL;
    double waited = at ? strtod (at + strlen (head), &end) : -1;
    while (line && line > log && line [-1] != '\n')
        line--;
    if (!at || strncmp (line, "E: ", 3) || waited < 10 || waited > 60 || strncmp (end, tail, strlen (tail)))
        fail_msg ("no error line '%s10%s' in p0.log:\n%s", head, tail, log);
    free (log);
    free (path);
    ops_destroy (&net);
}

//  A systemd stand-in: reads the notification socket while the peers run
//  (a full socket queue would block the sender, as it would under systemd).
typedef struct {
    int            fd;
    atomic_int     stop;            /* set by the test's thread, read by the listener */
    char           msgs [4096][128];
    int            n;
} s_listener_t;

static void *
s_listen (void *arg)
{
    s_listener_t *l = arg;
    while (true) {
        struct pollfd pfd = { l->fd, POLLIN, 0 };
        if (poll (&pfd, 1, 50) != 1) {
            if (atomic_load (&l->stop))
                break;
            continue;
        }
        char msg [512];
        ssize_t len = recv (l->fd, msg, sizeof msg - 1, 0);
        if (len <= 0)
            continue;
        msg [len] = 0;
        if (l->n < 4096)
            snprintf (l->msgs [l->n++], sizeof l->msgs [0], "%.127s", msg);
    }
    return NULL;
}

static void
test_systemd_notify (void **state)
{
    ops_net_t *net = ops_new ("opsnotify", 2);
    char *sock_path = ops_path (net, "notify");
    int fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    assert_true (fd >= 0);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    assert_true (strlen (sock_path) < sizeof addr.sun_path);
    strcpy (addr.sun_path, sock_path);
    assert_int_equal (bind (fd, (struct sockaddr *) &addr, sizeof addr), 0);
    char env_socket [256];
    snprintf (env_socket, sizeof env_socket, "NOTIFY_SOCKET=%s", sock_path);
    //  WATCHDOG_USEC=1: a keep-alive after every round.
    const char *env [] = { env_socket, "WATCHDOG_USEC=1", NULL };
    s_listener_t *listener = calloc (1, sizeof *listener);
    assert_non_null (listener);
    listener->fd = fd;
    pthread_t thread;
    assert_int_equal (pthread_create (&thread, NULL, s_listen, listener), 0);
    for (int i = 0; i < 2; i++) {
        ops_write_config (net, i, "ring", NULL, NULL);
        ops_start (net, i, NULL, i == 0 ? env : NULL);
    }
    for (int i = 0; i < 2; i++)
        if (ops_wait (net, i, 60) != 0)
            fail_msg ("peer %d failed; see %s/p%d.log", i, net->dir, i);
    atomic_store (&listener->stop, 1);
    pthread_join (thread, NULL);
#ifdef GC_HAVE_SYSTEMD
    //  READY=1 first, keep-alives, STOPPING=1 last.
    int n = listener->n, ready_at = -1, stopping_at = -1, watchdogs = 0;
    for (int i = 0; i < n; i++) {
        const char *msg = listener->msgs [i];
        if (strstr (msg, "READY=1") && ready_at < 0)
            ready_at = i;
        if (strstr (msg, "STOPPING=1"))
            stopping_at = i;
        if (!strcmp (msg, "WATCHDOG=1"))
            watchdogs++;
    }
    //  A keep-alive with every report the peer wrote (one metrics line each:
    //  a line a round it ran, and the stop's). A peer that fell behind (a
    //  loaded machine, a sanitizer build) skips rounds to catch up, so the
    //  count comes from its file, not from the 20 rounds configured.
    char *jsonl = ops_path (net, "p0.jsonl"), *lines = ops_read (jsonl);
    assert_non_null (lines);
    int reports = 0;
    for (const char *c = lines; *c; c++)
        reports += *c == '\n';
    free (lines);
    free (jsonl);
    if (ready_at != 0 || stopping_at != n - 1 || reports < 1 || watchdogs < reports)
        fail_msg ("%d messages: READY=1 at %d, STOPPING=1 at %d, %d keep-alives for %d reports", n,
                  ready_at, stopping_at, watchdogs, reports);
#else
    char *log_path = ops_path (net, "p0.log");
    char *log = ops_read (log_path);
    assert_non_null (strstr (log, "built without libsystemd"));
    free (log);
    free (log_path);
    assert_int_equal (listener->n, 0);                     /* nothing sent */
#endif
    free (listener);
    close (fd);
    free (sock_path);
    ops_destroy (&net);
}

//  Operational keys that cannot work stop the peer with one line naming
//  the key (exit 2), before it binds anything.
static void
test_bad_operational_keys (void **state)
{
    ops_net_t *net = ops_new ("opsbad", 2);
    char key [512];
    snprintf (key, sizeof key, "%s/keys/p0.curve", net->dir);
    struct {
        const char *extra, *needle;
        bool chmod_secret;
    } cases [] = {
#ifdef GC_HAVE_MHD
        { "node\n    metrics_http = \"127.0.0.1\"\n", "node/metrics_http: '127.0.0.1': expected HOST:PORT", false },
        { "node\n    metrics_http = \"127.0.0.1:70000\"\n", "PORT 0..65535", false },
#else
        { "node\n    metrics_http = \"127.0.0.1:9100\"\n", "built without libmicrohttpd", false },
#endif
        { "node\n    curve = 1\n    curve_key = \"/nonexistent.curve\"\n", "node/curve_key: /nonexistent.curve", false },
        { "node\n    curve = 1\n", "accessible by group or others", true },
        { "node\n    curve = 1\npeers\n    1\n        curve_key = \"KEYS/p1.pub\"\n", "peers/1/curve_key:", false },
        { "node\n    curve = 1\npeers\n    1\n        curve_key = \"KEYS/p1.curve.pub\"\n"
          "node\n    curve_key = \"KEYS/p1.curve.pub\"\n", "no valid curve/secret-key", false },
        { "peers\n    1\n        endpoint = \"discover\"\n", "needs discovery/enabled = 1", false },
        { "discovery\n    enabled = 1\npeers\n    0\n        endpoint = \"discover\"\n", "set node/bind", false },
        { "discovery\n    port = 0\n", "discovery/port", false },
        //  ZeroMQ would retry a name that does not resolve forever, silently
        { "peers\n    1\n        endpoint = \"tcp://no-such-host.invalid:7000\"\n",
          "peers/1/endpoint tcp://no-such-host.invalid:7000: cannot resolve host 'no-such-host.invalid'", false },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        //  KEYS stands for the key directory
        char extra [1024] = "";
        const char *p = cases [c].extra;
        while (*p) {
            if (!strncmp (p, "KEYS", 4)) {
                snprintf (extra + strlen (extra), sizeof extra - strlen (extra), "%s/keys", net->dir);
                p += 4;
            }
            else {
                size_t l = strlen (extra);
                extra [l] = *p++;
                extra [l + 1] = 0;
            }
        }
        ops_write_config (net, 0, "ring", NULL, extra);
        assert_int_equal (chmod (key, cases [c].chmod_secret ? 0644 : 0600), 0);
        char args [1024], *out = NULL;
        snprintf (args, sizeof args, "run --config %s/p0.zpl --log-level error", net->dir);
        int rc = s_gcnode (net, args, &out);
        if (rc != 2 || !strstr (out, cases [c].needle) || strchr (out, '\n') != strrchr (out, '\n'))
            fail_msg ("case %zu: exit %d, wanted 2 and one line with '%s':\n%s", c, rc, cases [c].needle, out);
        free (out);
    }
    ops_destroy (&net);
}

//  The unit file cmake generates passes systemd's own checker; the
//  sysusers.d and tmpfiles.d files make the user and directories.
static void
test_unit_file_verifies (void **state)
{
    char *out = NULL;
    if (gc_test_run ("systemd-analyze --version", &out) != 0) {
        free (out);
        printf ("systemd-analyze not available: unit check skipped\n");
        skip ();
    }
    free (out);
    char *unit = gc_test_build_path ("gcnode.service");
    char *text = ops_read (unit);
    assert_non_null (text);
#ifdef GC_HAVE_SYSTEMD
    assert_non_null (strstr (text, "\nType=notify\n"));
    assert_non_null (strstr (text, "\nWatchdogSec="));
#else
    assert_non_null (strstr (text, "\nType=simple\n"));
    assert_null (strstr (text, "WatchdogSec"));
#endif
    //  a configuration error (exit 2) fails again on every restart
    assert_non_null (strstr (text, "\nRestart=on-failure\n"));
    assert_non_null (strstr (text, "\nRestartPreventExitStatus=2\n"));
    //  verify needs ExecStart to exist: point it at the binary just built.
    char *dir = gc_test_tmpdir ("unit");
    char *relative = gc_test_build_path ("gcnode");
    char *gcnode = realpath (relative, NULL);
    assert_non_null (gcnode);
    free (relative);
    char path [512], cmd [2048];
    snprintf (path, sizeof path, "%s/gcnode.service", dir);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    const char *exec = strstr (text, "ExecStart=");
    assert_non_null (exec);
    const char *space = strchr (exec, ' ');
    fprintf (f, "%.*sExecStart=%s%s", (int) (exec - text), text, gcnode, space);
    fclose (f);
    snprintf (cmd, sizeof cmd, "systemd-analyze verify %s", path);
    int rc = gc_test_run (cmd, &out);
    if (rc != 0 || strlen (out) > 0)
        fail_msg ("%s: exit %d\n%s", cmd, rc, out);
    free (out);

    //  The system user and the directories, made in a scratch root.
    char *src = gc_test_source_path ("configs");
    snprintf (cmd, sizeof cmd, "mkdir -p %s/root/etc %s/root/usr/lib/sysusers.d %s/root/usr/lib/tmpfiles.d && "
              "cp %s/gcnode.sysusers %s/root/usr/lib/sysusers.d/gcnode.conf && "
              "cp %s/gcnode.tmpfiles %s/root/usr/lib/tmpfiles.d/gcnode.conf && "
              "systemd-sysusers --root=%s/root && systemd-tmpfiles --create --root=%s/root && "
              "grep '^gcnode:x:[0-9]*:[0-9]*:[^:]*:/var/lib/gcnode:' %s/root/etc/passwd && "
              "stat -c %%a %s/root/etc/gcnode/keys %s/root/var/lib/gcnode",
              dir, dir, dir, src, dir, src, dir, dir, dir, dir, dir, dir);
    if (gc_test_run ("systemd-sysusers --version && systemd-tmpfiles --version", &out) == 0) {
        free (out);
        rc = gc_test_run (cmd, &out);
        if (rc != 0 || !strstr (out, "750\n750\n"))
            fail_msg ("sysusers/tmpfiles: exit %d\n%s", rc, out);
    }
    free (out);
    free (src);
    free (gcnode);
    free (text);
    free (unit);
    gc_test_rmtree (dir);
    free (dir);
}

int
main (void)
{
    signal (SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_metrics_endpoint_and_status),
        cmocka_unit_test (test_revoked_peer),
        cmocka_unit_test (test_unreachable_neighbour_is_named),
        cmocka_unit_test (test_finished_run_reports_done),
        cmocka_unit_test (test_systemd_notify),
        cmocka_unit_test (test_bad_operational_keys),
        cmocka_unit_test (test_unit_file_verifies),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
