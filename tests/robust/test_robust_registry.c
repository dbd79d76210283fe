/*  The robust registry (gc_robust_rules.c) walked entry by entry: every rule
    and pre-aggregation parses its own example to a canonical name that
    parses to itself and starts with its keyword, aggregates exactly its
    minimum number of inputs (and refuses one fewer), needs a centre only
    when it says so, and refuses its malformed spec naming it; unknown names
    are answered with the registry's list. A rule added to the registry is
    tested here without a line of this file changing. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_rng.h"
#include "gc_robust.h"
#include "gc_robust_rule.h"

#define S_D     37
#define S_KMAX  64

typedef struct {
    float  *buf;
    const float *in [S_KMAX];
} s_inputs_t;

static void
s_inputs (s_inputs_t *s, uint64_t seed)
{
    s->buf = malloc (S_KMAX * S_D * sizeof *s->buf);
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0);
    gc_rng_fill_normal (&rng, s->buf, S_KMAX * S_D, 1.0f, 0.5f);
    for (size_t i = 0; i < S_KMAX; i++)
        s->in [i] = s->buf + i * S_D;
}

//  Parse `spec`, check its canonical name, and aggregate at its minimum.
static void
s_check_spec (const char *spec, const char *keyword, bool needs_centre, const s_inputs_t *s)
{
    gc_err_t err = { 0 };
    gc_robust_t *r = gc_robust_new (spec, &err);
    if (!r)
        fail_msg ("example '%s' fails: %s", spec, err.msg);
    const char *name = gc_robust_name (r);
    char next = name [strlen (keyword)];
    if (strncmp (name, keyword, strlen (keyword)) || (next && next != ':' && next != '+'))
        fail_msg ("'%s' is named '%s', not after %s", spec, name, keyword);
    gc_robust_t *again = gc_robust_new (name, &err);
    if (!again)
        fail_msg ("canonical '%s' fails: %s", name, err.msg);
    assert_string_equal (gc_robust_name (again), name);
    assert_int_equal (gc_robust_min_inputs (again), gc_robust_min_inputs (r));
    gc_robust_destroy (&again);
    size_t k = gc_robust_min_inputs (r);
    assert_true (k >= 1 && k <= S_KMAX);
    float out [S_D];
    if (gc_robust_aggregate (r, s->in, NULL, k, S_D, 0, out, &err))
        fail_msg ("%s with k = %zu: %s", name, k, err.msg);
    for (size_t j = 0; j < S_D; j++)
        assert_true (isfinite (out [j]));
    if (k > 1) {
        assert_int_equal (gc_robust_aggregate (r, s->in, NULL, k - 1, S_D, 0, out, &err), -1);
        assert_int_equal (err.code, GC_ROBUST_EINPUTS);
    }
    int rc = gc_robust_aggregate (r, s->in, NULL, k, S_D, -1, out, &err);
    assert_int_equal (rc, needs_centre ? -1 : 0);
    if (needs_centre)
        assert_int_equal (err.code, GC_ROBUST_EINPUTS);
    gc_robust_destroy (&r);
}

static void
s_check_malformed (const char *spec)
{
    gc_err_t err = { 0 };
    gc_robust_t *r = gc_robust_new (spec, &err);
    if (r)
        fail_msg ("'%s' was accepted as %s", spec, gc_robust_name (r));
    assert_int_equal (err.code, GC_ROBUST_ESPEC);
    if (!strstr (err.msg, spec))
        fail_msg ("'%s' does not name '%s'", err.msg, spec);
}

static void
test_rules (void **state)
{
    s_inputs_t s;
    s_inputs (&s, 3);
    size_t count = 0;
    for (size_t i = 0; gc_robust_rules [i]; i++, count++) {
        const gc_robust_rule_t *m = gc_robust_rules [i];
        assert_ptr_equal (gc_robust_rule_find (m->name), m);
        assert_true (!strncmp (m->usage, m->name, strlen (m->name)));
        assert_non_null (m->help);
        s_check_spec (m->example, m->name, m->needs_centre, &s);
        s_check_malformed (m->malformed);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal (gc_robust_rules [j]->name, m->name);
    }
    assert_true (count >= 9);
    free (s.buf);
}

static void
test_pre_aggregations (void **state)
{
    s_inputs_t s;
    s_inputs (&s, 4);
    for (size_t i = 0; gc_robust_pres [i]; i++) {
        const gc_robust_pre_t *p = gc_robust_pres [i];
        assert_ptr_equal (gc_robust_pre_find (p->name), p);
        assert_null (gc_robust_rule_find (p->name));
        //  The example puts the stage in front of a rule.
        assert_non_null (strchr (p->example, '+'));
        s_check_spec (p->example, p->name, false, &s);
        s_check_malformed (p->malformed);
    }
    free (s.buf);
}

static void
test_unknown_names_list_the_registry (void **state)
{
    char known [1024];
    gc_robust_known (known, sizeof known);
    gc_err_t err = { 0 };
    assert_null (gc_robust_new ("nnm:1+median", &err));
    assert_int_equal (err.code, GC_ROBUST_ESPEC);
    assert_non_null (strstr (err.msg, "nnm:1+median"));
    for (size_t i = 0; gc_robust_rules [i]; i++)
        if (!strstr (err.msg, gc_robust_rules [i]->usage) || !strstr (known, gc_robust_rules [i]->usage))
            fail_msg ("'%s' does not list %s", err.msg, gc_robust_rules [i]->usage);
    gc_err_t pre = { 0 };
    assert_null (gc_robust_new ("mix:2+mean", &pre));
    assert_int_equal (pre.code, GC_ROBUST_ESPEC);
    for (size_t i = 0; gc_robust_pres [i]; i++)
        if (!strstr (pre.msg, gc_robust_pres [i]->usage))
            fail_msg ("'%s' does not list %s", pre.msg, gc_robust_pres [i]->usage);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_rules),
        cmocka_unit_test (test_pre_aggregations),
        cmocka_unit_test (test_unknown_names_list_the_registry),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
