#include "gc_select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_compress_kern.h"
#include "gc_rng.h"
#include "gc_vec.h"

#define S_KEY_INF   0x7f800000u     /* keys at or above are Inf / NaN */
#define S_SLACK     64              /* SIMD stores may write 64 past the count */
#define S_BINS      2048

//  Radix levels over the 31 bits of a key: [30:20], [19:9], [8:0].
static const int      s_shift [3] = { 20, 9, 0 };
static const uint32_t s_wmask [3] = { 0x7ff, 0x7ff, 0x1ff };

#define s_key gc_select_key

gc_select_t *
gc_select_new (void)
{
    return calloc (1, sizeof (gc_select_t));
}

void
gc_select_destroy (gc_select_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_select_t *self = *self_p;
    free (self->idx);
    free (self->val);
    free (self->tmp);
    free (self);
    *self_p = NULL;
}

//  Room for n results (+ slack). Contents are not kept.
static int
s_reserve (gc_select_t *self, size_t n, gc_err_t *err)
{
    if (n <= self->cap && self->idx)
        return 0;
    size_t cap = n > self->cap + self->cap / 2 ? n : self->cap + self->cap / 2;
    free (self->idx);
    free (self->val);
    self->idx = malloc ((cap + S_SLACK) * sizeof (uint32_t));
    self->val = malloc ((cap + S_SLACK) * sizeof (float));
    self->cap = cap;
    if (!self->idx || !self->val) {
        free (self->idx);
        free (self->val);
        self->idx = NULL;
        self->val = NULL;
        self->cap = 0;
        return gc_err_set (err, GC_E_NOMEM, "top-k: out of memory for %zu entries", n);
    }
    return 0;
}

static int
s_reserve_tmp (gc_select_t *self, size_t n, gc_err_t *err)
{
    if (n <= self->tmp_cap && self->tmp)
        return 0;
    free (self->tmp);
    self->tmp = malloc ((n + S_SLACK) * sizeof (float));
    self->tmp_cap = self->tmp ? n : 0;
    if (!self->tmp)
        return gc_err_set (err, GC_E_NOMEM, "top-k: out of memory for %zu samples", n);
    return 0;
}

static int
s_nonfinite (const float *x, size_t m, gc_err_t *err)
{
    size_t i = gc_vec_first_nonfinite (x, m);
    return gc_err_set (err, GC_E_NONFINITE, "input x[%zu] = %g is not finite",
                       i, i < m ? (double) x [i] : 0.0);
}

//  Histogram of one radix level over the entries whose key matches prefix
//  under mask (level 0: all entries, four interleaved tables so repeated
//  bins do not serialise on one counter). Returns the largest key seen.
static uint32_t
s_histogram (const float *restrict v, size_t m, int lv, uint32_t prefix, uint32_t mask,
             uint32_t *restrict hist)
{
    uint32_t maxkey = 0;
    if (lv == 0) {
        static _Thread_local uint32_t h4 [4][S_BINS];
        memset (h4, 0, sizeof h4);
        size_t i = 0;
        for (; i + 4 <= m; i += 4) {
            uint32_t k0 = s_key (v [i]), k1 = s_key (v [i + 1]);
            uint32_t k2 = s_key (v [i + 2]), k3 = s_key (v [i + 3]);
            h4 [0][k0 >> 20]++;
            h4 [1][k1 >> 20]++;
            h4 [2][k2 >> 20]++;
            h4 [3][k3 >> 20]++;
            uint32_t a = k0 > k1 ? k0 : k1, b = k2 > k3 ? k2 : k3;
            a = a > b ? a : b;
            maxkey = a > maxkey ? a : maxkey;
        }
        for (; i < m; i++) {
            uint32_t k = s_key (v [i]);
            h4 [0][k >> 20]++;
            maxkey = k > maxkey ? k : maxkey;
        }
        for (int b = 0; b < S_BINS; b++)
            hist [b] = h4 [0][b] + h4 [1][b] + h4 [2][b] + h4 [3][b];
        return maxkey;
    }
    memset (hist, 0, S_BINS * sizeof *hist);
    gc_compress_kern ()->hist_prefix (v, m, prefix, mask, s_shift [lv], s_wmask [lv], hist);
    return maxkey;
}

//  The bin (from the top) where the count reaches k; *above gets the count
//  in higher bins plus `above_in`.
static uint32_t
s_find_bin (const uint32_t *hist, int lv, size_t k, size_t above_in, size_t *above)
{
    size_t cum = above_in;
    for (int b = (int) s_wmask [lv]; b > 0; b--) {
        if (cum + hist [b] >= k) {
            *above = cum;
            return (uint32_t) b;
        }
        cum += hist [b];
    }
    *above = cum;
    return 0;
}

uint32_t
gc_select_kth_key (const float *v, size_t m, size_t k, size_t *above)
{
    uint32_t hist [S_BINS];
    uint32_t prefix = 0, mask = 0;
    size_t g = 0;
    for (int lv = 0; lv < 3; lv++) {
        s_histogram (v, m, lv, prefix, mask, hist);
        uint32_t b = s_find_bin (hist, lv, k, g, &g);
        prefix |= b << s_shift [lv];
        mask |= s_wmask [lv] << s_shift [lv];
    }
    *above = g;
    return prefix;
}

//  Keep, in place and in order, the entries with key > t and the first
//  k - above entries with key == t. Returns k.
static size_t
s_trim (uint32_t *idx, float *val, size_t n, uint32_t t, size_t above, size_t k)
{
    size_t ties = k - above, o = 0;
    //  Bitwise, not ||: most candidates are above t, some not, in no order,
    //  and a branch on it mispredicted.
    for (size_t i = 0; i < n; i++) {
        uint32_t key = s_key (val [i]);
        size_t tie = (size_t) (key == t) & (size_t) (ties > 0);
        size_t take = (size_t) (key > t) | tie;
        ties -= tie;
        idx [o] = idx [i];
        val [o] = val [i];
        o += take;
    }
    return o;
}

//  Collect i, x[i] for every key(x[i]) >= lo, in order (gc_compress_kern.h);
//  idx/val hold cap + S_SLACK.
static size_t
s_collect (const float *restrict x, size_t m, uint32_t lo,
           uint32_t *restrict idx, float *restrict val, size_t cap, uint32_t *maxkey)
{
    return gc_compress_kern ()->collect (x, m, lo, idx, val, cap, maxkey);
}

static size_t
s_count_ge (const float *x, size_t m, uint32_t lo)
{
    size_t c = 0;
    for (size_t i = 0; i < m; i++)
        c += s_key (x [i]) >= lo;
    return c;
}

static int
s_all (gc_select_t *self, const float *x, size_t m, gc_err_t *err)
{
    if (s_reserve (self, m, err))
        return -1;
    for (size_t i = 0; i < m; i++) {
        self->idx [i] = (uint32_t) i;
        self->val [i] = x [i];
    }
    if (!gc_vec_all_finite (x, m))
        return s_nonfinite (x, m, err);
    self->count = m;
    self->path = GC_SELECT_PATH_ALL;
    return 0;
}

static int
s_radix (gc_select_t *self, const float *x, size_t m, size_t k, gc_err_t *err)
{
    uint32_t hist [S_BINS];
    uint32_t maxkey = s_histogram (x, m, 0, 0, 0, hist);
    if (maxkey >= S_KEY_INF)
        return s_nonfinite (x, m, err);
    size_t g;
    uint32_t b = s_find_bin (hist, 0, k, 0, &g);
    size_t in_bin = hist [b];
    //  A boundary bin of moderate size: collect it with everything above
    //  and finish among those. A huge one (many equal values) would cost
    //  more memory than two more histogram passes.
    if (in_bin <= 4 * k + 65536) {
        size_t n = g + in_bin;
        if (s_reserve (self, n, err))
            return -1;
        uint32_t mk;
        size_t c = s_collect (x, m, b << 20, self->idx, self->val, n, &mk);
        size_t above;
        uint32_t t = gc_select_kth_key (self->val, c, k, &above);
        self->count = s_trim (self->idx, self->val, c, t, above, k);
        self->path = GC_SELECT_PATH_RADIX_BIN;
        return 0;
    }
    uint32_t prefix = b << 20, mask = s_wmask [0] << 20;
    for (int lv = 1; lv < 3; lv++) {
        s_histogram (x, m, lv, prefix, mask, hist);
        b = s_find_bin (hist, lv, k, g, &g);
        prefix |= b << s_shift [lv];
        mask |= s_wmask [lv] << s_shift [lv];
    }
    if (s_reserve (self, k, err))
        return -1;
    size_t ties = k - g, o = 0;
    for (size_t i = 0; i < m && o < k; i++) {
        uint32_t key = s_key (x [i]);
        if (key > prefix || (key == prefix && ties > 0)) {
            ties -= key == prefix;
            self->idx [o] = (uint32_t) i;
            self->val [o] = x [i];
            o++;
        }
    }
    self->count = o;
    self->path = GC_SELECT_PATH_RADIX_LEVELS;
    return 0;
}

//  Sampling pays only on long vectors with a small fraction kept.
#define S_SAMPLE_MIN_M  (1u << 17)
#define S_RUN           16          /* consecutive entries per sample run */
#define S_RUNS_MAX      4096

//  Copy runs random runs of S_RUN entries of x to out. The positions are
//  drawn first and each run's lines prefetched S_AHEAD runs before its copy:
//  drawn between the loads, the random-number calls kept only a few of the
//  cache and TLB misses in flight, and the sample cost a tenth of the pass.
#define S_AHEAD 16

//  A run's first and last entries' lines (one or two lines).
static inline void
s_prefetch_run (const float *p)
{
    __builtin_prefetch (p);
    __builtin_prefetch (p + S_RUN - 1);
}

static void
s_sample_runs (float *restrict out, const float *restrict x, size_t m, size_t runs,
               uint64_t seed)
{
    uint32_t pos [S_RUNS_MAX];
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0x73616d70);
    for (size_t r = 0; r < runs; r++)
        pos [r] = (uint32_t) gc_rng_below (&rng, m - S_RUN + 1);
    for (size_t r = 0; r < runs && r < S_AHEAD; r++)
        s_prefetch_run (x + pos [r]);
    for (size_t r = 0; r < runs; r++) {
        if (r + S_AHEAD < runs)
            s_prefetch_run (x + pos [r + S_AHEAD]);
        memcpy (out + r * S_RUN, x + pos [r], S_RUN * sizeof (float));
    }
}

static int
s_pruned (gc_select_t *self, const float *x, size_t m, size_t k, bool exact,
          uint64_t seed, gc_err_t *err)
{
    //  Runs of 16 cost one or two cache lines each: 4096 random runs read
    //  65536 values for the price of ~6000 misses.
    size_t runs = m / (8 * S_RUN) < S_RUNS_MAX ? m / (8 * S_RUN) : S_RUNS_MAX;
    size_t s = runs * S_RUN;
    if (s_reserve_tmp (self, s, err))
        return -1;
    s_sample_runs (self->tmp, x, m, runs, seed);
    //  Aim four standard deviations of the sample count above k, so the
    //  pass almost always finds at least k and the exact cut is cheap.
    double p = (double) k / (double) m;
    double mean = (double) s * p;
    double j = ceil (mean + 4.0 * sqrt (mean * (1.0 - p)) + 2.0);
    size_t jj = j > (double) s ? s : (size_t) j;
    size_t above;
    uint32_t lo = gc_select_kth_key (self->tmp, s, jj, &above);
    if (lo == 0 || lo >= S_KEY_INF)
        goto fallback;      /* zeros would collect everything; non-finite: radix reports */
    size_t expect = (size_t) ((double) m * (double) jj / (double) s);
    size_t cap = 2 * expect + 1024;
    cap = cap > m ? m : cap;
    if (s_reserve (self, cap, err))
        return -1;
    uint32_t maxkey;
    size_t c = s_collect (x, m, lo, self->idx, self->val, cap, &maxkey);
    if (c > cap)
        goto fallback;
    if (maxkey >= S_KEY_INF)
        return s_nonfinite (x, m, err);
    if (c >= k) {
        uint32_t t = gc_select_kth_key (self->val, c, k, &above);
        self->count = s_trim (self->idx, self->val, c, t, above, k);
        self->path = GC_SELECT_PATH_PRUNED;
        return 0;
    }
    if (!exact && c * 20 >= k * 19) {
        self->count = c;
        self->path = GC_SELECT_PATH_SHORT;
        return 0;
    }
fallback:
    if (s_radix (self, x, m, k, err))
        return -1;
    self->path = GC_SELECT_PATH_FALLBACK;
    return 0;
}

int
gc_select_topk (gc_select_t *self, const float *x, size_t m, size_t k,
                bool exact, uint64_t seed, gc_err_t *err)
{
    self->count = 0;
    self->path = GC_SELECT_PATH_NONE;
    if (m > UINT32_MAX)
        return gc_err_set (err, GC_E_INPUT, "top-k: %zu entries exceed 2^32", m);
    if (k >= m)
        return s_all (self, x, m, err);
    if (k == 0) {
        if (!gc_vec_all_finite (x, m))
            return s_nonfinite (x, m, err);
        return 0;
    }
    if (m < S_SAMPLE_MIN_M || k > m / 8)
        return s_radix (self, x, m, k, err);
    return s_pruned (self, x, m, k, exact, seed, err);
}

int
gc_select_threshold (gc_select_t *self, const float *x, size_t m, float tau, gc_err_t *err)
{
    self->count = 0;
    self->path = GC_SELECT_PATH_NONE;
    if (m > UINT32_MAX)
        return gc_err_set (err, GC_E_INPUT, "threshold: %zu entries exceed 2^32", m);
    if (!(tau >= 0.0f) || !isfinite (tau))
        return gc_err_set (err, GC_E_INPUT, "threshold: tau %g must be finite and >= 0", (double) tau);
    uint32_t lo = s_key (tau) + 1;
    if (s_reserve (self, 1024, err))
        return -1;
    uint32_t maxkey;
    size_t c = s_collect (x, m, lo, self->idx, self->val, self->cap, &maxkey);
    if (c > self->cap) {
        //  Grown once to the size this vector needs; later rounds reuse it.
        size_t need = s_count_ge (x, m, lo);
        if (s_reserve (self, need, err))
            return -1;
        c = s_collect (x, m, lo, self->idx, self->val, need, &maxkey);
    }
    if (maxkey >= S_KEY_INF)
        return s_nonfinite (x, m, err);
    self->count = c;
    return 0;
}
