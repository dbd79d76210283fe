/*  The loops of gc_cnn around sgemm, compiled once per kernel level
    (gc_klevel.h); gc_conv_kern.c picks one. Plain C for the vectoriser,
    with no contraction into fused multiply-adds and no reassociation, so
    that every level gives the same bits (each float goes through the same
    operations in the same order, only more of them at once). */
#include "gc_conv.h"
#include "gc_conv_kern.h"
#include "gc_klevel.h"

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

/*  "Same" stride-1 lowering of the planes whose shifted window stays inside
    the tensor (all but its first and last plane): each output float is the
    input at a fixed offset, kept or zero by a mask of the tap (keep, P
    floats), so that a plane is one branch-free loop the compiler vectorises.
    Reading across a plane's edge is harmless there: the mask drops what it
    reads. perf: the run-by-run copy and its zero runs were 20 % of a
    resnet8-gn step, most of it calls and short runs. */
#define S_MASKED_MAX 256

static void
s_keep_mask (const gc_cnn_op_t *op, long ki, long kj, float *keep)
{
    long pad = (long) op->pad, h = (long) op->h, w = (long) op->w;
    for (long oy = 0; oy < h; oy++) {
        long iy = oy + ki - pad;
        for (long ox = 0; ox < w; ox++) {
            long ix = ox + kj - pad;
            keep [oy * w + ox] = iy >= 0 && iy < h && ix >= 0 && ix < w ? 1.0f : 0.0f;
        }
    }
}

#if GC_KLEVEL == GC_KLEVEL_AVX512
//  16 floats by a plain load that GCC may not fold into a masked move
//  after it (the empty asm takes the value in a register).
static inline __m512
s_plain_load (const float *p)
{
    __m512 v = _mm512_loadu_ps (p);
    __asm__ ("" : "+v" (v));
    return v;
}
#endif

/*  A tap's mask as the masked lowering reads it: keep and, at avx512, one
    bit mask per 16 outputs (the last block overlapping the one before),
    made once per tap and chunk rather than compared from keep for every
    plane (two of the loop's four instructions). */
typedef struct {
    const float *keep;
#if GC_KLEVEL == GC_KLEVEL_AVX512
    __mmask16 bits [S_MASKED_MAX / 16 + 1];
#endif
} s_tapmask_t;

static void
s_tapmask (const float *keep, size_t P, s_tapmask_t *tm)
{
    tm->keep = keep;
#if GC_KLEVEL == GC_KLEVEL_AVX512
    for (size_t p = 0, b = 0; P >= 16 && p < P; p += 16, b++) {
        size_t at = P - p < 16 ? P - 16 : p;
        tm->bits [b] = _mm512_cmpneq_ps_mask (_mm512_loadu_ps (keep + at), _mm512_setzero_ps ());
    }
#endif
}

/*  At avx512 with plain loads and a select in registers: GCC made the
    select a masked load of src, which waited on memory several times as
    long as a plain one on an AMD EPYC Zen 5 (perf: most of the lowering);
    the last vector overlaps the one before (the same values stored again),
    so no load is masked. */
static void
s_lower_masked (const float *src, const s_tapmask_t *tm, size_t P, float *d)
{
#if GC_KLEVEL == GC_KLEVEL_AVX512
    if (P >= 16) {
        for (size_t p = 0, b = 0; p < P; p += 16, b++) {
            size_t at = P - p < 16 ? P - 16 : p;
            _mm512_storeu_ps (d + at, _mm512_maskz_mov_ps (tm->bits [b], s_plain_load (src + at)));
        }
        return;
    }
#endif
    for (size_t p = 0; p < P; p++) {
        float v = src [p];
        d [p] = tm->keep [p] != 0.0f ? v : 0.0f;
    }
}

/*  Other lowerings (strides, no padding) of planes up to S_MASKED_MAX
    outputs: a table per tap of where each output reads in its input plane
    (at, clamped to 0 where it reads the padding) and whether it does (in),
    then one branch-free loop per plane. The row-by-row loop spent its time
    on rows of 4 to 7 floats (the strided convolutions of resnet8-gn). */
static void
s_tap_table (const gc_cnn_op_t *op, long ki, long kj, int32_t *at, float *in)
{
    long s = (long) op->stride, pad = (long) op->pad, h = (long) op->h, w = (long) op->w;
    for (long oy = 0; oy < (long) op->oh; oy++)
        for (long ox = 0; ox < (long) op->ow; ox++) {
            long iy = oy * s - pad + ki, ix = ox * s - pad + kj, p = oy * (long) op->ow + ox;
            bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            at [p] = inside ? (int32_t) (iy * w + ix) : 0;
            in [p] = inside ? 1.0f : 0.0f;
        }
}

//  Two loops: the gather cannot vectorise and, with the select in it, was a
//  branch per float; the select alone vectorises. At avx512 one masked
//  gather instruction per 16 floats does both: GCC's tuning for this
//  compiler emulates gathers with scalar loads (perf: the scalar loop was a
//  fifth of the lowering of a resnet8-gn step on a Xeon). The same floats.
static void
s_lower_table (const float *src, const int32_t *at, const float *in, size_t P, float *d)
{
#if GC_KLEVEL == GC_KLEVEL_AVX512
    for (size_t p = 0; p < P; p += 16) {
        __mmask16 live = P - p >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << (P - p)) - 1);
        __m512 zero = _mm512_setzero_ps ();
        __mmask16 k = _mm512_mask_cmpneq_ps_mask (live, _mm512_maskz_loadu_ps (live, in + p), zero);
        __m512i idx = _mm512_maskz_loadu_epi32 (live, at + p);
        _mm512_mask_storeu_ps (d + p, live, _mm512_mask_i32gather_ps (zero, k, idx, src, 4));
    }
    return;
#endif
    for (size_t p = 0; p < P; p++)
        d [p] = src [at [p]];
    for (size_t p = 0; p < P; p++) {
        float v = d [p];
        d [p] = in [p] != 0.0f ? v : 0.0f;
    }
}

/*  Stride-2 lowerings of small planes by phases: the input plane split
    once into its four phases (even or odd rows, by even or odd columns),
    each an oh x ow plane, turns every tap into a read of one phase at a
    fixed offset (-1, 0 or +1 rows and columns), kept or zero by the tap's
    mask, as the "same" lowering's masked loop: the gather instruction of
    the table lowering cost some 30 cycles per 16 floats on an AMD EPYC Zen
    5 (perf: a third of the lowering of a resnet8-gn step). The floats are
    the table lowering's; col2im adds into the phases in the tap order of
    the table scatter. S_PHASE_GUARD floats (at least ow + 1) before and
    after each phase take the masked reads that leave it. */
#define S_PHASE_GUARD (S_MASKED_MAX + 1)
#define S_PHASE_LEN (S_MASKED_MAX + 2 * S_PHASE_GUARD)
#define S_PHASE_TAPS 36         /* k <= pad + 4 <= 6 */

static bool
s_phased (const gc_cnn_op_t *op)
{
    size_t s = op->stride;
    return s == 2 && op->oh * op->ow <= S_MASKED_MAX
        && (op->h + 1) / 2 == op->oh && (op->w + 1) / 2 == op->ow
        && op->pad <= 2 && op->k <= op->pad + 4;    /* row and column shifts in [-1, 1] */
}

//  Tap t's phase (0 to 3) and the offset of its reads in that phase.
static void
s_phase_tap (const gc_cnn_op_t *op, long t, size_t *phase, long *off)
{
    long k = (long) op->k, pad = (long) op->pad;
    long di = t / k - pad, dj = t % k - pad;
    long ry = di & 1, rx = dj & 1;      /* di mod 2, also for negative di */
    *phase = (size_t) (2 * ry + rx);
    *off = (di - ry) / 2 * (long) op->ow + (dj - rx) / 2;
}

#if GC_KLEVEL == GC_KLEVEL_AVX512
//  The first n of 16 lanes.
static inline __mmask16
s_lanes (size_t n)
{
    return (__mmask16) ((1u << n) - 1);
}

//  Lane i of a row's permute: evens to lanes 0-7, odds to 8-15 (s_deal), and back.
#define s_deal _mm512_setr_epi32 (0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15)
#define s_undeal _mm512_setr_epi32 (0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15)
#endif

//  Plane x (h x w) into its four phases, S_PHASE_LEN floats apart, each
//  after its guard; the floats that are no input (an odd h or w) zero.
static void
s_phase_split (const gc_cnn_op_t *op, const float *x, size_t room, float *ph)
{
    size_t h = op->h, w = op->w, oh = op->oh, ow = op->ow, pairs = w / 2;
    for (size_t ry = 0; ry < 2; ry++) {
        float *even = ph + 2 * ry * S_PHASE_LEN + S_PHASE_GUARD, *odd = even + S_PHASE_LEN;
        for (size_t r = 0; r < oh; r++, even += ow, odd += ow) {
            size_t iy = 2 * r + ry;
            if (iy >= h) {
                s_zero (even, (long) ow);
                s_zero (odd, (long) ow);
                continue;
            }
            const float *row = x + iy * w;
#if GC_KLEVEL == GC_KLEVEL_AVX512
            //  a row of up to 16 floats: one load, one permute (evens to
            //  the low half, odds to the high one), two stores of ow floats
            //  (the odd one past w is the load's zero); the scalar loop
            //  below was 4 % of a resnet8-gn step
            if (w <= 16) {
                //  a plain load where the 16 floats lie inside the tensor
                //  (`room` floats from the plane on; the floats past the row
                //  zeroed in the register): a masked one waited on memory
                //  several times as long (perf)
                __m512 u = iy * w + 16 <= room
                         ? _mm512_maskz_mov_ps (s_lanes (w), s_plain_load (row))
                         : _mm512_maskz_loadu_ps (s_lanes (w), row);
                __m512 v = _mm512_permutexvar_ps (s_deal, u);
                _mm256_mask_storeu_ps (even, (__mmask8) s_lanes (ow), _mm512_castps512_ps256 (v));
                _mm256_mask_storeu_ps (odd, (__mmask8) s_lanes (ow), _mm512_extractf32x8_ps (v, 1));
                continue;
            }
#endif
            for (size_t c = 0; c < pairs; c++) {
                even [c] = row [2 * c];
                odd [c] = row [2 * c + 1];
            }
            if (w % 2) {
                even [pairs] = row [w - 1];
                odd [pairs] = 0.0f;
            }
        }
    }
}

//  The reverse of s_phase_split: the phases' floats that are inputs into x.
static void
s_phase_join (const gc_cnn_op_t *op, const float *ph, float *x)
{
    size_t h = op->h, w = op->w, oh = op->oh, ow = op->ow, pairs = w / 2;
    for (size_t ry = 0; ry < 2; ry++) {
        const float *even = ph + 2 * ry * S_PHASE_LEN + S_PHASE_GUARD, *odd = even + S_PHASE_LEN;
        for (size_t r = 0; r < oh && 2 * r + ry < h; r++, even += ow, odd += ow) {
            float *row = x + (2 * r + ry) * w;
#if GC_KLEVEL == GC_KLEVEL_AVX512
            if (w <= 16) {
                __m512 v = _mm512_insertf32x8 (
                    _mm512_castps256_ps512 (_mm256_maskz_loadu_ps ((__mmask8) s_lanes (ow), even)),
                    _mm256_maskz_loadu_ps ((__mmask8) s_lanes (ow), odd), 1);
                _mm512_mask_storeu_ps (row, s_lanes (w), _mm512_permutexvar_ps (s_undeal, v));
                continue;
            }
#endif
            for (size_t c = 0; c < pairs; c++) {
                row [2 * c] = even [c];
                row [2 * c + 1] = odd [c];
            }
            if (w % 2)
                row [w - 1] = even [pairs];
        }
    }
}

//  Whether a convolution's lowering and gather read the tap masks and tables.
static bool
s_masked (const gc_cnn_op_t *op)
{
    return op->oh * op->ow <= S_MASKED_MAX;
}

static void
s_taps (const gc_cnn_op_t *op, float *keep, int32_t *at)
{
    if (!s_masked (op))
        return;
    size_t P = op->oh * op->ow;
    bool same = op->stride == 1 && op->ow == op->w;
    for (long t = 0; t < (long) (op->k * op->k); t++) {
        long ki = t / (long) op->k, kj = t % (long) op->k;
        if (same)
            s_keep_mask (op, ki, kj, keep + (size_t) t * P);
        else
            s_tap_table (op, ki, kj, at + (size_t) t * P, keep + (size_t) t * P);
    }
}

static void
s_im2col (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
                float *col, const float *keep, const int32_t *at)
{
    long k = (long) op->k, s = (long) op->stride, pad = (long) op->pad;
    size_t P = op->oh * op->ow, hw = op->h * op->w, N = m * P;
    //  the masked loop up to 16x16 planes: on 28x28 ones (the first
    //  convolution of both presets) the run-by-run copy was faster, its runs
    //  long enough for memcpy; on 14x14 the masked one, by 10 % of the
    //  convolution (lenet 5x5, resnet8-gn 3x3)
    bool same = s == 1 && op->ow == op->w && s_masked (op) && keep;
    //  how far a tap's offset reaches (k = 2 pad + 1): a plane whose window
    //  would leave the tensor takes the run-by-run path
    size_t reach = op->pad * op->w + op->pad;
    bool table = !(s == 1 && op->ow == op->w) && s_masked (op) && keep;
    if (table && s_phased (op)) {
        float ph [4 * S_PHASE_LEN] = { 0 };
        s_tapmask_t tm [S_PHASE_TAPS];
        for (long t = 0; t < k * k; t++)
            s_tapmask (keep + (size_t) t * P, P, &tm [t]);
        for (size_t ci = 0; ci < op->c; ci++)
            for (size_t n = 0; n < m; n++) {
                size_t q = ci * batch + n0 + n;
                gc_conv_prefetch_next (x, hw, ci, n0 + n, n0, m, batch, op->c, false);
                s_phase_split (op, x + q * hw, (op->c * batch - q) * hw, ph);
                for (long t = 0; t < k * k; t++) {
                    size_t f;
                    long off;
                    s_phase_tap (op, t, &f, &off);
                    float *dst = col + (ci * (size_t) (k * k) + (size_t) t) * N + n * P;
                    s_lower_masked (ph + f * S_PHASE_LEN + S_PHASE_GUARD + off, &tm [t], P, dst);
                }
            }
        return;
    }
    for (long ki = 0; ki < k; ki++)
        for (long kj = 0; kj < k; kj++) {
            long lo, hi, off = (ki - pad) * (long) op->w + kj - pad;
            s_valid ((long) op->ow, (long) op->w, s, kj - pad, &lo, &hi);
            size_t t = (size_t) (ki * k + kj);
            s_tapmask_t tm = { 0 };
            if (same)
                s_tapmask (keep + t * P, P, &tm);
            for (size_t ci = 0; ci < op->c; ci++) {
                float *dst = col + ((ci * (size_t) k + (size_t) ki) * (size_t) k + (size_t) kj) * N;
                for (size_t n = 0; n < m; n++) {
                    size_t q = ci * batch + n0 + n;     /* the plane in the tensor */
                    if (table)
                        s_lower_table (x + q * hw, at + t * P, keep + t * P, P, dst + n * P);
                    else if (same && q * hw >= reach && (q + 1) * hw + reach <= op->c * batch * hw)
                        s_lower_masked (x + (long) (q * hw) + off, &tm, P, dst + n * P);
                    else
                        s_lower_plane (op, ki, kj, lo, hi, x + q * hw, dst + n * P);
                }
            }
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

//  dst += the lowered plane d of one tap, read at dst's own positions
//  shifted back by the tap's offset (across the plane's edge where the mask
//  drops it): one branch-free loop, as the masked lowering.
static void
s_gather_masked (const float *src, const float *keep, size_t P, float *dst)
{
    size_t p = 0;
#if GC_KLEVEL == GC_KLEVEL_AVX512
    //  plain loads, as s_lower_masked; the tail in the loop below
    for (; p + 16 <= P; p += 16) {
        __mmask16 k = _mm512_cmpneq_ps_mask (_mm512_loadu_ps (keep + p), _mm512_setzero_ps ());
        _mm512_storeu_ps (dst + p, _mm512_add_ps (_mm512_loadu_ps (dst + p),
                                                  _mm512_maskz_mov_ps (k, s_plain_load (src + p))));
    }
#endif
    for (; p < P; p++) {
        float v = src [p];
        dst [p] += keep [p] != 0.0f ? v : 0.0f;
    }
}

static void
s_col2im (const gc_cnn_op_t *op, float *dcol, size_t batch, size_t n0, size_t m,
                float *dx, bool add, const float *keep, const int32_t *at)
{
    long k = (long) op->k, s = (long) op->stride, pad = (long) op->pad;
    long h = (long) op->h, w = (long) op->w, oh = (long) op->oh, ow = (long) op->ow;
    size_t P = op->oh * op->ow, hw = op->h * op->w, N = m * P;
    bool same = s == 1 && ow == w;
    //  the taps' masks, for planes that can read across their edges (not
    //  the tensor's first or last): tap t gathers where the lowering's tap
    //  k k - 1 - t reads (its offset negated, k = 2 pad + 1)
    bool masked = same && s_masked (op) && keep;
    size_t reach = op->pad * op->w + op->pad;
    //  other lowerings of small planes: each tap's table (s_tap_table); a
    //  tap reads each input float at most once, so its floats scatter
    //  without conflicts, in the row loop's order
    bool table = !same && s_masked (op) && keep;
    float ph [4 * S_PHASE_LEN] = { 0 };
    //  plane by plane, so that the plane being gathered into stays in L1 and
    //  zeroing it first costs no pass of its own
    for (size_t ci = 0; ci < op->c; ci++)
        for (size_t n = 0; n < m; n++) {
            size_t q = ci * batch + n0 + n;
            float *dst = dx + q * hw;
            gc_conv_prefetch_next (dx, hw, ci, n0 + n, n0, m, batch, op->c, true);
            if (!add && !(table && s_phased (op)))
                memset (dst, 0, hw * sizeof (float));
            //  the lowered rows of this plane, the first and last tap's, and
            //  what a read across them reaches must lie inside dcol
            size_t first = ci * (size_t) (k * k) * N + n * P, last = first + (size_t) (k * k - 1) * N;
            if (table && s_phased (op)) {
                //  the phases start as the plane (add) or as zeros, and the
                //  join writes every float of the plane: no memset of it
                if (add)
                    s_phase_split (op, dst, (op->c * batch - q) * hw, ph);
                else
                    for (size_t f = 0; f < 4; f++)
                        s_zero (ph + f * S_PHASE_LEN + S_PHASE_GUARD, (long) P);
                for (long t = 0; t < k * k; t++) {
                    size_t f;
                    long off;
                    s_phase_tap (op, t, &f, &off);
                    const float *d = dcol + (ci * (size_t) (k * k) + (size_t) t) * N + n * P;
                    s_gather_masked (d, keep + (size_t) t * P, P,
                                     ph + f * S_PHASE_LEN + S_PHASE_GUARD + off);
                }
                s_phase_join (op, ph, dst);
                continue;
            }
            if (table) {
                for (long t = 0; t < k * k; t++) {
                    const float *d = dcol + (ci * (size_t) (k * k) + (size_t) t) * N + n * P;
                    const int32_t *a = at + (size_t) t * P;
                    const float *in = keep + (size_t) t * P;
                    for (size_t p = 0; p < P; p++)
                        if (in [p] != 0.0f)
                            dst [a [p]] += d [p];
                }
                continue;
            }
            if (masked && first >= reach && last + P + reach <= op->c * (size_t) (k * k) * N) {
                for (long t = 0; t < k * k; t++) {
                    long off = (t / k - pad) * w + t % k - pad;
                    const float *d = dcol + (ci * (size_t) (k * k) + (size_t) t) * N + n * P;
                    s_gather_masked (d - off, keep + (size_t) (k * k - 1 - t) * P, P, dst);
                }
                continue;
            }
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

//  2x2 windows of stride 2, the presets' pooling: the four candidates of a
//  window compared in the general loop's order (the first maximum wins), as
//  selects instead of an index loop.
static void
s_maxpool2_plane (const gc_cnn_op_t *op, const float *src, float *dst, int32_t *a)
{
    size_t w = op->w, ow = op->ow;
    for (size_t oy = 0; oy < op->oh; oy++) {
        const float *r0 = src + 2 * oy * w, *r1 = r0 + w;
        int32_t base = (int32_t) (2 * oy * w);
        for (size_t ox = 0; ox < ow; ox++) {
            int32_t i = base + (int32_t) (2 * ox);
            float m = r0 [2 * ox], v;
            int32_t best = i;
            v = r0 [2 * ox + 1];
            best = v > m ? i + 1 : best;
            m = v > m ? v : m;
            v = r1 [2 * ox];
            best = v > m ? i + (int32_t) w : best;
            m = v > m ? v : m;
            v = r1 [2 * ox + 1];
            best = v > m ? i + (int32_t) w + 1 : best;
            m = v > m ? v : m;
            dst [oy * ow + ox] = m;
            a [oy * ow + ox] = best;
        }
    }
}

/*  The same windows on planes of even height and width, in two passes that
    vectorise: the maximum of each horizontal pair over the plane as one run
    (a pair never straddles a row), then of the two pairs of a window. The
    first maximum still wins (the pair of the upper row is its first half),
    so values and positions are those of s_maxpool2_plane for finite inputs.
    The one loop over windows was strided loads and a scalar tail on rows of
    7 and 14 windows (perf: 5 % of a lenet step on a Xeon). */
#define S_POOL2_PAIRS 2048

static bool
s_pool2_split (const gc_cnn_op_t *op)
{
    return op->h % 2 == 0 && op->w % 2 == 0 && op->h * op->w / 2 <= S_POOL2_PAIRS;
}

static void
s_maxpool2_split (const gc_cnn_op_t *op, const float *src, float *dst, int32_t *a)
{
    size_t pairs = op->h * op->w / 2, ow = op->ow;
    float hv [S_POOL2_PAIRS];
    int32_t hi [S_POOL2_PAIRS];
    for (size_t j = 0; j < pairs; j++) {
        float l = src [2 * j], r = src [2 * j + 1];
        bool right = r > l;
        hv [j] = right ? r : l;
        hi [j] = (int32_t) (2 * j) + (right ? 1 : 0);
    }
    for (size_t oy = 0; oy < op->oh; oy++) {
        const float *top = hv + 2 * oy * ow, *bot = top + ow;
        const int32_t *ti = hi + 2 * oy * ow, *bi = ti + ow;
        for (size_t ox = 0; ox < ow; ox++) {
            //  the position's select as bit masks, which GCC vectorises
            //  where it did not vectorise the select
            float u = top [ox], v = bot [ox];
            int32_t iu = ti [ox], iv = bi [ox], down = -(int32_t) (v > u);
            dst [oy * ow + ox] = v > u ? v : u;
            a [oy * ow + ox] = iu ^ ((iu ^ iv) & down);
        }
    }
}

static void
s_maxpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
                   float *y, int32_t *arg)
{
    size_t k = op->k, s = op->stride, hw = op->h * op->w, P = op->oh * op->ow;
    for (size_t q = 0; q < op->c * m; q++) {
        size_t plane = (q / m) * batch + n0 + q % m;   /* channel q / m, sample n0 + q % m */
        const float *src = x + plane * hw;
        float *dst = y + plane * P;
        int32_t *a = arg + plane * P;
        size_t q2;
        if (gc_conv_next_plane (q / m, n0 + q % m, n0, m, batch, op->c, &q2)) {
            gc_conv_prefetch (x + q2 * hw, hw * sizeof (float), false);
            gc_conv_prefetch (y + q2 * P, P * sizeof (float), true);
            gc_conv_prefetch (arg + q2 * P, P * sizeof (int32_t), true);
        }
        if (k == 2 && s == 2) {
            if (s_pool2_split (op))
                s_maxpool2_split (op, src, dst, a);
            else
                s_maxpool2_plane (op, src, dst, a);
            continue;
        }
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

static void
s_maxpool_backward (const gc_cnn_op_t *op, const float *dy, const int32_t *arg,
                    const float *y, size_t batch, size_t n0, size_t m, float *dx, bool add)
{
    size_t hw = op->h * op->w, P = op->oh * op->ow;
    //  plane by plane: the plane zeroed and scattered into while it is in L1
    //  (a memset of the whole tensor first had it leave the cache in between)
    for (size_t q = 0; q < op->c * m; q++) {
        size_t plane = (q / m) * batch + n0 + q % m;   /* channel q / m, sample n0 + q % m */
        float *d = dx + plane * hw;
        const float *g = dy + plane * P;
        const int32_t *a = arg + plane * P;
        size_t q2;
        if (gc_conv_next_plane (q / m, n0 + q % m, n0, m, batch, op->c, &q2)) {
            gc_conv_prefetch (dx + q2 * hw, hw * sizeof (float), true);
            gc_conv_prefetch (dy + q2 * P, P * sizeof (float), false);
            gc_conv_prefetch (arg + q2 * P, P * sizeof (int32_t), false);
            if (y)
                gc_conv_prefetch (y + q2 * P, P * sizeof (float), false);
        }
        if (!add)
            memset (d, 0, hw * sizeof (float));
        if (y) {
            //  the ReLU's mask as a loop of its own, which vectorises: in the
            //  scatter it was a branch on the sign of each activation,
            //  mispredicted as often as not (perf: most of this function)
            const float *v = y + plane * P;
            float t [64];
            for (size_t p0 = 0; p0 < P; p0 += 64) {
                size_t n = P - p0 < 64 ? P - p0 : 64;
                for (size_t j = 0; j < n; j++) {
                    float gj = g [p0 + j];
                    t [j] = v [p0 + j] > 0.0f ? gj : 0.0f;
                }
                for (size_t j = 0; j < n; j++)
                    d [a [p0 + j]] += t [j];
            }
        }
        else
            for (size_t p = 0; p < P; p++)
                d [a [p]] += g [p];
    }
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

static void
s_avgpool_forward (const gc_cnn_op_t *op, const float *x, size_t batch, float *y)
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

static void
s_avgpool_backward (const gc_cnn_op_t *op, const float *dy, size_t batch, float *dx,
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

//  The sum of n floats in 16 lanes, which the compiler vectorises (a single
//  float or double accumulator it cannot reorder); the lanes are added in double.
static double
s_sum (const float *x, size_t n)
{
    float lane [16] = { 0 };
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++)
            lane [j] += x [i + j];
    double total = 0;
    for (; i < n; i++)
        total += x [i];
    for (int j = 0; j < 16; j++)
        total += lane [j];
    return total;
}

//  gc_conv_bias: three loops the vectoriser takes at the level's width.
static void
s_bias (float *y, size_t n, float b, int mode)
{
    if (mode == GC_CONV_BIAS_FILL)
        for (size_t j = 0; j < n; j++)
            y [j] = b;
    else
    if (mode == GC_CONV_BIAS_ADD)
        for (size_t j = 0; j < n; j++)
            y [j] += b;
    else
        for (size_t j = 0; j < n; j++) {
            float v = y [j] + b;
            y [j] = v > 0.0f ? v : 0.0f;
        }
}

/*  GroupNorm's loops. Tensors are channel-major (CNHW, gc_cnn.c): the plane
    of sample n, channel c is x + (c batch + n) h w, and a group of one sample
    is cg planes batch h w floats apart. The presets' planes are small (16 to
    784 floats), so a reduction per plane (lanes added up, in double) cost
    more than the arithmetic: the lanes run on across the planes of a group
    (forward) or of a channel (backward, the parameter gradients) and are
    added up once. S_GN_LANES floats wide: four such accumulators fit the
    registers of the baseline (SSE2) build. */
#define S_GN_LANES 8

/*  The lane loops are for the straight-line (SLP) vectoriser, one vector
    op per lane block; GCC's loop vectoriser took the S_GN_LANES floats of
    an iteration as an interleaved group and spent most of the time in
    shuffles (perf: GroupNorm backward 19 % of a resnet8-gn step on a Xeon). */
#if defined (__GNUC__) && !defined (__clang__)
#   define S_LANE_LOOPS __attribute__ ((optimize ("no-tree-loop-vectorize")))
#else
#   define S_LANE_LOOPS
#endif

//  Sum over lanes and tail, in double.
static double
s_lanes_total (const float *lane, double tail)
{
    for (int j = 0; j < S_GN_LANES; j++)
        tail += lane [j];
    return tail;
}

//  Sum of x (square: of (x - mean)^2) over the cg planes of hw floats at x,
//  `stride` floats apart.
static S_LANE_LOOPS double
s_group_sum (const float *x, size_t cg, size_t stride, size_t hw, float mean, bool square)
{
    float lane [S_GN_LANES] = { 0 };
    double tail = 0;
    for (size_t j = 0; j < cg; j++) {
        const float *p = x + j * stride;
        size_t i = 0;
#if GC_KLEVEL >= GC_KLEVEL_AVX2
        //  one register for the lanes, as in s_gn_group_sums
        __m256 v = _mm256_loadu_ps (lane), vm = _mm256_set1_ps (mean);
        for (; i + S_GN_LANES <= hw; i += S_GN_LANES) {
            __m256 d = _mm256_sub_ps (_mm256_loadu_ps (p + i), vm);
            v = _mm256_add_ps (v, square ? _mm256_mul_ps (d, d) : d);
        }
        _mm256_storeu_ps (lane, v);
#endif
        for (; i + S_GN_LANES <= hw; i += S_GN_LANES)
            for (int l = 0; l < S_GN_LANES; l++) {
                float d = p [i + l] - mean;
                lane [l] += square ? d * d : d;
            }
        for (; i < hw; i++) {
            double d = (double) p [i] - mean;
            tail += square ? d * d : d;
        }
    }
    return s_lanes_total (lane, tail);
}

//  gc_conv_prefetch for the cg planes of hw floats `stride` apart at x (a
//  group of one sample), one group ahead of GroupNorm's loops (the group
//  after (g, n) is gc_conv_next_plane's with cg batch planes per group;
//  perf: the backward sums had spent most of their time on one load).
static inline void
s_prefetch_group (const float *x, size_t cg, size_t stride, size_t hw, bool write)
{
    for (size_t j = 0; j < cg; j++)
        gc_conv_prefetch (x + j * stride, hw * sizeof (float), write);
}

static void
s_gn_forward (const gc_cnn_op_t *op, const float *x, size_t batch, size_t n0, size_t m,
              const float *gamma, const float *beta, bool relu, float *y, float *stats)
{
    size_t G = op->groups, cg = op->c / G, hw = op->h * op->w, M = cg * hw;
    //  group by group, sample by sample: a channel's planes of consecutive
    //  samples are adjacent, so each of the group's streams runs on
    for (size_t g = 0; g < G; g++)
        for (size_t n = n0; n < n0 + m; n++) {
            const float *x0 = x + (g * cg * batch + n) * hw;
            size_t next;
            if (gc_conv_next_plane (g, n, n0, m, cg * batch, G, &next)) {
                s_prefetch_group (x + next * hw, cg, batch * hw, hw, false);
                s_prefetch_group (y + next * hw, cg, batch * hw, hw, true);
            }
            double sum = s_group_sum (x0, cg, batch * hw, hw, 0.0f, false);
            float mu = (float) (sum / (double) M);
            double sq = s_group_sum (x0, cg, batch * hw, hw, mu, true);
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

static size_t
s_gn_scratch (const gc_cnn_op_t *op)
{
    return op->c * (2 * S_GN_LANES + 4);    /* 2 C doubles = 4 C floats */
}

/*  The sums of GroupNorm's backward over one group of one sample, in lanes:
    dg, db per channel (dgamma, dbeta: lanes that run on over the batch, in
    lg, lb: S_GN_LANES floats a channel) and, over the group, s1 = sum of
    gamma dy and s2 = sum of gamma rstd dy (x - mu), returned in double. */
static S_LANE_LOOPS void
s_gn_group_sums (const float *x, const float *dy, size_t cg, size_t stride, size_t hw,
                 const float *gamma, float mu, float rstd, float *lg, float *lb,
                 double *tg, double *tb, double *s1, double *s2)
{
    float l1 [S_GN_LANES] = { 0 }, l2 [S_GN_LANES] = { 0 };
    double t1 = 0, t2 = 0;
    for (size_t j = 0; j < cg; j++) {
        const float *xs = x + j * stride, *ds = dy + j * stride;
        //  the channel's lanes in locals, which the compiler keeps in
        //  registers (through lg and lb it would have to assume aliasing)
        float g [S_GN_LANES], b [S_GN_LANES];
        memcpy (g, lg + j * S_GN_LANES, sizeof g);
        memcpy (b, lb + j * S_GN_LANES, sizeof b);
        float gr = gamma [j] * rstd;
        size_t i = 0;
#if GC_KLEVEL >= GC_KLEVEL_AVX2
        //  the lanes as one 8-float register each, the same operations
        //  lane by lane: GCC's straight-line vectoriser had left half of
        //  them scalar, with shuffles between (perf: 10 % of a resnet8-gn
        //  step on a Zen 5, the adds' latency)
        {
            __m256 vg = _mm256_loadu_ps (g), vb = _mm256_loadu_ps (b);
            __m256 v1 = _mm256_loadu_ps (l1), v2 = _mm256_loadu_ps (l2);
            __m256 vmu = _mm256_set1_ps (mu), vr = _mm256_set1_ps (rstd);
            __m256 vgam = _mm256_set1_ps (gamma [j]), vgr = _mm256_set1_ps (gr);
            for (; i + S_GN_LANES <= hw; i += S_GN_LANES) {
                __m256 d = _mm256_loadu_ps (ds + i);
                __m256 t = _mm256_mul_ps (d, _mm256_sub_ps (_mm256_loadu_ps (xs + i), vmu));
                vg = _mm256_add_ps (vg, _mm256_mul_ps (vr, t));
                vb = _mm256_add_ps (vb, d);
                v1 = _mm256_add_ps (v1, _mm256_mul_ps (vgam, d));
                v2 = _mm256_add_ps (v2, _mm256_mul_ps (vgr, t));
            }
            _mm256_storeu_ps (g, vg);
            _mm256_storeu_ps (b, vb);
            _mm256_storeu_ps (l1, v1);
            _mm256_storeu_ps (l2, v2);
        }
#endif
        for (; i + S_GN_LANES <= hw; i += S_GN_LANES)
            for (int l = 0; l < S_GN_LANES; l++) {
                float d = ds [i + l], t = d * (xs [i + l] - mu);
                g [l] += rstd * t;
                b [l] += d;
                l1 [l] += gamma [j] * d;
                l2 [l] += gr * t;
            }
        for (; i < hw; i++) {
            double d = ds [i], t = d * ((double) xs [i] - mu);
            tg [j] += rstd * t;
            tb [j] += d;
            t1 += gamma [j] * d;
            t2 += gr * t;
        }
        memcpy (lg + j * S_GN_LANES, g, sizeof g);
        memcpy (lb + j * S_GN_LANES, b, sizeof b);
    }
    *s1 = s_lanes_total (l1, t1);
    *s2 = s_lanes_total (l2, t2);
}

static void
s_gn_backward (const gc_cnn_op_t *op, const float *x, const float *dy,
               const float *stats, size_t batch, size_t n0, size_t m, const float *gamma,
               float *dgamma, float *dbeta, float *dx, bool add, float *scratch)
{
    size_t C = op->c, G = op->groups, cg = C / G, hw = op->h * op->w, M = cg * hw;
    //  scratch: the lanes of dgamma and dbeta (C S_GN_LANES floats each),
    //  then their tails (C doubles each)
    float *lg = scratch, *lb = lg + C * S_GN_LANES;
    double *tg = (double *) (lb + C * S_GN_LANES), *tb = tg + C;
    if (n0 == 0)
        memset (scratch, 0, s_gn_scratch (op) * sizeof (float));
    //  in the forward pass's order (a channel's sums then still run over
    //  the samples in order: the same bits as sample by sample, and over
    //  ranges of samples taken in order)
    for (size_t g = 0; g < G; g++)
        for (size_t n = n0; n < n0 + m; n++) {
            float mu = stats [2 * (n * G + g)], rstd = stats [2 * (n * G + g) + 1];
            size_t c0 = g * cg, base0 = (c0 * batch + n) * hw;
            size_t next;
            if (gc_conv_next_plane (g, n, n0, m, cg * batch, G, &next)) {
                s_prefetch_group (x + next * hw, cg, batch * hw, hw, false);
                s_prefetch_group (dy + next * hw, cg, batch * hw, hw, false);
                if (dx)
                    s_prefetch_group (dx + next * hw, cg, batch * hw, hw, true);
            }
            double s1, s2;
            s_gn_group_sums (x + base0, dy + base0, cg, batch * hw, hw, gamma + c0, mu, rstd,
                             lg + c0 * S_GN_LANES, lb + c0 * S_GN_LANES, tg + c0, tb + c0,
                             &s1, &s2);
            if (!dx)
                continue;
            float m1 = (float) (s1 / (double) M), m2 = (float) (s2 / (double) M);
            for (size_t j = 0; j < cg; j++) {
                size_t c = c0 + j, base = (c * batch + n) * hw;
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
    if (n0 + m < batch)
        return;
    for (size_t c = 0; c < C; c++) {
        dgamma [c] += (float) s_lanes_total (lg + c * S_GN_LANES, tg [c]);
        dbeta [c] += (float) s_lanes_total (lb + c * S_GN_LANES, tb [c]);
    }
}

const gc_conv_kern_t GC_KSYM (gc_conv_kern) = {
    .taps = s_taps, .im2col = s_im2col, .col2im = s_col2im,
    .maxpool_forward = s_maxpool_forward, .maxpool_backward = s_maxpool_backward,
    .avgpool_forward = s_avgpool_forward, .avgpool_backward = s_avgpool_backward,
    .sum = s_sum, .bias = s_bias, .gn_forward = s_gn_forward, .gn_backward = s_gn_backward,
    .gn_scratch = s_gn_scratch,
};
