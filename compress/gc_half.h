/*  gc_half — IEEE 754 binary16 conversion for payload values.

    Round to nearest, ties to even (what F16C's vcvtps2ph does with
    _MM_FROUND_TO_NEAREST_INT), so the SIMD and scalar paths give the same
    bits; the tests compare them over every half and many floats. */
#ifndef GC_HALF_H
#define GC_HALF_H

#include <stddef.h>
#include <stdint.h>

#define GC_HALF_MAX 65504.0f

uint16_t gc_half_from_float (float x);     /* overflow gives +-Inf */
float    gc_half_to_float (uint16_t h);

/*  dst (2n bytes, little-endian) = half (clamp (scale * src, +-65504)). */
void     gc_half_encode (uint8_t *dst, const float *src, size_t n, float scale);
/*  dst[i] = float (half at src + 2i). */
void     gc_half_decode (float *dst, const uint8_t *src, size_t n);
/*  true when no half in src[0..n) is Inf or NaN; *first gets the index of
    the first bad one otherwise. */
int      gc_half_first_nonfinite (const uint8_t *src, size_t n, size_t *first);

#endif
