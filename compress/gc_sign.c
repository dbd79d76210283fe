/*  Scaled sign: one bit per entry and a mean |x| per bucket. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_compress_method.h"
#include "gc_payload.h"
#include "gc_rng.h"

#if GC_HAVE_AVX512
#   include <immintrin.h>
#endif

//  Sums in eight double lanes: vectorises, cannot overflow for finite input.
static double
s_sum_abs (const float *restrict x, size_t n)
{
    double acc [8] = { 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int t = 0; t < 8; t++)
            acc [t] += fabs ((double) x [i + t]);
    double total = 0;
    for (int t = 0; t < 8; t++)
        total += acc [t];
    for (; i < n; i++)
        total += fabs ((double) x [i]);
    return total;
}

//  bits[i/8] bit i%8 = x[i] < 0, for n entries (the padding bits zero).
static void
s_sign_bits (uint8_t *restrict bits, const float *restrict x, size_t n)
{
    size_t i = 0;
#if GC_HAVE_AVX512
    if (gc_compress_simd) {
        const __m512 zero = _mm512_setzero_ps ();
        for (; i + 16 <= n; i += 16) {
            __mmask16 m = _mm512_cmp_ps_mask (_mm512_loadu_ps (x + i), zero, _CMP_LT_OQ);
            gc_put_u16 (bits + i / 8, (uint16_t) m);
        }
    }
#endif
    for (; i + 8 <= n; i += 8) {
        unsigned byte = 0;
        for (unsigned t = 0; t < 8; t++)
            byte |= (unsigned) (x [i + t] < 0) << t;
        bits [i / 8] = (uint8_t) byte;
    }
    if (i < n) {
        unsigned byte = 0;
        for (unsigned t = 0; i + t < n; t++)
            byte |= (unsigned) (x [i + t] < 0) << t;
        bits [i / 8] = (uint8_t) byte;
    }
}

static float
s_mean_abs (const float *restrict x, size_t n)
{
    double m = s_sum_abs (x, n) / (double) n;
    return m > FLT_MAX ? FLT_MAX : (float) m;
}

static int
s_parse (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    self->bucket = 0;
    return gc_compress_opt_buckets (self, sp, at, 0, err);
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "sign:bucket=%u", self->bucket);
}

static int
s_encode (gc_compressor_t *self, const float *x, uint64_t round, uint64_t seed,
          size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    (void) round;
    (void) seed;
    const gc_layout_t *layout = &self->layout;
    for (size_t l = lo; l < hi; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        uint32_t count = (uint32_t) layer->count;
        uint32_t bucket = self->bucket && self->bucket < count ? self->bucket : count;
        size_t nb = ((size_t) count + bucket - 1) / bucket;
        size_t bytes = ((size_t) count + 7) / 8;
        uint8_t *p = gc_payload_section (out, layout, l, GC_ENC_SIGN, GC_VAL_FP32,
                                         4 + 4 * nb + bytes, err);
        if (!p)
            return -1;
        gc_put_u32 (p, bucket);
        const float *src = x + layer->offset;
        for (size_t b = 0; b < nb; b++) {
            size_t b0 = b * bucket, end = b0 + bucket < count ? b0 + bucket : count;
            gc_put_f32 (p + 4 + 4 * b, s_mean_abs (src + b0, end - b0));
        }
        s_sign_bits (p + 4 + 4 * nb, src, count);
    }
    return 0;
}

const gc_compress_method_t gc_method_sign = {
    .name = "sign", .wire_id = GC_METHOD_SIGN,
    .usage = "sign[:bucket=0]",
    .help = "the sign of each entry times the bucket's mean |x| (bucket 0: one per layer)",
    .example = "sign:bucket=16", .malformed = "sign:bucket=-1",
    .sections = GC_SECTION_BIT (GC_ENC_SIGN, GC_VAL_FP32),
    .parse = s_parse, .describe = s_describe, .encode = s_encode,
};
