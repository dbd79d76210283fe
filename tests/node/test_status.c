/*  The status object: what gc_status_render writes, gc_status_parse reads
    back; the file is replaced atomically; hostile or damaged text is refused
    with a message, never overrun. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gc_status.h"

static gc_snapshot_t *
s_example (void)
{
    gc_snapshot_t *s = gc_snapshot_new (3);
    assert_non_null (s);
    s->state = "running";
    s->peer = 7;
    snprintf (s->peer_id, sizeof s->peer_id, "0123456789abcdef");
    snprintf (s->network, sizeof s->network, "we\"ird\\net\n");
    snprintf (s->role, sizeof s->role, "honest");
    snprintf (s->http, sizeof s->http, "127.0.0.1:9100");
    s->pid = 4242;
    s->unix_time = 1764470123.5;
    s->started_unix = 1764470000.25;
    s->rounds_target = 300;
    s->engine.round = 12345678901ULL;
    s->engine.last_loss = 0.25;
    s->engine.bytes_sent = 1ULL << 40;
    s->engine.rejected = 3;
    s->connected = 2;
    s->staleness [0] = 1;
    s->staleness [1] = 4;
    s->staleness [2] = -1;
    return s;
}

static void
test_round_trip (void **state)
{
    gc_snapshot_t *s = s_example ();
    gc_buf_t buf;
    gc_buf_init (&buf);
    assert_int_equal (gc_status_render (s, &buf, NULL), 0);
    gc_status_t st;
    gc_err_t err = { 0 };
    if (gc_status_parse ((const char *) buf.data, buf.len, &st, &err))
        fail_msg ("%s: %.*s", err.msg, (int) buf.len, buf.data);
    assert_string_equal (st.state, "running");
    assert_int_equal (st.peer, 7);
    assert_string_equal (st.peer_id, "0123456789abcdef");
    assert_string_equal (st.network, "we\"ird\\net\n");
    assert_string_equal (st.http, "127.0.0.1:9100");
    assert_int_equal (st.pid, 4242);
    assert_true (fabs (st.time - 1764470123.5) < 1e-3);
    assert_true (st.round == 12345678901ULL);
    assert_int_equal (st.rounds, 300);
    assert_true (st.bytes_sent == 1ULL << 40);
    assert_int_equal (st.neighbours, 3);
    assert_int_equal (st.connected, 2);
    assert_int_equal (st.max_staleness, 4);
    assert_false (st.has_accuracy);                 /* null until evaluated */
    assert_true (fabs (st.loss - 0.25) < 1e-9);

    //  A diverged loss is written as null (JSON has no NaN) and read as NaN.
    s->engine.last_loss = INFINITY;
    s->has_accuracy = true;
    s->accuracy = 0.5;
    gc_buf_reset (&buf);
    assert_int_equal (gc_status_render (s, &buf, NULL), 0);
    assert_non_null (strstr ((const char *) buf.data, "\"loss\":null"));
    assert_int_equal (gc_status_parse ((const char *) buf.data, buf.len, &st, &err), 0);
    assert_true (isnan (st.loss));
    assert_true (st.has_accuracy && st.accuracy == 0.5);
    gc_buf_free (&buf);
    gc_snapshot_destroy (&s);
}

static void
test_write_replaces_atomically (void **state)
{
    char *dir = gc_test_tmpdir ("status");
    char path [512], tmp [600];
    snprintf (path, sizeof path, "%s/peer.status", dir);
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    gc_snapshot_t *s = s_example ();
    gc_err_t err = { 0 };
    for (int round = 1; round <= 3; round++) {
        s->engine.round = (uint64_t) round;
        assert_int_equal (gc_status_write (path, s, &err), 0);
        gc_status_t st;
        assert_int_equal (gc_status_load (path, &st, &err), 0);
        assert_int_equal (st.round, round);
        struct stat sb;
        assert_int_not_equal (stat (tmp, &sb), 0);  /* no temporary left behind */
    }
    //  A directory that does not exist: an error naming the key, no crash.
    snprintf (path, sizeof path, "%s/missing/peer.status", dir);
    assert_int_equal (gc_status_write (path, s, &err), -1);
    assert_non_null (strstr (err.msg, "node/status_file"));
    gc_snapshot_destroy (&s);
    gc_test_rmtree (dir);
    free (dir);
}

static void
test_hostile_text_is_refused (void **state)
{
    static const char *ok_base = "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.5,\"round\":3}";
    static const char *bad [] = {
        "",
        "[]",
        "{",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.5}",                /* no round */
        "{\"v\":2,\"state\":\"running\",\"peer\":0,\"time\":1.5,\"round\":3}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.5,\"round\":3,}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.5,\"round\":3} x",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.5,\"round\":-3}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.5,\"round\":3.5}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":null,\"round\":3}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1e999,\"round\":3}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":01,\"round\":3}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.,\"round\":3}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.5,\"round\":3,\"x\":{}}",
        "{\"v\":1,\"state\":7,\"peer\":0,\"time\":1.5,\"round\":3}",
        "{\"v\":1,\"state\":\"run\nning\",\"peer\":0,\"time\":1.5,\"round\":3}",
        "{\"v\":1,\"state\":\"\\q\",\"peer\":0,\"time\":1.5,\"round\":3}",
        "{\"v\":1,\"state\":\"\\u12\",\"peer\":0,\"time\":1.5,\"round\":3}",
        "{\"v\":1,\"state\":\"running,\"peer\":0,\"time\":1.5,\"round\":3}",
        "{\"v\":1,\"state\":\"running\",\"peer\":0,\"time\":1.5,\"round\":99999999999999999999}",
    };
    gc_status_t st;
    gc_err_t err = { 0 };
    assert_int_equal (gc_status_parse (ok_base, strlen (ok_base), &st, &err), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_err_clear (&err);
        if (gc_status_parse (bad [i], strlen (bad [i]), &st, &err) == 0)
            fail_msg ("accepted: %s", bad [i]);
        assert_true (strlen (err.msg) > 0);
    }
    //  Every prefix of a valid object is refused, and read only within len.
    for (size_t len = 0; len < strlen (ok_base); len++) {
        char *copy = malloc (len ? len : 1);
        memcpy (copy, ok_base, len);
        assert_int_equal (gc_status_parse (copy, len, &st, &err), -1);
        free (copy);
    }
    //  Long strings are cut to the field, unknown keys ignored.
    char big [2048];
    snprintf (big, sizeof big, "{\"v\":1,\"state\":\"%0300d\",\"peer\":0,\"time\":1.5,\"round\":3,"
              "\"future\":\"x\",\"more\":[1]}", 0);
    assert_int_equal (gc_status_parse (big, strlen (big), &st, &err), -1);     /* arrays: not flat */
    snprintf (big, sizeof big, "{\"v\":1,\"state\":\"%0300d\",\"peer\":0,\"time\":1.5,\"round\":3,"
              "\"future\":\"x\"}", 0);
    assert_int_equal (gc_status_parse (big, strlen (big), &st, &err), 0);
    assert_int_equal (strlen (st.state), sizeof st.state - 1);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_round_trip),
        cmocka_unit_test (test_write_replaces_atomically),
        cmocka_unit_test (test_hostile_text_is_refused),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
