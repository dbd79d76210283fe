/*  Wait policies: when each declares the round over; the registry walked. */
#include "gc_test.h"

#include <string.h>

#include "gc_wait.h"
#include "gc_wait_policy.h"

#define MS 1000000LL

static void
test_sync_and_quorum (void **state)
{
    gc_wait_t *sync = gc_wait_new ("sync", 4, 1, 100 * MS, NULL);
    gc_wait_t *quorum = gc_wait_new ("quorum:2", 4, 1, 100 * MS, NULL);
    assert_non_null (sync);
    assert_non_null (quorum);
    gc_wait_begin (sync, 0);
    gc_wait_begin (quorum, 0);
    bool fresh [4] = { true, false, false, false };
    assert_false (gc_wait_ready (sync, fresh, 10 * MS));
    assert_false (gc_wait_ready (quorum, fresh, 10 * MS));
    fresh [2] = true;
    assert_false (gc_wait_ready (sync, fresh, 10 * MS));
    assert_true (gc_wait_ready (quorum, fresh, 10 * MS));
    fresh [1] = fresh [3] = true;
    assert_true (gc_wait_ready (sync, fresh, 10 * MS));
    //  the timeout bounds every policy
    bool none [4] = { false };
    assert_false (gc_wait_ready (sync, none, 99 * MS));
    assert_true (gc_wait_ready (sync, none, 100 * MS));
    assert_int_equal (gc_wait_deadline (sync), 100 * MS);
    gc_wait_destroy (&sync);
    gc_wait_destroy (&quorum);
    assert_null (sync);
}

//  One neighbour 10x slower than the others: after a few rounds the adaptive
//  policy stops waiting for it; once it speeds up, it is waited for again.
static void
test_adaptive_drops_and_readmits_a_straggler (void **state)
{
    gc_wait_t *w = gc_wait_new ("adaptive", 4, 1, 1000 * MS, NULL);
    assert_int_equal (gc_wait_target (w), 4);
    int64_t t = 0;
    for (int round = 0; round < 10; round++) {
        gc_wait_begin (w, t);
        int64_t arrival [4] = { t + 10 * MS, t + 12 * MS, t + 11 * MS, t + 100 * MS };
        //  the round ends when the target is reached
        int64_t end = gc_wait_target (w) == 4 ? t + 100 * MS : t + 12 * MS;
        if (end < arrival [3])
            arrival [3] = -1;
        gc_wait_end (w, arrival, end);
        t = end + MS;
    }
    assert_int_equal (gc_wait_target (w), 3);
    for (int round = 0; round < 30; round++) {
        gc_wait_begin (w, t);
        int64_t arrival [4] = { t + 10 * MS, t + 12 * MS, t + 11 * MS, t + 11 * MS };
        gc_wait_end (w, arrival, t + 12 * MS);
        t += 13 * MS;
    }
    assert_int_equal (gc_wait_target (w), 4);
    gc_wait_destroy (&w);
}

//  Two neighbours, the rule wants both, one is dead: after a few timeouts the
//  dead one is no longer waited for, so rounds stop costing a timeout each.
static void
test_adaptive_stops_waiting_for_the_dead (void **state)
{
    gc_wait_t *w = gc_wait_new ("adaptive", 2, 2, 100 * MS, NULL);
    int64_t t = 0;
    int timeouts = 0;
    for (int round = 0; round < 20; round++) {
        gc_wait_begin (w, t);
        bool fresh [2] = { true, false };
        //  when does this round end?
        int64_t end = gc_wait_ready (w, fresh, t + 5 * MS) ? t + 5 * MS : gc_wait_deadline (w);
        timeouts += end == gc_wait_deadline (w);
        int64_t arrival [2] = { t + 5 * MS, -1 };
        gc_wait_end (w, arrival, end);
        t = end + MS;
    }
    assert_int_equal (gc_wait_target (w), 1);
    assert_true (timeouts <= 3);
    gc_wait_destroy (&w);
}

static void
test_bad_specs (void **state)
{
    static const char *bad [] = { "fastest", "quorum", "quorum:0", "quorum:x", "sync:3", "adaptive:1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        gc_err_t err = { 0 };
        assert_null (gc_wait_new (bad [i], 4, 1, MS, &err));
        assert_true (strlen (err.msg) > 0);
    }
}

//  The registry (gc_wait_policies.c) walked: each policy parses its example
//  and ends a round by its target or the deadline, refuses its malformed
//  spec naming it; an unknown name gets the registry's list.
static void
test_registry (void **state)
{
    size_t count = 0;
    for (size_t i = 0; gc_wait_policies [i]; i++, count++) {
        const gc_wait_policy_t *p = gc_wait_policies [i];
        assert_ptr_equal (gc_wait_policy_find (p->name), p);
        assert_true (!strncmp (p->usage, p->name, strlen (p->name)));
        gc_err_t err = { 0 };
        gc_wait_t *w = gc_wait_new (p->example, 4, 2, 100 * MS, &err);
        if (!w)
            fail_msg ("%s: its example '%s' fails: %s", p->name, p->example, err.msg);
        assert_string_equal (gc_wait_name (w), p->example);
        size_t target = gc_wait_target (w);
        assert_true (target <= 4);
        gc_wait_begin (w, 0);
        bool fresh [4] = { false };
        for (size_t j = 0; j < target; j++) {
            assert_false (gc_wait_ready (w, fresh, MS));
            fresh [j] = true;
        }
        assert_true (gc_wait_ready (w, fresh, MS));
        memset (fresh, 0, sizeof fresh);
        assert_true (gc_wait_ready (w, fresh, gc_wait_deadline (w)));
        int64_t arrival [4] = { MS, 2 * MS, -1, -1 };
        gc_wait_end (w, arrival, 100 * MS);
        assert_true (gc_wait_target (w) <= 4);
        gc_wait_destroy (&w);
        err = (gc_err_t) { 0 };
        assert_null (gc_wait_new (p->malformed, 4, 2, MS, &err));
        if (!strstr (err.msg, p->malformed))
            fail_msg ("%s: '%s' does not name '%s'", p->name, err.msg, p->malformed);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal (gc_wait_policies [j]->name, p->name);
    }
    assert_true (count >= 3);
    char known [128];
    gc_wait_known (known, sizeof known);
    gc_err_t err = { 0 };
    assert_null (gc_wait_new ("fastest:2", 4, 1, MS, &err));
    for (size_t i = 0; gc_wait_policies [i]; i++)
        if (!strstr (err.msg, gc_wait_policies [i]->usage) || !strstr (known, gc_wait_policies [i]->usage))
            fail_msg ("'%s' does not list %s", err.msg, gc_wait_policies [i]->usage);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_sync_and_quorum),
        cmocka_unit_test (test_adaptive_drops_and_readmits_a_straggler),
        cmocka_unit_test (test_adaptive_stops_waiting_for_the_dead),
        cmocka_unit_test (test_bad_specs),
        cmocka_unit_test (test_registry),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
