/*  The timeline against a recording backend: when each event fires (time,
    median round, `after` chains), in which order, what it asks of which
    peer, the fault settings kept for a restart, the median round; polled
    (gcnet) and scheduled (gcsim). */
#include "gc_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gc_timeline.h"

typedef struct {
    char    log [8192];
    int64_t rounds [8];
} s_rec_t;

static void s_log (s_rec_t *r, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void
s_log (s_rec_t *r, const char *fmt, ...)
{
    size_t used = strlen (r->log);
    va_list args;
    va_start (args, fmt);
    vsnprintf (r->log + used, sizeof r->log - used, fmt, args);
    va_end (args);
}

static void
s_kill (void *ctx, uint32_t peer, bool clean)
{
    s_log (ctx, "kill %u%s\n", peer, clean ? " clean" : "");
}

static void
s_freeze (void *ctx, uint32_t peer, bool frozen)
{
    s_log (ctx, "%s %u\n", frozen ? "freeze" : "thaw", peer);
}

static void
s_restart (void *ctx, uint32_t peer, bool resume, const gc_timeline_faults_t *f)
{
    s_log (ctx, "restart %u%s drop=%g slow=%g\n", peer, resume ? " resume" : "", f->fault.drop, f->slow);
}

static void
s_faults (void *ctx, uint32_t peer, unsigned what, const gc_timeline_faults_t *f)
{
    char verb [64] = "";
    if (what & GC_TIMELINE_SLOW)
        snprintf (verb, sizeof verb, "slow %g", f->slow);
    else
        gc_fault_format (&f->fault, what, verb, sizeof verb);
    s_log (ctx, "faults %u %s\n", peer, verb);
}

static void
s_partition (void *ctx, uint32_t peer, const uint32_t *allowed, size_t n)
{
    s_log (ctx, n ? "partition %u:" : "heal %u", peer);
    for (size_t k = 0; k < n; k++)
        s_log (ctx, " %u", allowed [k]);
    s_log (ctx, "\n");
}

static void
s_acted (void *ctx, uint32_t peer)
{
    s_log (ctx, "acted %u\n", peer);
}

static void
s_record (void *ctx, double round, const char *text)
{
    s_log (ctx, "record [%.0f] %s\n", round, text);
}

static int64_t
s_round (void *ctx, uint32_t peer)
{
    return ((s_rec_t *) ctx)->rounds [peer];
}

static void
s_schedule (void *ctx, size_t event, double delay_s)
{
    s_log (ctx, "schedule %zu in %g\n", event, delay_s);
}

//  Peer 3 is Byzantine (its round does not count).
static const char *s_text =
    "scenario\n    peers = 4\n"
    "group\n    bad\n        peers = \"3\"\n        role\n            attack = \"alie\"\n"
    "timeline\n"
    "    crash\n        at = \"round 5\"\n        do = \"kill\"\n        peers = \"1\"\n"
    "    back\n        at = \"after crash 0.5\"\n        do = \"restart resume\"\n        peers = \"1\"\n"
    "    lossy\n        at = \"time 2\"\n        do = \"drop 0.25\"\n        peers = \"0,2\"\n"
    "    sluggish\n        at = \"time 2\"\n        do = \"slow 3\"\n        peers = \"2\"\n"
    "    split\n        at = \"after lossy 1\"\n        do = \"partition 0-1 | 2\"\n"
    "    mend\n        at = \"round 9\"\n        do = \"heal\"\n"
    "    never\n        at = \"time 100\"\n        do = \"term\"\n        peers = \"0\"\n";

static gc_timeline_t *
s_timeline (gc_scenario_t **sc, s_rec_t *rec, bool scheduled)
{
    gc_err_t err = { 0 };
    *sc = gc_scenario_load_str (s_text, "t.zpl", &err);
    if (!*sc)
        fail_msg ("%s", err.msg);
    gc_timeline_ops_t ops = {
        .ctx = rec, .kill = s_kill, .freeze = s_freeze, .restart = s_restart, .faults = s_faults,
        .partition = s_partition, .acted = s_acted, .record = s_record, .round = s_round,
        .schedule = scheduled ? s_schedule : NULL
    };
    rec->rounds [3] = -1;
    gc_timeline_t *tl = gc_timeline_new (*sc, &ops);
    assert_non_null (tl);
    return tl;
}

static void
s_set_rounds (s_rec_t *rec, int64_t a, int64_t b, int64_t c)
{
    rec->rounds [0] = a;
    rec->rounds [1] = b;
    rec->rounds [2] = c;
}

//  gcnet's way: every tick polls.
static void
test_polled (void **state)
{
    s_rec_t rec = { .log = "" };
    gc_scenario_t *sc;
    gc_timeline_t *tl = s_timeline (&sc, &rec, false);
    gc_timeline_start (tl);                     /* nothing to schedule */
    gc_timeline_poll (tl, 0);
    s_set_rounds (&rec, 4, 5, 5);
    gc_timeline_poll (tl, 1);                   /* median 5: crash */
    assert_true (gc_timeline_restart_pending (tl, 1));
    assert_false (gc_timeline_restart_pending (tl, 0));
    gc_timeline_poll (tl, 1.4);                 /* back is due at 1.5 */
    gc_timeline_poll (tl, 1.5);
    assert_false (gc_timeline_restart_pending (tl, 1));
    gc_timeline_poll (tl, 2);                   /* lossy, sluggish; split at 3 */
    gc_timeline_poll (tl, 3);
    s_set_rounds (&rec, 8, 9, 10);
    gc_timeline_poll (tl, 4);                   /* median 9: heal */
    gc_timeline_note (tl, "a note");
    assert_string_equal (rec.log,
        "record [5] crash: kill -> peers 1\n"
        "kill 1\nacted 1\n"
        "record [5] back: restart resume -> peers 1\n"
        "restart 1 resume drop=0 slow=1\nacted 1\n"
        "record [5] lossy: drop 0.25 -> peers 0,2\n"
        "faults 0 drop 0.25\nacted 0\n"
        "faults 2 drop 0.25\nacted 2\n"
        "record [5] sluggish: slow 3 -> peers 2\n"
        "faults 2 slow 3\nacted 2\n"
        "record [5] split: partition 0-1 | 2\n"      /* sides: no acted */
        "partition 0: 0 1\n"
        "partition 1: 0 1\n"
        "partition 2: 2\n"
        "partition 3: 3\n"                      /* the peers in no side are one more */
        "record [9] mend: heal -> peers 0-3\n"
        "heal 0\nacted 0\nheal 1\nacted 1\nheal 2\nacted 2\nheal 3\nacted 3\n"
        "record [9] a note\n");
    const gc_timeline_faults_t *f = gc_timeline_faults (tl, 2);
    assert_true (f->fault.drop == 0.25 && f->slow == 3);
    f = gc_timeline_faults (tl, 1);
    assert_true (f->fault.drop == 0 && f->slow == 1);
    for (size_t e = 0; e < sc->n_events; e++)
        if (gc_timeline_fired (tl, e) != (strcmp (sc->events [e].name, "never") != 0))
            fail_msg ("%s: fired %d", sc->events [e].name, gc_timeline_fired (tl, e));
    gc_timeline_destroy (&tl);
    assert_null (tl);
    gc_scenario_destroy (&sc);
}

//  gcsim's way: timed events and `after` chains go to the driver's queue;
//  polling fires only the round events; an event fires once.
static void
test_scheduled (void **state)
{
    s_rec_t rec = { .log = "" };
    gc_scenario_t *sc;
    gc_timeline_t *tl = s_timeline (&sc, &rec, true);
    gc_timeline_start (tl);
    gc_timeline_poll (tl, 50);                  /* time events are not polled */
    s_set_rounds (&rec, 5, 5, 0);
    gc_timeline_poll (tl, 60);
    gc_timeline_fire (tl, 2, 61);               /* lossy, from the queue */
    gc_timeline_fire (tl, 2, 62);               /* again: nothing */
    assert_string_equal (rec.log,
        "schedule 2 in 2\n"
        "schedule 3 in 2\n"
        "schedule 6 in 100\n"
        "schedule 1 in 0.5\n"                   /* back, after crash */
        "record [5] crash: kill -> peers 1\n"
        "kill 1\nacted 1\n"
        "schedule 4 in 1\n"                     /* split, after lossy */
        "record [5] lossy: drop 0.25 -> peers 0,2\n"
        "faults 0 drop 0.25\nacted 0\n"
        "faults 2 drop 0.25\nacted 2\n");
    gc_timeline_destroy (&tl);
    gc_scenario_destroy (&sc);
}

//  The median of the counted rounds (Byzantine peers: -1).
static void
test_median (void **state)
{
    static const struct { int64_t r [4]; double median; } cases [] = {
        { { -1, -1, -1, -1 }, 0 },
        { { 3, -1, -1, -1 }, 3 },
        { { 1, 2, -1, -1 }, 1 },                /* floor of 1.5 */
        { { 1, 4, -1, -1 }, 2 },
        { { 5, 1, 3, -1 }, 3 },
        { { 0, 7, 0, 7 }, 3 },
        { { 9, 9, 9, 9 }, 9 },
        { { 4000000000, 2, 4000000000, -1 }, 4000000000 },
    };
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load_str ("scenario\n    peers = 4\n", "m.zpl", &err);
    assert_non_null (sc);
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        s_rec_t rec = { .log = "" };
        memcpy (rec.rounds, cases [c].r, sizeof cases [c].r);
        gc_timeline_ops_t ops = { .ctx = &rec, .round = s_round, .record = s_record };
        gc_timeline_t *tl = gc_timeline_new (sc, &ops);
        assert_non_null (tl);
        double m = gc_timeline_median_round (tl);
        if (m != cases [c].median)
            fail_msg ("case %zu: median %g, wanted %g", c, m, cases [c].median);
        gc_timeline_destroy (&tl);
    }
    gc_scenario_destroy (&sc);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_polled),
        cmocka_unit_test (test_scheduled),
        cmocka_unit_test (test_median),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
