/*  The method registries (gc_compress_methods.c, gc_ec_modes.c) walked
    entry by entry: every entry parses its own example to a canonical name
    that parses to itself, rejects its malformed spec with an error naming
    that spec, and (compressors) round-trips compress -> payload -> decode
    within its sections; unknown names are answered with the registry's
    list; ids and names are unique. A method added to a registry is tested
    here without a line of this file changing. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_method.h"
#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_ec_mode.h"
#include "gc_payload.h"
#include "gc_rng.h"

//  Two matrices and a vector, shapes that leave remainders everywhere.
static void
s_layout (gc_layout_t *l)
{
    gc_layout_init (l);
    assert_int_equal (gc_layout_add_matrix (l, "a.w", 24, 17, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "a.b", 24, NULL), 0);
    assert_int_equal (gc_layout_add_matrix (l, "c.w", 5, 24, NULL), 0);
}

//  n normal floats (caller frees).
static float *
s_normal (size_t n, uint64_t seed)
{
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0);
    float *x = malloc (n * sizeof *x);
    gc_rng_fill_normal (&rng, x, n, 0.0f, 1.0f);
    return x;
}

//  The keyword a canonical name starts with.
static void
s_keyword (const char *name, char *buf, size_t size)
{
    size_t n = strcspn (name, ":");
    snprintf (buf, size, "%.*s", (int) n, name);
}

static void
test_compressors_parse_reject_and_round_trip (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    float *x = s_normal (n, 5), *q = malloc (n * sizeof *q);
    gc_buf_t out;
    gc_buf_init (&out);
    size_t count = 0;
    for (size_t i = 0; gc_compress_methods [i]; i++, count++) {
        const gc_compress_method_t *m = gc_compress_methods [i];
        assert_non_null (m->usage);
        assert_non_null (m->help);
        assert_true (!strncmp (m->usage, m->name, strlen (m->name)));
        assert_ptr_equal (gc_compress_method_find (m->name), m);
        if (m->alias)
            assert_ptr_equal (gc_compress_method_find (m->alias), m);
        if (m->wire_id >= 0)
            assert_ptr_equal (gc_compress_method_by_id (m->wire_id), m);
        assert_true (m->wrapper == (m->wire_id < 0));
        //  The example parses; its canonical name parses to itself.
        gc_err_t err = { 0 };
        gc_compressor_t *comp = gc_compressor_new (m->example, &layout, 9, &err);
        if (!comp)
            fail_msg ("%s: its example '%s' fails: %s", m->name, m->example, err.msg);
        char key [32];
        s_keyword (gc_compressor_name (comp), key, sizeof key);
        assert_string_equal (key, m->name);
        gc_compressor_t *again = gc_compressor_new (gc_compressor_name (comp), &layout, 9, &err);
        if (!again)
            fail_msg ("%s: canonical '%s' fails: %s", m->name, gc_compressor_name (comp), err.msg);
        assert_string_equal (gc_compressor_name (again), gc_compressor_name (comp));
        gc_compressor_destroy (&again);
        //  Round trip: what the payload decodes to is finite, the header
        //  names the method (a wrapper: its inner one), and decoding onto
        //  zeros gives the same floats as adding into zeros.
        for (uint64_t round = 0; round < 3; round++) {
            if (gc_compressor_compress (comp, x, round, &out, &err))
                fail_msg ("%s round %llu: %s", m->example, (unsigned long long) round, err.msg);
            gc_payload_info_t info;
            if (gc_payload_inspect (out.data, out.len, &layout, &info, &err))
                fail_msg ("%s: %s", m->example, err.msg);
            const gc_compress_method_t *sent = gc_compress_method_by_id (info.method);
            assert_non_null (sent);
            if (!m->wrapper)
                assert_ptr_equal (sent, m);
            memset (q, 0, n * sizeof *q);
            if (gc_payload_decompress_add (out.data, out.len, &layout, q, &err))
                fail_msg ("%s: %s", m->example, err.msg);
            float *onto = malloc (n * sizeof *onto);
            assert_int_equal (gc_payload_decode_onto (out.data, out.len, &layout, NULL, onto, &err), 0);
            for (size_t j = 0; j < n; j++) {
                assert_true (isfinite (q [j]));
                assert_memory_equal (&q [j], &onto [j], sizeof (float));
                if (gc_compressor_lossless (comp))
                    assert_memory_equal (&q [j], &x [j], sizeof (float));
            }
            free (onto);
        }
        gc_compressor_destroy (&comp);
        //  The malformed spec is refused, naming it.
        err = (gc_err_t) { 0 };
        comp = gc_compressor_new (m->malformed, &layout, 9, &err);
        if (comp)
            fail_msg ("%s: '%s' was accepted as %s", m->name, m->malformed, gc_compressor_name (comp));
        assert_int_equal (err.code, GC_COMPRESS_ERR_SPEC);
        if (!strstr (err.msg, m->malformed))
            fail_msg ("%s: '%s' does not name '%s'", m->name, err.msg, m->malformed);
        //  Names and wire ids are unique.
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal (gc_compress_methods [j]->name, m->name);
            assert_true (m->wire_id < 0 || gc_compress_methods [j]->wire_id != m->wire_id);
        }
    }
    assert_true (count >= 9);
    //  An id no entry has is not a method.
    assert_null (gc_compress_method_by_id (-1));
    assert_null (gc_compress_method_by_id (GC_METHOD_COUNT));
    gc_buf_free (&out);
    free (x);
    free (q);
}

static void
test_compressor_lists_come_from_the_registry (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    char usage [4096], known [512];
    gc_compressor_usage (usage, sizeof usage);
    gc_compressor_known (known, sizeof known);
    gc_err_t err = { 0 };
    assert_null (gc_compressor_new ("zip:3", &layout, 1, &err));
    assert_int_equal (err.code, GC_COMPRESS_ERR_SPEC);
    assert_non_null (strstr (err.msg, "zip:3"));
    //  lbs's inner spec is checked by the same registry.
    gc_err_t inner = { 0 };
    assert_null (gc_compressor_new ("lbs:zip", &layout, 1, &inner));
    assert_non_null (strstr (inner.msg, "lbs:zip"));
    for (size_t i = 0; gc_compress_methods [i]; i++) {
        const gc_compress_method_t *m = gc_compress_methods [i];
        if (!strstr (err.msg, m->name) || !strstr (inner.msg, m->name) || !strstr (known, m->name))
            fail_msg ("'%s' / '%s' / '%s' do not list %s", err.msg, inner.msg, known, m->name);
        if (!strstr (usage, m->usage) || !strstr (usage, m->help))
            fail_msg ("usage text lacks %s", m->usage);
    }
    //  Truncation stays within the buffer.
    char tiny [8];
    memset (tiny, 'x', sizeof tiny);
    gc_compressor_usage (tiny, sizeof tiny);
    assert_int_equal (strlen (tiny), sizeof tiny - 1);
}

static void
test_ec_modes_parse_reject_and_run (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    float *x = s_normal (n, 6), *sent = malloc (n * sizeof *sent), *q = malloc (n * sizeof *q);
    gc_compressor_t *comp = gc_compressor_new ("topk:0.2", &layout, 3, NULL);
    assert_non_null (comp);
    gc_buf_t out;
    gc_buf_init (&out);
    char known [256];
    gc_ec_known (known, sizeof known);
    size_t count = 0;
    for (size_t i = 0; gc_ec_modes [i]; i++, count++) {
        const gc_ec_mode_t *m = gc_ec_modes [i];
        assert_ptr_equal (gc_ec_mode_find (m->name), m);
        assert_non_null (strstr (known, m->usage));
        gc_err_t err = { 0 };
        gc_ec_t *ec = gc_ec_new (m->example, comp, &err);
        if (!ec)
            fail_msg ("%s: its example '%s' fails: %s", m->name, m->example, err.msg);
        char key [32];
        s_keyword (gc_ec_name (ec), key, sizeof key);
        assert_string_equal (key, m->name);
        gc_ec_t *again = gc_ec_new (gc_ec_name (ec), comp, &err);
        assert_non_null (again);
        assert_string_equal (gc_ec_name (again), gc_ec_name (ec));
        gc_ec_destroy (&again);
        //  One step: sent is what the payload decodes to; a mode without a
        //  residual keeps zeros.
        bool exact;
        if (gc_ec_step (ec, x, 0, &out, sent, &exact, &err))
            fail_msg ("%s: %s", m->example, err.msg);
        memset (q, 0, n * sizeof *q);
        assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, q, &err), 0);
        assert_memory_equal (q, sent, n * sizeof *q);
        const float *e = gc_ec_residual (ec);
        for (size_t j = 0; j < n && !m->residual; j++)
            assert_true (e [j] == 0.0f);
        gc_ec_destroy (&ec);
        //  The malformed spec is refused, naming it.
        err = (gc_err_t) { 0 };
        assert_null (gc_ec_new (m->malformed, comp, &err));
        assert_int_equal (err.code, GC_COMPRESS_ERR_SPEC);
        if (!strstr (err.msg, m->malformed))
            fail_msg ("%s: '%s' does not name '%s'", m->name, err.msg, m->malformed);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal (gc_ec_modes [j]->name, m->name);
    }
    assert_true (count >= 3);
    gc_err_t err = { 0 };
    assert_null (gc_ec_new ("efx", comp, &err));
    assert_int_equal (err.code, GC_COMPRESS_ERR_SPEC);
    for (size_t i = 0; gc_ec_modes [i]; i++)
        if (!strstr (err.msg, gc_ec_modes [i]->name))
            fail_msg ("'%s' does not list %s", err.msg, gc_ec_modes [i]->name);
    gc_buf_free (&out);
    gc_compressor_destroy (&comp);
    free (x);
    free (sent);
    free (q);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_compressors_parse_reject_and_round_trip),
        cmocka_unit_test (test_compressor_lists_come_from_the_registry),
        cmocka_unit_test (test_ec_modes_parse_reject_and_run),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
