/*  gc_vec — float-vector helpers shared by every module.

    Plain loops over restrict pointers so that the compiler vectorises them;
    reductions accumulate in double for stable results on long vectors. */
#ifndef GC_VEC_H
#define GC_VEC_H

#include <stddef.h>
#include <stdbool.h>

void   gc_vec_zero (float *x, size_t n);
void   gc_vec_copy (float *restrict dst, const float *restrict src, size_t n);
/*  y += a * x */
void   gc_vec_axpy (float *restrict y, float a, const float *restrict x, size_t n);
/*  x *= a */
void   gc_vec_scale (float *x, float a, size_t n);
/*  out = a - b */
void   gc_vec_sub (float *restrict out, const float *a, const float *b, size_t n);
/*  delta = x - prev, then prev = x: one pass where sub and copy take two */
void   gc_vec_advance (float *restrict delta, const float *restrict x, float *restrict prev, size_t n);
/*  y += g * (x - y): move y a fraction g towards x */
void   gc_vec_lerp (float *restrict y, const float *restrict x, float g, size_t n);
double gc_vec_dot (const float *a, const float *b, size_t n);
double gc_vec_norm2sq (const float *x, size_t n);
double gc_vec_dist2sq (const float *a, const float *b, size_t n);
/*  true when every element is finite (no NaN, no Inf) */
bool   gc_vec_all_finite (const float *x, size_t n);
/*  index of the first non-finite element, or n when all are finite */
size_t gc_vec_first_nonfinite (const float *x, size_t n);

#endif
