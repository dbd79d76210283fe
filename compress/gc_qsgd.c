/*  QSGD: s levels, stochastic rounding, an L2 norm per bucket; and the
    LSB-first bit packing its codes travel in (the reader unpacks with it). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_compress_method.h"
#include "gc_payload.h"
#include "gc_rng.h"

#define S_DEFAULT_LEVELS 16
#define S_DEFAULT_BUCKET 512

unsigned
gc_qsgd_bits (uint32_t levels)
{
    //  Codes 0 .. 2s (level + s): the width of 2s.
    return 32u - (unsigned) __builtin_clz (2 * levels);
}


//  Eight codes fill exactly `bits` bytes, so every group starts on a byte.
//  A group is formed in a 64-bit (bits <= 8) or 128-bit word and stored
//  whole while at least that many bytes of the stream remain (the excess
//  is overwritten by the next group); the last ones byte by byte.
void
gc_bits_pack (uint8_t *restrict dst, const uint32_t *restrict codes, size_t n, unsigned bits)
{
    uint8_t *end = dst + (n * bits + 7) / 8;
    size_t i = 0;
    if (bits <= 8)
        for (; i + 8 <= n; i += 8) {
            uint64_t w = 0;
            for (unsigned t = 0; t < 8; t++)
                w |= (uint64_t) codes [i + t] << (t * bits);
            uint8_t tmp [8];
            gc_put_u64 (tmp, w);
            if (end - dst >= 8)
                memcpy (dst, tmp, 8);
            else
                memcpy (dst, tmp, bits);
            dst += bits;
        }
    else
        for (; i + 8 <= n; i += 8) {
            unsigned __int128 w = 0;
            for (unsigned t = 0; t < 8; t++)
                w |= (unsigned __int128) codes [i + t] << (t * bits);
            uint8_t tmp [16];
            gc_put_u64 (tmp, (uint64_t) w);
            gc_put_u64 (tmp + 8, (uint64_t) (w >> 64));
            if (end - dst >= 16)
                memcpy (dst, tmp, 16);
            else
                memcpy (dst, tmp, bits);
            dst += bits;
        }
    uint64_t acc = 0;
    unsigned have = 0;
    for (; i < n; i++) {
        acc |= (uint64_t) codes [i] << have;
        have += bits;
        while (have >= 8) {
            *dst++ = (uint8_t) acc;
            acc >>= 8;
            have -= 8;
        }
    }
    if (have)
        *dst = (uint8_t) acc;
}

void
gc_bits_unpack (const uint8_t *restrict src, size_t n, unsigned bits, uint32_t *restrict codes)
{
    const uint8_t *end = src + (n * bits + 7) / 8;
    uint32_t mask = (1u << bits) - 1;
    size_t i = 0;
    if (bits <= 8)
        for (; i + 8 <= n; i += 8) {
            uint8_t tmp [8] = { 0 };
            if (end - src >= 8)
                memcpy (tmp, src, 8);
            else
                memcpy (tmp, src, bits);
            uint64_t w = gc_get_u64 (tmp);
            for (unsigned t = 0; t < 8; t++)
                codes [i + t] = (uint32_t) (w >> (t * bits)) & mask;
            src += bits;
        }
    else
        for (; i + 8 <= n; i += 8) {
            uint8_t tmp [16] = { 0 };
            if (end - src >= 16)
                memcpy (tmp, src, 16);
            else
                memcpy (tmp, src, bits);
            unsigned __int128 w = gc_get_u64 (tmp) | (unsigned __int128) gc_get_u64 (tmp + 8) << 64;
            for (unsigned t = 0; t < 8; t++)
                codes [i + t] = (uint32_t) (w >> (t * bits)) & mask;
            src += bits;
        }
    uint64_t acc = 0;
    unsigned have = 0;
    for (; i < n; i++) {
        while (have < bits) {
            acc |= (uint64_t) *src++ << have;
            have += 8;
        }
        codes [i] = (uint32_t) acc & mask;
        acc >>= bits;
        have -= bits;
    }
}

//  Sums in eight double lanes: vectorises (one register), cannot overflow
//  or underflow for any finite float input (a float lane could: 1e20^2).
static double
s_sum_sq (const float *restrict x, size_t n)
{
    double acc [8] = { 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int t = 0; t < 8; t++)
            acc [t] += (double) x [i + t] * (double) x [i + t];
    double total = 0;
    for (int t = 0; t < 8; t++)
        total += acc [t];
    for (; i < n; i++)
        total += (double) x [i] * x [i];
    return total;
}

#define S_CHUNK 512

//  code[i] = s + sign(x_i) * level_i, level_i = floor(|x_i| / norm * s + u_i),
//  u_i uniform in [0, 1) with 24 bits (two per 64-bit draw), so that
//  E[level_i] = |x_i| / norm * s: the quantiser is unbiased. Dividing by the
//  norm (<= 1 since |x_i| <= norm) rather than multiplying by s / norm
//  cannot overflow for a tiny norm. norm > 0.
static void
s_codes (const float *restrict x, size_t n, float norm, uint32_t s, gc_rng_t *rng,
         uint32_t *restrict code)
{
    int32_t u [S_CHUNK];
    for (size_t i = 0; i < n; i += 2) {
        uint64_t r = gc_rng_next (rng);
        u [i] = (int32_t) (r >> 40);
        u [i + 1] = (int32_t) ((r >> 8) & 0xffffff);
    }
    //  Branch-free, so that it vectorises: m is -1 for a set sign bit (also
    //  -0.0, whose level is 0 anyway), and (level ^ m) - m negates.
    int32_t si = (int32_t) s;
    for (size_t i = 0; i < n; i++) {
        float a = fabsf (x [i]) / norm * (float) s + (float) u [i] * 0x1p-24f;
        int32_t level = (int32_t) a;            /* a < s + 2 */
        level = level > si ? si : level;
        int32_t bits;
        memcpy (&bits, &x [i], 4);
        int32_t m = bits >> 31;
        code [i] = (uint32_t) (si + ((level ^ m) - m));
    }
}

static int
s_parse (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    double v;
    self->levels = S_DEFAULT_LEVELS;
    self->bucket = S_DEFAULT_BUCKET;
    int got = gc_compress_opt_number (sp, at, 1, GC_QSGD_MAX_LEVELS, true, "qsgd levels", &v, err);
    if (got < 0)
        return -1;
    if (got)
        self->levels = (uint32_t) v;
    return gc_compress_opt_buckets (self, sp, at, 1, err);
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "qsgd:%u:bucket=%u", self->levels, self->bucket);
}

static int
s_encode (gc_compressor_t *self, const float *x, uint64_t round, uint64_t seed,
          size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    (void) seed;
    const gc_layout_t *layout = &self->layout;
    uint32_t s = self->levels;
    unsigned bits = gc_qsgd_bits (s);
    for (size_t l = lo; l < hi; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        uint32_t count = (uint32_t) layer->count;
        uint32_t bucket = self->bucket < count ? self->bucket : count;
        size_t nb = ((size_t) count + bucket - 1) / bucket;
        size_t code_bytes = ((size_t) count * bits + 7) / 8;
        //  Codes of the whole layer first (scratch), then one packing pass.
        if (gc_compressor_fscratch (self, count, err))
            return -1;
        uint32_t *code = (uint32_t *) self->fscratch;
        uint8_t *p = gc_payload_section (out, layout, l, GC_ENC_QSGD, GC_VAL_FP32,
                                         8 + 4 * nb + code_bytes, err);
        if (!p)
            return -1;
        gc_put_u16 (p, (uint16_t) s);
        gc_put_u16 (p + 2, 0);
        gc_put_u32 (p + 4, bucket);
        uint8_t *norms = p + 8;
        gc_rng_t rng;
        gc_rng_init (&rng, gc_seed_derive (self->seed, round), 0x71736764 + l);
        const float *src = x + layer->offset;
        for (size_t b = 0; b < nb; b++) {
            size_t b0 = b * bucket, end = b0 + bucket < count ? b0 + bucket : count;
            double norm = sqrt (s_sum_sq (src + b0, end - b0));
            float nf = norm > FLT_MAX ? FLT_MAX : (float) norm;
            gc_put_f32 (norms + 4 * b, nf);
            if (nf == 0.0f) {
                for (size_t i = b0; i < end; i++)
                    code [i] = s;           /* level 0 */
                continue;
            }
            for (size_t i = b0; i < end; i += S_CHUNK) {
                size_t c = end - i < S_CHUNK ? end - i : S_CHUNK;
                s_codes (src + i, c, nf, s, &rng, code + i);
            }
        }
        gc_bits_pack (norms + 4 * nb, code, count, bits);
    }
    return 0;
}

const gc_compress_method_t gc_method_qsgd = {
    .name = "qsgd", .wire_id = GC_METHOD_QSGD,
    .usage = "qsgd[:LEVELS=16][:bucket=512]",
    .help = "LEVELS levels per sign, stochastic rounding (unbiased), an L2 norm per bucket",
    .example = "qsgd:3:bucket=7", .malformed = "qsgd:4:fp16",
    .sections = GC_SECTION_BIT (GC_ENC_QSGD, GC_VAL_FP32),
    .parse = s_parse, .describe = s_describe, .encode = s_encode,
};
