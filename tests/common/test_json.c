/*  The JSON reader gcnet uses on metrics lines and control replies: valid
    documents parse to the right tree, anything else is refused with a
    reason; and the writer every JSON producer shares. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_json.h"

static void
test_valid (void **state)
{
    (void) state;
    const char *text = " {\"a\": 1.5e2, \"b\": [true, false, null, -0.25], \"s\": \"x\\\"y\\\\z\\n\\u00e9\\ud83d\\ude00\","
                       " \"o\": {\"k\": {}}, \"e\": [], \"n\": -7} ";
    gc_err_t err = { 0 };
    gc_json_t *j = gc_json_parse (text, strlen (text), &err);
    if (!j)
        fail_msg ("%s", err.msg);
    assert_int_equal (j->type, GC_JSON_OBJECT);
    assert_true (gc_json_num (j, "a", 0) == 150);
    assert_true (gc_json_num (j, "n", 0) == -7);
    assert_true (gc_json_num (j, "missing", 42) == 42);
    assert_true (gc_json_num (j, "s", 42) == 42);           /* not a number */
    assert_string_equal (gc_json_str (j, "s", ""), "x\"y\\z\n\xc3\xa9\xf0\x9f\x98\x80");
    const gc_json_t *b = gc_json_get (j, "b");
    assert_int_equal (b->type, GC_JSON_ARRAY);
    assert_true (b->child->type == GC_JSON_BOOL && b->child->number == 1);
    assert_int_equal (b->child->next->next->type, GC_JSON_NULL);
    assert_true (b->child->next->next->next->number == -0.25);
    assert_int_equal (gc_json_get (gc_json_get (j, "o"), "k")->type, GC_JSON_OBJECT);
    assert_null (gc_json_get (j, "e")->child);
    gc_json_destroy (&j);
    assert_null (j);
}

static void
test_invalid (void **state)
{
    (void) state;
    static const char *bad [] = {
        "", "   ", "{", "}", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{a:1}", "\"unterminated",
        "\"bad \\q escape\"", "\"\\u12\"", "\"\\u12G4\"", "01x", "1.", "1e", "-", "+1", ".5", "nul", "tru",
        "NaN", "Infinity", "0x10", "{\"a\":1} x", "[1]]", "\"ctl \x01 char\"", "\"\\",
        "01", "-01", "00.5",                    /* JSON has no leading zeros */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_err_t err = { 0 };
        gc_json_t *j = gc_json_parse (bad [i], strlen (bad [i]), &err);
        if (j || strncmp (err.msg, "json: ", 6))
            fail_msg ("'%s' was accepted or had no reason ('%s')", bad [i], err.msg);
    }
    //  nesting is bounded
    char deep [200];
    memset (deep, '[', sizeof deep);
    gc_err_t err = { 0 };
    assert_null (gc_json_parse (deep, sizeof deep, &err));
    assert_non_null (strstr (err.msg, "nested too deep"));
    //  the length is respected: no read past len
    assert_null (gc_json_parse ("[1,2]", 4, &err));
    gc_json_t *j = gc_json_parse ("[1,2] trailing", 5, &err);
    assert_non_null (j);
    gc_json_destroy (&j);
}

//  A metrics line as node/gc_metrics.c writes it.
static void
test_metrics_line (void **state)
{
    (void) state;
    const char *line = "{\"t\":4.152,\"peer\":0,\"id\":\"a386cc0e2b74c715\",\"role\":\"honest\",\"round\":60,"
                       "\"loss\":0.0415054,\"accuracy\":0.977400,\"bytes_sent\":912170,"
                       "\"time\":{\"train\":0.160},\"staleness\":{\"1\":1,\"3\":1},"
                       "\"rejections_by_peer\":{\"3\":{\"bad_signature\":2}},\"rejections_unattributed\":{}}";
    gc_json_t *j = gc_json_parse (line, strlen (line), NULL);
    assert_non_null (j);
    assert_true (gc_json_num (j, "round", 0) == 60);
    assert_true (fabs (gc_json_num (j, "accuracy", 0) - 0.9774) < 1e-12);
    assert_true (gc_json_num (gc_json_get (gc_json_get (j, "rejections_by_peer"), "3"), "bad_signature", 0) == 2);
    gc_json_destroy (&j);
}

static void
test_write (void **state)
{
    (void) state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    gc_json_write_string (f, "a\"b\\c\n\x01");
    fputc (' ', f);
    gc_json_write_number (f, NAN);
    fputc (' ', f);
    gc_json_write_number (f, 0.5);
    fclose (f);
    assert_string_equal (buf, "\"a\\\"b\\\\c\\n\\u0001\" null 0.5");
    //  what we write, we read back
    gc_json_t *j = gc_json_parse (buf, strcspn (buf, " "), NULL);
    assert_non_null (j);
    assert_string_equal (j->string, "a\"b\\c\n\x01");
    gc_json_destroy (&j);
    free (buf);
}

//  The buffer writer and the stream writer escape by the same rule, and
//  every string reads back as itself.
static void
test_write_buf_matches_stream (void **state)
{
    static const struct { const char *in, *out; } cases [] = {
        { "", "\"\"" },
        { "plain", "\"plain\"" },
        { "q\"b\\", "\"q\\\"b\\\\\"" },
        { "\n\t\r\x1f", "\"\\n\\t\\u000d\\u001f\"" },
        { "\xc3\xa9 /", "\"\xc3\xa9 /\"" },            /* UTF-8 and '/' as they are */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream (&text, &len);
        gc_json_write_string (f, cases [i].in);
        fclose (f);
        gc_buf_t b;
        gc_buf_init (&b);
        assert_int_equal (gc_json_buf_string (&b, cases [i].in, NULL), 0);
        if (strcmp (text, cases [i].out) || b.len != len || memcmp (b.data, text, len))
            fail_msg ("case %zu: stream '%s', buffer '%.*s', wanted '%s'", i, text, (int) b.len,
                      (const char *) b.data, cases [i].out);
        gc_json_t *j = gc_json_parse (text, len, NULL);
        assert_non_null (j);
        assert_string_equal (j->string, cases [i].in);
        gc_json_destroy (&j);
        gc_buf_free (&b);
        free (text);
    }
}

static void
test_write_double (void **state)
{
    static const struct { double v; const char *fmt, *out; } cases [] = {
        { 0.25, "%.3f", "0.250" }, { NAN, "%.3f", "null" }, { INFINITY, "%.6g", "null" },
        { -INFINITY, "%.6g", "null" }, { 1e-7, "%.6g", "1e-07" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream (&text, &len);
        gc_json_write_double (f, cases [i].fmt, cases [i].v);
        fclose (f);
        assert_string_equal (text, cases [i].out);
        free (text);
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_valid),
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_metrics_line),
        cmocka_unit_test (test_write),
        cmocka_unit_test (test_write_buf_matches_stream),
        cmocka_unit_test (test_write_double),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
