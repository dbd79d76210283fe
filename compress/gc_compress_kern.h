/*  The compress/ kernels compiled once per level (gc_compress_kern.c, see
    gc_klevel.h) and the table of the level in use. Every level gives the
    same result bit for bit: selection and sign bits are integer work or
    exact compares, the sign method adds one value per entry, and F16C's
    conversion rounds to nearest even like gc_half_from_float. */
#ifndef GC_COMPRESS_KERN_H
#define GC_COMPRESS_KERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*  |x| as an ordered integer key (the sign bit cleared). */
static inline uint32_t
gc_select_key (float v)
{
    uint32_t u;
    memcpy (&u, &v, sizeof u);
    return u & 0x7fffffffu;
}

typedef struct {
    /*  Append i, x[i] for every key (x[i]) >= lo, in order, after the c
        already in idx/val; stop once more than cap were found (returning a
        count > cap; stores may run 64 entries past the count). *maxkey
        receives the largest key read. */
    size_t (*collect) (const float *x, size_t m, uint32_t lo, uint32_t *idx, float *val,
                       size_t cap, uint32_t *maxkey);
    /*  hist[(key >> shift) & wm]++ for every key with (key & mask) == prefix
        (hist cleared by the caller). */
    void   (*hist_prefix) (const float *v, size_t m, uint32_t prefix, uint32_t mask,
                           int shift, uint32_t wm, uint32_t *hist);
    /*  The vector part of gc_half_encode / gc_half_decode: the number of
        leading entries done (the caller converts the rest). */
    size_t (*half_encode) (uint8_t *dst, const float *src, size_t n, float scale);
    size_t (*half_decode) (float *dst, const uint8_t *src, size_t n);
    /*  The vector part of the sign method: bits[i/8] bit i%8 = x[i] < 0, and
        into[i] += bit i ? -scale : scale from i0 on; the index reached (a
        multiple of 8 for sign_bits; the caller finishes the rest). */
    size_t (*sign_bits) (uint8_t *bits, const float *x, size_t n);
    size_t (*sign_add) (float *into, const uint8_t *bits, size_t i0, size_t i1, float scale);
} gc_compress_kern_t;

extern const gc_compress_kern_t gc_compress_kern_generic;
#if GC_X86_LEVELS
extern const gc_compress_kern_t gc_compress_kern_avx2, gc_compress_kern_avx512;
#endif

/*  The table of gc_cpu_level, or the generic one while gc_compress_simd is
    false (one lookup per call, per pass over the data). */
const gc_compress_kern_t *gc_compress_kern (void);

#endif
