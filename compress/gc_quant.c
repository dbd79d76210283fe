/*  Quantisers: QSGD (s levels, stochastic rounding, an L2 norm per bucket)
    and scaled sign (one bit per entry, a mean |x| per bucket). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_payload.h"
#include "gc_rng.h"

#if GC_HAVE_AVX512
#   include <immintrin.h>
#endif

unsigned
gc_qsgd_bits (uint32_t levels)
{
    //  Codes 0 .. 2s (level + s): the width of 2s.
    return 32u - (unsigned) __builtin_clz (2 * levels);
}

static inline void
s_put_f32 (uint8_t *p, float v)
{
    uint32_t u;
    memcpy (&u, &v, 4);
    gc_put_u32 (p, u);
}

int
gc_qsgd_encode (gc_compressor_t *self, const float *x, uint64_t round,
                size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    const gc_layout_t *layout = &self->layout;
    uint32_t s = self->levels;
    unsigned bits = gc_qsgd_bits (s);
    for (size_t l = lo; l < hi; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        uint32_t count = (uint32_t) layer->count;
        uint32_t bucket = self->bucket < count ? self->bucket : count;
        size_t nb = ((size_t) count + bucket - 1) / bucket;
        size_t code_bytes = ((size_t) count * bits + 7) / 8;
        uint8_t *p = gc_payload_section (out, layout, l, GC_ENC_QSGD, GC_VAL_FP32,
                                         8 + 4 * nb + code_bytes, err);
        if (!p)
            return -1;
        gc_put_u16 (p, (uint16_t) s);
        gc_put_u16 (p + 2, 0);
        gc_put_u32 (p + 4, bucket);
        uint8_t *norms = p + 8, *codes = norms + 4 * nb;
        gc_rng_t rng;
        gc_rng_init (&rng, gc_seed_derive (self->seed, round), 0x71736764 + l);
        const float *src = x + layer->offset;
        uint64_t acc = 0;
        unsigned have = 0;
        for (size_t b = 0; b < nb; b++) {
            size_t b0 = b * bucket, end = b0 + bucket < count ? b0 + bucket : count;
            double sq = 0;
            for (size_t i = b0; i < end; i++)
                sq += (double) src [i] * src [i];
            double norm = sqrt (sq);
            float nf = norm > FLT_MAX ? FLT_MAX : (float) norm;
            s_put_f32 (norms + 4 * b, nf);
            float inv = nf > 0 ? (float) s / nf : 0.0f;
            for (size_t i = b0; i < end; i++) {
                //  level = floor(|x|/norm * s + u), u uniform: E[level] = |x|/norm * s.
                float a = fabsf (src [i]) * inv + gc_rng_float (&rng);
                uint32_t level = (uint32_t) a;
                level = level > s ? s : level;
                uint32_t code = src [i] < 0 ? s - level : s + level;
                acc |= (uint64_t) code << have;
                have += bits;
                while (have >= 8) {
                    *codes++ = (uint8_t) acc;
                    acc >>= 8;
                    have -= 8;
                }
            }
        }
        if (have)
            *codes = (uint8_t) acc;
    }
    return 0;
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
    double total = 0;
    for (size_t i = 0; i < n; i += 256) {
        size_t end = i + 256 < n ? i + 256 : n;
        float part = 0;
        for (size_t j = i; j < end; j++)
            part += fabsf (x [j]);
        total += part;
    }
    double m = total / (double) n;
    return m > FLT_MAX ? FLT_MAX : (float) m;
}

int
gc_sign_encode (gc_compressor_t *self, const float *x, size_t lo, size_t hi,
                gc_buf_t *out, gc_err_t *err)
{
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
            s_put_f32 (p + 4 + 4 * b, s_mean_abs (src + b0, end - b0));
        }
        s_sign_bits (p + 4 + 4 * nb, src, count);
    }
    return 0;
}
