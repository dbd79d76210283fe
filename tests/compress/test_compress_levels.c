/*  compress/ kernel levels (generic, avx2, avx512) give the same bits: top-k
    and threshold selections (indices, values, count and the path taken) and
    fp16 conversions, and whole payloads of the methods with vector kernels
    with what they decode to, at every level this CPU has, against generic.
    Inputs cover the sampled pass, the radix paths (many ties) and lengths
    that are not multiples of any vector width; the collection kernel is
    also checked against a plain loop at every level. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_buf.h"
#include "gc_compress_kern.h"
#include "gc_compressor.h"
#include "gc_cpu.h"
#include "gc_layout.h"
#include "gc_half.h"
#include "gc_rng.h"
#include "gc_select.h"

typedef struct {
    size_t count;
    int path;
    uint32_t *idx;
    float *val;
} s_result_t;

static void
s_take (s_result_t *r, const gc_select_t *sel)
{
    r->count = sel->count;
    r->path = (int) sel->path;
    r->idx = malloc ((sel->count + 1) * sizeof *r->idx);
    r->val = malloc ((sel->count + 1) * sizeof *r->val);
    memcpy (r->idx, sel->idx, sel->count * sizeof *r->idx);
    memcpy (r->val, sel->val, sel->count * sizeof *r->val);
}

static void
s_same (const s_result_t *a, const s_result_t *b, const char *what, gc_cpu_level_t level)
{
    if (a->count != b->count || a->path != b->path
     || memcmp (a->idx, b->idx, a->count * sizeof *a->idx)
     || memcmp (a->val, b->val, a->count * sizeof *a->val))
        fail_msg ("%s: %s differs from generic (count %zu vs %zu, path %d vs %d)", what,
                  gc_cpu_name (level), a->count, b->count, a->path, b->path);
}

//  Kinds of input: normal, few distinct values (ties), a heavy tail.
static void
s_fill (float *x, size_t m, int kind, uint64_t seed)
{
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 3);
    gc_rng_fill_normal (&rng, x, m, 0.0f, 1.0f);
    for (size_t i = 0; i < m; i++) {
        if (kind == 1)
            x [i] = (float) ((int) (x [i] * 2.0f)) * 0.5f;
        else if (kind == 2)
            x [i] = x [i] * x [i] * x [i];
    }
}

static void
test_select_levels (void **state)
{
    static const size_t sizes [] = { 1003, 140001, 300017 };
    static const double ratios [] = { 0.001, 0.01, 0.1 };
    gc_cpu_level_t top = gc_cpu_detected (), start = gc_cpu_level ();
    printf ("levels compared: generic .. %s\n", gc_cpu_name (top));
    if (top == GC_CPU_GENERIC)
        skip ();                /* nothing to compare with: not a pass */
    gc_select_t *sel = gc_select_new ();
    for (size_t si = 0; si < 3; si++)
        for (int kind = 0; kind < 3; kind++)
            for (size_t ri = 0; ri < 3; ri++)
                for (int mode = 0; mode < 3; mode++) {
                    size_t m = sizes [si], k = (size_t) (ratios [ri] * (double) m);
                    float *x = malloc (m * sizeof *x);
                    s_fill (x, m, kind, 3 + si);
                    char what [96];
                    snprintf (what, sizeof what, "m %zu kind %d ratio %g mode %d", m, kind,
                              ratios [ri], mode);
                    s_result_t ref = { 0 };
                    for (int level = GC_CPU_GENERIC; level <= (int) top; level++) {
                        assert_int_equal (gc_cpu_set_level ((gc_cpu_level_t) level), 0);
                        if (mode < 2)
                            assert_int_equal (gc_select_topk (sel, x, m, k, mode == 1, 9, NULL), 0);
                        else
                            assert_int_equal (gc_select_threshold (sel, x, m, 1.5f, NULL), 0);
                        s_result_t r;
                        s_take (&r, sel);
                        if (level == GC_CPU_GENERIC)
                            ref = r;
                        else {
                            s_same (&r, &ref, what, (gc_cpu_level_t) level);
                            free (r.idx);
                            free (r.val);
                        }
                    }
                    free (ref.idx);
                    free (ref.val);
                    free (x);
                }
    gc_select_destroy (&sel);
    assert_int_equal (gc_cpu_set_level (start), 0);
}

//  The collection kernel itself, at every level, against a plain loop: every
//  entry whose key is >= lo, in order, and the largest key read, for bounds
//  from 0 to past every key (non-finite entries among the inputs or not), and
//  a cap that stops it early (a count above the cap, the entries before it).
static void
test_collect_levels (void **state)
{
    static const uint32_t los [] = { 0, 1, 0x3fc00000u /* 1.5 */, 0x40400000u /* 3 */,
                                     0x7f800000u, 0x7f800001u, 0x80000000u, 0x80000001u,
                                     0xffffffffu };
    static const float specials [] = { 0.0f, INFINITY, -INFINITY, NAN };
    const size_t m = 1003;  /* blocks of 64, then a tail */
    gc_cpu_level_t top = gc_cpu_detected (), start = gc_cpu_level ();
    float *x = malloc (m * sizeof *x), *val = malloc ((m + 64) * sizeof *val);
    float *rval = malloc (m * sizeof *rval);
    uint32_t *idx = malloc ((m + 64) * sizeof *idx), *ridx = malloc (m * sizeof *ridx);
    for (size_t sp = 0; sp < 4; sp++)
        for (size_t li = 0; li < sizeof los / sizeof los [0]; li++) {
            s_fill (x, m, 2, 40 + sp);
            if (sp)
                x [sp * 211] = specials [sp];   /* 0 leaves the input finite */
            uint32_t lo = los [li], rmax = 0;
            size_t rc = 0;
            for (size_t i = 0; i < m; i++) {
                uint32_t key = gc_select_key (x [i]);
                rmax = key > rmax ? key : rmax;
                if (key >= lo) {
                    ridx [rc] = (uint32_t) i;
                    rval [rc++] = x [i];
                }
            }
            for (int level = GC_CPU_GENERIC; level <= (int) top; level++) {
                assert_int_equal (gc_cpu_set_level ((gc_cpu_level_t) level), 0);
                uint32_t maxkey = 0;
                size_t c = gc_compress_kern ()->collect (x, m, lo, idx, val, m, &maxkey);
                if (c != rc || maxkey != rmax || memcmp (idx, ridx, c * sizeof *idx)
                 || memcmp (val, rval, c * sizeof *val))
                    fail_msg ("%s: lo %#x special %zu: count %zu (want %zu), max key %#x (want %#x)",
                              gc_cpu_name ((gc_cpu_level_t) level), lo, sp, c, rc, maxkey, rmax);
                if (rc > 2) {
                    c = gc_compress_kern ()->collect (x, m, lo, idx, val, rc / 2, &maxkey);
                    assert_true (c > rc / 2);
                    assert_memory_equal (idx, ridx, (rc / 2 + 1) * sizeof *idx);
                }
            }
        }
    assert_int_equal (gc_cpu_set_level (start), 0);
    free (x);
    free (val);
    free (rval);
    free (idx);
    free (ridx);
}

static void
test_half_levels (void **state)
{
    size_t n = 4099;
    float *x = malloc (n * sizeof *x), *back = malloc (n * sizeof *back), *ref_back = malloc (n * sizeof *back);
    uint8_t *h = malloc (2 * n), *ref = malloc (2 * n);
    s_fill (x, n, 2, 5);
    //  Every half bit pattern too (subnormals, Inf, NaN) through decode.
    uint8_t *all = malloc (2 * 65536);
    for (uint32_t i = 0; i < 65536; i++) {
        all [2 * i] = (uint8_t) i;
        all [2 * i + 1] = (uint8_t) (i >> 8);
    }
    float *dec = malloc (65536 * sizeof *dec), *dec_ref = malloc (65536 * sizeof *dec);
    gc_cpu_level_t top = gc_cpu_detected (), start = gc_cpu_level ();
    for (int level = GC_CPU_GENERIC; level <= (int) top; level++) {
        assert_int_equal (gc_cpu_set_level ((gc_cpu_level_t) level), 0);
        bool first = level == GC_CPU_GENERIC;
        gc_half_encode (first ? ref : h, x, n, 3000.0f);
        gc_half_decode (first ? ref_back : back, first ? ref : h, n);
        gc_half_decode (first ? dec_ref : dec, all, 65536);
        if (!first) {
            assert_memory_equal (h, ref, 2 * n);
            assert_memory_equal (back, ref_back, n * sizeof *back);
            //  NaN patterns: F16C sets the quiet bit, the scalar path keeps
            //  the payload as it is (payloads are checked for non-finite
            //  values before they are decoded, so no NaN is ever used).
            for (uint32_t i = 0; i < 65536; i++)
                if ((i & 0x7c00) == 0x7c00 && (i & 0x3ff))
                    assert_true (dec [i] != dec [i] && dec_ref [i] != dec_ref [i]);
                else
                    assert_memory_equal (&dec [i], &dec_ref [i], sizeof *dec);
        }
    }
    assert_int_equal (gc_cpu_set_level (start), 0);
    free (x);
    free (back);
    free (ref_back);
    free (h);
    free (ref);
    free (all);
    free (dec);
    free (dec_ref);
}

//  Whole payloads of the methods with vector kernels (top-k fp32 / fp16,
//  threshold, sign) and what they decode to, byte for byte across levels.
static void
test_payload_levels (void **state)
{
    static const char *specs [] = { "topk:0.01", "topk:0.05:global:exact:fp16", "threshold:1.5",
                                    "sign:bucket=1000", "sign" };
    gc_layout_t layout;
    gc_layout_init (&layout);
    assert_int_equal (gc_layout_add_matrix (&layout, "w", 300, 501, NULL), 0);
    assert_int_equal (gc_layout_add_vector (&layout, "b", 1003, NULL), 0);
    size_t n = layout.n_params;
    float *x = malloc (n * sizeof *x), *dec = malloc (n * sizeof *dec), *ref_dec = malloc (n * sizeof *dec);
    s_fill (x, n, 0, 17);
    gc_cpu_level_t top = gc_cpu_detected (), start = gc_cpu_level ();
    for (size_t sp = 0; sp < sizeof specs / sizeof specs [0]; sp++) {
        gc_buf_t ref;
        gc_buf_init (&ref);
        for (int level = GC_CPU_GENERIC; level <= (int) top; level++) {
            assert_int_equal (gc_cpu_set_level ((gc_cpu_level_t) level), 0);
            gc_compressor_t *comp = gc_compressor_new (specs [sp], &layout, 3, NULL);
            assert_non_null (comp);
            gc_buf_t out;
            gc_buf_init (&out);
            assert_int_equal (gc_compressor_compress (comp, x, 5, &out, NULL), 0);
            float *into = level == GC_CPU_GENERIC ? ref_dec : dec;
            for (size_t i = 0; i < n; i++)
                into [i] = 0.25f;
            assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, into, NULL), 0);
            if (level == GC_CPU_GENERIC) {
                ref = out;
                out.data = NULL;
            } else {
                assert_int_equal (out.len, ref.len);
                assert_memory_equal (out.data, ref.data, ref.len);
                assert_memory_equal (dec, ref_dec, n * sizeof *dec);
            }
            gc_buf_free (&out);
            gc_compressor_destroy (&comp);
        }
        gc_buf_free (&ref);
    }
    assert_int_equal (gc_cpu_set_level (start), 0);
    free (x);
    free (dec);
    free (ref_dec);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_select_levels),
        cmocka_unit_test (test_collect_levels),
        cmocka_unit_test (test_half_levels),
        cmocka_unit_test (test_payload_levels),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
