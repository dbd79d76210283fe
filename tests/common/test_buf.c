/*  gc_buf: growth, append, extend, printf, reset, overflow refusal. */
#include "gc_test.h"

#include <stdint.h>
#include <string.h>

#include "gc_buf.h"

static void
test_buf_grows_and_keeps_bytes (void **state)
{
    gc_buf_t b;
    gc_buf_init (&b);
    assert_null (b.data);
    for (int i = 0; i < 5000; i++) {
        uint8_t byte = (uint8_t) i;
        assert_int_equal (gc_buf_append (&b, &byte, 1, NULL), 0);
    }
    assert_int_equal (b.len, 5000);
    assert_true (b.cap >= 5000);
    for (int i = 0; i < 5000; i++)
        assert_int_equal (b.data [i], (uint8_t) i);
    uint8_t *p = gc_buf_extend (&b, 100, NULL);
    assert_non_null (p);
    assert_ptr_equal (p, b.data + 5000);
    assert_int_equal (b.len, 5100);
    size_t cap = b.cap;
    gc_buf_reset (&b);
    assert_int_equal (b.len, 0);
    assert_int_equal (b.cap, cap);
    assert_int_equal (gc_buf_append (&b, NULL, 0, NULL), 0);
    gc_buf_free (&b);
    assert_null (b.data);
    assert_int_equal (b.cap, 0);
}

static void
test_buf_refuses_overflow (void **state)
{
    gc_buf_t b;
    gc_buf_init (&b);
    assert_int_equal (gc_buf_append (&b, "abc", 3, NULL), 0);
    gc_err_t err;
    assert_int_equal (gc_buf_reserve (&b, SIZE_MAX - 1, &err), -1);
    assert_non_null (strstr (err.msg, "overflow"));
    assert_null (gc_buf_extend (&b, SIZE_MAX, &err));
    assert_int_equal (b.len, 3);
    assert_memory_equal (b.data, "abc", 3);
    //  Empty extend on an empty buffer still gives a usable pointer.
    gc_buf_t e;
    gc_buf_init (&e);
    assert_non_null (gc_buf_extend (&e, 0, NULL));
    gc_buf_free (&e);
    gc_buf_free (&b);
}

static void
test_buf_printf_appends_text (void **state)
{
    gc_buf_t b;
    gc_buf_init (&b);
    assert_int_equal (gc_buf_printf (&b, NULL, "%s", ""), 0);
    assert_int_equal (b.len, 0);
    assert_int_equal (gc_buf_printf (&b, NULL, "{\"n\":%d", 42), 0);
    //  longer than any first allocation: the size is measured, not guessed
    char big [3000];
    memset (big, 'x', sizeof big - 1);
    big [sizeof big - 1] = 0;
    assert_int_equal (gc_buf_printf (&b, NULL, ",\"s\":\"%s\"}", big), 0);
    assert_int_equal (b.len, 7 + 6 + 2999 + 2);
    assert_memory_equal (b.data, "{\"n\":42,\"s\":\"xxx", 16);
    assert_int_equal (b.data [b.len], 0);                 /* a NUL after the text */
    assert_string_equal ((char *) b.data + b.len - 2, "\"}");
    gc_buf_free (&b);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_buf_grows_and_keeps_bytes),
        cmocka_unit_test (test_buf_refuses_overflow),
        cmocka_unit_test (test_buf_printf_appends_text),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
