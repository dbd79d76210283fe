/*  gcnode status as a monitoring plugin: a table of crafted status objects
    (each a healthy peer with a few keys changed) and the level and finding
    each must give; the window of the last minute; and the process probe on
    a real child process, running, stopped (SIGSTOP) and killed. */
#include "gc_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_status.h"
#include "gc_status_check.h"

#define S_NOW 1764470000.0

//  A peer that is fine: updated 1 s ago, 2 of 2 connected, both delivering,
//  20 rounds in the last minute, all mixed, no rejection.
static const char *s_base =
    "{\"v\":1,\"state\":\"running\",\"peer\":0,\"pid\":0,\"time\":1764469999.0,\"started\":1764469900.0,"
    "\"round\":50,\"rounds\":300,\"neighbours\":2,\"connected\":2,\"in_neighbours\":2,\"no_state\":0,"
    "\"no_state_peers\":\"\",\"window_s\":60.0,\"window_rounds\":20,\"window_rejected\":0,"
    "\"window_mix_skipped\":0";

//  The fake process table: pid -> state letter (0: no such process).
static char
s_probe (long pid)
{
    switch (pid) {
        case 101: return 0;
        case 102: return 'T';
        case 103: return 'Z';
        case 104: return 'S';
        default:  return 'R';
    }
}

static gc_check_level_t
s_judge (const char *extra, char *reason, size_t size)
{
    char text [2048];
    //  a later key overrides an earlier one
    snprintf (text, sizeof text, "%s%s%s}", s_base, *extra ? "," : "", extra);
    gc_status_t st;
    gc_err_t err = { 0 };
    if (gc_status_parse (text, strlen (text), &st, &err))
        fail_msg ("%s: %s", err.msg, text);
    gc_check_limits_t lim = { .max_age = 30, .warn_rejections = 10, .probe = s_probe };
    return gc_status_check (&st, S_NOW, &lim, reason, size);
}

static void
test_findings_table (void **state)
{
    static const struct {
        const char      *extra;
        gc_check_level_t level;
        const char      *finding;       /* in the reason ("" for OK: the reason is empty) */
    } cases [] = {
        { "", GC_CHECK_OK, "" },
        { "\"state\":\"starting\",\"round\":0", GC_CHECK_OK, "" },
        { "\"state\":\"done\"", GC_CHECK_WARNING, "finished" },
        { "\"state\":\"done\",\"pid\":101", GC_CHECK_WARNING, "finished" },      /* exited, as it should */
        { "\"state\":\"stopped\"", GC_CHECK_CRITICAL, "state stopped" },
        //  the process
        { "\"pid\":101", GC_CHECK_CRITICAL, "process 101 is gone" },
        { "\"pid\":102", GC_CHECK_CRITICAL, "process 102 is stopped" },
        { "\"pid\":103", GC_CHECK_CRITICAL, "zombie" },
        { "\"pid\":104", GC_CHECK_OK, "" },
        //  the file's age
        { "\"time\":1764469970.5", GC_CHECK_OK, "" },
        { "\"time\":1764469960.0", GC_CHECK_CRITICAL, "no update for 40.0 s" },
        //  neighbours connected
        { "\"connected\":0", GC_CHECK_CRITICAL, "0 of 2 neighbours connected" },
        { "\"connected\":1", GC_CHECK_WARNING, "1 of 2 neighbours connected" },
        { "\"connected\":-1", GC_CHECK_OK, "" },                                 /* unknown */
        //  neighbours that never deliver
        { "\"no_state\":1,\"no_state_peers\":\"3\"", GC_CHECK_WARNING, "1 of 2 in-neighbours never delivered a usable state (peer(s) 3)" },
        { "\"no_state\":2,\"no_state_peers\":\"1,3\"", GC_CHECK_CRITICAL, "training alone" },
        { "\"no_state\":2,\"started\":1764469990.0", GC_CHECK_OK, "" },           /* just started */
        { "\"no_state\":2,\"round\":1", GC_CHECK_OK, "" },
        //  rejections in the window
        { "\"window_rejected\":10", GC_CHECK_OK, "" },
        { "\"window_rejected\":11", GC_CHECK_WARNING, "11 rejections in the last 60 s" },
        //  mixing
        { "\"window_mix_skipped\":3", GC_CHECK_WARNING, "3 of the last 20 rounds did not mix" },
        { "\"window_mix_skipped\":20", GC_CHECK_CRITICAL, "no mix in the last 20 rounds" },
        { "\"window_rounds\":0,\"window_mix_skipped\":0", GC_CHECK_OK, "" },
        //  several findings: the worst decides, every one is named, worst first
        { "\"connected\":1,\"window_rejected\":50", GC_CHECK_WARNING, "1 of 2 neighbours connected; 50 rejections" },
        { "\"connected\":1,\"pid\":102", GC_CHECK_CRITICAL, "stopped (SIGSTOP or a debugger); 1 of 2" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char reason [1100];
        gc_check_level_t level = s_judge (cases [i].extra, reason, sizeof reason);
        if (level != cases [i].level)
            fail_msg ("{%s}: %s, expected %s (%s)", cases [i].extra, gc_status_check_name (level),
                      gc_status_check_name (cases [i].level), reason);
        if (*cases [i].finding ? !strstr (reason, cases [i].finding) : *reason != 0)
            fail_msg ("{%s}: reason '%s', expected '%s'", cases [i].extra, reason, cases [i].finding);
    }
    //  A status file of an older peer (none of the new keys) is judged on
    //  what it has.
    static const char *old = "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1764469999.0,\"round\":9,"
                             "\"neighbours\":2,\"connected\":2}";
    gc_status_t st;
    assert_int_equal (gc_status_parse (old, strlen (old), &st, NULL), 0);
    gc_check_limits_t lim = { .max_age = 30, .warn_rejections = 10 };
    char reason [1100];
    assert_int_equal (gc_status_check (&st, S_NOW, &lim, reason, sizeof reason), GC_CHECK_OK);
}

//  The window: rounds, rejections and skipped mixes of the last minute.
static void
test_window (void **state)
{
    gc_snapshot_t *s = gc_snapshot_new (0);
    assert_non_null (s);
    gc_status_window_t *w = calloc (1, sizeof *w);
    //  one round every 10 s; a rejection every round; from round 10 on no mix
    for (int r = 1; r <= 20; r++) {
        s->unix_time = 1000.0 + 10.0 * r;
        s->engine.rejected = (uint64_t) r;
        s->engine.mix_skipped = r >= 10 ? (uint64_t) (r - 9) : 0;
        gc_status_window_update (w, s);
        if (r == 1) {
            assert_int_equal (s->window_rounds, 0);
            assert_true (s->window_s == 0);
        }
    }
    assert_true (s->window_s == 60.0);
    assert_int_equal (s->window_rounds, 6);
    assert_int_equal (s->window_rejected, 6);
    assert_int_equal (s->window_mix_skipped, 6);
    //  faster rounds than the ring holds: the window is the ring
    for (int r = 0; r < 3 * GC_STATUS_WINDOW_MAX; r++) {
        s->unix_time = 2000.0 + 0.01 * r;
        s->engine.rejected = 100;
        gc_status_window_update (w, s);
    }
    assert_int_equal (s->window_rounds, GC_STATUS_WINDOW_MAX - 1);
    assert_int_equal (s->window_rejected, 0);
    assert_true (s->window_s < 60.0 && s->window_s > 2.0);
    free (w);
    gc_snapshot_destroy (&s);
}

//  The probe of this machine on a real child: running, stopped, gone.
static void
test_probe_real_process (void **state)
{
    pid_t child = fork ();
    assert_true (child >= 0);
    if (child == 0) {
        for (;;)
            pause ();
    }
    char st = gc_status_check_probe (child);
    assert_true (st == 'S' || st == 'R');
    assert_int_equal (kill (child, SIGSTOP), 0);
    int status;
    assert_int_equal (waitpid (child, &status, WUNTRACED), child);
    assert_true (WIFSTOPPED (status));
    assert_true (gc_status_check_probe (child) == 'T');

    //  the verdict on a status file naming it
    char text [512];
    snprintf (text, sizeof text, "{\"v\":1,\"state\":\"running\",\"peer\":0,\"pid\":%ld,\"time\":%.1f,"
              "\"round\":3}", (long) child, S_NOW);
    gc_status_t s;
    assert_int_equal (gc_status_parse (text, strlen (text), &s, NULL), 0);
    gc_check_limits_t lim = { .max_age = 30, .warn_rejections = 10, .probe = gc_status_check_probe };
    char reason [1100];
    assert_int_equal (gc_status_check (&s, S_NOW, &lim, reason, sizeof reason), GC_CHECK_CRITICAL);
    assert_non_null (strstr (reason, "stopped"));

    assert_int_equal (kill (child, SIGCONT), 0);
    assert_int_equal (waitpid (child, &status, WCONTINUED), child);
    assert_int_equal (gc_status_check (&s, S_NOW, &lim, reason, sizeof reason), GC_CHECK_OK);

    //  killed: a zombie until reaped, then gone
    assert_int_equal (kill (child, SIGKILL), 0);
    assert_int_equal (waitid (P_PID, (id_t) child, NULL, WEXITED | WNOWAIT), 0);
    assert_int_equal (gc_status_check (&s, S_NOW, &lim, reason, sizeof reason), GC_CHECK_CRITICAL);
    assert_non_null (strstr (reason, "zombie"));
    assert_int_equal (waitpid (child, &status, 0), child);
    assert_int_equal (gc_status_check_probe (child), 0);
    assert_int_equal (gc_status_check (&s, S_NOW, &lim, reason, sizeof reason), GC_CHECK_CRITICAL);
    assert_non_null (strstr (reason, "is gone"));
    //  a pid from the file that is no pid_t: cast, it would name our own
    //  process group, which kill () finds alive
    assert_int_equal (gc_status_check_probe ((1L << 32) - (long) getpgrp ()), 0);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_findings_table),
        cmocka_unit_test (test_window),
        cmocka_unit_test (test_probe_real_process),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
