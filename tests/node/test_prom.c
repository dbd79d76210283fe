/*  The Prometheus exposition of a snapshot: it follows the text format
    (checked by prom_check and, when installed, by the reference parser of
    python3-prometheus-client), carries the values of the snapshot, escapes
    label values, and leaves out what is unknown. The checker itself is shown
    to refuse broken texts. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_prom.h"
#include "gc_snapshot.h"
#include "gc_wire_reason.h"
#include "prom_check.h"

#ifndef GC_PYTHON
#define GC_PYTHON "python3"
#endif

static gc_snapshot_t *
s_example (void)
{
    gc_snapshot_t *s = gc_snapshot_new (2);
    assert_non_null (s);
    s->state = "running";
    s->peer = 3;
    snprintf (s->peer_id, sizeof s->peer_id, "0f3823bc2476b05a");
    snprintf (s->role, sizeof s->role, "honest");
    snprintf (s->network, sizeof s->network, "lab \"a\"\\b\nc");     /* needs escaping */
    s->started_unix = 1764470000.25;
    s->unix_time = 1764470123.5;
    s->rounds_target = 300;
    s->engine.round = 42;
    s->engine.bytes_sent = 1000;
    s->engine.dense_equiv_bytes = 50000;
    s->engine.msgs_recv = 7;
    s->engine.last_loss = NAN;                  /* a diverged loss stays a valid sample */
    s->engine.rejected = 5;
    s->has_accuracy = true;
    s->accuracy = 0.875;
    s->has_transport = true;
    s->transport.send_dropped = 2;
    s->connected = 1;
    s->neighbours [0] = 2;
    s->neighbours [1] = 4;
    s->staleness [0] = 3;
    s->staleness [1] = -1;
    s->kind [0] = GC_REPLICA_STATE;
    s->lag [0] = 3;
    s->kind [1] = GC_REPLICA_RESYNC;            /* no usable state: NaN, not absent */
    s->engine.round = 42;
    s->rounds_run = 40;                         /* a catch-up skipped two */
    s->transport.sent_bytes = 900;              /* 100 bytes the transport dropped */
    s->sent_bytes [0] = 600;
    s->sent_bytes [1] = 300;
    s->recv_bytes [0] = 700;
    s->proc = (gc_procstat_t) { .valid = true, .rss_bytes = 123456789, .cpu_seconds = 12.5, .open_fds = 17,
                                .max_fds = 1024 };
    //  neighbour 4 sent 4 bad signatures, someone unknown 1 unknown_sender
    for (size_t j = 0; j < s->n_reasons; j++) {
        if (!strcmp (gc_engine_reason_name (s->reasons [j]), "bad_signature"))
            s->rejections [1 * s->n_reasons + j] = 4;
        if (!strcmp (gc_engine_reason_name (s->reasons [j]), "unknown_sender"))
            s->rejections [2 * s->n_reasons + j] = 1;
    }
    s->extra.curve = true;
    s->extra.curve_failed_auth = 9;
    return s;
}

static char *
s_render (const gc_snapshot_t *s)
{
    gc_buf_t buf;
    gc_buf_init (&buf);
    gc_err_t err = { 0 };
    assert_int_equal (gc_prom_render (s, "0.1.0", &buf, &err), 0);
    char *text = strndup ((const char *) buf.data, buf.len);
    gc_buf_free (&buf);
    return text;
}

static void
test_exposition_is_valid_and_carries_the_values (void **state)
{
    gc_snapshot_t *s = s_example ();
    char *text = s_render (s);
    char msg [256];
    if (prom_check (text, msg, sizeof msg))
        fail_msg ("%s\n%s", msg, text);
    const char *self = "peer=\"3\",peer_id=\"0f3823bc2476b05a\"";
    char series [256];
    struct { const char *name, *labels; double want; } cases [] = {
        { "gcnode_rounds_total", "", 40 },
        { "gcnode_round", "", 42 },
        { "gcnode_state", ",state=\"running\"", 1 },
        { "gcnode_state", ",state=\"starting\"", 0 },
        { "gcnode_state", ",state=\"done\"", 0 },
        { "gcnode_state", ",state=\"stopped\"", 0 },
        { "gcnode_bytes_sent_total", "", 900 },
        { "gcnode_bytes_offered_total", "", 1000 },
        { "gcnode_transport_sent_bytes_total", "", 900 },
        { "gcnode_neighbour_bytes_sent_total", ",neighbour=\"2\"", 600 },
        { "gcnode_neighbour_bytes_sent_total", ",neighbour=\"4\"", 300 },
        { "gcnode_neighbour_bytes_received_total", ",neighbour=\"2\"", 700 },
        { "gcnode_neighbour_bytes_received_total", ",neighbour=\"4\"", 0 },
        { "gcnode_neighbour_replica", ",neighbour=\"2\",replica=\"behind\"", 1 },
        { "gcnode_neighbour_replica", ",neighbour=\"2\",replica=\"current\"", 0 },
        { "gcnode_neighbour_replica", ",neighbour=\"4\",replica=\"resync\"", 1 },
        { "gcnode_neighbour_replica", ",neighbour=\"4\",replica=\"never\"", 0 },
        { "process_resident_memory_bytes", "", 123456789 },
        { "process_cpu_seconds_total", "", 12.5 },
        { "process_open_fds", "", 17 },
        { "process_max_fds", "", 1024 },
        { "process_start_time_seconds", "", 1764470000.25 },
        { "gcnode_compression_ratio", "", 50 },
        { "gcnode_messages_received_total", "", 7 },
        { "gcnode_accuracy", "", 0.875 },
        { "gcnode_rejected_total", "", 5 },
        { "gcnode_rejections_total", ",reason=\"bad_signature\",neighbour=\"4\"", 4 },
        { "gcnode_rejections_total", ",reason=\"unknown_sender\",neighbour=\"unknown\"", 1 },
        { "gcnode_staleness_rounds", ",neighbour=\"2\"", 3 },
        { "gcnode_neighbours_connected", "", 1 },
        { "gcnode_transport_send_dropped_total", "", 2 },
        { "gcnode_curve_handshake_failures_total", ",kind=\"auth\"", 9 },
        { "gcnode_last_round_timestamp_seconds", "", 1764470123.5 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        snprintf (series, sizeof series, "%s{%s%s}", cases [i].name, self, cases [i].labels);
        double v = prom_value (text, series);
        if (!(fabs (v - cases [i].want) < 1e-9))
            fail_msg ("%s = %g, want %g", series, v, cases [i].want);
    }
    //  An in-neighbour without a usable state keeps its series, as NaN.
    snprintf (series, sizeof series, "gcnode_staleness_rounds{%s,neighbour=\"4\"} NaN\n", self);
    assert_non_null (strstr (text, series));
    //  Zero rejections: no sample rather than a made-up value.
    snprintf (series, sizeof series, "gcnode_rejections_total{%s,reason=\"bad_signature\",neighbour=\"2\"}", self);
    assert_true (isnan (prom_value (text, series)));
    assert_null (strstr (text, "gcnode_discovery_"));       /* discovery off */
    snprintf (series, sizeof series, "gcnode_loss{%s} NaN\n", self);
    assert_non_null (strstr (text, series));
    assert_non_null (strstr (text, "network=\"lab \\\"a\\\"\\\\b\\nc\""));
    free (text);

    //  Every kind of replica has a staleness: ahead is negative, never
    //  delivered is the own round (the shared initial state is round 0).
    static const struct { uint8_t kind; int64_t lag; const char *value, *replica; } kinds [] = {
        { GC_REPLICA_STATE, -2, "-2", "ahead" },
        { GC_REPLICA_STATE, 0, "0", "current" },
        { GC_REPLICA_NEVER, 42, "42", "never" },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds [0]; i++) {
        s->kind [1] = kinds [i].kind;
        s->lag [1] = kinds [i].lag;
        text = s_render (s);
        if (prom_check (text, msg, sizeof msg))
            fail_msg ("%s\n%s", msg, text);
        snprintf (series, sizeof series, "gcnode_staleness_rounds{%s,neighbour=\"4\"} %s\n", self, kinds [i].value);
        if (!strstr (text, series))
            fail_msg ("no '%s'", series);
        snprintf (series, sizeof series, "gcnode_neighbour_replica{%s,neighbour=\"4\",replica=\"%s\"}", self,
                  kinds [i].replica);
        assert_true (prom_value (text, series) == 1);
        free (text);
    }
    //  Not an in-neighbour: nothing to be stale about.
    s->kind [1] = GC_REPLICA_NOT_IN;
    text = s_render (s);
    snprintf (series, sizeof series, "gcnode_staleness_rounds{%s,neighbour=\"4\"}", self);
    assert_null (strstr (text, series));
    free (text);
    gc_snapshot_destroy (&s);
}

//  The reference parser, when the system has it (python3-prometheus-client).
static void
test_reference_parser_reads_it (void **state)
{
    char *out = NULL;
    if (gc_test_run (GC_PYTHON " -c 'import prometheus_client.parser'", &out) != 0) {
        free (out);
        printf ("python3-prometheus-client not installed: reference parser skipped\n");
        skip ();
    }
    free (out);
    gc_snapshot_t *s = s_example ();
    char *text = s_render (s);
    char *dir = gc_test_tmpdir ("prom");
    char path [512], cmd [1024];
    snprintf (path, sizeof path, "%s/metrics.txt", dir);
    gc_test_write_file (path, text, strlen (text));
    snprintf (cmd, sizeof cmd, GC_PYTHON " -c 'import sys\nfrom prometheus_client.parser import "
              "text_string_to_metric_families as f\nfams = list (f (open (sys.argv [1]).read ()))\n"
              "n = sum (len (x.samples) for x in fams)\nprint (len (fams), n)\n"
              "assert any (x.name == \"gcnode_rejections\" and x.type == \"counter\" for x in fams)' %s", path);
    int rc = gc_test_run (cmd, &out);
    if (rc != 0)
        fail_msg ("reference parser: %s", out);
    int families = 0, samples = 0;
    assert_int_equal (sscanf (out, "%d %d", &families, &samples), 2);
    assert_true (families > 30);
    assert_true (samples > families);
    free (out);
    free (text);
    gc_snapshot_destroy (&s);
    gc_test_rmtree (dir);
    free (dir);
}

//  The checker would notice: each of these is refused.
static void
test_checker_refuses_broken_text (void **state)
{
    static const char *broken [] = {
        "",
        "# HELP a_total x\n# TYPE a_total counter\na_total 1",                 /* no final newline */
        "a 1\n",                                                                /* no HELP/TYPE */
        "# HELP a x\n# TYPE a gauge\na{b=\"1\"} 1\n# HELP c x\n# TYPE c gauge\nc 1\na{b=\"2\"} 1\n",
        "# HELP a x\n# TYPE a gauge\na{b=\"1\",b=\"2\"} 1\n",
        "# HELP a x\n# TYPE a gauge\na{b=1} 1\n",
        "# HELP a x\n# TYPE a gauge\na{b=\"\\x\"} 1\n",
        "# HELP a x\n# TYPE a gauge\na 1\na 2\n",
        "# HELP a x\n# TYPE a gauge\na one\n",
        "# HELP a x\n# TYPE a gauge\na inf\n",
        "# HELP a x\n# TYPE a counter\na 1\n",                                 /* counter without _total */
        "# HELP a_total x\n# TYPE a_total counter\na_total -1\n",
        "# HELP a x\n# TYPE a gauges\na 1\n",
        "# HELP a x\n# TYPE a gauge\n# TYPE a gauge\na 1\n",
        "# HELP 1a x\n# TYPE 1a gauge\n1a 1\n",
        "# HELP a x\n# TYPE a gauge\na 1\n\n",
        "# HELP a x\n# TYPE a gauge\na 1 12x\n",
    };
    char msg [256];
    for (size_t i = 0; i < sizeof broken / sizeof broken [0]; i++)
        if (prom_check (broken [i], msg, sizeof msg) == 0)
            fail_msg ("case %zu accepted:\n%s", i, broken [i]);
    assert_int_equal (prom_check ("# HELP a x\n# TYPE a gauge\na{b=\"1\",} 1 123\n# a comment\n", msg,
                                  sizeof msg), 0);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_exposition_is_valid_and_carries_the_values),
        cmocka_unit_test (test_reference_parser_reads_it),
        cmocka_unit_test (test_checker_refuses_broken_text),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
