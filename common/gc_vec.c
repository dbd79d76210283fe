#include "gc_vec.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

void
gc_vec_zero (float *x, size_t n)
{
    memset (x, 0, n * sizeof *x);
}

void
gc_vec_copy (float *restrict dst, const float *restrict src, size_t n)
{
    memcpy (dst, src, n * sizeof *dst);
}

void
gc_vec_axpy (float *restrict y, float a, const float *restrict x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y [i] += a * x [i];
}

void
gc_vec_scale (float *x, float a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x [i] *= a;
}

void
gc_vec_sub (float *restrict out, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out [i] = a [i] - b [i];
}

void
gc_vec_advance (float *restrict delta, const float *restrict x, float *restrict prev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        delta [i] = x [i] - prev [i];
        prev [i] = x [i];
    }
}

void
gc_vec_lerp (float *restrict y, const float *restrict x, float g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y [i] += g * (x [i] - y [i]);
}

//  Blocked: a float partial sum per block (vectorisable), summed in double.
#define S_BLOCK 256

double
gc_vec_dot (const float *a, const float *b, size_t n)
{
    double total = 0;
    for (size_t i = 0; i < n; i += S_BLOCK) {
        size_t end = i + S_BLOCK < n ? i + S_BLOCK : n;
        float part = 0;
        for (size_t j = i; j < end; j++)
            part += a [j] * b [j];
        total += part;
    }
    return total;
}

double
gc_vec_norm2sq (const float *x, size_t n)
{
    return gc_vec_dot (x, x, n);
}

double
gc_vec_dist2sq (const float *a, const float *b, size_t n)
{
    double total = 0;
    for (size_t i = 0; i < n; i += S_BLOCK) {
        size_t end = i + S_BLOCK < n ? i + S_BLOCK : n;
        float part = 0;
        for (size_t j = i; j < end; j++) {
            float d = a [j] - b [j];
            part += d * d;
        }
        total += part;
    }
    return total;
}

size_t
gc_vec_first_nonfinite (const float *x, size_t n)
{
    //  Check blocks branch-free on the bits (exponent all ones = Inf/NaN:
    //  adding 1 to the exponent of |x| carries into bit 31), which
    //  vectorises where a float probe sum would not (strict IEEE order),
    //  and look inside a block only when it fails.
    for (size_t i = 0; i < n; i += S_BLOCK) {
        size_t end = i + S_BLOCK < n ? i + S_BLOCK : n;
        uint32_t probe = 0;
        for (size_t j = i; j < end; j++) {
            uint32_t u;
            memcpy (&u, x + j, sizeof u);
            probe |= (u & 0x7fffffffu) + 0x00800000u;
        }
        if (probe & 0x80000000u)
            for (size_t j = i; j < end; j++)
                if (!isfinite (x [j]))
                    return j;
    }
    return n;
}

bool
gc_vec_all_finite (const float *x, size_t n)
{
    return gc_vec_first_nonfinite (x, n) == n;
}
