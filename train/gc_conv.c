#include "gc_conv.h"

#include <math.h>
#include <string.h>

#define S_GN_EPS 1e-5f

//  Output columns [lo, hi) whose input column ox * s - pad + kj is inside [0, w).
static void
s_valid (long ow, long w, long s, long off, long *lo, long *hi)
{
    //  ix = ox s + off in [0, w)  <=>  ox >= ceil(-off / s), ox <= (w - 1 - off) / s
    long a = off >= 0 ? 0 : (-off + s - 1) / s;
    long b = w - 1 - off < 0 ? -1 : (w - 1 - off) / s;
    *lo = a < ow ? a : ow;
    *hi = b + 1 < ow ? b + 1 : ow;
    if (*hi < *lo)
        *hi = *lo;
}

/*  The zero runs of a lowered plane are one to a few floats each; GCC turns
    a loop that zeroes them into a call of memset, whose cost is then most of
    the lowering (perf: memset 5 % of a resnet8-gn step, from these). */
#if defined (__GNUC__) && !defined (__clang__)
#   define S_NO_MEMSET_CALLS __attribute__ ((optimize ("no-tree-loop-distribute-patterns")))
#else
#   define S_NO_MEMSET_CALLS
#endif

static S_NO_MEMSET_CALLS void
s_zero (float *d, long n)
{
    for (long i = 0; i < n; i++)
        d [i] = 0.0f;
}

//  One plane of col for kernel offset (ki, kj): the P outputs of a sample
//  read from its input plane src, zero where the window leaves the plane.
static S_NO_MEMSET_CALLS void
s_lower_plane (const gc_cnn_op_t *op, long ki, long kj, long lo, long hi, const float *src,
               float *d)
{
    long s = (long) op->stride, pad = (long) op->pad;
    long h = (long) op->h, w = (long) op->w, oh = (long) op->oh, ow = (long) op->ow;
    if (s == 1 && ow == w) {
        //  "same" stride-1 plane: the valid rows are one run of src shifted by
        //  (ki - pad) w + kj - pad, copied at once; what lies outside it is
        //  zero, and so are the floats between one row's valid columns and the
        //  next row's (copied from across the row's edge)
        long y0 = pad - ki > 0 ? pad - ki : 0, y1 = h + pad - ki < oh ? h + pad - ki : oh;
        long a = y0 * ow + lo, b = (y1 - 1) * ow + hi;
        if (y1 <= y0 || b <= a) {
            s_zero (d, oh * ow);
            return;
        }
        long off = (ki - pad) * w + kj - pad;
        s_zero (d, a);
        memcpy (d + a, src + a + off, (size_t) (b - a) * sizeof (float));
        s_zero (d + b, oh * ow - b);
        if (lo > 0 || hi < ow)
            for (long oy = y0; oy + 1 < y1; oy++)
                s_zero (d + oy * ow + hi, ow - hi + lo);
        return;
    }
    for (long oy = 0; oy < oh; oy++, d += ow) {
        long iy = oy * s - pad + ki;
        //  rows are short (7 to 32 floats): plain loops, which the compiler
        //  vectorises, beat memcpy's call
        if (iy < 0 || iy >= h) {
            for (long ox = 0; ox < ow; ox++)
                d [ox] = 0.0f;
            continue;
        }
        const float *row = src + iy * w + kj - pad;
        for (long ox = 0; ox < lo; ox++)
            d [ox] = 0.0f;
        if (s == 1)
            for (long ox = lo; ox < hi; ox++)
                d [ox] = row [ox];
        else
            for (long ox = lo; ox < hi; ox++)
                d [ox] = row [ox * s];
        for (long ox = hi; ox < ow; ox++)
            d [ox] = 0.0f;
    }
}

void
gc_conv_im2col (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
                float *col)
{
    long k = (long) op->k, s = (long) op->stride, pad = (long) op->pad;
    size_t P = op->oh * op->ow, hw = op->h * op->w, N = m * P;
    for (size_t ci = 0; ci < op->c; ci++)
        for (long ki = 0; ki < k; ki++)
            for (long kj = 0; kj < k; kj++) {
                float *dst = col + ((ci * (size_t) k + (size_t) ki) * (size_t) k + (size_t) kj) * N;
                long lo, hi;
                s_valid ((long) op->ow, (long) op->w, s, kj - pad, &lo, &hi);
                for (size_t n = 0; n < m; n++)
                    s_lower_plane (op, ki, kj, lo, hi, x + (ci * batch + n0 + n) * hw, dst + n * P);
            }
}

//  dst (an input plane) += the plane d of dcol for offset (ki, kj) of a
//  "same" stride-1 convolution: like s_lower_plane, one run shifted by the
//  offset; the floats of d that belong to no input (across a row's edge) are
//  zeroed first, d being scratch, so that the run adds nothing there.
static S_NO_MEMSET_CALLS void
s_gather_plane (const gc_cnn_op_t *op, long ki, long kj, long lo, long hi, float *d, float *dst)
{
    long pad = (long) op->pad, h = (long) op->h, w = (long) op->w;
    long oh = (long) op->oh, ow = (long) op->ow;
    long y0 = pad - ki > 0 ? pad - ki : 0, y1 = h + pad - ki < oh ? h + pad - ki : oh;
    long a = y0 * ow + lo, b = (y1 - 1) * ow + hi;
    if (y1 <= y0 || b <= a)
        return;
    if (lo > 0 || hi < ow)
        for (long oy = y0; oy + 1 < y1; oy++)
            s_zero (d + oy * ow + hi, ow - hi + lo);
    float *to = dst + a + (ki - pad) * w + kj - pad;
    for (long i = 0; i < b - a; i++)
        to [i] += d [a + i];
}

void
gc_conv_col2im (const gc_cnn_op_t *op, float *dcol, size_t batch, size_t n0, size_t m,
                float *dx, bool add)
{
    long k = (long) op->k, s = (long) op->stride, pad = (long) op->pad;
    long h = (long) op->h, w = (long) op->w, oh = (long) op->oh, ow = (long) op->ow;
    size_t P = op->oh * op->ow, hw = op->h * op->w, N = m * P;
    bool same = s == 1 && ow == w;
    //  plane by plane, so that the plane being gathered into stays in L1 and
    //  zeroing it first costs no pass of its own
    for (size_t ci = 0; ci < op->c; ci++)
        for (size_t n = 0; n < m; n++) {
            float *dst = dx + (ci * batch + n0 + n) * hw;
            if (!add)
                memset (dst, 0, hw * sizeof (float));
            for (long ki = 0; ki < k; ki++)
                for (long kj = 0; kj < k; kj++) {
                    float *d = dcol + ((ci * (size_t) k + (size_t) ki) * (size_t) k + (size_t) kj) * N + n * P;
                    long lo, hi;
                    s_valid (ow, w, s, kj - pad, &lo, &hi);
                    if (same) {
                        s_gather_plane (op, ki, kj, lo, hi, d, dst);
                        continue;
                    }
                    for (long oy = 0; oy < oh; oy++, d += ow) {
                        long iy = oy * s - pad + ki;
                        if (iy < 0 || iy >= h)
                            continue;
                        float *row = dst + iy * w + kj - pad;
                        if (s == 1)
                            for (long ox = lo; ox < hi; ox++)
                                row [ox] += d [ox];
                        else
                            for (long ox = lo; ox < hi; ox++)
                                row [ox * s] += d [ox];
                    }
                }
        }
}

void
gc_conv_maxpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, float *y,
                         int32_t *arg)
{
    size_t k = op->k, s = op->stride, hw = op->h * op->w, P = op->oh * op->ow;
    for (size_t plane = 0; plane < batch * op->c; plane++) {
        const float *src = x + plane * hw;
        float *dst = y + plane * P;
        int32_t *a = arg + plane * P;
        for (size_t oy = 0; oy < op->oh; oy++)
            for (size_t ox = 0; ox < op->ow; ox++) {
                size_t best = oy * s * op->w + ox * s;
                for (size_t ki = 0; ki < k; ki++)
                    for (size_t kj = 0; kj < k; kj++) {
                        size_t i = (oy * s + ki) * op->w + ox * s + kj;
                        if (src [i] > src [best])
                            best = i;
                    }
                dst [oy * op->ow + ox] = src [best];
                a [oy * op->ow + ox] = (int32_t) best;
            }
    }
}

void
gc_conv_maxpool_backward (const gc_cnn_op_t *op, const float *dy, const int32_t *arg,
                          size_t batch, float *dx, bool add)
{
    size_t hw = op->h * op->w, P = op->oh * op->ow;
    if (!add)
        memset (dx, 0, batch * op->c * hw * sizeof (float));
    for (size_t plane = 0; plane < batch * op->c; plane++)
        for (size_t p = 0; p < P; p++)
            dx [plane * hw + (size_t) arg [plane * P + p]] += dy [plane * P + p];
}

//  The window of output (oy, ox): the whole plane for global pooling.
static void
s_window (const gc_cnn_op_t *op, size_t *k, size_t *s)
{
    if (op->kind == GC_CNN_GAP) {
        *k = 0;
        *s = 0;
    }
    else {
        *k = op->k;
        *s = op->stride;
    }
}

void
gc_conv_avgpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, float *y)
{
    size_t k, s, hw = op->h * op->w, P = op->oh * op->ow;
    s_window (op, &k, &s);
    for (size_t plane = 0; plane < batch * op->c; plane++) {
        const float *src = x + plane * hw;
        if (k == 0) {
            double sum = 0;
            for (size_t i = 0; i < hw; i++)
                sum += src [i];
            y [plane] = (float) (sum / (double) hw);
            continue;
        }
        float inv = 1.0f / (float) (k * k);
        for (size_t oy = 0; oy < op->oh; oy++)
            for (size_t ox = 0; ox < op->ow; ox++) {
                float sum = 0;
                for (size_t ki = 0; ki < k; ki++)
                    for (size_t kj = 0; kj < k; kj++)
                        sum += src [(oy * s + ki) * op->w + ox * s + kj];
                y [plane * P + oy * op->ow + ox] = sum * inv;
            }
    }
}

void
gc_conv_avgpool_backward (const gc_cnn_op_t *op, const float *dy, size_t batch, float *dx,
                          bool add)
{
    size_t k, s, hw = op->h * op->w, P = op->oh * op->ow;
    s_window (op, &k, &s);
    if (!add)
        memset (dx, 0, batch * op->c * hw * sizeof (float));
    for (size_t plane = 0; plane < batch * op->c; plane++) {
        float *dst = dx + plane * hw;
        if (k == 0) {
            float g = dy [plane] / (float) hw;
            for (size_t i = 0; i < hw; i++)
                dst [i] += g;
            continue;
        }
        float inv = 1.0f / (float) (k * k);
        for (size_t oy = 0; oy < op->oh; oy++)
            for (size_t ox = 0; ox < op->ow; ox++) {
                float g = dy [plane * P + oy * op->ow + ox] * inv;
                for (size_t ki = 0; ki < k; ki++)
                    for (size_t kj = 0; kj < k; kj++)
                        dst [(oy * s + ki) * op->w + ox * s + kj] += g;
            }
    }
}

//  Sums of x and of (x - mean)^2 over n floats in 16 lanes, which the
//  compiler vectorises (a single float or double accumulator it cannot
//  reorder); the lanes are added in double.
static double
s_sum (const float *x, size_t n, float mean, bool square)
{
    float lane [16] = { 0 };
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) {
            float d = x [i + j] - mean;
            lane [j] += square ? d * d : d;
        }
    double total = 0;
    for (; i < n; i++) {
        double d = (double) x [i] - mean;
        total += square ? d * d : d;
    }
    for (int j = 0; j < 16; j++)
        total += lane [j];
    return total;
}

double
gc_conv_sum (const float *x, size_t n)
{
    return s_sum (x, n, 0.0f, false);
}

//  Tensors are channel-major (CNHW, gc_cnn.c): the plane of sample n,
//  channel c is x + (c batch + n) h w, and a group of one sample is cg planes
//  batch h w floats apart.
void
gc_conv_gn_forward (const gc_cnn_op_t *op, const float *x, size_t batch,
                    const float *gamma, const float *beta, bool relu, float *y, float *stats)
{
    size_t G = op->groups, cg = op->c / G, hw = op->h * op->w, M = cg * hw;
    for (size_t n = 0; n < batch; n++)
        for (size_t g = 0; g < G; g++) {
            double sum = 0, sq = 0;
            for (size_t j = 0; j < cg; j++)
                sum += s_sum (x + ((g * cg + j) * batch + n) * hw, hw, 0.0f, false);
            float mu = (float) (sum / (double) M);
            for (size_t j = 0; j < cg; j++)
                sq += s_sum (x + ((g * cg + j) * batch + n) * hw, hw, mu, true);
            float rstd = (float) (1.0 / sqrt (sq / (double) M + S_GN_EPS));
            stats [2 * (n * G + g)] = mu;
            stats [2 * (n * G + g) + 1] = rstd;
            for (size_t j = 0; j < cg; j++) {
                size_t c = g * cg + j, base = (c * batch + n) * hw;
                float a = rstd * gamma [c], b = beta [c] - mu * a;
                const float *xs = x + base;
                float *ys = y + base;
                if (relu)
                    for (size_t i = 0; i < hw; i++) {
                        float v = xs [i] * a + b;
                        ys [i] = v > 0.0f ? v : 0.0f;
                    }
                else
                    for (size_t i = 0; i < hw; i++)
                        ys [i] = xs [i] * a + b;
            }
        }
}

void
gc_conv_gn_backward (const gc_cnn_op_t *op, const float *x, const float *dy,
                     const float *stats, size_t batch, const float *gamma,
                     float *dgamma, float *dbeta, float *dx, bool add)
{
    size_t G = op->groups, cg = op->c / G, hw = op->h * op->w, M = cg * hw;
    for (size_t n = 0; n < batch; n++)
        for (size_t g = 0; g < G; g++) {
            float mu = stats [2 * (n * G + g)], rstd = stats [2 * (n * G + g) + 1];
            double s1 = 0, s2 = 0;     /* sums of dxhat and dxhat * xhat */
            for (size_t j = 0; j < cg; j++) {
                size_t c = g * cg + j, base = (c * batch + n) * hw;
                const float *xs = x + base, *ds = dy + base;
                //  sums of dy (x - mu) and dy in 8 lanes each, few enough to
                //  stay in registers; rstd is applied once to the total
                float lg [8] = { 0 }, lb [8] = { 0 };
                size_t i = 0;
                for (; i + 8 <= hw; i += 8)
                    for (int j2 = 0; j2 < 8; j2++) {
                        lg [j2] += ds [i + j2] * (xs [i + j2] - mu);
                        lb [j2] += ds [i + j2];
                    }
                double dg = 0, db = 0;
                for (; i < hw; i++) {
                    dg += (double) ds [i] * (xs [i] - mu);
                    db += ds [i];
                }
                for (int j2 = 0; j2 < 8; j2++) {
                    dg += lg [j2];
                    db += lb [j2];
                }
                dg *= rstd;
                dgamma [c] += (float) dg;
                dbeta [c] += (float) db;
                s1 += db * gamma [c];
                s2 += dg * gamma [c];
            }
            if (!dx)
                continue;
            float m1 = (float) (s1 / (double) M), m2 = (float) (s2 / (double) M);
            for (size_t j = 0; j < cg; j++) {
                size_t c = g * cg + j, base = (c * batch + n) * hw;
                const float *xs = x + base, *ds = dy + base;
                float *d = dx + base;
                //  dx = a dy + b x + e, the terms folded per channel; two
                //  loops, as the choice inside one kept it from vectorising
                float a = rstd * gamma [c], bx = -rstd * rstd * m2;
                float e = rstd * (rstd * mu * m2 - m1);
                if (add)
                    for (size_t i = 0; i < hw; i++)
                        d [i] += a * ds [i] + bx * xs [i] + e;
                else
                    for (size_t i = 0; i < hw; i++)
                        d [i] = a * ds [i] + bx * xs [i] + e;
            }
        }
}
