/*  Payloads: every method round-trips bit-exactly to what it promises,
    indices switch between varint and bitmap by size, fp16 conversion is
    the same in SIMD and scalar code, and every class of corrupt payload is
    rejected with its code and without touching the destination. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_compressor.h"
#include "gc_half.h"
#include "gc_payload.h"
#include "gc_rng.h"

//  The small table the corrupt cases are written against:
//  0 fc1.w 6x5 (30), 1 fc1.b 6, 2 fc2.w 3x6 (18), 3 fc2.b 3; 57 floats.
static void
s_small_layout (gc_layout_t *l)
{
    gc_layout_init (l);
    assert_int_equal (gc_layout_add_matrix (l, "fc1.w", 6, 5, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "fc1.b", 6, NULL), 0);
    assert_int_equal (gc_layout_add_matrix (l, "fc2.w", 3, 6, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "fc2.b", 3, NULL), 0);
}

//  A larger MLP-like table for round trips: 40x30, 40, 20x40, 20, 1x20.
static void
s_mlp_layout (gc_layout_t *l)
{
    gc_layout_init (l);
    assert_int_equal (gc_layout_add_matrix (l, "fc1.w", 40, 30, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "fc1.b", 40, NULL), 0);
    assert_int_equal (gc_layout_add_matrix (l, "fc2.w", 20, 40, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "fc2.b", 20, NULL), 0);
    assert_int_equal (gc_layout_add_matrix (l, "out.w", 1, 20, NULL), 0);
}

static float *
s_gauss (size_t n, uint64_t seed)
{
    float *x = malloc (n * sizeof *x);
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0);
    gc_rng_fill_normal (&rng, x, n, 0.0f, 1.0f);
    return x;
}

static float
s_h (float v)
{
    return gc_half_to_float (gc_half_from_float (v));
}

static bool
s_same (float a, float b)
{
    return !memcmp (&a, &b, sizeof a);
}

//  ---- round trips ----

static void
test_round_trip_every_method (void **state)
{
    gc_layout_t layout;
    s_mlp_layout (&layout);
    size_t n = layout.n_params;
    float *x = s_gauss (n, 1);
    float *q = malloc (n * sizeof *q), *y = malloc (n * sizeof *y), *y0 = malloc (n * sizeof *y0);
    static const struct {
        const char *spec;
        int method;
        enum { EXACT, HALF, SUBSET, SUBSET_HALF, ANY } promise;
    } cases [] = {
        { "none", GC_METHOD_NONE, EXACT },
        { "fp16", GC_METHOD_FP16, HALF },
        { "topk:0.1", GC_METHOD_TOPK, SUBSET },
        { "topk:0.1:layer:exact", GC_METHOD_TOPK, SUBSET },
        { "topk:0.6:fp16", GC_METHOD_TOPK, SUBSET_HALF },
        { "threshold:1.0", GC_METHOD_THRESHOLD, SUBSET },
        { "randk:0.1:unscaled", GC_METHOD_RANDK, SUBSET },
        { "randk:0.1:unscaled:fp16", GC_METHOD_RANDK, SUBSET_HALF },
        { "randk:0.1", GC_METHOD_RANDK, ANY },
        { "qsgd:16", GC_METHOD_QSGD, ANY },
        { "qsgd:3:bucket=7", GC_METHOD_QSGD, ANY },
        { "qsgd:32767:bucket=1", GC_METHOD_QSGD, ANY },
        { "sign", GC_METHOD_SIGN, ANY },
        { "sign:bucket=16", GC_METHOD_SIGN, ANY },
        { "powersgd:2", GC_METHOD_POWERSGD, ANY },
        { "powersgd:1:fp16", GC_METHOD_POWERSGD, ANY },
        { "lbs:topk:0.2", GC_METHOD_TOPK, SUBSET },
        { "lbs:budget=0.5:none", GC_METHOD_NONE, SUBSET },
    };
    for (int simd = 0; simd < 2; simd++) {
        gc_compress_simd = simd;
        for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
            gc_err_t err;
            gc_compressor_t *comp = gc_compressor_new (cases [c].spec, &layout, 77, &err);
            if (!comp)
                fail_msg ("%s: %s", cases [c].spec, err.msg);
            gc_buf_t out;
            gc_buf_init (&out);
            if (gc_compressor_compress (comp, x, 3, &out, &err))
                fail_msg ("%s: %s", cases [c].spec, err.msg);
            gc_payload_info_t info;
            assert_int_equal (gc_payload_inspect (out.data, out.len, &layout, &info, NULL), 0);
            assert_int_equal (info.method, cases [c].method);
            assert_int_equal (info.lbs, !strncmp (cases [c].spec, "lbs", 3));
            assert_false (info.exact);
            memset (q, 0, n * sizeof *q);
            if (gc_payload_decompress_add (out.data, out.len, &layout, q, &err))
                fail_msg ("%s: %s", cases [c].spec, err.msg);
            size_t kept = 0;
            for (size_t i = 0; i < n; i++) {
                bool ok = true;
                kept += q [i] != 0.0f;
                switch (cases [c].promise) {
                    case EXACT:  ok = s_same (q [i], x [i]); break;
                    case HALF:   ok = s_same (q [i], s_h (x [i])); break;
                    case SUBSET: ok = q [i] == 0.0f || s_same (q [i], x [i]); break;
                    case SUBSET_HALF: ok = q [i] == 0.0f || s_same (q [i], s_h (x [i])); break;
                    case ANY:    ok = isfinite (q [i]); break;
                }
                if (!ok)
                    fail_msg ("%s: entry %zu decodes to %.9g, input %.9g", cases [c].spec, i,
                              (double) q [i], (double) x [i]);
            }
            assert_true (kept > 0);
            //  Adding into a non-zero replica adds exactly the same values.
            for (size_t i = 0; i < n; i++)
                y [i] = y0 [i] = (float) i * 0.25f;
            assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, y, NULL), 0);
            for (size_t i = 0; i < n; i++)
                assert_true (s_same (y [i], y0 [i] + q [i]));
            //  Decoding onto a base (or zeros) gives the same floats, base untouched.
            float *o = malloc (n * sizeof *o);
            assert_int_equal (gc_payload_decode_onto (out.data, out.len, &layout, y0, o, NULL), 0);
            assert_memory_equal (o, y, n * sizeof *o);
            for (size_t i = 0; i < n; i++)
                assert_true (s_same (y0 [i], (float) i * 0.25f));
            assert_int_equal (gc_payload_decode_onto (out.data, out.len, &layout, NULL, o, NULL), 0);
            assert_memory_equal (o, q, n * sizeof *o);
            free (o);
            gc_buf_free (&out);
            gc_compressor_destroy (&comp);
        }
    }
    gc_compress_simd = true;
    free (x);
    free (q);
    free (y);
    free (y0);
}

//  Top-k keeps the k largest: the count and the smallest kept |x|.
static void
test_topk_payload_keeps_k_largest (void **state)
{
    gc_layout_t layout;
    s_mlp_layout (&layout);
    size_t n = layout.n_params;
    float *x = s_gauss (n, 2), *q = calloc (n, sizeof *q);
    gc_compressor_t *comp = gc_compressor_new ("topk:0.05:exact", &layout, 1, NULL);
    assert_string_equal (gc_compressor_name (comp), "topk:0.05:global:exact:fp32");
    gc_buf_t out;
    gc_buf_init (&out);
    assert_int_equal (gc_compressor_compress (comp, x, 0, &out, NULL), 0);
    assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, q, NULL), 0);
    size_t k = 0;
    float kept_min = INFINITY, left_max = 0;
    for (size_t i = 0; i < n; i++) {
        if (q [i] != 0.0f) {
            k++;
            kept_min = fminf (kept_min, fabsf (x [i]));
        }
        else
            left_max = fmaxf (left_max, fabsf (x [i]));
    }
    assert_int_equal (k, (size_t) floor (0.05 * n + 0.5));
    assert_true (kept_min >= left_max);
    gc_buf_free (&out);
    gc_compressor_destroy (&comp);
    free (x);
    free (q);
}

//  LEB128 of the deltas, a byte at a time: what gc_varint_write must give.
static size_t
s_varint_bytes (uint8_t *dst, const uint32_t *idx, size_t nnz, uint32_t base)
{
    size_t n = 0;
    for (size_t i = 0; i < nnz; i++) {
        uint32_t v = idx [i] - (i ? idx [i - 1] : base);
        for (; v >= 0x80; v >>= 7)
            dst [n++] = (uint8_t) (v | 0x80);
        dst [n++] = (uint8_t) v;
    }
    return n;
}

//  The word-at-a-time writer gives the reference bytes for deltas of every
//  length (1 to 5 bytes, a 5-byte one anywhere in the list) and writes
//  nothing past them: each case writes into a buffer of exactly
//  gc_varint_size bytes (AddressSanitizer checks the edge).
static void
test_varint_write_matches_bytes (void **state)
{
    (void) state;
    static const uint32_t lens [] = { 0, 1, 127, 128, 16383, 16384, 2097151, 2097152,
                                      268435455, 268435456, 4000000000u };
    gc_rng_t rng;
    gc_rng_init (&rng, 5, 0);
    for (size_t nnz = 1; nnz <= 12; nnz++)
        for (size_t trial = 0; trial < 200; trial++) {
            uint32_t idx [12], base = trial % 3 ? (uint32_t) gc_rng_next (&rng) % 1000 : 0;
            uint64_t at = base;
            for (size_t i = 0; i < nnz; i++) {
                //  Small deltas mostly, a delta of each length now and then,
                //  kept within 32 bits.
                uint64_t r = gc_rng_next (&rng);
                uint32_t d = r % 4 ? (uint32_t) (r >> 8) % 300 : lens [(r >> 8) % 11];
                d = at + d > UINT32_MAX ? 1 : d;
                at += d;
                idx [i] = (uint32_t) at;
            }
            uint8_t want [64];
            size_t n = s_varint_bytes (want, idx, nnz, base);
            assert_int_equal (gc_varint_size (idx, nnz, base), n);
            uint8_t *got = malloc (n);
            assert_int_equal (gc_varint_write (got, idx, nnz, base), n);
            assert_memory_equal (got, want, n);
            free (got);
        }
}

//  The decoder reads varints of every length it can meet in a layer below
//  2^28 entries (1 to 4 bytes, near the block's end too, where it reads byte
//  by byte): a threshold payload of chosen indices adds back exactly the
//  values it took.
static void
test_varint_decode_every_length (void **state)
{
    (void) state;
    static const uint32_t gaps [] = { 1, 127, 128, 3, 16383, 16384, 7, 2097151, 2097152, 1,
                                      300, 1, 1, 129, 1, 2 };
    size_t n = 4300000, ng = sizeof gaps / sizeof gaps [0];
    gc_layout_t layout;
    assert_int_equal (gc_layout_init_flat (&layout, n, NULL), 0);
    float *x = calloc (n, sizeof *x), *q = calloc (n, sizeof *q);
    size_t at = 0;
    for (size_t g = 0; g < ng; g++) {
        at += gaps [g] - (g == 0);              /* the first index is gap - 1 from 0 */
        x [at] = (float) (g + 1) * (g % 2 ? -1.0f : 1.0f);
    }
    gc_compressor_t *comp = gc_compressor_new ("threshold:0.5", &layout, 1, NULL);
    assert_non_null (comp);
    gc_buf_t out;
    gc_buf_init (&out);
    assert_int_equal (gc_compressor_compress (comp, x, 0, &out, NULL), 0);
    assert_int_equal (out.data [GC_PAYLOAD_HEADER_SIZE + 2], GC_ENC_SPARSE_VARINT);
    assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, q, NULL), 0);
    assert_memory_equal (q, x, n * sizeof *x);
    gc_buf_free (&out);
    gc_compressor_destroy (&comp);
    free (x);
    free (q);
}

//  Index encoding follows the smaller body: varint when sparse, bitmap when
//  dense, and a dense section with zeros when nearly every entry is
//  selected; all decode to the same values, and no payload is larger than
//  the dense one (the receivers' limit: at ratio 1 a bitmap section was).
static void
test_varint_or_bitmap_by_size (void **state)
{
    gc_layout_t layout;
    assert_int_equal (gc_layout_init_flat (&layout, 20000, NULL), 0);
    float *x = s_gauss (20000, 3), *q = malloc (20000 * sizeof *q);
    gc_buf_t dense;
    gc_buf_init (&dense);
    assert_int_equal (gc_payload_encode_dense (&dense, &layout, x, GC_METHOD_NONE, GC_VAL_FP32, 0, NULL), 0);
    static const struct { const char *spec; int enc; } cases [] = {
        { "topk:0.01", GC_ENC_SPARSE_VARINT },      /* ~1.3 bytes per index */
        { "topk:0.05", GC_ENC_SPARSE_VARINT },      /* 1 byte per index: 1000 < 2500 */
        { "topk:0.15", GC_ENC_SPARSE_BITMAP },      /* 3000 bytes > 2500-byte bitmap */
        { "topk:0.9", GC_ENC_SPARSE_BITMAP },       /* 74504 bytes < 80000 */
        { "topk:0.98", GC_ENC_DENSE },              /* 80904 bytes > 80000 */
        { "topk:1", GC_ENC_DENSE },
        { "threshold:0.0", GC_ENC_DENSE },
        { "lgc:1:warmup=5", GC_ENC_DENSE },         /* its warm-up rounds send top-k */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        gc_compressor_t *comp = gc_compressor_new (cases [c].spec, &layout, 1, NULL);
        assert_non_null (comp);
        gc_buf_t out;
        gc_buf_init (&out);
        assert_int_equal (gc_compressor_compress (comp, x, 0, &out, NULL), 0);
        assert_int_equal (out.data [GC_PAYLOAD_HEADER_SIZE + 2], cases [c].enc);
        assert_true (out.len <= dense.len);
        memset (q, 0, 20000 * sizeof *q);
        assert_int_equal (gc_payload_decompress_add (out.data, out.len, &layout, q, NULL), 0);
        for (size_t i = 0; i < 20000; i++)
            assert_true (q [i] == 0.0f || s_same (q [i], x [i]));
        gc_buf_free (&out);
        gc_compressor_destroy (&comp);
    }
    gc_buf_free (&dense);
    free (x);
    free (q);
}

static void
test_payload_for_other_layout_is_rejected (void **state)
{
    gc_layout_t a, b, c;
    s_mlp_layout (&a);
    //  Same n_params, different split; and one layer longer.
    gc_layout_init (&b);
    assert_int_equal (gc_layout_add_vector (&b, "all", (uint32_t) a.n_params - 40, NULL), 0);
    assert_int_equal (gc_layout_add_matrix (&b, "x", 40, 1, NULL), 0);
    gc_layout_init (&c);
    assert_int_equal (gc_layout_add_vector (&c, "all", (uint32_t) a.n_params, NULL), 0);
    float *x = s_gauss (a.n_params, 4), *q = calloc (a.n_params, sizeof *q);
    gc_compressor_t *comp = gc_compressor_new ("topk:0.5", &a, 1, NULL);
    gc_buf_t out;
    gc_buf_init (&out);
    assert_int_equal (gc_compressor_compress (comp, x, 0, &out, NULL), 0);
    gc_err_t err;
    assert_int_equal (gc_payload_decompress_add (out.data, out.len, &b, q, &err), -1);
    assert_int_equal (err.code, GC_E_PAYLOAD_LAYOUT);
    assert_int_equal (gc_payload_decompress_add (out.data, out.len, &c, q, &err), -1);
    assert_int_equal (err.code, GC_E_PAYLOAD_LAYOUT);
    for (size_t i = 0; i < a.n_params; i++)
        assert_true (q [i] == 0.0f);
    gc_buf_free (&out);
    gc_compressor_destroy (&comp);
    free (x);
    free (q);
}

//  ---- fp16 ----

static void
test_half_simd_equals_scalar (void **state)
{
    //  Every finite half converts to a float and back unchanged.
    for (uint32_t h = 0; h < 65536; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        float f = gc_half_to_float ((uint16_t) h);
        assert_int_equal (gc_half_from_float (f), h);
    }
    //  Random floats over the whole range, plus exact halfway points.
    size_t n = 70000;
    float *x = malloc (n * sizeof *x), *back_simd = malloc (n * sizeof *x), *back_scalar = malloc (n * sizeof *x);
    uint8_t *a = malloc (2 * n), *b = malloc (2 * n);
    gc_rng_t rng;
    gc_rng_init (&rng, 5, 0);
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t) gc_rng_next (&rng);
        if (i < 65536) {
            //  Halfway between half i and i+1 (a rounding tie), or the half itself.
            float lo = gc_half_to_float ((uint16_t) i), hi = gc_half_to_float ((uint16_t) (i + 1));
            x [i] = isfinite (lo) && isfinite (hi) && (i & 0x3ff) != 0x3ff ? (i & 1 ? (lo + hi) / 2 : lo) : 1.0f;
        }
        else {
            //  Exponents from 2^-30 to 2^20: subnormal halves, normals, overflow.
            u = (u & 0x807fffff) | ((97u + (u >> 24) % 50u) << 23);
            memcpy (&x [i], &u, 4);
        }
    }
    gc_compress_simd = true;
    gc_half_encode (a, x, n, 1.0f);
    gc_half_decode (back_simd, a, n);
    gc_compress_simd = false;
    gc_half_encode (b, x, n, 1.0f);
    gc_half_decode (back_scalar, b, n);
    gc_compress_simd = true;
    assert_memory_equal (a, b, 2 * n);
    assert_memory_equal (back_simd, back_scalar, n * sizeof (float));
    //  Saturation instead of Inf; scale applied before rounding.
    float big [3] = { 1e6f, -1e6f, 65519.0f };
    uint8_t hb [6];
    gc_half_encode (hb, big, 3, 1.0f);
    assert_true (gc_half_to_float (gc_get_u16 (hb)) == 65504.0f);
    assert_true (gc_half_to_float (gc_get_u16 (hb + 2)) == -65504.0f);
    assert_true (gc_half_to_float (gc_get_u16 (hb + 4)) == 65504.0f);
    assert_int_equal (gc_half_from_float (65520.0f), 0x7c00);
    assert_int_equal (gc_half_from_float (-0.0f), 0x8000);
    assert_int_equal (gc_half_from_float (0x1p-25f), 0);           /* tie to even: zero */
    assert_int_equal (gc_half_from_float (0x1.8p-25f), 1);
    free (x);
    free (back_simd);
    free (back_scalar);
    free (a);
    free (b);
}

//  ---- corrupt payloads ----

static void
s_header (gc_buf_t *b, int method, int flags, int n_sections, uint32_t n_params, int n_layers)
{
    gc_buf_reset (b);
    uint8_t *p = gc_buf_extend (b, GC_PAYLOAD_HEADER_SIZE, NULL);
    memcpy (p, "GCZ", 3);
    p [3] = GC_PAYLOAD_VERSION;
    p [4] = (uint8_t) method;
    p [5] = (uint8_t) flags;
    gc_put_u16 (p + 6, (uint16_t) n_sections);
    gc_put_u32 (p + 8, n_params);
    gc_put_u16 (p + 12, (uint16_t) n_layers);
    gc_put_u16 (p + 14, 0);
    gc_put_u64 (p + 16, 0x1234);
}

static uint8_t *
s_section (gc_buf_t *b, int layer, int enc, int fmt, uint32_t count, uint32_t body_len)
{
    uint8_t *p = gc_buf_extend (b, GC_PAYLOAD_SECTION_SIZE + body_len, NULL);
    gc_put_u16 (p, (uint16_t) layer);
    p [2] = (uint8_t) enc;
    p [3] = (uint8_t) fmt;
    gc_put_u32 (p + 4, count);
    gc_put_u32 (p + 8, body_len);
    memset (p + GC_PAYLOAD_SECTION_SIZE, 0, body_len);
    return p + GC_PAYLOAD_SECTION_SIZE;
}

static void
s_f32 (uint8_t *p, float v)
{
    uint32_t u;
    memcpy (&u, &v, 4);
    gc_put_u32 (p, u);
}

//  A valid top-k payload on the small layout: layer 0 entries 3 and 10.
static void
s_valid_sparse (gc_buf_t *b)
{
    s_header (b, GC_METHOD_TOPK, 0, 1, 57, 4);
    uint8_t *p = s_section (b, 0, GC_ENC_SPARSE_VARINT, GC_VAL_FP32, 30, 8 + 2 + 8);
    gc_put_u32 (p, 2);
    gc_put_u32 (p + 4, 2);
    p [8] = 3;
    p [9] = 7;
    s_f32 (p + 10, 1.5f);
    s_f32 (p + 14, -2.5f);
}

//  One builder per case; it returns the expected error code (0 = valid).
typedef int (*s_build_fn) (gc_buf_t *b);

static int b_valid (gc_buf_t *b) { s_valid_sparse (b); return 0; }
static int b_empty (gc_buf_t *b) { gc_buf_reset (b); return GC_E_PAYLOAD_TRUNCATED; }
static int b_short_header (gc_buf_t *b) { s_valid_sparse (b); b->len = 20; return GC_E_PAYLOAD_TRUNCATED; }
static int b_magic (gc_buf_t *b) { s_valid_sparse (b); b->data [1] = 'X'; return GC_E_PAYLOAD_MAGIC; }
static int b_version (gc_buf_t *b) { s_valid_sparse (b); b->data [3] = 2; return GC_E_PAYLOAD_VERSION; }
static int b_method (gc_buf_t *b) { s_valid_sparse (b); b->data [4] = 99; return GC_E_PAYLOAD_METHOD; }
static int b_flags (gc_buf_t *b) { s_valid_sparse (b); b->data [5] = 0x80; return GC_E_PAYLOAD_FLAGS; }
static int b_reserved (gc_buf_t *b) { s_valid_sparse (b); b->data [15] = 1; return GC_E_PAYLOAD_FLAGS; }
static int b_exact_topk (gc_buf_t *b) { s_valid_sparse (b); b->data [5] = GC_PAYLOAD_FLAG_EXACT; return GC_E_PAYLOAD_FLAGS; }
static int b_n_params (gc_buf_t *b) { s_valid_sparse (b); gc_put_u32 (b->data + 8, 58); return GC_E_PAYLOAD_LAYOUT; }
static int b_n_layers (gc_buf_t *b) { s_valid_sparse (b); gc_put_u16 (b->data + 12, 5); return GC_E_PAYLOAD_LAYOUT; }
static int b_too_many_sections (gc_buf_t *b) { s_valid_sparse (b); gc_put_u16 (b->data + 6, 5); return GC_E_PAYLOAD_COUNT; }
static int b_missing_section (gc_buf_t *b) { s_valid_sparse (b); gc_put_u16 (b->data + 6, 2); return GC_E_PAYLOAD_TRUNCATED; }
static int b_trailing (gc_buf_t *b) { s_valid_sparse (b); gc_buf_append (b, "x", 1, NULL); return GC_E_PAYLOAD_TRAILING; }
static int b_layer_range (gc_buf_t *b) { s_valid_sparse (b); gc_put_u16 (b->data + 24, 4); return GC_E_PAYLOAD_LAYER_ID; }

static int
b_layer_repeat (gc_buf_t *b)
{
    s_valid_sparse (b);
    size_t len = b->len - GC_PAYLOAD_HEADER_SIZE;
    gc_buf_append (b, b->data + GC_PAYLOAD_HEADER_SIZE, len, NULL);
    gc_put_u16 (b->data + 6, 2);
    return GC_E_PAYLOAD_LAYER_ID;
}

static int b_layer_count (gc_buf_t *b) { s_valid_sparse (b); gc_put_u32 (b->data + 28, 31); return GC_E_PAYLOAD_LAYOUT; }
static int b_encoding (gc_buf_t *b) { s_valid_sparse (b); b->data [26] = 9; return GC_E_PAYLOAD_ENCODING; }
static int b_valfmt (gc_buf_t *b) { s_valid_sparse (b); b->data [27] = 2; return GC_E_PAYLOAD_ENCODING; }
static int b_enc_method (gc_buf_t *b) { s_valid_sparse (b); b->data [26] = GC_ENC_LOWRANK; return GC_E_PAYLOAD_ENCODING; }
static int b_body_past_end (gc_buf_t *b) { s_valid_sparse (b); gc_put_u32 (b->data + 32, 0xffffffffu); return GC_E_PAYLOAD_TRUNCATED; }
static int b_nnz_zero (gc_buf_t *b) { s_valid_sparse (b); gc_put_u32 (b->data + 36, 0); return GC_E_PAYLOAD_COUNT; }
static int b_nnz_big (gc_buf_t *b) { s_valid_sparse (b); gc_put_u32 (b->data + 36, 31); return GC_E_PAYLOAD_COUNT; }
static int b_length (gc_buf_t *b) { s_valid_sparse (b); gc_put_u32 (b->data + 40, 3); return GC_E_PAYLOAD_LENGTH; }
static int b_index_range (gc_buf_t *b) { s_valid_sparse (b); b->data [45] = 27; return GC_E_PAYLOAD_INDEX_RANGE; }
static int b_index_order (gc_buf_t *b) { s_valid_sparse (b); b->data [45] = 0; return GC_E_PAYLOAD_INDEX_ORDER; }
//  Method none, two dense fp32 sections (layers 1 and 3): a non-finite value
//  at position `at` of the second, found while the values are added.
static int
s_dense_bad (gc_buf_t *b, int at, float v)
{
    s_header (b, GC_METHOD_NONE, 0, 2, 57, 4);
    uint8_t *p = s_section (b, 1, GC_ENC_DENSE, GC_VAL_FP32, 6, 24);
    for (int i = 0; i < 6; i++)
        s_f32 (p + 4 * i, 0.5f * (float) i);
    p = s_section (b, 3, GC_ENC_DENSE, GC_VAL_FP32, 3, 12);
    s_f32 (p + 4 * at, v);
    return GC_E_PAYLOAD_NONFINITE;
}

static int b_dense_valid (gc_buf_t *b) { s_dense_bad (b, 0, 1.0f); return 0; }
//  Top-k with nearly every entry selected writes dense sections (+0 between).
static int b_dense_in_topk (gc_buf_t *b) { s_dense_bad (b, 0, 1.0f); b->data [4] = GC_METHOD_TOPK; return 0; }
static int b_dense_nan (gc_buf_t *b) { return s_dense_bad (b, 2, NAN); }
static int b_dense_inf (gc_buf_t *b) { return s_dense_bad (b, 0, INFINITY); }
static int b_nan_value (gc_buf_t *b) { s_valid_sparse (b); s_f32 (b->data + 50, NAN); return GC_E_PAYLOAD_NONFINITE; }
static int b_inf_value (gc_buf_t *b) { s_valid_sparse (b); s_f32 (b->data + 46, -INFINITY); return GC_E_PAYLOAD_NONFINITE; }

//  Varint blocks: overlong, beyond 32 bits, running past the block,
//  trailing bytes in the block.
static int
s_varint_case (gc_buf_t *b, const uint8_t *idx, uint32_t ib, uint32_t nnz)
{
    s_header (b, GC_METHOD_TOPK, 0, 1, 57, 4);
    uint8_t *p = s_section (b, 0, GC_ENC_SPARSE_VARINT, GC_VAL_FP32, 30, 8 + ib + 4 * nnz);
    gc_put_u32 (p, nnz);
    gc_put_u32 (p + 4, ib);
    memcpy (p + 8, idx, ib);
    for (uint32_t j = 0; j < nnz; j++)
        s_f32 (p + 8 + ib + 4 * j, 1.0f);
    return GC_E_PAYLOAD_VARINT;
}

static int b_varint_overlong (gc_buf_t *b) { static const uint8_t i [] = { 0x83, 0x00 }; return s_varint_case (b, i, 2, 1); }
//  The same with four bytes or more left in the block (the word-at-a-time read).
static int b_varint_overlong_word (gc_buf_t *b) { static const uint8_t i [] = { 0x01, 0x83, 0x00, 0x01, 0x01, 0x01 }; return s_varint_case (b, i, 6, 5); }
static int b_varint_33bits (gc_buf_t *b) { static const uint8_t i [] = { 0x80, 0x80, 0x80, 0x80, 0x10 }; return s_varint_case (b, i, 5, 1); }
static int b_varint_runs_out (gc_buf_t *b) { static const uint8_t i [] = { 0x01, 0x81 }; return s_varint_case (b, i, 2, 2); }
static int b_varint_trailing (gc_buf_t *b) { static const uint8_t i [] = { 0x01, 0x01, 0x01 }; return s_varint_case (b, i, 3, 2); }
static int b_varint_block_small (gc_buf_t *b) { static const uint8_t i [] = { 0x01 }; return s_varint_case (b, i, 1, 2); }

static int
b_varint_huge_gap (gc_buf_t *b)
{
    //  A valid 32-bit varint whose index overflows the layer.
    static const uint8_t i [] = { 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f };
    s_varint_case (b, i, 6, 2);
    return GC_E_PAYLOAD_INDEX_RANGE;
}

static uint8_t *
s_bitmap_case (gc_buf_t *b, uint32_t nnz)
{
    //  Layer 0 has 30 entries: a 4-byte bitmap.
    s_header (b, GC_METHOD_TOPK, 0, 1, 57, 4);
    uint8_t *p = s_section (b, 0, GC_ENC_SPARSE_BITMAP, GC_VAL_FP16, 30, 4 + 4 + 2 * nnz);
    gc_put_u32 (p, nnz);
    for (uint32_t j = 0; j < nnz; j++)
        gc_put_u16 (p + 8 + 2 * j, 0x3c00);     /* 1.0 */
    return p;
}

static int b_bitmap_valid (gc_buf_t *b) { uint8_t *p = s_bitmap_case (b, 2); p [4] = 0x05; return 0; }
static int b_bitmap_popcount (gc_buf_t *b) { uint8_t *p = s_bitmap_case (b, 2); p [4] = 0x07; return GC_E_PAYLOAD_COUNT; }
static int b_bitmap_padding (gc_buf_t *b) { uint8_t *p = s_bitmap_case (b, 2); p [4] = 0x01; p [7] = 0x40; return GC_E_PAYLOAD_INDEX_RANGE; }
static int b_half_inf (gc_buf_t *b) { uint8_t *p = s_bitmap_case (b, 2); p [4] = 0x05; gc_put_u16 (p + 10, 0xfc00); return GC_E_PAYLOAD_NONFINITE; }
static int b_half_nan (gc_buf_t *b) { uint8_t *p = s_bitmap_case (b, 2); p [4] = 0x05; gc_put_u16 (p + 8, 0x7e01); return GC_E_PAYLOAD_NONFINITE; }

static int
b_dense_length (gc_buf_t *b)
{
    s_header (b, GC_METHOD_NONE, 0, 1, 57, 4);
    s_section (b, 1, GC_ENC_DENSE, GC_VAL_FP32, 6, 20);
    return GC_E_PAYLOAD_LENGTH;
}

static int
b_exact_valid (gc_buf_t *b)
{
    s_header (b, GC_METHOD_NONE, GC_PAYLOAD_FLAG_EXACT, 1, 57, 4);
    uint8_t *p = s_section (b, 3, GC_ENC_DENSE, GC_VAL_FP32, 3, 12);
    s_f32 (p + 8, 4.0f);
    return 0;
}

static int
b_fp16_method_fp32 (gc_buf_t *b)
{
    s_header (b, GC_METHOD_FP16, 0, 1, 57, 4);
    s_section (b, 3, GC_ENC_DENSE, GC_VAL_FP32, 3, 12);
    return GC_E_PAYLOAD_ENCODING;
}

//  QSGD on layer 1 (6 entries), s = 2 (3-bit codes 0..4), bucket 4:
//  2 norms, 18 bits of codes = 3 bytes.
static uint8_t *
s_qsgd_case (gc_buf_t *b, uint16_t s, uint32_t bucket)
{
    s_header (b, GC_METHOD_QSGD, 0, 1, 57, 4);
    uint8_t *p = s_section (b, 1, GC_ENC_QSGD, GC_VAL_FP32, 6, 8 + 8 + 3);
    gc_put_u16 (p, s);
    gc_put_u32 (p + 4, bucket);
    s_f32 (p + 8, 1.0f);
    s_f32 (p + 12, 2.0f);
    //  All codes 2 (level 0): 010 x 6, LSB first.
    uint32_t bits = 0;
    for (int i = 0; i < 6; i++)
        bits |= 2u << (3 * i);
    p [16] = (uint8_t) bits;
    p [17] = (uint8_t) (bits >> 8);
    p [18] = (uint8_t) (bits >> 16);
    return p;
}

static int b_qsgd_valid (gc_buf_t *b) { s_qsgd_case (b, 2, 4); return 0; }
static int b_qsgd_levels (gc_buf_t *b) { s_qsgd_case (b, 0, 4); return GC_E_PAYLOAD_PARAM; }
static int b_qsgd_reserved (gc_buf_t *b) { uint8_t *p = s_qsgd_case (b, 2, 4); p [2] = 1; return GC_E_PAYLOAD_PARAM; }
static int b_qsgd_bucket0 (gc_buf_t *b) { s_qsgd_case (b, 2, 0); return GC_E_PAYLOAD_PARAM; }
static int b_qsgd_bucket_big (gc_buf_t *b) { s_qsgd_case (b, 2, 7); return GC_E_PAYLOAD_PARAM; }
static int b_qsgd_length (gc_buf_t *b) { s_qsgd_case (b, 2, 2); return GC_E_PAYLOAD_LENGTH; }
static int b_qsgd_code (gc_buf_t *b) { uint8_t *p = s_qsgd_case (b, 2, 4); p [16] |= 0x07; return GC_E_PAYLOAD_PARAM; }
static int b_qsgd_padding (gc_buf_t *b) { uint8_t *p = s_qsgd_case (b, 2, 4); p [18] |= 0x80; return GC_E_PAYLOAD_PARAM; }
static int b_qsgd_norm_neg (gc_buf_t *b) { uint8_t *p = s_qsgd_case (b, 2, 4); s_f32 (p + 12, -1.0f); return GC_E_PAYLOAD_RANGE; }
static int b_qsgd_norm_nan (gc_buf_t *b) { uint8_t *p = s_qsgd_case (b, 2, 4); s_f32 (p + 8, NAN); return GC_E_PAYLOAD_NONFINITE; }
static int b_qsgd_fp16 (gc_buf_t *b) { s_qsgd_case (b, 2, 4); b->data [27] = GC_VAL_FP16; return GC_E_PAYLOAD_ENCODING; }

//  Sign on layer 3 (3 entries), bucket 2: 2 scales, 1 byte of bits.
static uint8_t *
s_sign_case (gc_buf_t *b, uint32_t bucket)
{
    s_header (b, GC_METHOD_SIGN, 0, 1, 57, 4);
    uint8_t *p = s_section (b, 3, GC_ENC_SIGN, GC_VAL_FP32, 3, 4 + 8 + 1);
    gc_put_u32 (p, bucket);
    s_f32 (p + 4, 0.5f);
    s_f32 (p + 8, 0.25f);
    p [12] = 0x05;
    return p;
}

static int b_sign_valid (gc_buf_t *b) { s_sign_case (b, 2); return 0; }
//  Found by the fuzzer: scale - 2 * scale overflowed for scales near FLT_MAX.
static int b_sign_huge_scale (gc_buf_t *b) { uint8_t *p = s_sign_case (b, 2); s_f32 (p + 4, 3e38f); return 0; }
static int b_sign_bucket (gc_buf_t *b) { s_sign_case (b, 4); return GC_E_PAYLOAD_PARAM; }
static int b_sign_length (gc_buf_t *b) { s_sign_case (b, 1); return GC_E_PAYLOAD_LENGTH; }
static int b_sign_scale (gc_buf_t *b) { uint8_t *p = s_sign_case (b, 2); s_f32 (p + 8, -0.25f); return GC_E_PAYLOAD_RANGE; }
static int b_sign_scale_inf (gc_buf_t *b) { uint8_t *p = s_sign_case (b, 2); s_f32 (p + 4, INFINITY); return GC_E_PAYLOAD_NONFINITE; }
static int b_sign_padding (gc_buf_t *b) { uint8_t *p = s_sign_case (b, 2); p [12] = 0x0d; return GC_E_PAYLOAD_PARAM; }

//  Low rank on layer 2 (3x6), rank 1: 3 + 6 values.
static uint8_t *
s_lowrank_case (gc_buf_t *b, int layer, uint32_t rows, uint32_t cols, uint32_t rank, uint32_t count)
{
    s_header (b, GC_METHOD_POWERSGD, 0, 1, 57, 4);
    uint8_t *p = s_section (b, layer, GC_ENC_LOWRANK, GC_VAL_FP32, count, 12 + 4 * rank * (rows + cols));
    gc_put_u32 (p, rows);
    gc_put_u32 (p + 4, cols);
    gc_put_u32 (p + 8, rank);
    for (uint32_t i = 0; i < rank * (rows + cols); i++)
        s_f32 (p + 12 + 4 * i, 0.5f);
    return p;
}

static int b_lowrank_valid (gc_buf_t *b) { s_lowrank_case (b, 2, 3, 6, 1, 18); return 0; }
static int b_lowrank_vector (gc_buf_t *b) { s_lowrank_case (b, 1, 6, 1, 1, 6); return GC_E_PAYLOAD_ENCODING; }
static int b_lowrank_shape (gc_buf_t *b) { s_lowrank_case (b, 2, 6, 3, 1, 18); return GC_E_PAYLOAD_LAYOUT; }
static int b_lowrank_rank0 (gc_buf_t *b) { s_lowrank_case (b, 2, 3, 6, 0, 18); return GC_E_PAYLOAD_PARAM; }
static int b_lowrank_rank_big (gc_buf_t *b) { s_lowrank_case (b, 2, 3, 6, 4, 18); return GC_E_PAYLOAD_PARAM; }
static int b_lowrank_length (gc_buf_t *b) { s_lowrank_case (b, 2, 3, 6, 1, 18); gc_put_u32 (b->data + 32, 40); b->len -= 4; return GC_E_PAYLOAD_LENGTH; }

static int
b_lowrank_overflow (gc_buf_t *b)
{
    uint8_t *p = s_lowrank_case (b, 2, 3, 6, 1, 18);
    s_f32 (p + 12, 1e20f);
    s_f32 (p + 12 + 4 * 3, 1e20f);
    return GC_E_PAYLOAD_RANGE;
}

static int
b_randk_valid (gc_buf_t *b)
{
    s_header (b, GC_METHOD_RANDK, 0, 1, 57, 4);
    uint8_t *p = s_section (b, 0, GC_ENC_RANDK, GC_VAL_FP32, 30, 4 + 12);
    gc_put_u32 (p, 3);
    return 0;
}

static int b_randk_k (gc_buf_t *b) { b_randk_valid (b); gc_put_u32 (b->data + 36, 31); return GC_E_PAYLOAD_COUNT; }
static int b_randk_length (gc_buf_t *b) { b_randk_valid (b); gc_put_u32 (b->data + 36, 2); return GC_E_PAYLOAD_LENGTH; }

static void
test_corrupt_payloads_are_rejected (void **state)
{
    static const struct { const char *name; s_build_fn build; } cases [] = {
        { "valid", b_valid }, { "empty", b_empty }, { "short header", b_short_header },
        { "magic", b_magic }, { "version", b_version }, { "method", b_method },
        { "flags", b_flags }, { "reserved", b_reserved }, { "exact on topk", b_exact_topk },
        { "n_params", b_n_params }, { "n_layers", b_n_layers },
        { "too many sections", b_too_many_sections }, { "missing section", b_missing_section },
        { "trailing", b_trailing }, { "layer id range", b_layer_range },
        { "layer repeated", b_layer_repeat }, { "layer count", b_layer_count },
        { "encoding", b_encoding }, { "value format", b_valfmt },
        { "encoding for method", b_enc_method }, { "body past end", b_body_past_end },
        { "nnz zero", b_nnz_zero }, { "nnz > count", b_nnz_big }, { "sparse length", b_length },
        { "index range", b_index_range }, { "index order", b_index_order },
        { "nan value", b_nan_value }, { "inf value", b_inf_value },
        { "dense valid", b_dense_valid }, { "dense in topk", b_dense_in_topk }, { "dense nan", b_dense_nan }, { "dense inf", b_dense_inf },
        { "varint overlong", b_varint_overlong }, { "varint overlong word", b_varint_overlong_word },
        { "varint 33 bits", b_varint_33bits },
        { "varint runs out", b_varint_runs_out }, { "varint trailing", b_varint_trailing },
        { "varint block small", b_varint_block_small }, { "varint huge gap", b_varint_huge_gap },
        { "bitmap valid", b_bitmap_valid }, { "bitmap popcount", b_bitmap_popcount },
        { "bitmap padding", b_bitmap_padding }, { "fp16 inf", b_half_inf }, { "fp16 nan", b_half_nan },
        { "dense length", b_dense_length }, { "exact valid", b_exact_valid },
        { "fp16 method with fp32 values", b_fp16_method_fp32 },
        { "qsgd valid", b_qsgd_valid }, { "qsgd levels", b_qsgd_levels },
        { "qsgd reserved", b_qsgd_reserved }, { "qsgd bucket 0", b_qsgd_bucket0 },
        { "qsgd bucket > count", b_qsgd_bucket_big }, { "qsgd length", b_qsgd_length },
        { "qsgd code > 2s", b_qsgd_code }, { "qsgd padding", b_qsgd_padding },
        { "qsgd negative norm", b_qsgd_norm_neg }, { "qsgd nan norm", b_qsgd_norm_nan },
        { "qsgd fp16", b_qsgd_fp16 },
        { "sign valid", b_sign_valid }, { "sign huge scale", b_sign_huge_scale }, { "sign bucket", b_sign_bucket }, { "sign length", b_sign_length },
        { "sign negative scale", b_sign_scale }, { "sign inf scale", b_sign_scale_inf },
        { "sign padding", b_sign_padding },
        { "lowrank valid", b_lowrank_valid }, { "lowrank on vector", b_lowrank_vector },
        { "lowrank shape", b_lowrank_shape }, { "lowrank rank 0", b_lowrank_rank0 },
        { "lowrank rank too big", b_lowrank_rank_big }, { "lowrank length", b_lowrank_length },
        { "lowrank overflow", b_lowrank_overflow },
        { "randk valid", b_randk_valid }, { "randk k", b_randk_k }, { "randk length", b_randk_length },
    };
    gc_layout_t layout;
    s_small_layout (&layout);
    gc_buf_t b;
    gc_buf_init (&b);
    float into [57], before [57];
    for (int i = 0; i < 57; i++)
        before [i] = (float) i - 20.0f;
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        int want = cases [c].build (&b);
        memcpy (into, before, sizeof into);
        gc_err_t err = { 0 };
        int rc = gc_payload_decompress_add (b.data, b.len, &layout, into, &err);
        //  Onto a base: the same verdict, the same code, the base only read.
        float onto [57];
        gc_err_t oerr = { 0 };
        int orc = gc_payload_decode_onto (b.data, b.len, &layout, before, onto, &oerr);
        if (orc != rc || oerr.code != err.code)
            fail_msg ("%s: decode_onto rc %d code %d, decompress_add rc %d code %d", cases [c].name,
                      orc, oerr.code, rc, err.code);
        for (int i = 0; i < 57; i++)
            assert_true (before [i] == (float) i - 20.0f);
        if (want == 0) {
            if (rc)
                fail_msg ("%s: rejected (%s)", cases [c].name, err.msg);
            for (int i = 0; i < 57; i++)
                if (!isfinite (into [i]))
                    fail_msg ("%s: entry %d decodes to %g", cases [c].name, i, (double) into [i]);
            assert_memory_equal (onto, into, sizeof into);
            continue;
        }
        assert_string_equal (oerr.msg, err.msg);
        if (rc != -1 || err.code != want)
            fail_msg ("%s: rc %d code %d (%s), expected code %d (%s)", cases [c].name, rc,
                      err.code, err.msg, want, gc_err_name (want));
        assert_true (strlen (err.msg) > 10);
        assert_string_not_equal (gc_err_name (err.code), "unknown");
        //  Nothing written on error.
        assert_memory_equal (into, before, sizeof into);
        assert_int_equal (gc_payload_inspect (b.data, b.len, &layout, NULL, &err), -1);
        assert_int_equal (err.code, want);
    }
    gc_buf_free (&b);
}

//  Every single-byte change or truncation of real payloads either decodes
//  to finite values or is rejected without a write.
static void
test_mutations_never_corrupt (void **state)
{
    gc_layout_t layout;
    s_small_layout (&layout);
    float x [57];
    for (int i = 0; i < 57; i++)
        x [i] = sinf ((float) i) * 3.0f;
    static const char *specs [] = { "topk:0.2", "topk:0.6:fp16", "randk:0.3", "qsgd:4:bucket=5",
                                    "sign:bucket=4", "powersgd:1", "fp16", "threshold:1" };
    for (size_t s = 0; s < sizeof specs / sizeof specs [0]; s++) {
        gc_compressor_t *comp = gc_compressor_new (specs [s], &layout, 3, NULL);
        gc_buf_t out;
        gc_buf_init (&out);
        assert_int_equal (gc_compressor_compress (comp, x, 1, &out, NULL), 0);
        uint8_t *copy = malloc (out.len);
        for (size_t pos = 0; pos < out.len; pos++)
            for (int bit = 0; bit < 8; bit += 3) {
                memcpy (copy, out.data, out.len);
                copy [pos] ^= (uint8_t) (1u << bit);
                float into [57] = { 0 };
                int rc = gc_payload_decompress_add (copy, out.len, &layout, into, NULL);
                for (int i = 0; i < 57; i++)
                    assert_true (rc ? into [i] == 0.0f : isfinite (into [i]));
            }
        for (size_t len = 0; len < out.len; len++) {
            float into [57] = { 0 };
            assert_int_equal (gc_payload_decompress_add (out.data, len, &layout, into, NULL), -1);
        }
        free (copy);
        gc_buf_free (&out);
        gc_compressor_destroy (&comp);
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_round_trip_every_method),
        cmocka_unit_test (test_topk_payload_keeps_k_largest),
        cmocka_unit_test (test_varint_write_matches_bytes),
        cmocka_unit_test (test_varint_decode_every_length),
        cmocka_unit_test (test_varint_or_bitmap_by_size),
        cmocka_unit_test (test_payload_for_other_layout_is_rejected),
        cmocka_unit_test (test_half_simd_equals_scalar),
        cmocka_unit_test (test_corrupt_payloads_are_rejected),
        cmocka_unit_test (test_mutations_never_corrupt),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
