/*  Reading a peer's metrics file while it grows: partial lines, garbage,
    and totals that survive a restart of the peer. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_peerstat.h"

static void
s_append (const char *path, const char *text)
{
    FILE *f = fopen (path, "a");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

static void
test_tail_and_restart (void **state)
{
    (void) state;
    char *dir = gc_test_tmpdir ("peerstat");
    char path [512];
    snprintf (path, sizeof path, "%s/peer.jsonl", dir);
    gc_peerstat_t *st = gc_peerstat_new (path);
    assert_int_equal (gc_peerstat_poll (st), 0);        /* no file yet */
    assert_true (isnan (st->accuracy));
    s_append (path, "{\"t\":1.0,\"id\":\"abc\",\"round\":1,\"bytes_sent\":100,\"bytes_recv\":50,"
                    "\"staleness\":{\"2\":0,\"7\":1},\"rejections_by_peer\":{\"2\":{\"bad_signature\":3}},"
                    "\"rejections_unattributed\":{\"unknown_sender\":1}}\n"
                    "{\"t\":2.0,\"round\":2,\"accuracy\":0.5,\"bytes_sent\":200,\"bytes_recv\":90,"
                    "\"rejections_by_peer\":{\"2\":{\"bad_signature\":4},\"7\":{\"bad_signature\":1}}}\n"
                    "{\"t\":3.0,\"round\":3,\"bytes_se");             /* half a line */
    assert_int_equal (gc_peerstat_poll (st), 2);
    assert_string_equal (st->id, "abc");
    assert_int_equal (st->round, 2);
    assert_true (st->accuracy == 0.5 && st->accuracy_round == 2);
    assert_int_equal (gc_peerstat_rejections (st, "bad_signature"), 5);     /* recounted, not added */
    assert_int_equal (gc_peerstat_rejections (st, "unknown_sender"), 0);
    assert_int_equal (gc_peerstat_staleness (st, 7), -1);                  /* not in the last line */
    s_append (path, "nt\":300,\"bytes_recv\":100,\"staleness\":{\"7\":4}}\nnot json\n");
    assert_int_equal (gc_peerstat_poll (st), 1);
    assert_int_equal (st->round, 3);
    assert_int_equal (st->bad_lines, 1);
    assert_int_equal (gc_peerstat_staleness (st, 7), 4);
    assert_int_equal (gc_peerstat_bytes_sent (st), 300);
    //  the peer restarts: counters start again, totals keep the old ones
    s_append (path, "{\"t\":0.5,\"round\":1");                      /* killed mid-line */
    gc_peerstat_poll (st);
    gc_peerstat_restart (st, 10.0);
    s_append (path, "{\"t\":0.5,\"round\":40,\"accuracy\":0.75,\"bytes_sent\":20,\"bytes_recv\":5,"
                    "\"rejections_unattributed\":{\"bad_signature\":2}}\n");
    assert_int_equal (gc_peerstat_poll (st), 1);
    assert_int_equal (st->bad_lines, 2);
    assert_int_equal (gc_peerstat_bytes_sent (st), 320);
    assert_int_equal (gc_peerstat_bytes_recv (st), 105);
    assert_int_equal (gc_peerstat_rejections (st, "bad_signature"), 7);
    assert_int_equal (gc_peerstat_rejections_total (st), 7);
    //  the series: one point per evaluated line, wall time from the spawn
    assert_int_equal (st->n_series, 2);
    assert_true (st->series [0].round == 2 && st->series [0].wall_s == 2.0);
    assert_true (st->series [1].round == 40 && st->series [1].wall_s == 10.5);
    assert_true (st->series [1].bytes_sent == 320);
    //  rounds done again after a restart: the newest process went on (0), then
    //  one resumed from a checkpoint 9 rounds back, then one started over
    assert_int_equal (st->rounds_redone, 0);
    static const struct { const char *line; uint64_t redone; } restarts [] = {
        { "{\"t\":1,\"round\":31}\n", 9 },             /* 40 -> 31 */
        { "{\"t\":1,\"round\":35}\n", 9 },             /* 31 -> 35: still 9, the most */
        { "{\"t\":1,\"round\":1}\n", 34 },             /* 35 -> 1: started over */
    };
    for (size_t i = 0; i < sizeof restarts / sizeof restarts [0]; i++) {
        gc_peerstat_restart (st, 20.0 + (double) i);
        assert_int_equal (st->rounds_redone, i ? restarts [i - 1].redone : 0);
        s_append (path, restarts [i].line);
        assert_int_equal (gc_peerstat_poll (st), 1);
        assert_int_equal (st->rounds_redone, restarts [i].redone);
    }
    gc_peerstat_destroy (&st);
    assert_null (st);
    gc_test_rmtree (dir);
    free (dir);
}

//  Hostile lines: wrong types and absurd numbers are ignored, not trusted.
static void
test_hostile_lines (void **state)
{
    (void) state;
    gc_peerstat_t *st = gc_peerstat_new ("/nonexistent/x");
    static const char *lines [] = {
        "{\"round\":\"seven\",\"bytes_sent\":-5,\"accuracy\":\"high\"}",
        "{\"round\":1e300,\"bytes_sent\":1e300,\"staleness\":{\"x\":1,\"99999999999\":2,\"3\":\"y\"}}",
        "{\"round\":2,\"rejections_by_peer\":{\"1\":{\"a_reason_name_that_is_far_too_long_to_keep_around\":3}}}",
        "[1,2,3]", "{}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines [0]; i++)
        gc_peerstat_feed (st, lines [i], strlen (lines [i]));
    assert_int_equal (st->lines, 3);
    assert_int_equal (st->bad_lines, 2);
    assert_int_equal (st->round, 2);
    assert_int_equal (gc_peerstat_bytes_sent (st), 0);
    assert_true (isnan (st->accuracy));
    assert_int_equal (gc_peerstat_rejections_total (st), 0);
    gc_peerstat_destroy (&st);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_tail_and_restart),
        cmocka_unit_test (test_hostile_lines),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
