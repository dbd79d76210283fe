/*  LGC's codec (compress/gc_lgc_codec.c): training lowers the reconstruction
    error of structured chunks, training is deterministic, a decoder read
    from hostile bytes never decodes beyond its chunk's scale, the
    serialised decoder round-trips to the same bits and id, and malformed
    blobs, codes and scales are refused by name. The lgc method
    (compress/gc_lgc.c): its two phases, the decoder carried in payloads and
    keyframes, receivers that never decode with a codec they do not hold,
    exact error feedback, malformed lgc sections refused by name. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_half.h"
#include "gc_lgc_codec.h"
#include "gc_payload.h"
#include "gc_rng.h"

#define S_BASIS 4

//  n values (a multiple of 64) whose chunks lie in the span of S_BASIS
//  fixed directions, with magnitudes spread over three decades: what an
//  autoencoder with m >= S_BASIS codes can learn and an untrained one
//  cannot reproduce.
static void
s_structured (float *v, size_t n, uint64_t seed)
{
    gc_rng_t basis_rng, rng;
    gc_rng_init (&basis_rng, 99, 0);
    float basis [S_BASIS][GC_LGC_CHUNK];
    for (int k = 0; k < S_BASIS; k++)
        gc_rng_fill_normal (&basis_rng, basis [k], GC_LGC_CHUNK, 0.0f, 1.0f);
    gc_rng_init (&rng, seed, 1);
    for (size_t at = 0; at < n; at += GC_LGC_CHUNK) {
        float mag = powf (10.0f, -3.0f * gc_rng_float (&rng));
        float a [S_BASIS];
        for (int k = 0; k < S_BASIS; k++)
            a [k] = mag * (float) gc_rng_normal (&rng);
        for (size_t i = 0; i < GC_LGC_CHUNK; i++) {
            float s = 0;
            for (int k = 0; k < S_BASIS; k++)
                s += a [k] * basis [k][i];
            v [at + i] = s;
        }
    }
}

static gc_lgc_codec_t *
s_trained (uint32_t m, uint64_t seed, int steps, double *before, double *after)
{
    size_t n = 16 * GC_LGC_CHUNK;
    float *batch = malloc (n * sizeof *batch), *held = malloc (n * sizeof *held);
    s_structured (held, n, 1000);
    gc_lgc_codec_t *codec = gc_lgc_codec_new (m, seed, NULL);
    assert_non_null (codec);
    if (before)
        *before = gc_lgc_codec_error (codec, held, n);
    for (int s = 0; s < steps; s++) {
        s_structured (batch, n, (uint64_t) s);
        gc_lgc_codec_train (codec, batch, n, 3e-3f);
    }
    if (after)
        *after = gc_lgc_codec_error (codec, held, n);
    free (batch);
    free (held);
    return codec;
}

static void
test_training_lowers_the_error (void **state)
{
    double before, after;
    gc_lgc_codec_t *codec = s_trained (8, 7, 600, &before, &after);
    printf ("relative error on held-out chunks: %.4f untrained, %.4f after 600 steps\n",
            before, after);
    assert_true (before > 0.5);
    assert_true (after < 0.1 * before);
    gc_lgc_codec_destroy (&codec);
    assert_null (codec);
}

static void
test_training_is_deterministic (void **state)
{
    gc_lgc_codec_t *a = s_trained (8, 3, 20, NULL, NULL);
    gc_lgc_codec_t *b = s_trained (8, 3, 20, NULL, NULL);
    gc_lgc_codec_t *c = s_trained (8, 4, 20, NULL, NULL);
    assert_true (gc_lgc_codec_id (a) == gc_lgc_codec_id (b));
    assert_true (gc_lgc_codec_id (a) != gc_lgc_codec_id (c));
    uint64_t id = gc_lgc_codec_id (a);
    float v [GC_LGC_CHUNK];
    s_structured (v, GC_LGC_CHUNK, 5);
    gc_lgc_codec_train (a, v, GC_LGC_CHUNK, 1e-3f);
    assert_true (gc_lgc_codec_id (a) != id);      /* training renames it */
    gc_lgc_codec_destroy (&a);
    gc_lgc_codec_destroy (&b);
    gc_lgc_codec_destroy (&c);
}

//  A blob with every weight drawn from +-bound (bound within the reader's limit).
static void
s_blob (gc_buf_t *b, uint32_t m, uint64_t seed, float bound)
{
    gc_buf_reset (b);
    gc_lgc_codec_t *c = gc_lgc_codec_new (m, 1, NULL);
    assert_int_equal (gc_lgc_codec_save (c, b, NULL), 0);
    gc_lgc_codec_destroy (&c);
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 2);
    for (size_t at = GC_LGC_BLOB_HEADER; at < b->len; at += 4)
        gc_put_f32 (b->data + at, bound * (2.0f * gc_rng_float (&rng) - 1.0f));
}

static void
test_hostile_decoder_stays_within_the_scale (void **state)
{
    gc_buf_t b;
    gc_buf_init (&b);
    gc_rng_t rng;
    gc_rng_init (&rng, 11, 0);
    size_t n = 3 * GC_LGC_CHUNK + 17;     /* a partial last chunk */
    size_t nc = gc_lgc_chunks (n);
    uint8_t scales [2 * 4], codes [2 * 4 * GC_LGC_MAX_CODE];
    float out [4 * GC_LGC_CHUNK];
    float bounds [] = { 1.0f, 100.0f, GC_LGC_MAX_WEIGHT };
    for (int trial = 0; trial < 60; trial++) {
        uint32_t m = 1 + (uint32_t) gc_rng_below (&rng, GC_LGC_MAX_CODE);
        s_blob (&b, m, (uint64_t) trial, bounds [trial % 3]);
        gc_lgc_codec_t *d = gc_lgc_codec_load (b.data, b.len, NULL);
        assert_non_null (d);
        assert_false (gc_lgc_codec_can_encode (d));
        float sc [4];
        for (size_t c = 0; c < nc; c++) {
            //  Scales up to the largest half, codes anywhere in [-1, 1], the ends too.
            sc [c] = c == 0 ? GC_HALF_MAX : c == 1 ? -GC_HALF_MAX
                   : (trial % 2 ? -1.0f : 1.0f) * powf (10.0f, 8.0f * gc_rng_float (&rng) - 6.0f);
            gc_put_u16 (scales + 2 * c, gc_half_from_float (sc [c]));
            sc [c] = gc_half_to_float (gc_half_from_float (sc [c]));
            for (size_t j = 0; j < m; j++) {
                float z = trial % 2 ? (j % 2 ? 1.0f : -1.0f) : 2.0f * gc_rng_float (&rng) - 1.0f;
                gc_put_u16 (codes + 2 * (m * c + j), gc_half_from_float (z));
            }
        }
        assert_int_equal (gc_lgc_check_codes (scales, codes, n, m, NULL), 0);
        gc_lgc_codec_decode (d, scales, codes, n, out);
        for (size_t i = 0; i < n; i++) {
            assert_true (isfinite (out [i]));
            assert_true (fabsf (out [i]) <= fabsf (sc [i / GC_LGC_CHUNK]));
        }
        gc_lgc_codec_destroy (&d);
    }
    gc_buf_free (&b);
}

static void
test_serialised_decoder_round_trips (void **state)
{
    gc_lgc_codec_t *enc = s_trained (6, 9, 50, NULL, NULL);
    gc_buf_t b;
    gc_buf_init (&b);
    assert_int_equal (gc_lgc_codec_save (enc, &b, NULL), 0);
    assert_int_equal (b.len, gc_lgc_blob_size (6));
    gc_lgc_codec_t *dec = gc_lgc_codec_load (b.data, b.len, NULL);
    assert_non_null (dec);
    assert_int_equal (gc_lgc_codec_m (dec), 6);
    assert_true (gc_lgc_codec_id (dec) == gc_lgc_codec_id (enc));
    size_t n = 5 * GC_LGC_CHUNK + 3;
    float *v = malloc (6 * GC_LGC_CHUNK * sizeof *v);
    s_structured (v, 6 * GC_LGC_CHUNK, 77);
    uint8_t scales [2 * 6], codes [2 * 6 * 6];
    assert_int_equal (gc_lgc_code_bytes (n, 6), sizeof scales + sizeof codes);
    gc_lgc_codec_encode (enc, v, n, scales, codes);
    assert_int_equal (gc_lgc_check_codes (scales, codes, n, 6, NULL), 0);
    float a [6 * GC_LGC_CHUNK], c [6 * GC_LGC_CHUNK];
    gc_lgc_codec_decode (enc, scales, codes, n, a);
    gc_lgc_codec_decode (dec, scales, codes, n, c);
    assert_memory_equal (a, c, n * sizeof *a);
    //  Saving the loaded decoder gives the same bytes.
    gc_buf_t b2;
    gc_buf_init (&b2);
    assert_int_equal (gc_lgc_codec_save (dec, &b2, NULL), 0);
    assert_int_equal (b2.len, b.len);
    assert_memory_equal (b2.data, b.data, b.len);
    free (v);
    gc_buf_free (&b);
    gc_buf_free (&b2);
    gc_lgc_codec_destroy (&enc);
    gc_lgc_codec_destroy (&dec);
}

//  Load must fail with code and a message containing what.
static void
s_refused (const uint8_t *p, size_t len, int code, const char *what)
{
    gc_err_t err = { 0 };
    gc_lgc_codec_t *d = gc_lgc_codec_load (p, len, &err);
    assert_null (d);
    assert_int_equal (err.code, code);
    if (!strstr (err.msg, what))
        fail_msg ("'%s' does not name '%s'", err.msg, what);
}

static void
test_malformed_blobs_are_refused_by_name (void **state)
{
    gc_buf_t b;
    gc_buf_init (&b);
    s_blob (&b, 8, 1, 1.0f);
    uint8_t *copy = malloc (b.len + 4);
    size_t len = b.len;
#define S_CASE(edit, code, what) \
    do { memcpy (copy, b.data, len); edit; s_refused (copy, len, code, what); } while (0)
    s_refused (b.data, 5, GC_E_PAYLOAD_TRUNCATED, "header");
    s_refused (NULL, 0, GC_E_PAYLOAD_TRUNCATED, "header");
    S_CASE (copy [1] = 'X', GC_E_PAYLOAD_MAGIC, "magic");
    S_CASE (copy [3] = 2, GC_E_PAYLOAD_VERSION, "version 2");
    S_CASE (gc_put_u16 (copy + 4, 32), GC_E_PAYLOAD_PARAM, "chunk 32");
    S_CASE (gc_put_u16 (copy + 6, 16), GC_E_PAYLOAD_PARAM, "hidden 16");
    S_CASE (gc_put_u16 (copy + 8, 0), GC_E_PAYLOAD_PARAM, "code 0");
    S_CASE (gc_put_u16 (copy + 8, 33), GC_E_PAYLOAD_PARAM, "code 33");
    S_CASE (gc_put_u16 (copy + 10, 1), GC_E_PAYLOAD_PARAM, "reserved 1");
    S_CASE (gc_put_u16 (copy + 8, 7), GC_E_PAYLOAD_LENGTH, "code size 7 needs");
    S_CASE (gc_put_f32 (copy + GC_LGC_BLOB_HEADER + 4 * 40, NAN), GC_E_PAYLOAD_NONFINITE, "weight 40");
    S_CASE (gc_put_f32 (copy + GC_LGC_BLOB_HEADER, -INFINITY), GC_E_PAYLOAD_NONFINITE, "weight 0");
    S_CASE (gc_put_f32 (copy + len - 4, 2e4f), GC_E_PAYLOAD_RANGE, "is 20000");
    s_refused (b.data, len - 1, GC_E_PAYLOAD_LENGTH, "needs");
    memcpy (copy, b.data, len);
    s_refused (copy, len + 4, GC_E_PAYLOAD_LENGTH, "needs");
#undef S_CASE
    free (copy);
    gc_buf_free (&b);
}

//  gc_lgc_check_codes on one chunk of m = 2 with one value replaced.
static void
s_codes_refused (int which, float value, int code, const char *what)
{
    uint8_t scales [2], codes [4];
    gc_put_u16 (scales, gc_half_from_float (0.5f));
    gc_put_u16 (codes, gc_half_from_float (0.25f));
    gc_put_u16 (codes + 2, gc_half_from_float (-1.0f));
    uint8_t *p = which < 0 ? scales : codes + 2 * which;
    gc_put_u16 (p, gc_half_from_float (value));
    gc_err_t err = { 0 };
    assert_int_equal (gc_lgc_check_codes (scales, codes, 10, 2, &err), -1);
    assert_int_equal (err.code, code);
    if (!strstr (err.msg, what))
        fail_msg ("'%s' does not name '%s'", err.msg, what);
}

static void
test_malformed_codes_are_refused_by_name (void **state)
{
    s_codes_refused (-1, NAN, GC_E_PAYLOAD_NONFINITE, "chunk 0: scale");
    s_codes_refused (-1, INFINITY, GC_E_PAYLOAD_NONFINITE, "scale");
    s_codes_refused (1, NAN, GC_E_PAYLOAD_NONFINITE, "code 1");
    s_codes_refused (0, 1.5f, GC_E_PAYLOAD_RANGE, "code 0 is 1.5");
    s_codes_refused (1, -1.01f, GC_E_PAYLOAD_RANGE, "outside [-1, 1]");
}

//  ---- the lgc method (compress/gc_lgc.c) and its payloads ----

static void
s_layout (gc_layout_t *l)
{
    gc_layout_init (l);
    assert_int_equal (gc_layout_add_matrix (l, "a.w", 40, 30, NULL), 0);
    assert_int_equal (gc_layout_add_vector (l, "a.b", 40, NULL), 0);
    assert_int_equal (gc_layout_add_matrix (l, "c.w", 10, 40, NULL), 0);
}

//  Phase one: plain sparse payloads any receiver decodes; then lgc
//  payloads named by the codec id, the first three carrying the decoder;
//  a receiver decodes them with the carried decoder to the sender's bits,
//  and without it (or with another) refuses them as GC_E_CODEC, untouched.
static void
test_method_phases_and_codec_transport (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_compressor_t *comp = gc_compressor_new ("lgc:0.1:6:warmup=3:steps=2", &layout, 4, NULL);
    gc_compressor_t *other = gc_compressor_new ("lgc:0.1:6:warmup=0", &layout, 5, NULL);
    assert_non_null (comp);
    assert_string_equal (gc_compressor_name (comp), "lgc:0.1:6:warmup=3:steps=2:lr=0.003");
    float *x = gc_test_normal (n, 1), *a = calloc (n, sizeof *a), *b = calloc (n, sizeof *b);
    gc_buf_t out, tmp;
    gc_buf_init (&out);
    gc_buf_init (&tmp);
    assert_int_equal (gc_compressor_compress (other, x, 0, &tmp, NULL), 0);
    gc_lgc_codec_t *stranger = gc_payload_codec (tmp.data, tmp.len, &layout, NULL);
    assert_non_null (stranger);
    gc_lgc_codec_t *held = NULL;
    for (uint64_t round = 0; round < 7; round++) {
        assert_int_equal (gc_compressor_compress (comp, x, round, &out, NULL), 0);
        gc_payload_info_t info;
        assert_int_equal (gc_payload_inspect (out.data, out.len, &layout, &info, NULL), 0);
        assert_int_equal (info.method, GC_METHOD_LGC);
        assert_true (info.codec == (round >= 3 && round < 6));
        gc_err_t err = { 0 };
        memset (a, 0, n * sizeof *a);
        int rc = gc_payload_decompress_add (out.data, out.len, &layout, a, &err);
        assert_true (gc_payload_codec_id (out.data, out.len) == info.seed);
        if (round < 3) {
            assert_int_equal (rc, 0);
            assert_null (gc_compressor_codec (comp));
            assert_true (info.seed == 0);
            continue;
        }
        gc_lgc_codec_t *mine = gc_compressor_codec (comp);
        assert_non_null (mine);
        assert_true (info.seed == gc_lgc_codec_id (mine));
        assert_int_equal (rc, -1);
        assert_int_equal (err.code, GC_E_CODEC);
        for (size_t i = 0; i < n; i++)
            assert_true (a [i] == 0.0f);
        assert_int_equal (gc_payload_decompress_add_with (out.data, out.len, &layout, stranger, a, &err), -1);
        assert_int_equal (err.code, GC_E_CODEC);
        if (info.codec) {
            gc_lgc_codec_destroy (&held);
            held = gc_payload_codec (out.data, out.len, &layout, NULL);
            assert_non_null (held);
        }
        assert_int_equal (gc_payload_decompress_add_with (out.data, out.len, &layout, held, a, &err), 0);
        memset (b, 0, n * sizeof *b);
        assert_int_equal (gc_payload_decompress_add_with (out.data, out.len, &layout, mine, b, &err), 0);
        assert_memory_equal (a, b, n * sizeof *a);
        float *onto = malloc (n * sizeof *onto);
        assert_int_equal (gc_payload_decode_onto_with (out.data, out.len, &layout, held, NULL, onto, NULL), 0);
        assert_memory_equal (onto, a, n * sizeof *a);
        free (onto);
        //  Decoded values stay within what was selected's magnitude scale.
        size_t nz = 0;
        for (size_t i = 0; i < n; i++)
            nz += a [i] != 0.0f;
        assert_true (nz > 0 && nz <= (size_t) (0.1 * (double) n + 1));
    }
    //  A keyframe carries the decoder too.
    assert_int_equal (gc_payload_encode_dense (&tmp, &layout, x, GC_METHOD_NONE, GC_VAL_FP32, 0, NULL), 0);
    assert_int_equal (gc_payload_attach_codec (&tmp, gc_compressor_codec (comp), NULL), 0);
    assert_int_equal (gc_payload_attach_codec (&tmp, gc_compressor_codec (comp), NULL), -1);
    memset (a, 0, n * sizeof *a);
    assert_int_equal (gc_payload_decompress_add (tmp.data, tmp.len, &layout, a, NULL), 0);
    assert_memory_equal (a, x, n * sizeof *a);
    gc_lgc_codec_t *from_kf = gc_payload_codec (tmp.data, tmp.len, &layout, NULL);
    assert_non_null (from_kf);
    assert_true (gc_lgc_codec_named (from_kf, gc_lgc_codec_id (gc_compressor_codec (comp))));
    gc_lgc_codec_destroy (&from_kf);
    gc_lgc_codec_destroy (&held);
    gc_lgc_codec_destroy (&stranger);
    gc_compressor_destroy (&comp);
    gc_compressor_destroy (&other);
    gc_buf_free (&out);
    gc_buf_free (&tmp);
    free (x);
    free (a);
    free (b);
}

//  Error feedback over lgc: what a receiver decodes with the carried
//  decoder is what the sender counted as sent, bit for bit, and sent + e
//  is the input (e carries the codec's reconstruction error).
static void
test_error_feedback_stays_exact (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_compressor_t *comp = gc_compressor_new ("lgc:0.05:8:warmup=2", &layout, 2, NULL);
    gc_ec_t *ec = gc_ec_new ("ef", comp, NULL);
    assert_non_null (ec);
    float *sent = malloc (n * sizeof *sent), *got = malloc (n * sizeof *got);
    float *v = malloc (n * sizeof *v);
    gc_buf_t out;
    gc_buf_init (&out);
    gc_lgc_codec_t *held = NULL;
    memset (v, 0, n * sizeof *v);
    for (uint64_t round = 0; round < 8; round++) {
        float *u = gc_test_normal (n, 100 + round);
        for (size_t i = 0; i < n; i++)
            v [i] += u [i];                     /* u + e before the step: e was folded in */
        assert_int_equal (gc_ec_step (ec, u, round, &out, sent, NULL, NULL), 0);
        gc_lgc_codec_t *carried = gc_payload_codec (out.data, out.len, &layout, NULL);
        if (carried) {
            gc_lgc_codec_destroy (&held);
            held = carried;
        }
        memset (got, 0, n * sizeof *got);
        assert_int_equal (gc_payload_decompress_add_with (out.data, out.len, &layout, held, got, NULL), 0);
        assert_memory_equal (got, sent, n * sizeof *got);
        const float *e = gc_ec_residual (ec);
        for (size_t i = 0; i < n; i++) {
            assert_true (fabsf (sent [i] + e [i] - v [i]) <= 1e-5f * (1.0f + fabsf (v [i])));
            v [i] = e [i];
        }
        free (u);
    }
    assert_non_null (held);
    gc_lgc_codec_destroy (&held);
    gc_ec_destroy (&ec);
    gc_compressor_destroy (&comp);
    gc_buf_free (&out);
    free (sent);
    free (got);
    free (v);
}

//  An lgc payload with one field of its first section changed: refused
//  with code, the message naming what.
static void
s_lgc_refused (const gc_buf_t *good, const gc_layout_t *layout, const gc_lgc_codec_t *codec,
               size_t at, uint16_t value, int code, const char *what)
{
    uint8_t *p = malloc (good->len);
    memcpy (p, good->data, good->len);
    gc_put_u16 (p + at, value);
    gc_err_t err = { 0 };
    float *into = calloc (layout->n_params, sizeof *into);
    assert_int_equal (gc_payload_decompress_add_with (p, good->len, layout, codec, into, &err), -1);
    assert_int_equal (err.code, code);
    if (!strstr (err.msg, what))
        fail_msg ("'%s' does not name '%s'", err.msg, what);
    for (size_t i = 0; i < layout->n_params; i++)
        assert_true (into [i] == 0.0f);
    free (into);
    free (p);
}

static void
test_malformed_lgc_sections_are_refused_by_name (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    float *x = gc_test_normal (layout.n_params, 3);
    gc_compressor_t *comp = gc_compressor_new ("lgc:0.1:4:warmup=0", &layout, 2, NULL);
    gc_buf_t out;
    gc_buf_init (&out);
    assert_int_equal (gc_compressor_compress (comp, x, 0, &out, NULL), 0);
    gc_lgc_codec_t *held = gc_payload_codec (out.data, out.len, &layout, NULL);
    assert_non_null (held);
    //  The first section follows the header, the codec length and the blob.
    size_t sec = GC_PAYLOAD_HEADER_SIZE + 4 + gc_lgc_blob_size (4);
    assert_int_equal (out.data [sec + 2], GC_ENC_LGC);
    size_t body = sec + GC_PAYLOAD_SECTION_SIZE;
    uint32_t ib = gc_get_u32 (out.data + body + 4);
    size_t scales = body + 12 + ib, codes = scales + 2 * gc_lgc_chunks (gc_get_u32 (out.data + body));
    s_lgc_refused (&out, &layout, held, body + 8, 5, GC_E_PAYLOAD_LENGTH, "its fields imply");
    s_lgc_refused (&out, &layout, held, body + 8, 0, GC_E_PAYLOAD_PARAM, "code size 0");
    s_lgc_refused (&out, &layout, held, body + 10, 1, GC_E_PAYLOAD_PARAM, "reserved 1");
    s_lgc_refused (&out, &layout, held, scales, gc_half_from_float (INFINITY), GC_E_PAYLOAD_NONFINITE, "scale");
    s_lgc_refused (&out, &layout, held, codes + 2, gc_half_from_float (1.5f), GC_E_PAYLOAD_RANGE, "code 1 is 1.5");
    //  A sign padding bit set (the first section's nnz is not a multiple of 8).
    uint32_t nnz = gc_get_u32 (out.data + body);
    assert_true (nnz % 8 != 0);
    size_t last = codes + 2 * 4 * gc_lgc_chunks (nnz) + (nnz + 7) / 8 - 1;
    s_lgc_refused (&out, &layout, held, last - 1, (uint16_t) (gc_get_u16 (out.data + last - 1) | 0x8000),
                   GC_E_PAYLOAD_PARAM, "sign padding");
    //  A blob whose magic is broken: the payload is malformed, not a gap.
    s_lgc_refused (&out, &layout, held, GC_PAYLOAD_HEADER_SIZE + 4, 0x5858, GC_E_PAYLOAD_MAGIC, "magic");
    //  A weight changed: the carried decoder is another codec, not the one named.
    uint8_t *p = malloc (out.len);
    memcpy (p, out.data, out.len);
    gc_put_f32 (p + GC_PAYLOAD_HEADER_SIZE + 4 + GC_LGC_BLOB_HEADER, 0.5f);
    gc_lgc_codec_t *wrong = gc_payload_codec (p, out.len, &layout, NULL);
    assert_non_null (wrong);
    gc_err_t err = { 0 };
    float *into = calloc (layout.n_params, sizeof *into);
    assert_int_equal (gc_payload_decompress_add_with (p, out.len, &layout, wrong, into, &err), -1);
    assert_int_equal (err.code, GC_E_CODEC);
    free (into);
    free (p);
    gc_lgc_codec_destroy (&wrong);
    gc_lgc_codec_destroy (&held);
    gc_compressor_destroy (&comp);
    gc_buf_free (&out);
    free (x);
}

//  poison=B (Byzantine experiments): after warm-up the published decoder
//  has weights of +-B and every scale is +-65504; receivers accept it (it
//  is within the wire's bounds) and its decoded values stay finite and
//  within the largest scale: what the robust rule then has to absorb.
static void
test_poisoned_codec_is_bounded (void **state)
{
    gc_layout_t layout;
    s_layout (&layout);
    size_t n = layout.n_params;
    gc_compressor_t *comp = gc_compressor_new ("lgc:0.1:8:warmup=1:poison=10000", &layout, 6, NULL);
    assert_non_null (comp);
    assert_string_equal (gc_compressor_name (comp), "lgc:0.1:8:warmup=1:steps=2:lr=0.003:poison=10000");
    float *x = gc_test_normal (n, 8), *a = calloc (n, sizeof *a);
    gc_buf_t out;
    gc_buf_init (&out);
    assert_int_equal (gc_compressor_compress (comp, x, 0, &out, NULL), 0);
    assert_int_equal (gc_compressor_compress (comp, x, 1, &out, NULL), 0);
    gc_lgc_codec_t *held = gc_payload_codec (out.data, out.len, &layout, NULL);
    assert_non_null (held);
    assert_int_equal (gc_payload_decompress_add_with (out.data, out.len, &layout, held, a, NULL), 0);
    size_t big = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true (isfinite (a [i]) && fabsf (a [i]) <= GC_HALF_MAX);
        big += fabsf (a [i]) > 1.0f;
    }
    assert_true (big > 0);
    gc_lgc_codec_destroy (&held);
    gc_compressor_destroy (&comp);
    gc_buf_free (&out);
    free (x);
    free (a);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_training_lowers_the_error),
        cmocka_unit_test (test_training_is_deterministic),
        cmocka_unit_test (test_hostile_decoder_stays_within_the_scale),
        cmocka_unit_test (test_serialised_decoder_round_trips),
        cmocka_unit_test (test_malformed_blobs_are_refused_by_name),
        cmocka_unit_test (test_malformed_codes_are_refused_by_name),
        cmocka_unit_test (test_method_phases_and_codec_transport),
        cmocka_unit_test (test_error_feedback_stays_exact),
        cmocka_unit_test (test_malformed_lgc_sections_are_refused_by_name),
        cmocka_unit_test (test_poisoned_codec_is_bounded),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
