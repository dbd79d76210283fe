/*  gc_err codes (one space, distinct numbers and names) and gc_wipe. */
#include "gc_test.h"

#include <stdbool.h>
#include <string.h>

#include "gc_err.h"
#include "gc_mem.h"

#define S_ROW(id, n, name, what) { GC_E_##id, n, #id },
static const struct { int code, number; const char *id; } s_codes [] = { GC_ERR_CODES (S_ROW) };
#undef S_ROW
#define S_N (sizeof s_codes / sizeof s_codes [0])

//  Two codes with one number would make gc_err_name answer for only one
//  of them, and a reader could not tell the meanings apart.
static void
test_err_codes_are_distinct (void **state)
{
    assert_string_equal (gc_err_name (GC_E_OK), "ok");
    for (size_t i = 0; i < S_N; i++) {
        assert_int_equal (s_codes [i].code, s_codes [i].number);
        assert_true (s_codes [i].code > 0);
        const char *name = gc_err_name (s_codes [i].code);
        if (!strcmp (name, "unknown") || !strcmp (name, "ok") || !*gc_strerror (s_codes [i].code))
            fail_msg ("GC_E_%s (%d): name '%s'", s_codes [i].id, s_codes [i].code, name);
        for (size_t j = 0; j < i; j++) {
            if (s_codes [j].code == s_codes [i].code)
                fail_msg ("GC_E_%s and GC_E_%s share %d", s_codes [j].id, s_codes [i].id, s_codes [i].code);
            if (!strcmp (gc_err_name (s_codes [j].code), name))
                fail_msg ("GC_E_%s and GC_E_%s share the name '%s'", s_codes [j].id, s_codes [i].id, name);
            if (!strcmp (gc_strerror (s_codes [j].code), gc_strerror (s_codes [i].code)))
                fail_msg ("GC_E_%s and GC_E_%s share the description", s_codes [j].id, s_codes [i].id);
        }
    }
    //  Numbers no code has: named as such, not as a neighbour.
    const int none [] = { -1, 99, 1000 };
    for (size_t i = 0; i < sizeof none / sizeof none [0]; i++) {
        assert_string_equal (gc_err_name (none [i]), "unknown");
        assert_string_equal (gc_strerror (none [i]), "unknown error code");
    }
}

//  The payload codes keep the numbers compress/ has always used, and the
//  first/last bounds cover exactly them.
static void
test_err_payload_codes (void **state)
{
    assert_int_equal (GC_E_PAYLOAD_TRUNCATED, 16);
    assert_int_equal (GC_E_PAYLOAD_RANGE, 32);
    size_t in_range = 0;
    for (size_t i = 0; i < S_N; i++) {
        bool payload = !strncmp (s_codes [i].id, "PAYLOAD_", 8);
        bool inside = s_codes [i].code >= GC_E_PAYLOAD_FIRST && s_codes [i].code <= GC_E_PAYLOAD_LAST;
        if (payload != inside)
            fail_msg ("GC_E_%s (%d) and the payload range disagree", s_codes [i].id, s_codes [i].code);
        in_range += inside;
    }
    assert_int_equal (in_range, GC_E_PAYLOAD_LAST - GC_E_PAYLOAD_FIRST + 1);
}

static void
test_err_set_and_prefix (void **state)
{
    gc_err_t err = { 0 };
    assert_int_equal (gc_err_set (&err, GC_E_PARSE, "'%s': not a number", "x1"), -1);
    assert_int_equal (err.code, GC_E_PARSE);
    assert_int_equal (gc_err_prefix (&err, "%s: ", "train/lr"), -1);
    assert_string_equal (err.msg, "train/lr: 'x1': not a number");
    assert_int_equal (err.code, GC_E_PARSE);
    gc_err_clear (&err);
    assert_int_equal (err.code, GC_E_OK);
    assert_string_equal (err.msg, "");
    assert_int_equal (gc_err_set (NULL, GC_E_IO, "ignored"), -1);
}

static void
test_wipe_zeroes (void **state)
{
    unsigned char secret [67];
    for (size_t n = 0; n <= sizeof secret; n += 13) {
        memset (secret, 0xA5, sizeof secret);
        gc_wipe (secret, n);
        for (size_t i = 0; i < sizeof secret; i++)
            if (secret [i] != (i < n ? 0 : 0xA5))
                fail_msg ("n %zu: byte %zu is %#x", n, i, secret [i]);
    }
    gc_wipe (NULL, 0);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_err_codes_are_distinct),
        cmocka_unit_test (test_err_payload_codes),
        cmocka_unit_test (test_err_set_and_prefix),
        cmocka_unit_test (test_wipe_zeroes),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
