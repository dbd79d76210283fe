/*  Rejections in the log: the first of each (peer, reason) at once, then
    one line with a count per interval, flushed when nothing new comes; the
    lines name the reason, the peer and its endpoint, or the claimed id of
    an unattributed sender; a flood of invented ids is one key. Also the
    hook: a real engine's rejection reaches the log. */
#include "gc_test.h"

#include <czmq.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_engine.h"
#include "gc_log.h"
#include "gc_reject_log.h"
#include "gc_wire.h"
#include "gc_wire_reason.h"
#include "net_fixture.h"

#define S_SEC 1000000000LL

//  stderr into a file while the test runs; s_take returns what was written
//  since the last call (malloc'd).
static int s_saved = -1;
static char s_path [512];
static long s_read_at;

static void
s_capture (void)
{
    char *dir = gc_test_tmpdir ("rejectlog");
    snprintf (s_path, sizeof s_path, "%s/stderr", dir);
    free (dir);
    fflush (stderr);
    s_saved = dup (2);
    int fd = open (s_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true (fd >= 0);
    dup2 (fd, 2);
    close (fd);
    s_read_at = 0;
}

static char *
s_take (void)
{
    fflush (stderr);
    FILE *f = fopen (s_path, "r");
    assert_non_null (f);
    fseek (f, 0, SEEK_END);
    long end = ftell (f);
    char *text = calloc (1, (size_t) (end - s_read_at) + 1);
    fseek (f, s_read_at, SEEK_SET);
    size_t got = fread (text, 1, (size_t) (end - s_read_at), f);
    text [got] = 0;
    fclose (f);
    s_read_at = end;
    return text;
}

static void
s_release (void)
{
    fflush (stderr);
    dup2 (s_saved, 2);
    close (s_saved);
}

static int
s_count (const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr (p, needle)); p += strlen (needle))
        n++;
    return n;
}

static void
test_rate_limit_table (void **state)
{
    assert_int_equal (gc_log_setup ("info", "stderr", NULL), 0);
    s_capture ();
    gc_reject_log_enable (60);
    gc_reject_log_set_endpoint (1, "tcp://10.0.0.1:7000");
    static const uint8_t a [8] = { 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8 };
    static const uint8_t b [8] = { 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8 };
    //  a sequence of events and what each must log (NULL: nothing)
    static const struct {
        char           op;          /* n: note, f: flush */
        uint32_t       peer;
        const uint8_t *sender;
        int            reason;
        double         t;           /* seconds */
        const char    *line [3];    /* every one in the output */
    } steps [] = {
        { 'n', 1, NULL, GC_REJECT_BAD_ROUND, 0.0,
          { "rejected a message from peer 1 (tcp://10.0.0.1:7000): bad_round", NULL } },
        { 'n', 1, NULL, GC_REJECT_BAD_ROUND, 1.0, { NULL } },
        { 'n', 1, NULL, GC_REJECT_BAD_ROUND, 30.0, { NULL } },
        { 'f', 0, NULL, 0, 59.0, { NULL } },
        { 'n', 1, NULL, GC_REJECT_BAD_ROUND, 60.0,
          { "rejected 3 more message(s) from peer 1", "bad_round in the last 60 s" } },
        //  another reason of the same peer is another key
        { 'n', 1, a, GC_REJECT_MUTED, 60.5, { "from peer 1 (id a1a2a3a4a5a6a7a8, tcp://10.0.0.1:7000): muted", NULL } },
        //  unattributed: the claimed id, the last one of a flood
        { 'n', UINT32_MAX, a, GC_WIRE_UNKNOWN_SENDER, 61.0,
          { "an unattributed sender (last claimed id a1a2a3a4a5a6a7a8): unknown_sender", NULL } },
        { 'n', UINT32_MAX, b, GC_WIRE_UNKNOWN_SENDER, 62.0, { NULL } },
        { 'n', 2, NULL, GC_REJECT_NOT_NEIGHBOUR, 63.0, { "from peer 2: not_neighbour", NULL } },
        //  nothing new for a minute: the flush tells the counts
        { 'f', 0, NULL, 0, 125.0,
          { "rejected 1 more message(s) from an unattributed sender (last claimed id b1b2b3b4b5b6b7b8)", NULL } },
        { 'f', 0, NULL, 0, 500.0, { NULL } },
    };
    uint64_t lines = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps [0]; i++) {
        int64_t now = (int64_t) (steps [i].t * S_SEC);
        if (steps [i].op == 'n')
            gc_reject_log_note (steps [i].peer, steps [i].sender, steps [i].reason, now);
        else
            gc_reject_log_flush (now);
        char *out = s_take ();
        int expected = 0;
        for (int j = 0; j < 3 && steps [i].line [j]; j++) {
            if (!strstr (out, steps [i].line [j]))
                fail_msg ("step %zu: '%s' not in '%s'", i, steps [i].line [j], out);
            expected = 1;
        }
        //  one line per step at most here; none when none is expected
        lines += (uint64_t) expected;
        if (!expected && *out)
            fail_msg ("step %zu: expected no line, got '%s'", i, out);
        free (out);
    }
    assert_int_equal (gc_reject_log_lines (), lines);

    //  A flood of 100000 invented ids within a minute: one line.
    gc_reject_log_enable (60);
    for (uint32_t i = 0; i < 100000; i++) {
        uint8_t id [8] = { 0 };
        memcpy (id, &i, sizeof i);
        gc_reject_log_note (UINT32_MAX, id, GC_WIRE_BAD_SIGNATURE, 1000 * S_SEC + i);
    }
    char *out = s_take ();
    assert_int_equal (s_count (out, "rejected"), 1);
    free (out);
    //  More keys than slots: memory stays bounded, every first one logged.
    gc_reject_log_enable (60);
    for (uint32_t peer = 0; peer < 1000; peer++)
        gc_reject_log_note (peer, NULL, GC_REJECT_MUTED, 2000 * S_SEC);
    assert_int_equal (gc_reject_log_lines (), 1000);
    out = s_take ();
    free (out);
    //  Off: nothing.
    gc_reject_log_enable (0);
    gc_reject_log_note (1, NULL, GC_REJECT_MUTED, 3000 * S_SEC);
    assert_int_equal (gc_reject_log_lines (), 0);
    out = s_take ();
    assert_string_equal (out, "");
    free (out);
    gc_reject_log_set_endpoint (1, NULL);
    s_release ();
}

//  The hook in the receive path: an engine's rejections reach the log, a
//  second of the same kind within the interval does not.
static void
test_engine_rejections_are_logged (void **state)
{
    assert_int_equal (gc_log_setup ("info", "stderr", NULL), 0);
    s_capture ();
    gc_reject_log_enable (60);
    gc_engine_config_t cfg;
    net_config_defaults (&cfg);
    net_t *net = net_new (3, "ring", &cfg, NULL);
    assert_non_null (net);
    net_round (net);
    //  a header of the wrong size: nothing in it can be believed
    uint8_t junk [GC_WIRE_HEADER_SIZE - 1] = { 0 };
    for (int i = 0; i < 2; i++)
        assert_int_not_equal (net_inject (net, 0, junk, sizeof junk, NULL, 0), GC_DELIVER_OK);
    char *out = s_take ();
    if (s_count (out, "rejected a message from an unattributed sender (last claimed id unreadable)") != 1) {
        s_release ();
        fail_msg ("log: '%s'", out);
    }
    free (out);
    gc_engine_stats_t st;
    gc_engine_stats (net->engines [0], &st);
    assert_int_equal (st.rejected, 2);          /* both counted, one logged */
    net_destroy (&net);
    gc_reject_log_enable (0);
    s_release ();
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_rate_limit_table),
        cmocka_unit_test (test_engine_rejections_are_logged),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
