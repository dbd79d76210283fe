/*  gc_robust internals: the workspace and the kernels gc_robust.c composes.

    Kernels return 0, 1 when an input holds NaN or Inf (detected in the same
    pass that does the work; the caller then locates the offenders), or -1
    when the workspace could not grow. */
#ifndef GC_ROBUST_INTERNAL_H
#define GC_ROBUST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_robust.h"
#include "gc_robust_net.h"

//  Coordinates per block of the coordinate-wise tile (k x S_TB floats stay
//  in L1 up to k = 96) and of the weighted-sum kernels.
#define GC_ROBUST_TB 128

typedef struct {
    bool    portable;       /* scalar kernels only */

    //  Coordinate-wise: the tile and the last network built.
    float  *tile;           /* tile_rows x GC_ROBUST_TB */
    size_t  tile_rows;
    double *dtile;          /* dtile_rows x GC_ROBUST_TB, the tile widened */
    size_t  dtile_rows;
    gc_robust_net_t net;
    bool    net_valid;

    //  Distances: Gram tile, block Gram, per-row scales.
    float  *gtile;          /* k x gblock, rows padded to a multiple of 4 */
    size_t  gtile_cap;      /* floats */
    double *gram;           /* k x k: one block's Gram (upper triangle) */
    double *scale;          /* k */
    uint32_t *lanes;        /* k x 16 */
    size_t  k_cap;          /* the O(k) and O(k^2) buffers below hold k_cap */

    //  Small per-call buffers sized by k_cap.
    double *dist;           /* k x k squared distances of the original inputs */
    double *vdist;          /* kv x kv squared distances of the virtual inputs */
    double *mix, *mix2;     /* kv x k mixing matrices (virtual = mix . originals) */
    double *mixc;           /* kv: the mixing kernels' per-row plan */
    size_t *mixlist;        /* kv x k: each row's inputs, non-zero ones first */
    size_t *mixnz;          /* kv: how many of them are non-zero */
    double *vw;             /* kv weights of the virtual inputs */
    double *vec_a, *vec_b;  /* k scratch */
    double *coef;           /* k + 1 */
    double *acc;            /* GC_ROBUST_TB doubles for block sums */
    const float **wsum_in;  /* k: the weighted sum's inputs with a non-zero coefficient, */
    double *wsum_coef;      /* and those coefficients (gc_robust_combine) */
    size_t *idx, *idx2;     /* k scratch */
    const float **ptrs;     /* k pointers to materialised vectors */
    float **rows;           /* the same, writable */

    //  Materialised virtual inputs (pre-aggregation output).
    float  *vbuf;
    size_t  vbuf_cap;       /* floats */
} gc_robust_ws_t;

int  gc_robust_ws_reserve_k (gc_robust_ws_t *ws, size_t k);
int  gc_robust_ws_reserve_tile (gc_robust_ws_t *ws, size_t rows);
int  gc_robust_ws_reserve_dtile (gc_robust_ws_t *ws, size_t rows);
int  gc_robust_ws_reserve_vbuf (gc_robust_ws_t *ws, size_t floats);
void gc_robust_ws_free (gc_robust_ws_t *ws);

//  Largest |x| bit pattern seen (sign cleared); >= this means NaN or Inf.
#define GC_ROBUST_NONFINITE_BITS 0x7f800000u

//  --- gc_robust_cw.c --------------------------------------------------------

/*  out[c] = mean of the order statistics lo..hi of { in[i][c] : i < k }
    (median: lo = (k-1)/2, hi = k/2; trimmed mean b: lo = b, hi = k-1-b).
    The sum runs over the kept wires in double, in wire order, then is
    multiplied by 1/(hi-lo+1) and rounded once to float. */
int gc_robust_cw_window (gc_robust_ws_t *ws, const float *const *in, size_t k,
                         size_t d, size_t lo, size_t hi, float *out);

/*  Bulyan's coordinate phase: the mean of the beta values closest to the
    median of each coordinate (ties: the lower value first). */
int gc_robust_cw_closest (gc_robust_ws_t *ws, const float *const *in, size_t k,
                          size_t d, size_t beta, float *out);

/*  rows[a] = sum_j mix[a * k + j] * in[j] for a < kv (double accumulation;
    rows of equal coefficients that leave out a few inputs as their
    complement, see gc_robust_cw.c), reading every input once, block by
    block (and checking all of them). */
int gc_robust_mix (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                   const double *mix, size_t kv, float *const *rows);

/*  gc_robust_cw_window of the kv rows gc_robust_mix would write, formed
    block by block in cache instead (the same result, one pass, no kv x d
    buffer). */
int gc_robust_mix_window (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                          const double *mix, size_t kv, size_t lo, size_t hi, float *out);

/*  out = sum_i c[i] * in[i], accumulated in double. Inputs with c[i] == 0
    are neither read nor checked: the caller covers them. */
int gc_robust_combine (gc_robust_ws_t *ws, const float *const *in, const double *c,
                       size_t k, size_t d, float *out);

/*  out[c] = centre[c] + sum_i a[i] * (in[i][c] - centre[c]) in double, and
    (when d2 != NULL) d2[i] = ||in[i] - out||^2 afterwards, in the same pass. */
int gc_robust_step (gc_robust_ws_t *ws, const float *const *in, const double *a,
                    size_t k, size_t d, const float *centre, float *out, double *d2);

/*  d2[i] = ||in[i] - z||^2 (double accumulation; overflow-safe). */
int gc_robust_dist_to (gc_robust_ws_t *ws, const float *const *in, size_t k,
                       size_t d, const float *z, double *d2);

//  --- Kernel levels (gc_robust_kern.c) ---------------------------------------

/*  The functions above and below dispatch, through a table resolved once
    from gc_cpu_level, to gc_robust_cw.c and gc_robust_dist.c compiled for
    that level (generic, avx2, avx512). */
typedef struct {
    int (*window) (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                   size_t lo, size_t hi, float *out);
    int (*closest) (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                    size_t beta, float *out);
    int (*mix) (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                const double *mix, size_t kv, float *const *rows);
    int (*mix_window) (gc_robust_ws_t *ws, const float *const *in, size_t k, size_t d,
                       const double *mix, size_t kv, size_t lo, size_t hi, float *out);
    int (*combine) (gc_robust_ws_t *ws, const float *const *in, const double *c,
                    size_t k, size_t d, float *out);
    int (*step) (gc_robust_ws_t *ws, const float *const *in, const double *a,
                 size_t k, size_t d, const float *centre, float *out, double *d2);
    int (*dist_to) (gc_robust_ws_t *ws, const float *const *in, size_t k,
                    size_t d, const float *z, double *d2);
} gc_robust_cw_kern_t;

/*  guard's passes (gc_robust_guard_kern.c). Its histories and the previous
    output are kept as sketches of GC_ROBUST_SKETCH floats: coordinate i adds
    sign(i) x_i to bucket i mod GC_ROBUST_SKETCH, sign(i) = +-1 from a hash
    of i, so that ||S a|| estimates ||a|| for any a (a count sketch) and S is
    linear (the sketch of a running mean is the running mean of sketches). */
#define GC_ROBUST_SKETCH 1024

/*  |x_j - own| from 2^59 up (as float bits) makes input j huge: clip factor
    0 (tau / ||x_j - own|| is below tau / 2^59 anyway), so that the float sums
    of guard's passes cannot overflow. */
#define GC_ROBUST_GUARD_HUGE_BITS 0x5d000000u

typedef struct {
    const float *const *x;          /* the n inputs */
    size_t       n;
    const float *own;
    const float *const *nb;         /* the kn neighbours (own left out) whose */
    size_t       kn;                /* coordinate-wise median the scan forms, */
    const float **nb_blk;           /* with kn pointers of scratch */
    float *const *sx;               /* per input: its sketch of x_j - own is added here, or NULL */
    const uint8_t *sign;            /* d: the sketch's sign of each coordinate (1: minus) */
    const gc_robust_mix_t *mix;     /* apply: the caller's mix step instead of out (NULL: out) */
} gc_robust_guard_io_t;

/*  What the scan returns, per input j (arrays of n, the caller's): d2 =
    ||x_j - own||^2, and for inputs with a sketch dot = <x_j - own, med - own>,
    pos / nz = coordinates with x_j > own / x_j != own, above / below =
    coordinates with x_j - own > / < med - own (in float); big = the largest
    |x_j - own| as float bits where it may reach GC_ROBUST_GUARD_HUGE_BITS,
    else 0 (below it; the kernel reads x_j again only when d2 >= 2^118).
    Once: med2 = ||med - own||^2 and med_big its largest |.| (where it may
    reach GC_ROBUST_GUARD_HUGE_BITS, else 0), own_big (at least
    GC_ROBUST_NONFINITE_BITS when own holds NaN or Inf, else 0), and the
    sketch of own added to sown. */
typedef struct {
    double   *d2, *dot;
    int64_t  *pos, *nz, *above, *below;
    uint32_t *big;
    float    *sown;
    double    med2;
    uint32_t  med_big, own_big;
} gc_robust_guard_sums_t;

typedef struct {
    /*  The sums above in one pass, the sketches zeroed first; returns a
        kernel code (1: own or an input holds NaN/Inf, -1: no memory). */
    int  (*scan) (gc_robust_ws_t *ws, const gc_robust_guard_io_t *io, size_t d,
                  gc_robust_guard_sums_t *s);
    /*  The median of 4 inputs over n coordinates, the mean of the middle two,
        in float: the bits of gc_robust_cw_window (k 4, lo 1, hi 2) unless it
        returns 1 (a mean not finite: a middle pair overflowed, or an Inf
        reached the middle; md is then unspecified). A NaN or Inf elsewhere
        is not reported (the scan's d2 reports it). The scan's fast path
        for the usual 4 neighbours. */
    int  (*med4) (const float *const *in, size_t n, float *md);
    /*  out = own + sum_j a_j (x_j - own), its sketch into sout, one pass;
        with io->mix, mix->x += gamma (that - mix->centre) instead of out (a
        mix->x equal to own is also the centre: gc_robust_set_mix). */
    void (*apply) (const gc_robust_guard_io_t *io, size_t d, const float *a, float *out,
                   float *sout);
} gc_robust_guard_kern_t;

extern const gc_robust_guard_kern_t gc_robust_guard_kern_generic;
#if GC_X86_LEVELS
extern const gc_robust_guard_kern_t gc_robust_guard_kern_avx2, gc_robust_guard_kern_avx512;
#endif
const gc_robust_guard_kern_t *gc_robust_guard_kern (void);

typedef int (*gc_robust_distances_fn) (gc_robust_ws_t *ws, const float *const *in, size_t k,
                                       size_t d, const float *centre, double *dist,
                                       int *passes);

extern const gc_robust_cw_kern_t gc_robust_cw_kern_generic;
int gc_robust_distances_generic (gc_robust_ws_t *ws, const float *const *in, size_t k,
                                 size_t d, const float *centre, double *dist, int *passes);
#if GC_X86_LEVELS
extern const gc_robust_cw_kern_t gc_robust_cw_kern_avx2, gc_robust_cw_kern_avx512;
int gc_robust_distances_avx2 (gc_robust_ws_t *ws, const float *const *in, size_t k,
                              size_t d, const float *centre, double *dist, int *passes);
int gc_robust_distances_avx512 (gc_robust_ws_t *ws, const float *const *in, size_t k,
                                size_t d, const float *centre, double *dist, int *passes);
#endif

//  --- gc_robust_dist.c ------------------------------------------------------

/*  Pairwise squared distances (k x k, symmetric, zero diagonal) through a
    blocked Gram matrix (OpenBLAS sgemm) of the inputs minus a centre,
    accumulated in double. `centre` should be close to the honest inputs
    (the caller passes the peer's own vector); when the medoid input turns
    out to be far from it, one more pass recentres on the medoid.
    *passes receives the number of Gram passes (1 or 2). */
int gc_robust_distances (gc_robust_ws_t *ws, const float *const *in, size_t k,
                         size_t d, const float *centre, double *dist, int *passes);

#endif
