/*  gc_cli_exit_code: every error code maps to the exit code its kind
    promises (docs/OPERATIONS.md, "Exit codes"). */
#include "gc_test.h"

#include <stdbool.h>
#include <string.h>

#include "gc_cli.h"

//  The input kinds: what fixing the command line, the configuration or a
//  file it names would fix. Every other code is a failure of the run.
static bool
s_is_input (const char *id)
{
    static const char *input [] = { "USAGE", "CONFIG", "SPEC", "PARSE", "RANGE", "FORMAT", "PERMS",
                                    "COLLISION" };
    for (size_t i = 0; i < sizeof input / sizeof input [0]; i++)
        if (!strcmp (id, input [i]))
            return true;
    return false;
}

#define S_ROW(id, n, name, what) { GC_E_##id, #id },
static const struct { int code; const char *id; } s_codes [] = { GC_ERR_CODES (S_ROW) };
#undef S_ROW

static void
test_exit_code_follows_the_kind (void **state)
{
    size_t inputs = 0;
    for (size_t i = 0; i < sizeof s_codes / sizeof s_codes [0]; i++) {
        gc_err_t err = { 0 };
        gc_err_set (&err, s_codes [i].code, "x");
        int want = s_is_input (s_codes [i].id) ? GC_EXIT_USAGE : GC_EXIT_FAILURE;
        inputs += want == GC_EXIT_USAGE;
        if (gc_cli_exit_code (&err) != want)
            fail_msg ("GC_E_%s: exit %d, wanted %d", s_codes [i].id, gc_cli_exit_code (&err), want);
    }
    assert_int_equal (inputs, 8);           /* every input kind is still a code */
    //  No error at all, or a number no code has, is not a usage error.
    gc_err_t none = { 0 }, odd = { .code = 999 };
    assert_int_equal (gc_cli_exit_code (&none), GC_EXIT_FAILURE);
    assert_int_equal (gc_cli_exit_code (&odd), GC_EXIT_FAILURE);
    assert_int_equal (gc_cli_exit_code (NULL), GC_EXIT_FAILURE);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_exit_code_follows_the_kind),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
