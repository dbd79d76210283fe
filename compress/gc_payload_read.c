/*  Payload decoding. Phase 1 checks every byte of the payload against the
    receiver's layout and records where each section's parts are; phase 2
    adds into the destination and cannot fail (its scratch is allocated in
    phase 1). A hostile payload costs O(n_params + len) work, plus
    O(rank * n_params) for low-rank sections, and allocates at most
    n_params / 8 bytes (random-k's bitmap) plus twice its own size. */
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_compress_method.h"
#include "gc_compress_kern.h"
#include "gc_half.h"
#include "gc_lgc_codec.h"
#include "gc_payload.h"


typedef struct {
    size_t          layer;
    int             enc;
    int             fmt;
    uint32_t        count;
    const uint8_t  *body;
    size_t          body_len;
    uint32_t        nnz;            /* sparse nnz, random-k k */
    const uint8_t  *index;          /* varint block or bitmap */
    size_t          index_len;
    const uint8_t  *values;         /* values, norms or scales */
    uint32_t        levels;         /* qsgd */
    uint32_t        bucket;         /* qsgd, sign */
    unsigned        bits;           /* qsgd code width */
    const uint8_t  *codes;          /* qsgd codes, sign bits */
    uint32_t        rows, cols, rank;
    uint32_t        m;              /* lgc code size */
} s_section_t;

typedef struct {
    const gc_layout_t *layout;
    const gc_compress_method_t *desc;   /* the sender's method, from the registry */
    int             method;
    uint8_t         flags;
    uint64_t        seed;
    size_t          n_sections;
    const gc_lgc_codec_t *codec;    /* the sender's decoder held, or NULL */
    bool            inspect;        /* headers only: lgc sections need no codec */
    const uint8_t  *blob;           /* the carried decoder (GC_PAYLOAD_FLAG_CODEC) */
    size_t          blob_len;
    s_section_t     sec [GC_LAYOUT_MAX_LAYERS];
    size_t          bitmap_words;   /* scratch phase 2 needs */
    size_t          floats;
    bool            defer_dense;    /* fp32 dense values are checked while applied */
} s_parse_t;

#define S_CHUNK 1024

//  A section encoding: its name, its phase-1 check (every byte, records
//  where the parts are and what scratch phase 2 needs) and its phase-2 add
//  (dst: the layer's first float; cannot fail). Defined after both phases.
typedef struct {
    const char *name;
    int  (*check) (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout,
                   gc_err_t *err);
    void (*apply) (const s_parse_t *ps, const s_section_t *s, float *restrict dst, float alpha,
                   uint64_t *bitmap, float *scratch);
} s_codec_t;

static const s_codec_t s_codecs [GC_ENC_COUNT];

//  ---- phase 1 helpers; each returns 0 or -1 with err naming the section ----

static inline uint32_t
s_u32 (const uint8_t *p)
{
#if GC_LITTLE_ENDIAN
    uint32_t u;
    memcpy (&u, p, 4);
    return u;
#else
    return gc_get_u32 (p);
#endif
}

static inline bool
s_f32_bad (const uint8_t *p)
{
    return (s_u32 (p) & 0x7f800000u) == 0x7f800000u;
}

//  A little-endian float: a plain load on little-endian hosts (s_u32).
static inline float
s_get_f32 (const uint8_t *p)
{
    uint32_t u = s_u32 (p);
    float f;
    memcpy (&f, &u, 4);
    return f;
}

//  Index of the first non-finite value of n in format fmt, or n. Blocks
//  are checked branch-free on the bits (exponent all ones: adding one to
//  it carries into bit 31), so the loop vectorises.
static size_t
s_first_bad_value (const uint8_t *p, size_t n, int fmt)
{
    if (fmt == GC_VAL_FP16) {
        size_t first;
        return gc_half_first_nonfinite (p, n, &first) ? n : first;
    }
    for (size_t i = 0; i < n; i += 256) {
        size_t end = i + 256 < n ? i + 256 : n;
        uint32_t probe = 0;
        for (size_t j = i; j < end; j++)
            probe |= (s_u32 (p + 4 * j) & 0x7fffffffu) + 0x00800000u;
        if (probe & 0x80000000u)
            for (size_t j = i; j < end; j++)
                if (s_f32_bad (p + 4 * j))
                    return j;
    }
    return n;
}

static int
s_check_values (const s_section_t *s, size_t si, const gc_layout_t *layout,
                const uint8_t *p, size_t n, int fmt, const char *what, gc_err_t *err)
{
    size_t bad = s_first_bad_value (p, n, fmt);
    if (bad < n)
        return gc_err_set (err, GC_E_PAYLOAD_NONFINITE,
                           "payload section %zu (layer %zu '%s'): %s %zu of %zu is not finite",
                           si, s->layer, layout->layers [s->layer].name, what, bad, n);
    return 0;
}

#define S_ERR(code, fmt, ...) \
    gc_err_set (err, code, "payload section %zu (layer %zu '%s'): " fmt, \
                si, s->layer, layout->layers [s->layer].name, __VA_ARGS__)

static int
s_check_dense (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout, gc_err_t *err)
{
    size_t want = (size_t) s->count * gc_valfmt_size (s->fmt);
    if (s->body_len != want)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "dense body is %zu bytes, %u values need %zu",
                      s->body_len, s->count, want);
    s->values = s->body;
    if (ps->defer_dense && s->fmt == GC_VAL_FP32)
        return 0;
    return s_check_values (s, si, layout, s->values, s->count, s->fmt, "value", err);
}

//  The nnz LEB128 varints of the ib bytes at s->body + at (sparse-varint's
//  and lgc's index block): each minimal and within 32 bits, strictly
//  increasing, below count, the block used exactly. Sets index, index_len.
static int
s_check_index_block (s_section_t *s, size_t at, uint32_t ib, size_t si, const gc_layout_t *layout,
                     gc_err_t *err)
{
    //  Each index takes at least one byte, at most five.
    if (ib < s->nnz || (uint64_t) ib > 5 * (uint64_t) s->nnz)
        return S_ERR (GC_E_PAYLOAD_VARINT, "index block of %u bytes cannot hold %u varints",
                      ib, s->nnz);
    s->index = s->body + at;
    s->index_len = ib;
    const uint8_t *p = s->index, *end = s->index + s->index_len;
    uint64_t idx = 0;
    for (uint32_t j = 0; j < s->nnz; j++) {
        uint32_t v = 0;
        int shift = 0;
        for (;;) {
            if (p == end)
                return S_ERR (GC_E_PAYLOAD_VARINT, "index block ends inside index %u of %u",
                              j, s->nnz);
            uint8_t b = *p++;
            if (shift == 28 && b > 0x0f)
                return S_ERR (GC_E_PAYLOAD_VARINT, "varint of index %u exceeds 32 bits", j);
            v |= (uint32_t) (b & 0x7f) << shift;
            if (!(b & 0x80)) {
                if (b == 0 && shift > 0)
                    return S_ERR (GC_E_PAYLOAD_VARINT, "varint of index %u is overlong", j);
                break;
            }
            shift += 7;
        }
        if (j > 0 && v == 0)
            return S_ERR (GC_E_PAYLOAD_INDEX_ORDER,
                          "index %u repeats index %llu (not strictly increasing)",
                          j, (unsigned long long) idx);
        idx += v;
        if (idx >= s->count)
            return S_ERR (GC_E_PAYLOAD_INDEX_RANGE, "index %u is %llu, layer has %u entries",
                          j, (unsigned long long) idx, s->count);
    }
    if (p != end)
        return S_ERR (GC_E_PAYLOAD_VARINT, "index block has %zu bytes after index %u",
                      (size_t) (end - p), s->nnz - 1);
    return 0;
}

static int
s_check_varint (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout, gc_err_t *err)
{
    if (s->body_len < 8)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "sparse body of %zu bytes is shorter than its 8-byte header",
                      s->body_len);
    s->nnz = gc_get_u32 (s->body);
    uint32_t ib = gc_get_u32 (s->body + 4);
    if (s->nnz == 0 || s->nnz > s->count)
        return S_ERR (GC_E_PAYLOAD_COUNT, "nnz %u outside [1, %u]", s->nnz, s->count);
    uint64_t want = 8 + (uint64_t) ib + (uint64_t) s->nnz * gc_valfmt_size (s->fmt);
    if ((uint64_t) s->body_len != want)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "sparse body is %zu bytes, its fields imply %llu",
                      s->body_len, (unsigned long long) want);
    if (s_check_index_block (s, 8, ib, si, layout, err))
        return -1;
    s->values = s->index + ib;
    return s_check_values (s, si, layout, s->values, s->nnz, s->fmt, "value", err);
}

static int
s_check_bitmap (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout, gc_err_t *err)
{
    if (s->body_len < 4)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "bitmap body of %zu bytes is shorter than 4", s->body_len);
    s->nnz = gc_get_u32 (s->body);
    if (s->nnz == 0 || s->nnz > s->count)
        return S_ERR (GC_E_PAYLOAD_COUNT, "nnz %u outside [1, %u]", s->nnz, s->count);
    size_t bm = ((size_t) s->count + 7) / 8;
    uint64_t want = 4 + (uint64_t) bm + (uint64_t) s->nnz * gc_valfmt_size (s->fmt);
    if ((uint64_t) s->body_len != want)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "bitmap body is %zu bytes, its fields imply %llu",
                      s->body_len, (unsigned long long) want);
    s->index = s->body + 4;
    s->index_len = bm;
    uint64_t ones = 0;
    for (size_t i = 0; i < bm; i++)
        ones += (uint64_t) __builtin_popcount (s->index [i]);
    unsigned tail = s->count & 7;
    if (tail && (s->index [bm - 1] >> tail))
        return S_ERR (GC_E_PAYLOAD_INDEX_RANGE, "bitmap has bits set past entry %u", s->count);
    if (ones != s->nnz)
        return S_ERR (GC_E_PAYLOAD_COUNT, "bitmap has %llu bits set, nnz says %u",
                      (unsigned long long) ones, s->nnz);
    s->values = s->index + bm;
    return s_check_values (s, si, layout, s->values, s->nnz, s->fmt, "value", err);
}

static int
s_check_randk (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout, gc_err_t *err)
{
    if (s->body_len < 4)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "random-k body of %zu bytes is shorter than 4", s->body_len);
    s->nnz = gc_get_u32 (s->body);
    if (s->nnz == 0 || s->nnz > s->count)
        return S_ERR (GC_E_PAYLOAD_COUNT, "k %u outside [1, %u]", s->nnz, s->count);
    uint64_t want = 4 + (uint64_t) s->nnz * gc_valfmt_size (s->fmt);
    if ((uint64_t) s->body_len != want)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "random-k body is %zu bytes, k = %u implies %llu",
                      s->body_len, s->nnz, (unsigned long long) want);
    s->values = s->body + 4;
    size_t words = ((size_t) s->count + 63) / 64;
    ps->bitmap_words = words > ps->bitmap_words ? words : ps->bitmap_words;
    return s_check_values (s, si, layout, s->values, s->nnz, s->fmt, "value", err);
}

//  Scales (sign) or norms (qsgd): finite and not negative.
static int
s_check_scales (s_section_t *s, size_t si, const gc_layout_t *layout, size_t nb,
                const char *what, gc_err_t *err)
{
    if (s_check_values (s, si, layout, s->values, nb, GC_VAL_FP32, what, err))
        return -1;
    for (size_t b = 0; b < nb; b++)
        if (s_get_f32 (s->values + 4 * b) < 0.0f)
            return S_ERR (GC_E_PAYLOAD_RANGE, "%s %zu is negative (%g)", what, b,
                          (double) s_get_f32 (s->values + 4 * b));
    return 0;
}

static int
s_check_qsgd (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout, gc_err_t *err)
{
    if (s->body_len < 8)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "qsgd body of %zu bytes is shorter than 8", s->body_len);
    s->levels = gc_get_u16 (s->body);
    uint16_t reserved = gc_get_u16 (s->body + 2);
    s->bucket = gc_get_u32 (s->body + 4);
    if (s->levels == 0 || s->levels > GC_QSGD_MAX_LEVELS || reserved)
        return S_ERR (GC_E_PAYLOAD_PARAM, "qsgd levels %u outside [1, %d] or reserved %u set",
                      s->levels, GC_QSGD_MAX_LEVELS, reserved);
    if (s->bucket == 0 || s->bucket > s->count)
        return S_ERR (GC_E_PAYLOAD_PARAM, "qsgd bucket %u outside [1, %u]", s->bucket, s->count);
    s->bits = gc_qsgd_bits (s->levels);
    size_t nb = ((size_t) s->count + s->bucket - 1) / s->bucket;
    uint64_t code_bytes = ((uint64_t) s->count * s->bits + 7) / 8;
    uint64_t want = 8 + 4 * (uint64_t) nb + code_bytes;
    if ((uint64_t) s->body_len != want)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "qsgd body is %zu bytes, its fields imply %llu",
                      s->body_len, (unsigned long long) want);
    s->values = s->body + 8;
    s->codes = s->values + 4 * nb;
    if (s_check_scales (s, si, layout, nb, "norm", err))
        return -1;
    //  Every code must be a level in [0, 2s]; the padding bits zero.
    uint32_t code [S_CHUNK], top = 2 * s->levels;
    for (uint32_t i = 0; i < s->count; i += S_CHUNK) {
        uint32_t c = s->count - i < S_CHUNK ? s->count - i : S_CHUNK;
        gc_bits_unpack (s->codes + (size_t) i * s->bits / 8, c, s->bits, code);
        uint32_t worst = 0;
        for (uint32_t j = 0; j < c; j++)
            worst = code [j] > worst ? code [j] : worst;
        if (worst > top)
            for (uint32_t j = 0; j < c; j++)
                if (code [j] > top)
                    return S_ERR (GC_E_PAYLOAD_PARAM, "qsgd code %u of entry %u exceeds 2s = %u",
                                  code [j], i + j, top);
    }
    unsigned used = (unsigned) (((uint64_t) s->count * s->bits) % 8);
    if (used && (s->codes [code_bytes - 1] >> used))
        return S_ERR (GC_E_PAYLOAD_PARAM, "qsgd padding bits are not zero (%s)", "last byte");
    return 0;
}

static int
s_check_sign (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout, gc_err_t *err)
{
    if (s->body_len < 4)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "sign body of %zu bytes is shorter than 4", s->body_len);
    s->bucket = gc_get_u32 (s->body);
    if (s->bucket == 0 || s->bucket > s->count)
        return S_ERR (GC_E_PAYLOAD_PARAM, "sign bucket %u outside [1, %u]", s->bucket, s->count);
    size_t nb = ((size_t) s->count + s->bucket - 1) / s->bucket;
    size_t bytes = ((size_t) s->count + 7) / 8;
    uint64_t want = 4 + 4 * (uint64_t) nb + bytes;
    if ((uint64_t) s->body_len != want)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "sign body is %zu bytes, its fields imply %llu",
                      s->body_len, (unsigned long long) want);
    s->values = s->body + 4;
    s->codes = s->values + 4 * nb;
    if (s_check_scales (s, si, layout, nb, "scale", err))
        return -1;
    unsigned tail = s->count & 7;
    if (tail && (s->codes [bytes - 1] >> tail))
        return S_ERR (GC_E_PAYLOAD_PARAM, "sign padding bits past entry %u are not zero", s->count);
    return 0;
}

static float
s_max_abs (const uint8_t *p, size_t n, int fmt)
{
    float m = 0;
    for (size_t i = 0; i < n; i++) {
        float v = fmt == GC_VAL_FP16 ? gc_half_to_float (gc_get_u16 (p + 2 * i))
                                     : s_get_f32 (p + 4 * i);
        v = fabsf (v);
        m = v > m ? v : m;
    }
    return m;
}

static int
s_check_lowrank (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout, gc_err_t *err)
{
    const gc_layer_t *l = &layout->layers [s->layer];
    if (l->kind != GC_LAYER_MATRIX)
        return S_ERR (GC_E_PAYLOAD_ENCODING, "low-rank section for a vector layer (%s)", "not a matrix");
    if (s->body_len < 12)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "low-rank body of %zu bytes is shorter than 12", s->body_len);
    s->rows = gc_get_u32 (s->body);
    s->cols = gc_get_u32 (s->body + 4);
    s->rank = gc_get_u32 (s->body + 8);
    if (s->rows != l->rows || s->cols != l->cols)
        return S_ERR (GC_E_PAYLOAD_LAYOUT, "low-rank shape %ux%u, layer is %ux%u",
                      s->rows, s->cols, l->rows, l->cols);
    uint32_t rmax = s->rows < s->cols ? s->rows : s->cols;
    rmax = rmax < GC_POWERSGD_MAX_RANK ? rmax : GC_POWERSGD_MAX_RANK;
    if (s->rank == 0 || s->rank > rmax)
        return S_ERR (GC_E_PAYLOAD_PARAM, "rank %u outside [1, %u]", s->rank, rmax);
    size_t vs = gc_valfmt_size (s->fmt);
    size_t np = (size_t) s->rank * s->rows, nq = (size_t) s->rank * s->cols;
    uint64_t want = 12 + (uint64_t) (np + nq) * vs;
    if ((uint64_t) s->body_len != want)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "low-rank body is %zu bytes, its fields imply %llu",
                      s->body_len, (unsigned long long) want);
    s->values = s->body + 12;
    if (s_check_values (s, si, layout, s->values, np + nq, s->fmt, "factor value", err))
        return -1;
    //  |sum_k P[k][i] Q[k][j]| <= rank * max|P| * max|Q|: keep it finite.
    double bound = (double) s->rank * s_max_abs (s->values, np, s->fmt)
                 * s_max_abs (s->values + np * vs, nq, s->fmt);
    if (bound > 1e38)
        return S_ERR (GC_E_PAYLOAD_RANGE, "factors could reach %g (> 1e38)", bound);
    size_t need = np + nq + s->cols;
    ps->floats = need > ps->floats ? need : ps->floats;
    return 0;
}

//  An lgc section: its indices as sparse-varint's, then per chunk of 64
//  values an fp16 scale and m fp16 codes. Decoded only with the codec the
//  header names (its seed field), held of the sender; none held is
//  GC_E_CODEC, which the caller treats as a gap, not as a bad payload.
static int
s_check_lgc (s_parse_t *ps, s_section_t *s, size_t si, const gc_layout_t *layout, gc_err_t *err)
{
    if (s->body_len < 12)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "lgc body of %zu bytes is shorter than its 12-byte header",
                      s->body_len);
    s->nnz = gc_get_u32 (s->body);
    uint32_t ib = gc_get_u32 (s->body + 4);
    s->m = gc_get_u16 (s->body + 8);
    uint16_t reserved = gc_get_u16 (s->body + 10);
    if (s->nnz == 0 || s->nnz > s->count)
        return S_ERR (GC_E_PAYLOAD_COUNT, "nnz %u outside [1, %u]", s->nnz, s->count);
    if (s->m < 1 || s->m > GC_LGC_MAX_CODE || reserved)
        return S_ERR (GC_E_PAYLOAD_PARAM, "lgc code size %u outside [1, %d] or reserved %u set",
                      s->m, GC_LGC_MAX_CODE, reserved);
    uint64_t signs = ((uint64_t) s->nnz + 7) / 8;
    uint64_t want = 12 + (uint64_t) ib + gc_lgc_code_bytes (s->nnz, s->m) + signs;
    if ((uint64_t) s->body_len != want)
        return S_ERR (GC_E_PAYLOAD_LENGTH, "lgc body is %zu bytes, its fields imply %llu",
                      s->body_len, (unsigned long long) want);
    if (s_check_index_block (s, 12, ib, si, layout, err))
        return -1;
    s->values = s->index + ib;                          /* the scales */
    s->codes = s->values + 2 * gc_lgc_chunks (s->nnz);
    unsigned tail = s->nnz & 7;
    const uint8_t *sign = s->codes + 2 * (size_t) s->m * gc_lgc_chunks (s->nnz);
    if (tail && (sign [signs - 1] >> tail))
        return S_ERR (GC_E_PAYLOAD_PARAM, "lgc sign padding bits past value %u are not zero", s->nnz);
    gc_err_t why = { 0 };
    if (gc_lgc_check_codes (s->values, s->codes, s->nnz, s->m, &why))
        return S_ERR (why.code, "%s", why.msg);
    if (ps->inspect)
        return 0;
    if (!ps->codec || !gc_lgc_codec_named (ps->codec, ps->seed))
        return S_ERR (GC_E_CODEC, "names codec %016llx, which this receiver does not hold",
                      (unsigned long long) ps->seed);
    if (gc_lgc_codec_m (ps->codec) != s->m)
        return S_ERR (GC_E_PAYLOAD_PARAM, "code size %u, its codec's is %u", s->m,
                      gc_lgc_codec_m (ps->codec));
    ps->floats = s->nnz > ps->floats ? s->nnz : ps->floats;
    return 0;
}

//  The decoder blob after the header (u32 length, then the blob, checked
//  whole): *pos moves past it.
static int
s_parse_blob (s_parse_t *ps, const uint8_t *payload, size_t len, size_t *pos, gc_err_t *err)
{
    if (len - *pos < 4)
        return gc_err_set (err, GC_E_PAYLOAD_TRUNCATED, "payload: codec length needs 4 bytes, %zu left",
                           len - *pos);
    uint32_t bl = gc_get_u32 (payload + *pos);
    *pos += 4;
    if (bl > len - *pos)
        return gc_err_set (err, GC_E_PAYLOAD_TRUNCATED, "payload: codec of %u bytes, %zu left",
                           bl, len - *pos);
    if (gc_lgc_blob_check (payload + *pos, bl, err))
        return gc_err_prefix (err, "payload: ");
    ps->blob = payload + *pos;
    ps->blob_len = bl;
    *pos += bl;
    return 0;
}

//  defer_dense: leave fp32 dense values to the apply phase to check (onto).
static int
s_parse (s_parse_t *ps, const uint8_t *payload, size_t len, const gc_layout_t *layout,
         bool defer_dense, const gc_lgc_codec_t *codec, bool inspect, gc_err_t *err)
{
    memset (ps, 0, offsetof (s_parse_t, sec));
    ps->codec = codec;
    ps->inspect = inspect;
    ps->bitmap_words = 0;
    ps->floats = 0;
    ps->defer_dense = defer_dense;
    ps->layout = layout;
    if (!payload || len < GC_PAYLOAD_HEADER_SIZE)
        return gc_err_set (err, GC_E_PAYLOAD_TRUNCATED,
                           "payload: %zu bytes, shorter than the %d-byte header", len,
                           GC_PAYLOAD_HEADER_SIZE);
    if (payload [0] != 'G' || payload [1] != 'C' || payload [2] != 'Z')
        return gc_err_set (err, GC_E_PAYLOAD_MAGIC, "payload: magic is %02x%02x%02x, not 'GCZ'",
                           payload [0], payload [1], payload [2]);
    if (payload [3] != GC_PAYLOAD_VERSION)
        return gc_err_set (err, GC_E_PAYLOAD_VERSION, "payload: version %u, this decoder reads %d",
                           payload [3], GC_PAYLOAD_VERSION);
    ps->method = payload [4];
    ps->desc = gc_compress_method_by_id (ps->method);
    if (!ps->desc)
        return gc_err_set (err, GC_E_PAYLOAD_METHOD, "payload: unknown method id %d", ps->method);
    ps->flags = payload [5];
    uint16_t reserved = gc_get_u16 (payload + 14);
    if (ps->flags & ~(GC_PAYLOAD_FLAG_EXACT | GC_PAYLOAD_FLAG_LBS | GC_PAYLOAD_FLAG_CODEC) || reserved)
        return gc_err_set (err, GC_E_PAYLOAD_FLAGS, "payload: unknown flags 0x%02x or reserved 0x%04x set",
                           ps->flags, reserved);
    if ((ps->flags & GC_PAYLOAD_FLAG_EXACT) && ps->method != GC_METHOD_NONE)
        return gc_err_set (err, GC_E_PAYLOAD_FLAGS, "payload: exact flag on method %s (only none)",
                           gc_method_name (ps->method));
    ps->n_sections = gc_get_u16 (payload + 6);
    uint32_t n_params = gc_get_u32 (payload + 8);
    uint16_t n_layers = gc_get_u16 (payload + 12);
    ps->seed = gc_get_u64 (payload + 16);
    if (n_params != layout->n_params || n_layers != layout->n_layers)
        return gc_err_set (err, GC_E_PAYLOAD_LAYOUT,
                           "payload: built for %u params in %u layers, this layout has %zu in %zu",
                           n_params, n_layers, layout->n_params, layout->n_layers);
    if (ps->n_sections > layout->n_layers)
        return gc_err_set (err, GC_E_PAYLOAD_COUNT, "payload: %zu sections for %zu layers",
                           ps->n_sections, layout->n_layers);
    size_t pos = GC_PAYLOAD_HEADER_SIZE;
    if ((ps->flags & GC_PAYLOAD_FLAG_CODEC) && s_parse_blob (ps, payload, len, &pos, err))
        return -1;
    for (size_t si = 0; si < ps->n_sections; si++) {
        if (len - pos < GC_PAYLOAD_SECTION_SIZE)
            return gc_err_set (err, GC_E_PAYLOAD_TRUNCATED,
                               "payload: section %zu header needs %d bytes, %zu left",
                               si, GC_PAYLOAD_SECTION_SIZE, len - pos);
        const uint8_t *h = payload + pos;
        s_section_t *s = &ps->sec [si];
        memset (s, 0, sizeof *s);
        s->layer = gc_get_u16 (h);
        if (s->layer >= layout->n_layers)
            return gc_err_set (err, GC_E_PAYLOAD_LAYER_ID, "payload: section %zu names layer %zu of %zu",
                               si, s->layer, layout->n_layers);
        if (si > 0 && s->layer <= ps->sec [si - 1].layer)
            return gc_err_set (err, GC_E_PAYLOAD_LAYER_ID,
                               "payload: section %zu layer %zu does not follow layer %zu",
                               si, s->layer, ps->sec [si - 1].layer);
        s->enc = h [2];
        s->fmt = h [3];
        s->count = gc_get_u32 (h + 4);
        s->body_len = gc_get_u32 (h + 8);
        if (s->count != layout->layers [s->layer].count)
            return S_ERR (GC_E_PAYLOAD_LAYOUT, "carries %u entries, layer has %zu",
                          s->count, layout->layers [s->layer].count);
        if (s->enc >= GC_ENC_COUNT || s->fmt > GC_VAL_FP16)
            return S_ERR (GC_E_PAYLOAD_ENCODING, "unknown encoding %d / value format %d", s->enc, s->fmt);
        if (!(ps->desc->sections & GC_SECTION_BIT (s->enc, s->fmt)))
            return S_ERR (GC_E_PAYLOAD_ENCODING, "encoding %s (values %s) not allowed for method %s",
                          s_codecs [s->enc].name, s->fmt ? "fp16" : "fp32", gc_method_name (ps->method));
        pos += GC_PAYLOAD_SECTION_SIZE;
        if (s->body_len > len - pos)
            return S_ERR (GC_E_PAYLOAD_TRUNCATED, "body of %zu bytes, %zu left in the payload",
                          s->body_len, len - pos);
        s->body = payload + pos;
        pos += s->body_len;
        if (s_codecs [s->enc].check (ps, s, si, layout, err))
            return -1;
    }
    if (pos != len)
        return gc_err_set (err, GC_E_PAYLOAD_TRAILING, "payload: %zu bytes after the last section",
                           len - pos);
    return 0;
}

//  ---- phase 2: apply (inputs validated) ----


//  dst[i] += alpha * value i, values in either format.
static void
s_add_values (float *restrict dst, const uint8_t *src, size_t n, int fmt, float alpha)
{
    if (fmt == GC_VAL_FP16) {
        float buf [S_CHUNK];
        for (size_t i = 0; i < n; i += S_CHUNK) {
            size_t c = n - i < S_CHUNK ? n - i : S_CHUNK;
            gc_half_decode (buf, src + 2 * i, c);
            for (size_t j = 0; j < c; j++)
                dst [i + j] += alpha * buf [j];
        }
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst [i] += alpha * s_get_f32 (src + 4 * i);
}

//  Values as floats, in chunks, for the scatter loops.
static const float *
s_values_chunk (const uint8_t *src, size_t i, size_t c, int fmt, float *buf)
{
    if (fmt == GC_VAL_FP16)
        gc_half_decode (buf, src + 2 * i, c);
    else {
#if GC_LITTLE_ENDIAN
        memcpy (buf, src + 4 * i, c * 4);
#else
        for (size_t j = 0; j < c; j++)
            buf [j] = s_get_f32 (src + 4 * (i + j));
#endif
    }
    return buf;
}

//  into[index j] += alpha * v[j] for the next c varints at *p (from *idx).
static void
s_scatter_varint (const uint8_t **pp, uint32_t *idxp, const float *v, uint32_t c,
                  float *restrict into, float alpha)
{
    const uint8_t *p = *pp;
    uint32_t idx = *idxp;
    for (uint32_t j = 0; j < c; j++) {
        uint32_t d = *p++;
        if (d & 0x80) {
            d &= 0x7f;
            int shift = 7;
            uint8_t b;
            do {
                b = *p++;
                d |= (uint32_t) (b & 0x7f) << shift;
                shift += 7;
            } while (b & 0x80);
        }
        idx += d;
        into [idx] += alpha * v [j];
    }
    *pp = p;
    *idxp = idx;
}

static void
s_apply_varint (const s_section_t *s, float *restrict into, float alpha)
{
    const uint8_t *p = s->index;
    uint32_t idx = 0;
    float buf [S_CHUNK];
    for (uint32_t i = 0; i < s->nnz; i += S_CHUNK) {
        uint32_t c = s->nnz - i < S_CHUNK ? s->nnz - i : S_CHUNK;
        s_scatter_varint (&p, &idx, s_values_chunk (s->values, i, c, s->fmt, buf), c, into, alpha);
    }
}

//  The codec's values of all nnz entries first (scratch), then scattered.
static void
s_apply_lgc (const s_parse_t *ps, const s_section_t *s, float *restrict dst, float alpha,
             uint64_t *bitmap, float *scratch)
{
    gc_lgc_codec_decode (ps->codec, s->values, s->codes, s->nnz, scratch);
    //  The codec decodes magnitudes; the signs travel as bits.
    const uint8_t *sign = s->codes + 2 * (size_t) s->m * gc_lgc_chunks (s->nnz);
    for (uint32_t i = 0; i < s->nnz; i++)
        scratch [i] = (sign [i >> 3] >> (i & 7)) & 1 ? -scratch [i] : scratch [i];
    const uint8_t *p = s->index;
    uint32_t idx = 0;
    s_scatter_varint (&p, &idx, scratch, s->nnz, dst, alpha);
}

//  Adds the values, in order, at the set bits of a bitmap given as 64-bit
//  words (word(w) returns word w of n_words).
typedef struct {
    const uint8_t *bytes;       /* little-endian byte bitmap, or NULL */
    size_t         n_bytes;
    const uint64_t *words;      /* host-order word bitmap, or NULL */
} s_bits_t;

static inline uint64_t
s_word (const s_bits_t *b, size_t w)
{
    if (b->words)
        return b->words [w];
    size_t at = w * 8;
    if (b->n_bytes - at >= 8)
        return gc_get_u64 (b->bytes + at);
    uint64_t word = 0;
    for (size_t i = at; i < b->n_bytes; i++)
        word |= (uint64_t) b->bytes [i] << (8 * (i - at));
    return word;
}

static void
s_apply_bits (const s_bits_t *b, size_t n_words, const uint8_t *values, int fmt,
              uint32_t nnz, float *restrict into, float alpha)
{
    float buf [S_CHUNK];
    uint32_t j = 0, j0 = 0, c = 0;
    for (size_t w = 0; w < n_words; w++) {
        uint64_t word = s_word (b, w);
        while (word) {
            if (j == j0 + c) {
                j0 = j;
                c = nnz - j < S_CHUNK ? nnz - j : S_CHUNK;
                s_values_chunk (values, j, c, fmt, buf);
            }
            size_t i = w * 64 + (size_t) __builtin_ctzll (word);
            word &= word - 1;
            into [i] += alpha * buf [j - j0];
            j++;
        }
    }
}

static void
s_apply_randk (const s_parse_t *ps, const s_section_t *s, float *restrict into, float alpha,
               uint64_t *bitmap)
{
    gc_randk_bitmap (ps->seed, s->layer, s->count, s->nnz, bitmap);
    s_bits_t b = { .words = bitmap };
    s_apply_bits (&b, ((size_t) s->count + 63) / 64, s->values, s->fmt, s->nnz, into, alpha);
}

static void
s_apply_qsgd (const s_section_t *s, float *restrict into, float alpha)
{
    float lv = (float) s->levels;
    int32_t sl = (int32_t) s->levels;
    uint32_t code [S_CHUNK];
    //  Chunks start at multiples of 512 entries: whole groups of 8 codes,
    //  so each starts on a byte.
    for (uint32_t i = 0; i < s->count; i += S_CHUNK) {
        uint32_t c = s->count - i < S_CHUNK ? s->count - i : S_CHUNK;
        gc_bits_unpack (s->codes + (size_t) i * s->bits / 8, c, s->bits, code);
        float *restrict dst = into + i;
        for (size_t j0 = 0; j0 < c; ) {
            size_t b = (i + j0) / s->bucket;
            size_t bend = (b + 1) * s->bucket - i;
            size_t j1 = bend < c ? bend : c;
            float scale = s_get_f32 (s->values + 4 * b) / lv;
            //  The value is rounded on its own, then added (no contraction).
            for (size_t j = j0; j < j1; j++) {
                float v = scale * (float) ((int32_t) code [j] - sl);
                dst [j] += alpha * v;
            }
            j0 = j1;
        }
    }
}

//  into[i] += bit i ? -scale : scale, for i in [i0, i1).
static void
s_sign_add (float *restrict into, const uint8_t *bits, size_t i0, size_t i1, float scale)
{
    size_t i = gc_compress_kern ()->sign_add (into, bits, i0, i1, scale);
    for (; i < i1; i++)
        into [i] += (bits [i >> 3] >> (i & 7)) & 1 ? -scale : scale;
}

static void
s_apply_sign (const s_section_t *s, float *restrict into, float alpha)
{
    for (uint32_t b0 = 0; b0 < s->count; b0 += s->bucket) {
        uint32_t end = s->count - b0 < s->bucket ? s->count : b0 + s->bucket;
        float scale = alpha * s_get_f32 (s->values + 4 * (b0 / s->bucket));
        s_sign_add (into, s->codes, b0, end, scale);
    }
}

static void
s_apply_lowrank (const s_section_t *s, float *restrict into, float alpha, float *scratch)
{
    size_t np = (size_t) s->rank * s->rows, nq = (size_t) s->rank * s->cols;
    float *pt = scratch, *qt = scratch + np;
    if (s->fmt == GC_VAL_FP16)
        gc_half_decode (scratch, s->values, np + nq);
    else
        for (size_t i = 0; i < np + nq; i++)
            scratch [i] = s_get_f32 (s->values + 4 * i);
    //  Each row of P Q^T is formed first and then added, so that decoding
    //  into a replica adds exactly the values decoding into zeros gives.
    float *restrict tmp = scratch + np + nq;
    for (uint32_t i = 0; i < s->rows; i++) {
        float *restrict row = into + (size_t) i * s->cols;
        for (uint32_t k = 0; k < s->rank; k++) {
            float a = pt [(size_t) k * s->rows + i];
            const float *restrict q = qt + (size_t) k * s->cols;
            if (k == 0)
                for (uint32_t j = 0; j < s->cols; j++)
                    tmp [j] = a * q [j];
            else
                for (uint32_t j = 0; j < s->cols; j++)
                    tmp [j] += a * q [j];
        }
        for (uint32_t j = 0; j < s->cols; j++)
            row [j] += alpha * tmp [j];
    }
}

//  The apply functions in the codecs' one signature.
static void
s_apply_dense_section (const s_parse_t *ps, const s_section_t *s, float *restrict dst, float alpha,
                       uint64_t *bitmap, float *scratch)
{
    s_add_values (dst, s->values, s->count, s->fmt, alpha);
}

static void
s_apply_varint_section (const s_parse_t *ps, const s_section_t *s, float *restrict dst, float alpha,
                        uint64_t *bitmap, float *scratch)
{
    s_apply_varint (s, dst, alpha);
}

static void
s_apply_bitmap_section (const s_parse_t *ps, const s_section_t *s, float *restrict dst, float alpha,
                        uint64_t *bitmap, float *scratch)
{
    s_bits_t b = { .bytes = s->index, .n_bytes = s->index_len };
    s_apply_bits (&b, (s->index_len + 7) / 8, s->values, s->fmt, s->nnz, dst, alpha);
}

static void
s_apply_randk_section (const s_parse_t *ps, const s_section_t *s, float *restrict dst, float alpha,
                       uint64_t *bitmap, float *scratch)
{
    s_apply_randk (ps, s, dst, alpha, bitmap);
}

static void
s_apply_qsgd_section (const s_parse_t *ps, const s_section_t *s, float *restrict dst, float alpha,
                      uint64_t *bitmap, float *scratch)
{
    s_apply_qsgd (s, dst, alpha);
}

static void
s_apply_sign_section (const s_parse_t *ps, const s_section_t *s, float *restrict dst, float alpha,
                      uint64_t *bitmap, float *scratch)
{
    s_apply_sign (s, dst, alpha);
}

static void
s_apply_lowrank_section (const s_parse_t *ps, const s_section_t *s, float *restrict dst,
                         float alpha, uint64_t *bitmap, float *scratch)
{
    s_apply_lowrank (s, dst, alpha, scratch);
}

//  Indexed by gc_encoding_t; a new encoding is one row here.
static const s_codec_t s_codecs [GC_ENC_COUNT] = {
    [GC_ENC_DENSE]         = { "dense",         s_check_dense,   s_apply_dense_section },
    [GC_ENC_SPARSE_VARINT] = { "sparse-varint", s_check_varint,  s_apply_varint_section },
    [GC_ENC_SPARSE_BITMAP] = { "sparse-bitmap", s_check_bitmap,  s_apply_bitmap_section },
    [GC_ENC_RANDK]         = { "randk",         s_check_randk,   s_apply_randk_section },
    [GC_ENC_QSGD]          = { "qsgd",          s_check_qsgd,    s_apply_qsgd_section },
    [GC_ENC_SIGN]          = { "sign",          s_check_sign,    s_apply_sign_section },
    [GC_ENC_LOWRANK]       = { "lowrank",       s_check_lowrank, s_apply_lowrank_section },
    [GC_ENC_LGC]           = { "lgc",           s_check_lgc,     s_apply_lgc },
};

static void
s_apply_section (const s_parse_t *ps, const s_section_t *s, float *into, float alpha,
                 uint64_t *bitmap, float *scratch)
{
    float *dst = into + ps->layout->layers [s->layer].offset;
    s_codecs [s->enc].apply (ps, s, dst, alpha, bitmap, scratch);
}

static void
s_apply (const s_parse_t *ps, float *into, float alpha, uint64_t *bitmap, float *scratch)
{
    for (size_t si = 0; si < ps->n_sections; si++)
        s_apply_section (ps, &ps->sec [si], into, alpha, bitmap, scratch);
}

//  out[lo, hi) = base (zeros without one).
static void
s_copy_base (float *out, const float *base, size_t lo, size_t hi)
{
    if (hi <= lo)
        return;
    if (base)
        memcpy (out + lo, base + lo, (hi - lo) * sizeof *out);
    else
        memset (out + lo, 0, (hi - lo) * sizeof *out);
}

//  out = base + values (base NULL: zeros) for fp32 values not yet checked:
//  each block is checked and then added while it is in L1, one pass over
//  the payload instead of two. Returns the index of the first non-finite
//  value, or n (out is then complete).
static size_t
s_onto_dense (float *restrict out, const float *restrict base, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i += 256) {
        size_t m = n - i < 256 ? n - i : 256;
        size_t bad = s_first_bad_value (src + 4 * i, m, GC_VAL_FP32);
        if (bad < m)
            return i + bad;
        float *restrict o = out + i;
        const uint8_t *v = src + 4 * i;
        //  0 + f, not f, without a base: what decoding into zeros gives (-0 -> +0)
        const float *restrict b = base ? base + i : NULL;
        if (b)
            for (size_t j = 0; j < m; j++)
                o [j] = b [j] + s_get_f32 (v + 4 * j);
        else
            for (size_t j = 0; j < m; j++)
                o [j] = 0.0f + s_get_f32 (v + 4 * j);
    }
    return n;
}

//  Phase 2 of gc_payload_decode_onto: layer by layer, the uncovered ones
//  copied from base.
static int
s_apply_onto (const s_parse_t *ps, const float *base, float *out, uint64_t *bitmap,
              float *scratch, gc_err_t *err)
{
    const gc_layout_t *layout = ps->layout;
    size_t done = 0;
    for (size_t si = 0; si < ps->n_sections; si++) {
        const s_section_t *s = &ps->sec [si];
        size_t off = layout->layers [s->layer].offset;
        s_copy_base (out, base, done, off);
        if (s->enc == GC_ENC_DENSE && s->fmt == GC_VAL_FP32) {
            if (s_onto_dense (out + off, base ? base + off : NULL, s->values, s->count) < s->count)
                return s_check_values (s, si, layout, s->values, s->count, s->fmt, "value", err);
        }
        else {
            s_copy_base (out, base, off, off + s->count);
            s_apply_section (ps, s, out, 1.0f, bitmap, scratch);
        }
        done = off + s->count;
    }
    s_copy_base (out, base, done, layout->n_params);
    return 0;
}

//  Parse (checks), scratch for phase 2, then without out: into += alpha *
//  decoded; with out: out = base + decoded.
static int
s_decode (const uint8_t *payload, size_t len, const gc_layout_t *layout,
          const gc_lgc_codec_t *codec, float *into, float alpha, const float *base, float *out,
          gc_err_t *err)
{
    //  The section table is too large for comfortable stack use in fuzzers.
    s_parse_t *ps = malloc (sizeof *ps);
    if (!ps)
        return gc_err_set (err, GC_E_NOMEM, "payload: out of memory");
    int rc = s_parse (ps, payload, len, layout, out != NULL, codec, false, err);
    uint64_t *bitmap = NULL;
    float *scratch = NULL;
    if (rc == 0) {
        if (ps->bitmap_words)
            bitmap = malloc (ps->bitmap_words * sizeof *bitmap);
        if (ps->floats)
            scratch = malloc (ps->floats * sizeof *scratch);
        if ((ps->bitmap_words && !bitmap) || (ps->floats && !scratch))
            rc = gc_err_set (err, GC_E_NOMEM, "payload: out of memory for decode scratch");
        else
        if (out)
            rc = s_apply_onto (ps, base, out, bitmap, scratch, err);
        else
            s_apply (ps, into, alpha, bitmap, scratch);
    }
    free (bitmap);
    free (scratch);
    free (ps);
    return rc;
}

int
gc_payload_apply_codec (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                        const gc_lgc_codec_t *codec, float *into, float alpha, gc_err_t *err)
{
    return s_decode (payload, len, layout, codec, into, alpha, NULL, NULL, err);
}

int
gc_payload_apply (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                  float *into, float alpha, gc_err_t *err)
{
    return gc_payload_apply_codec (payload, len, layout, NULL, into, alpha, err);
}

int
gc_payload_decode_onto_with (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                             const gc_lgc_codec_t *codec, const float *base, float *out,
                             gc_err_t *err)
{
    if (!out || out == base)
        return gc_err_set (err, GC_E_ARG, "payload: decode onto needs an output apart from its base");
    return s_decode (payload, len, layout, codec, NULL, 1.0f, base, out, err);
}

int
gc_payload_decode_onto (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                        const float *base, float *out, gc_err_t *err)
{
    return gc_payload_decode_onto_with (payload, len, layout, NULL, base, out, err);
}

int
gc_payload_decompress_add_with (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                                const gc_lgc_codec_t *codec, float *into, gc_err_t *err)
{
    return gc_payload_apply_codec (payload, len, layout, codec, into, 1.0f, err);
}

int
gc_payload_decompress_add (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                           float *into, gc_err_t *err)
{
    return gc_payload_apply_codec (payload, len, layout, NULL, into, 1.0f, err);
}

uint64_t
gc_payload_codec_id (const uint8_t *payload, size_t len)
{
    if (!payload || len < GC_PAYLOAD_HEADER_SIZE || payload [4] != GC_METHOD_LGC)
        return 0;
    return gc_get_u64 (payload + 16);
}

gc_lgc_codec_t *
gc_payload_codec (const uint8_t *payload, size_t len, const gc_layout_t *layout, gc_err_t *err)
{
    if (err)
        err->code = 0;
    if (!payload || len < GC_PAYLOAD_HEADER_SIZE || !(payload [5] & GC_PAYLOAD_FLAG_CODEC))
        return NULL;
    s_parse_t *ps = malloc (sizeof *ps);
    if (!ps) {
        gc_err_set (err, GC_E_NOMEM, "payload: out of memory");
        return NULL;
    }
    gc_lgc_codec_t *codec = NULL;
    if (s_parse (ps, payload, len, layout, false, NULL, true, err) == 0)
        codec = gc_lgc_codec_load (ps->blob, ps->blob_len, err);
    free (ps);
    return codec;
}

int
gc_payload_inspect (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                    gc_payload_info_t *info, gc_err_t *err)
{
    s_parse_t *ps = malloc (sizeof *ps);
    if (!ps)
        return gc_err_set (err, GC_E_NOMEM, "payload: out of memory");
    int rc = s_parse (ps, payload, len, layout, false, NULL, true, err);
    if (rc == 0 && info) {
        info->method = ps->method;
        info->exact = ps->flags & GC_PAYLOAD_FLAG_EXACT;
        info->lbs = ps->flags & GC_PAYLOAD_FLAG_LBS;
        info->codec = ps->flags & GC_PAYLOAD_FLAG_CODEC;
        info->n_sections = ps->n_sections;
        info->seed = ps->seed;
    }
    free (ps);
    return rc;
}
