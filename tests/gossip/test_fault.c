/*  The fault layer: drops at the asked rate, delay and jitter bounds, the
    rate cap's queueing, the order of the draws, the control verbs. */
#include "gc_test.h"

#include <math.h>
#include <string.h>

#include "gc_fault.h"

static void
test_drop_rate (void **state)
{
    static const double ps [] = { 0, 0.1, 0.5, 1 };
    for (size_t c = 0; c < sizeof ps / sizeof ps [0]; c++) {
        gc_fault_t f = { 0 };
        gc_fault_set_drop (&f, ps [c]);
        gc_rng_t rng;
        gc_rng_init (&rng, 3, 1);
        int64_t link = 0, due;
        int dropped = 0, n = 20000;
        for (int i = 0; i < n; i++)
            if (!gc_fault_route (&f, &rng, &link, 100, 1000, &due))
                dropped++;
            else
                assert_int_equal (due, 1000);           /* no delay: now */
        double rate = (double) dropped / n;
        if (fabs (rate - ps [c]) > 0.02)
            fail_msg ("drop %g: dropped %.4f", ps [c], rate);
    }
}

//  Delay + jitter: due in [now + delay, now + delay + jitter).
static void
test_delay_bounds (void **state)
{
    static const struct { double delay, jitter; } cases [] = { { 50, 0 }, { 0, 20 }, { 100, 30 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_fault_t f = { 0 };
        gc_fault_set_delay (&f, cases [c].delay, cases [c].jitter);
        gc_rng_t rng;
        gc_rng_init (&rng, 5, 2);
        int64_t link = 0, due, lo = INT64_MAX, hi = 0, now = 7000000;
        for (int i = 0; i < 5000; i++) {
            assert_true (gc_fault_route (&f, &rng, &link, 100, now, &due));
            lo = due - now < lo ? due - now : lo;
            hi = due - now > hi ? due - now : hi;
        }
        int64_t min = (int64_t) (cases [c].delay * 1e6), max = (int64_t) ((cases [c].delay + cases [c].jitter) * 1e6);
        assert_true (lo >= min);
        assert_true (hi <= max);
        if (cases [c].jitter > 0)
            assert_true (hi - lo > (max - min) / 2);    /* the jitter spreads */
        else
            assert_int_equal (hi, lo);
    }
}

//  Rate: messages on one link queue one after the other.
static void
test_rate_queue (void **state)
{
    gc_fault_t f = { 0 };
    gc_fault_set_rate (&f, 1000);               /* 1000 B/s: 100 B take 0.1 s */
    gc_rng_t rng;
    gc_rng_init (&rng, 1, 1);
    int64_t link = 0, due;
    for (int i = 1; i <= 3; i++) {
        assert_true (gc_fault_route (&f, &rng, &link, 100, 0, &due));
        assert_int_equal (due, i * 100000000LL);
    }
    //  an idle link starts again from now
    assert_true (gc_fault_route (&f, &rng, &link, 100, 2000000000LL, &due));
    assert_int_equal (due, 2100000000LL);
    //  no rate: the link state is left alone
    gc_fault_set_rate (&f, 0);
    int64_t before = link;
    assert_true (gc_fault_route (&f, &rng, &link, 100, 0, &due));
    assert_int_equal (due, 0);
    assert_int_equal (link, before);
}

//  The draws: one for the drop, one for the jitter, only when set (a
//  simulator shares the generator with other draws and must stay in step).
static void
test_draw_order (void **state)
{
    static const struct { double drop, delay, jitter; int draws; } cases [] = {
        { 0, 0, 0, 0 }, { 0.5, 0, 0, 1 }, { 0, 10, 0, 1 }, { 0, 0, 5, 1 }, { 1e-9, 10, 5, 2 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_fault_t f = { 0 };
        gc_fault_set_drop (&f, cases [c].drop);
        gc_fault_set_delay (&f, cases [c].delay, cases [c].jitter);
        gc_rng_t a, b;
        gc_rng_init (&a, 9, 9);
        gc_rng_init (&b, 9, 9);
        int64_t link = 0, due;
        gc_fault_route (&f, &a, &link, 10, 0, &due);
        for (int k = 0; k < cases [c].draws; k++)
            gc_rng_double (&b);
        if (gc_rng_double (&a) != gc_rng_double (&b))
            fail_msg ("case %zu: not %d draws", c, cases [c].draws);
    }
}

static void
test_control_verbs (void **state)
{
    static const struct {
        const char *request; int rc; double drop, delay, jitter, rate; const char *needle;
    } cases [] = {
        { "drop 0.25", 0, 0.25, 0, 0, 0, NULL },
        { "delay 40", 0, 0, 40, 0, 0, NULL },
        { "delay 40 10", 0, 0, 40, 10, 0, NULL },
        { "rate 125000", 0, 0, 0, 0, 125000, NULL },
        { "drop 1.5", -1, 0, 0, 0, 0, "drop probability" },
        { "drop -0.1", -1, 0, 0, 0, 0, "drop probability" },
        { "delay x", -1, 0, 0, 0, 0, "delay ms" },
        { "delay 1 -2", -1, 0, 0, 0, 0, "jitter ms" },
        { "rate 2e12", -1, 0, 0, 0, 0, "rate bytes/s" },
        { "drop", 1, 0, 0, 0, 0, NULL },                /* wrong arity: not a fault verb */
        { "drop 0.1 0.2", 1, 0, 0, 0, 0, NULL },
        { "slow 2", 1, 0, 0, 0, 0, NULL },
        { "heal", 1, 0, 0, 0, 0, NULL },
        { "", 1, 0, 0, 0, 0, NULL },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_fault_t f = { 0 };
        gc_err_t err = { 0 };
        int rc = gc_fault_control (&f, cases [c].request, &err);
        if (rc != cases [c].rc)
            fail_msg ("'%s': rc %d, wanted %d", cases [c].request, rc, cases [c].rc);
        if (cases [c].needle && !strstr (err.msg, cases [c].needle))
            fail_msg ("'%s': '%s' lacks '%s'", cases [c].request, err.msg, cases [c].needle);
        assert_true (f.drop == cases [c].drop && f.delay_ms == cases [c].delay
                  && f.jitter_ms == cases [c].jitter && f.rate == cases [c].rate);
    }
}

//  What gc_fault_format writes, gc_fault_control reads back to the same.
static void
test_format_round_trip (void **state)
{
    gc_fault_t f = { .drop = 0.125, .delay_ms = 80, .jitter_ms = 12.5, .rate = 250000 };
    static const unsigned what [] = { GC_FAULT_DROP, GC_FAULT_DELAY, GC_FAULT_RATE };
    gc_fault_t back = { 0 };
    for (size_t c = 0; c < 3; c++) {
        char verb [64];
        gc_fault_format (&f, what [c], verb, sizeof verb);
        assert_int_equal (gc_fault_control (&back, verb, NULL), 0);
    }
    assert_memory_equal (&f, &back, sizeof f);
    char text [128];
    gc_fault_describe (&f, text, sizeof text);
    assert_string_equal (text, "drop=0.125 delay_ms=80 jitter_ms=12.5 rate=250000");
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_drop_rate),
        cmocka_unit_test (test_delay_bounds),
        cmocka_unit_test (test_rate_queue),
        cmocka_unit_test (test_draw_order),
        cmocka_unit_test (test_control_verbs),
        cmocka_unit_test (test_format_round_trip),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
