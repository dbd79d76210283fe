#include "gc_half.h"

#include <string.h>

#include "gc_compress_internal.h"
#include "gc_compress_kern.h"
#include "gc_payload.h"

static inline uint32_t
s_bits (float x)
{
    uint32_t u;
    memcpy (&u, &x, 4);
    return u;
}

static inline float
s_float (uint32_t u)
{
    float x;
    memcpy (&x, &u, 4);
    return x;
}

uint16_t
gc_half_from_float (float x)
{
    uint32_t f = s_bits (x);
    uint32_t sign = (f >> 16) & 0x8000;
    uint32_t a = f & 0x7fffffff;
    if (a >= 0x7f800000)                    /* Inf, NaN (kept quiet) */
        return (uint16_t) (sign | (a > 0x7f800000 ? 0x7e00 : 0x7c00));
    if (a >= 0x477ff000)                    /* >= 65520 rounds to Inf */
        return (uint16_t) (sign | 0x7c00);
    if (a >= 0x38800000) {                  /* normal half */
        uint32_t h = (a >> 13) - (112u << 10);
        uint32_t rest = a & 0x1fff;
        if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
            h++;                            /* a carry into the exponent is right */
        return (uint16_t) (sign | h);
    }
    //  Subnormal half: the value in units of 2^-24, rounded to nearest even.
    uint32_t e = a >> 23;
    if (e < 102)                            /* below 2^-25: zero */
        return (uint16_t) sign;
    uint32_t m = (a & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e;               /* 14 .. 24 */
    uint32_t q = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1)))
        q++;
    return (uint16_t) (sign | q);
}

float
gc_half_to_float (uint16_t h)
{
    uint32_t sign = (uint32_t) (h & 0x8000) << 16;
    uint32_t e = (h >> 10) & 0x1f;
    uint32_t m = h & 0x3ff;
    if (e == 0) {
        float v = (float) m * 0x1p-24f;
        return sign ? -v : v;
    }
    if (e == 31)
        return s_float (sign | 0x7f800000 | (m << 13));
    return s_float (sign | ((e + 112) << 23) | (m << 13));
}

static void
s_encode_scalar (uint8_t *dst, const float *src, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++) {
        float v = src [i] * scale;
        v = v > GC_HALF_MAX ? GC_HALF_MAX : v < -GC_HALF_MAX ? -GC_HALF_MAX : v;
        gc_put_u16 (dst + 2 * i, gc_half_from_float (v));
    }
}

void
gc_half_encode (uint8_t *dst, const float *src, size_t n, float scale)
{
    size_t i = gc_compress_kern ()->half_encode (dst, src, n, scale);
    s_encode_scalar (dst + 2 * i, src + i, n - i, scale);
}

void
gc_half_decode (float *dst, const uint8_t *src, size_t n)
{
    size_t i = gc_compress_kern ()->half_decode (dst, src, n);
    for (; i < n; i++)
        dst [i] = gc_half_to_float (gc_get_u16 (src + 2 * i));
}

int
gc_half_first_nonfinite (const uint8_t *src, size_t n, size_t *first)
{
    //  Blocks branch-free (vectorisable), look inside only a failing block.
    for (size_t i = 0; i < n; i += 256) {
        size_t end = i + 256 < n ? i + 256 : n;
        //  Exponent all ones: adding one to it carries into bit 15.
        uint32_t probe = 0;
        for (size_t j = i; j < end; j++) {
            uint16_t h;
            memcpy (&h, src + 2 * j, 2);
#if !GC_LITTLE_ENDIAN
            h = gc_get_u16 (src + 2 * j);
#endif
            probe |= (uint32_t) (h & 0x7fffu) + 0x0400u;
        }
        if (probe & 0x8000u)
            for (size_t j = i; j < end; j++)
                if ((gc_get_u16 (src + 2 * j) & 0x7c00) == 0x7c00) {
                    *first = j;
                    return 0;
                }
    }
    return 1;
}
