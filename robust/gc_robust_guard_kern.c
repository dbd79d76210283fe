/*  guard's two passes over the data (gc_robust_guard.c has the rule), compiled
    once per kernel level like gc_robust_cw.c.

    Why two passes: the clip factors need every input's whole distance to the
    peer before anything is weighted. The first pass reads each input once
    and takes everything the rule needs from it (distance, sign balances
    against own and against the neighbours' median, dot product with that
    median, formed block by block in L1,
    and the input's sketch: gc_robust_internal.h); the second forms the
    output. The histories are sketches of 4 KB, not d-vectors, so neither
    pass reads or writes a d-vector of history.

    The loops are plain C over S_LANES float partial sums, which the compiler
    turns into one zmm, two ymm or four xmm per sum: every level performs
    the same float operations in the same order per lane (no contraction:
    -ffp-contract=off), so the levels give the same bits. Each block's lane
    sums are folded into double in a fixed order. */
#include "gc_klevel.h"
#include "gc_robust_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define S_LANES 16
#define S_BLOCK GC_ROBUST_SKETCH    /* coordinates per block: one bucket each */

typedef union { float f; uint32_t u; } s_bits_t;

static inline uint32_t
s_bits (float v)
{
    s_bits_t b = { .f = v };
    return b.u;
}

static inline float
s_float (uint32_t u)
{
    s_bits_t b = { .u = u };
    return b.f;
}

//  The sketch's signs of a block as sign-bit masks. With a vector integer
//  multiply (AVX2 up) the mixer of gc_robust_guard.c's table (s_signs) is
//  recomputed in registers, cheaper than widening the table's bytes;
//  without one (SSE2) the table is read. Both give the same masks.
static void
s_signs (const uint8_t *restrict table, size_t c0, size_t n, uint32_t *restrict sg)
{
#if GC_KLEVEL >= GC_KLEVEL_AVX2
    (void) table;
    for (size_t c = 0; c < n; c++) {
        uint32_t h = (uint32_t) (c0 + c) * 0x9e3779b1u;
        h ^= h >> 15;
        h *= 0x85ebca77u;
        h ^= h >> 13;
        sg [c] = h & 0x80000000u;
    }
#else
    for (size_t c = 0; c < n; c++)
        sg [c] = (uint32_t) table [c0 + c] << 31;
#endif
}

//  BODY (I, L) over coordinates 0..n-1: lane L takes the coordinates = L mod
//  S_LANES, the partial block onto the same lanes in coordinate order.
#define S_LANE_LOOP(n, BODY) { \
        size_t i_ = 0; \
        for (; i_ + S_LANES <= (n); i_ += S_LANES) \
            for (size_t l_ = 0; l_ < S_LANES; l_++) \
                BODY (i_ + l_, l_) \
        for (size_t l_ = 0; i_ < (n); i_++, l_++) \
            BODY (i_, l_) }

static inline uint32_t
s_umax (uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}

static double
s_fold (const float *lane)
{
    double all = 0;
    for (size_t l = 0; l < S_LANES; l++)
        all += (double) lane [l];
    return all;
}

//  One input over a block: v = x - own; sums into *r; its sketch (sx != NULL)
//  gets sign * v, and with md (the neighbours' median - own) the row's
//  statistics: its dot product with md, the coordinates where it lies above
//  own, and where it lies above or below the median (v against md, the same
//  float comparison at every level). No largest |v| per coordinate: d2
//  tells when one may be huge (s_huge_check).
typedef struct { double d2, dot; int64_t pos, nz, above, below; } s_row_t;

#define S_ROW_BODY(I, L) { \
        float v = x [I] - own [I]; \
        d2 [L] += v * v; \
        dot [L] += v * md [I]; \
        pos [L] += v > 0.0f; \
        nz [L] += v != 0.0f; \
        above [L] += v > md [I]; \
        below [L] += v < md [I]; \
        sx [I] += s_float (s_bits (v) ^ sg [I]); }

#if GC_KLEVEL == GC_KLEVEL_GENERIC
//  The baseline build has 16 xmm registers, and S_ROW_BODY's six sums of
//  S_LANES lanes take 24: GCC kept them on the stack (perf: two thirds of
//  the scan's instructions were spills). Here the whole lanes of a block
//  are formed four at a time, lanes 4h .. 4h + 3 in pass h over the block
//  (in L1 after the first), each lane still adding its coordinates in
//  order: the same operations per lane, so the same bits, as S_ROW_BODY.
//  GCC's vector extensions, so that an aarch64 build gets the same code.
typedef float    s_v4f __attribute__ ((vector_size (16)));
typedef int32_t  s_v4i __attribute__ ((vector_size (16)));
typedef uint32_t s_v4u __attribute__ ((vector_size (16)));

static inline s_v4f
s_ld4 (const float *p)
{
    s_v4f v;
    memcpy (&v, p, sizeof v);
    return v;
}

static void
s_row_lanes (const float *restrict x, const float *restrict own, const float *restrict md,
             const uint32_t *restrict sg, float *restrict sx, size_t full, float *d2,
             float *dot, int32_t *pos, int32_t *nz, int32_t *above, int32_t *below)
{
    const s_v4f zero = { 0 };
    for (size_t h = 0; h < S_LANES; h += 4) {
        s_v4f vd2 = zero, vdot = zero;
        s_v4i vpos = { 0 }, vnz = { 0 }, vab = { 0 }, vbe = { 0 };
        for (size_t i = h; i < full; i += S_LANES) {
            s_v4f v = s_ld4 (x + i) - s_ld4 (own + i), m = s_ld4 (md + i);
            vd2 += v * v;
            vdot += v * m;
            vpos -= v > zero;       /* a true comparison is -1 */
            vnz -= v != zero;
            vab -= v > m;
            vbe -= v < m;
            s_v4u sgn;
            memcpy (&sgn, sg + i, sizeof sgn);
            s_v4f t = s_ld4 (sx + i) + (s_v4f) ((s_v4u) v ^ sgn);
            memcpy (sx + i, &t, sizeof t);
        }
        memcpy (d2 + h, &vd2, sizeof vd2);
        memcpy (dot + h, &vdot, sizeof vdot);
        memcpy (pos + h, &vpos, sizeof vpos);
        memcpy (nz + h, &vnz, sizeof vnz);
        memcpy (above + h, &vab, sizeof vab);
        memcpy (below + h, &vbe, sizeof vbe);
    }
}
#endif

static void
s_row_block (const float *restrict x, const float *restrict own, const float *restrict md,
             const uint32_t *restrict sg, float *restrict sx, size_t n, s_row_t *r)
{
    float d2 [S_LANES] = { 0 }, dot [S_LANES] = { 0 };
    int32_t pos [S_LANES] = { 0 }, nz [S_LANES] = { 0 };
    int32_t above [S_LANES] = { 0 }, below [S_LANES] = { 0 };
#if GC_KLEVEL == GC_KLEVEL_GENERIC
    size_t full = n / S_LANES * S_LANES;
    s_row_lanes (x, own, md, sg, sx, full, d2, dot, pos, nz, above, below);
    for (size_t i = full, l = 0; i < n; i++, l++)
        S_ROW_BODY (i, l)
#else
    S_LANE_LOOP (n, S_ROW_BODY)
#endif
#undef S_ROW_BODY
    r->d2 += s_fold (d2);
    r->dot += s_fold (dot);
    for (size_t l = 0; l < S_LANES; l++) {
        r->pos += pos [l];
        r->nz += nz [l];
        r->above += above [l];
        r->below += below [l];
    }
}

//  An input without a history: its distance only.
static void
s_plain_block (const float *restrict x, const float *restrict own, size_t n, s_row_t *r)
{
    float d2 [S_LANES] = { 0 };
#define S_PLAIN_BODY(I, L) { \
        float v = x [I] - own [I]; \
        d2 [L] += v * v; }
    S_LANE_LOOP (n, S_PLAIN_BODY)
#undef S_PLAIN_BODY
    r->d2 += s_fold (d2);
}

//  The block of own: its sketch, and in s->own_big whether it holds NaN or
//  Inf (a float sum of own - own, 0 for finite own, NaN otherwise: two
//  operations a coordinate where a largest |own| needs a mask and a max,
//  six operations at SSE2); with a median block md, md -= own, its square
//  sum and, where that sum says it may reach GC_ROBUST_GUARD_HUGE_BITS
//  (2^118 or more, as in s_huge_check), the block's largest |md - own|
//  from md in L1 (else 0: below the threshold, all that is asked of it).
static void
s_own_block (const float *restrict own, const uint32_t *restrict sg, float *restrict sown,
             float *restrict md, size_t n, gc_robust_guard_sums_t *s)
{
    float sq [S_LANES] = { 0 }, fin [S_LANES] = { 0 };
#define S_OWN_BODY(I, L) { \
        sown [I] += s_float (s_bits (own [I]) ^ sg [I]); \
        fin [L] += own [I] - own [I]; \
        if (md) { \
            float m = md [I] - own [I]; \
            md [I] = m; \
            sq [L] += m * m; } }
    S_LANE_LOOP (n, S_OWN_BODY)
#undef S_OWN_BODY
    double q = s_fold (sq);
    s->med2 += q;
    if (!(s_fold (fin) == 0))
        s->own_big = GC_ROBUST_NONFINITE_BITS;
    if (md && !(q < 0x1p118))
        for (size_t c = 0; c < n; c++)
            s->med_big = s_umax (s->med_big, s_bits (md [c]) & 0x7fffffffu);
}

static inline float
s_fmin (float a, float b)
{
    return a < b ? a : b;       /* minps: b when not a < b (NaN, equal zeros) */
}

static inline float
s_fmax (float a, float b)
{
    return a > b ? a : b;
}

//  The median of four neighbours over a block, the mean of the middle two,
//  as the window kernel gives it ((float) (((double) s1 + s2) * 0.5), the
//  same network) but in float: (s1 + s2) * 0.5f. The two are equal unless
//  s1 + s2 overflows: where the exact s = s1 + s2 fits a double (exponents
//  within 28) both round s / 2 once (a float sum below 2^-125 is exact, and
//  from there the halving is exact); where it does not, the smaller term is
//  below an eighth of half an ulp of the larger and both give half the
//  larger. Returns 1 when some mean is not
//  finite (a middle pair overflowed, or an Inf reached the middle): the
//  caller then takes the window kernel's result for the block, and its
//  finiteness test. (A NaN or Inf that does not reach the middle wires is
//  not seen here; its input's d2 is NaN or Inf, which s_huge_check
//  reports.) The test is a float sum of m - m, which is 0 for every finite
//  m: two operations a coordinate.
static int
s_med4_block (const float *const *nb, size_t n, float *restrict md)
{
    const float *restrict x0 = nb [0], *restrict x1 = nb [1];
    const float *restrict x2 = nb [2], *restrict x3 = nb [3];
    float fin [S_LANES] = { 0 };
#define S_MED4_BODY(I, L) { \
        float a = s_fmin (x0 [I], x1 [I]), b = s_fmax (x0 [I], x1 [I]); \
        float c = s_fmin (x2 [I], x3 [I]), e = s_fmax (x2 [I], x3 [I]); \
        float lo = s_fmax (a, c), hi = s_fmin (b, e); \
        float s1 = s_fmin (hi, lo), s2 = s_fmax (hi, lo); \
        float m = (s1 + s2) * 0.5f; \
        md [I] = m; \
        fin [L] += m - m; }
    S_LANE_LOOP (n, S_MED4_BODY)
#undef S_MED4_BODY
    return !(s_fold (fin) == 0);
}

static void
s_add (gc_robust_guard_sums_t *s, size_t j, const s_row_t *r)
{
    s->d2 [j] += r->d2;
    s->dot [j] += r->dot;
    s->pos [j] += r->pos;
    s->nz [j] += r->nz;
    s->above [j] += r->above;
    s->below [j] += r->below;
}

//  The largest |x - own| over d as float bits, and 1 in *bad when x holds
//  NaN or Inf.
static uint32_t
s_largest_diff (const float *x, const float *own, size_t d, int *bad)
{
    uint32_t big = 0, xbig = 0;
    for (size_t c = 0; c < d; c++) {
        big = s_umax (big, s_bits (x [c] - own [c]) & 0x7fffffffu);
        xbig = s_umax (xbig, s_bits (x [c]) & 0x7fffffffu);
    }
    *bad |= xbig >= GC_ROBUST_NONFINITE_BITS;
    return big;
}

//  Input j's big, and whether it holds NaN or Inf, from its d2 where that
//  decides them: a coordinate with |x - own| >= 2^59 (GC_ROBUST_GUARD_HUGE_BITS)
//  adds a square of 2^118 or more to a float lane sum of non-negative terms,
//  which can then only stay there or become Inf, and a NaN or Inf in x
//  makes x - own NaN or Inf; so d2 below 2^118 proves both absent (big = 0:
//  below the threshold, the only thing asked of it), and only an input with
//  a larger d2 (an attacker's, or a peer very far away) is read again.
static int
s_huge_check (const gc_robust_guard_io_t *io, size_t d, gc_robust_guard_sums_t *s)
{
    int bad = 0;
    for (size_t j = 0; j < io->n; j++)
        s->big [j] = s->d2 [j] < 0x1p118 ? 0 : s_largest_diff (io->x [j], io->own, d, &bad);
    return bad;
}

static int
s_k_scan (gc_robust_ws_t *ws, const gc_robust_guard_io_t *io, size_t d, gc_robust_guard_sums_t *s)
{
    float md [S_BLOCK];
    uint32_t sg [S_BLOCK];
    const float **nb = io->nb_blk;
    for (size_t j = 0; j < io->n; j++) {
        s->d2 [j] = s->dot [j] = 0;
        s->pos [j] = s->nz [j] = 0;
        s->above [j] = s->below [j] = 0;
        if (io->sx [j])
            memset (io->sx [j], 0, S_BLOCK * sizeof (float));
    }
    memset (s->sown, 0, S_BLOCK * sizeof (float));
    s->med2 = 0;
    s->med_big = s->own_big = 0;
    for (size_t c0 = 0; c0 < d; c0 += S_BLOCK) {
        size_t n = d - c0 < S_BLOCK ? d - c0 : S_BLOCK;
        const float *own = io->own + c0;
        s_signs (io->sign, c0, n, sg);
        if (io->kn) {
            for (size_t i = 0; i < io->kn; i++)
                nb [i] = io->nb [i] + c0;
            int rc = io->kn == 4 && !s_med4_block (nb, n, md) ? 0
                   : GC_KSYM (gc_robust_cw_kern).window (ws, nb, io->kn, n, (io->kn - 1) / 2,
                                                         io->kn / 2, md);
            if (rc)
                return rc;
        }
        else
            memset (md, 0, n * sizeof *md);
        s_own_block (own, sg, s->sown, io->kn ? md : NULL, n, s);
        for (size_t j = 0; j < io->n; j++) {
            s_row_t r = { 0 };
            if (io->x [j] == io->own)
                continue;       /* v = 0: its sums stay 0 (a NaN in own is caught below) */
            if (io->sx [j])
                s_row_block (io->x [j] + c0, own, md, sg, io->sx [j], n, &r);
            else
                s_plain_block (io->x [j] + c0, own, n, &r);
            s_add (s, j, &r);
        }
    }
    if (s->own_big >= GC_ROBUST_NONFINITE_BITS)
        return 1;
    return s_huge_check (io, d, s);
}

//  Where a block's output goes on its last run: into o, or the caller's mix
//  step (gc_robust_set_mix) x += g (o - centre), x being another vector
//  (S_OUT_MIX) or own itself, which is then also the centre (S_OUT_MIX_OWN:
//  own = own + g (o - own), written through own, which it was read from).
typedef enum { S_OUT_STORE, S_OUT_MIX, S_OUT_MIX_OWN } s_out_t;

typedef struct {
    s_out_t      mode;
    float       *x;             /* the block's, S_OUT_MIX */
    const float *centre;
    float        g;
} s_out_to_t;

//  One run of the output pass over a block: o = v + sum_i a_i (x_i - own)
//  for cnt inputs (4, 1 or 0), added one at a time in input order, v being
//  0 on the block's first run and o after it; on its last run own is added,
//  the sketch of o taken and o stored or mixed (OUT). The same float
//  operations in the same order as a zeroed o, then one pass per input, then
//  a pass adding own (the former form), with o held in a register across
//  them: it is stored once and not zeroed first; mixed, the caller's loop's
//  operations. FIRST, LAST, CNT and OUT are constants at each call.
static inline __attribute__ ((always_inline)) void
s_apply_run (float *restrict o, const float *a, const float *const *x, size_t cnt,
             const float *restrict own, size_t n, bool first, bool last,
             const uint32_t *restrict sg, float *restrict sout, s_out_t out,
             float *restrict mx, const float *restrict mc, float g)
{
    const float *restrict x0 = cnt ? x [0] : NULL, *restrict x1 = cnt == 4 ? x [1] : NULL;
    const float *restrict x2 = cnt == 4 ? x [2] : NULL, *restrict x3 = cnt == 4 ? x [3] : NULL;
    float a0 = cnt ? a [0] : 0, a1 = cnt == 4 ? a [1] : 0;
    float a2 = cnt == 4 ? a [2] : 0, a3 = cnt == 4 ? a [3] : 0;
    for (size_t c = 0; c < n; c++) {
        float v = first ? 0.0f : o [c];
        if (cnt)
            v += a0 * (x0 [c] - own [c]);
        if (cnt == 4) {
            v += a1 * (x1 [c] - own [c]);
            v += a2 * (x2 [c] - own [c]);
            v += a3 * (x3 [c] - own [c]);
        }
        if (last) {
            v += own [c];
            sout [c] += s_float (s_bits (v) ^ sg [c]);
        }
        if (last && out == S_OUT_MIX)
            mx [c] += g * (v - mc [c]);
        else if (last && out == S_OUT_MIX_OWN)
            ((float *) own) [c] = own [c] + g * (v - own [c]);     /* based on own: restrict holds */
        else
            o [c] = v;
    }
}

//  s_apply_run for 4, 1 or 0 inputs with its flags as constants (one copy of
//  the loop each).
static void
s_apply_step (float *o, const float *a, const float *const *x, size_t cnt, const float *own,
              size_t n, bool first, bool last, const uint32_t *sg, float *sout,
              const s_out_to_t *to)
{
#define S_RUN(CNT, F, L, OUT) \
    s_apply_run (o, a, x, CNT, own, n, F, L, sg, sout, OUT, to->x, to->centre, to->g); break;
#define S_LAST(CNT, F) \
    switch (to->mode) { \
        case S_OUT_MIX: S_RUN (CNT, F, true, S_OUT_MIX) \
        case S_OUT_MIX_OWN: S_RUN (CNT, F, true, S_OUT_MIX_OWN) \
        default: S_RUN (CNT, F, true, S_OUT_STORE) } \
    break;
    switch ((cnt == 4) << 3 | (cnt == 1) << 2 | first << 1 | last) {
        case 3: S_LAST (0, true)            /* no input moves the output: own */
        case 4: S_RUN (1, false, false, S_OUT_STORE)
        case 5: S_LAST (1, false)
        case 6: S_RUN (1, true, false, S_OUT_STORE)
        case 7: S_LAST (1, true)
        case 8: S_RUN (4, false, false, S_OUT_STORE)
        case 9: S_LAST (4, false)
        case 10: S_RUN (4, true, false, S_OUT_STORE)
        default: S_LAST (4, true)
    }
#undef S_LAST
#undef S_RUN
}

static void
s_k_apply (const gc_robust_guard_io_t *io, size_t d, const float *a, float *out, float *sout)
{
    uint32_t sg [S_BLOCK];
    memset (sout, 0, S_BLOCK * sizeof *sout);
    size_t moving = 0;          /* the inputs that move the output */
    for (size_t j = 0; j < io->n; j++)
        moving += a [j] != 0.0f;
    const gc_robust_mix_t *mix = io->mix;
    s_out_to_t to = { .mode = !mix ? S_OUT_STORE : mix->x == io->own ? S_OUT_MIX_OWN : S_OUT_MIX,
                      .g = mix ? mix->gamma : 0 };
    for (size_t c0 = 0; c0 < d; c0 += S_BLOCK) {
        size_t n = d - c0 < S_BLOCK ? d - c0 : S_BLOCK;
        const float *own = io->own + c0;
        float *o = out + c0;
        if (mix) {
            to.x = mix->x + c0;
            to.centre = mix->centre + c0;
        }
        s_signs (io->sign, c0, n, sg);
        if (!moving) {
            s_apply_step (o, NULL, NULL, 0, own, n, true, true, sg, sout, &to);
            continue;
        }
        //  four at a time in input order, then one at a time
        float ga [4];
        const float *gx [4];
        size_t m = 0, done = 0;
        for (size_t j = 0; j < io->n; j++) {
            if (a [j] == 0.0f)
                continue;
            ga [m] = a [j];
            gx [m++] = io->x [j] + c0;
            if (m == 4) {
                s_apply_step (o, ga, gx, 4, own, n, done == 0, done + 4 == moving, sg, sout, &to);
                done += 4;
                m = 0;
            }
        }
        for (size_t i = 0; i < m; i++, done++)
            s_apply_step (o, ga + i, gx + i, 1, own, n, done == 0, done + 1 == moving, sg, sout, &to);
    }
}

const gc_robust_guard_kern_t GC_KSYM (gc_robust_guard_kern) = {
    .scan = s_k_scan,
    .med4 = s_med4_block,
    .apply = s_k_apply,
};
