/*  Payload writing: header, section headers, values, indices. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_half.h"
#include "gc_lgc_codec.h"
#include "gc_payload.h"

int
gc_payload_begin (gc_buf_t *out, const gc_layout_t *layout, int method,
                  uint8_t flags, uint64_t seed, gc_err_t *err)
{
    gc_buf_reset (out);
    uint8_t *p = gc_buf_extend (out, GC_PAYLOAD_HEADER_SIZE, err);
    if (!p)
        return gc_err_prefix (err, "payload: ");
    p [0] = 'G';
    p [1] = 'C';
    p [2] = 'Z';
    p [3] = GC_PAYLOAD_VERSION;
    p [4] = (uint8_t) method;
    p [5] = flags;
    gc_put_u16 (p + 6, 0);
    gc_put_u32 (p + 8, (uint32_t) layout->n_params);
    gc_put_u16 (p + 12, (uint16_t) layout->n_layers);
    gc_put_u16 (p + 14, 0);
    gc_put_u64 (p + 16, seed);
    return 0;
}

uint8_t *
gc_payload_section (gc_buf_t *out, const gc_layout_t *layout, size_t layer,
                    int encoding, int valfmt, size_t body_len, gc_err_t *err)
{
    if (body_len > UINT32_MAX) {
        gc_err_set (err, GC_E_INPUT,
                    "payload: section of layer %zu would be %zu bytes (> 2^32)", layer, body_len);
        return NULL;
    }
    uint8_t *p = gc_buf_extend (out, GC_PAYLOAD_SECTION_SIZE + body_len, err);
    if (!p) {
        gc_err_prefix (err, "payload: ");
        return NULL;
    }
    gc_put_u16 (p, (uint16_t) layer);
    p [2] = (uint8_t) encoding;
    p [3] = (uint8_t) valfmt;
    gc_put_u32 (p + 4, (uint32_t) layout->layers [layer].count);
    gc_put_u32 (p + 8, (uint32_t) body_len);
    uint16_t n = gc_get_u16 (out->data + 6);
    gc_put_u16 (out->data + 6, (uint16_t) (n + 1));
    return p + GC_PAYLOAD_SECTION_SIZE;
}

void
gc_payload_put_values (uint8_t *dst, const float *src, size_t n, int fmt)
{
    if (fmt == GC_VAL_FP16) {
        gc_half_encode (dst, src, n, 1.0f);
        return;
    }
#if GC_LITTLE_ENDIAN
    memcpy (dst, src, n * 4);
#else
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy (&u, src + i, 4);
        gc_put_u32 (dst + 4 * i, u);
    }
#endif
}

void
gc_payload_put_values_scaled (uint8_t *dst, const float *src, size_t n, float scale, int fmt)
{
    if (fmt == GC_VAL_FP16) {
        gc_half_encode (dst, src, n, scale);
        return;
    }
    //  Saturate, so a scale cannot turn a finite input into an Inf the
    //  decoder would reject.
    for (size_t i = 0; i < n; i++) {
        float v = src [i] * scale;
        v = v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : v;
        uint32_t u;
        memcpy (&u, &v, 4);
#if GC_LITTLE_ENDIAN
        memcpy (dst + 4 * i, &u, 4);
#else
        gc_put_u32 (dst + 4 * i, u);
#endif
    }
}

static inline size_t
s_varint_len (uint32_t v)
{
    return 1 + (v >= 1u << 7) + (v >= 1u << 14) + (v >= 1u << 21) + (v >= 1u << 28);
}

size_t
gc_varint_size (const uint32_t *idx, size_t nnz, uint32_t base)
{
    if (nnz == 0)
        return 0;
    size_t total = s_varint_len (idx [0] - base);
    for (size_t i = 1; i < nnz; i++)
        total += s_varint_len (idx [i] - idx [i - 1]);
    return total;
}

//  One delta below 2^28 as its 1 to 4 varint bytes in the low bytes of a
//  word (little-endian order), the continuation bits set; *len its length.
static inline uint32_t
s_varint_word (uint32_t v, size_t *len)
{
    size_t n = s_varint_len (v);
    uint32_t w = (v & 0x7fu) | (v << 1 & 0x7f00u) | (v << 2 & 0x7f0000u) | (v << 3 & 0x7f000000u);
    uint32_t cont = 0x808080u & (uint32_t) ((1ull << (8 * (n - 1))) - 1);
    *len = n;
    return w | cont;
}

size_t
gc_varint_write (uint8_t *dst, const uint32_t *idx, size_t nnz, uint32_t base)
{
    uint8_t *p = dst;
    uint32_t prev = base;
    //  A whole word stored per delta, without a branch on its length (the
    //  byte loop below mispredicted on a third of top-k 1 %'s deltas, about
    //  a tenth of the compressor's time). Each store's 4 bytes end inside
    //  the varints: at least three more deltas, of a byte or more, follow.
    size_t i = 0;
    for (; i + 3 < nnz && idx [i] - prev < 1u << 28; i++) {
        size_t len;
        gc_put_u32 (p, s_varint_word (idx [i] - prev, &len));
        prev = idx [i];
        p += len;
    }
    for (; i < nnz; i++) {
        uint32_t v = idx [i] - prev;
        prev = idx [i];
        while (v >= 0x80) {
            *p++ = (uint8_t) (v | 0x80);
            v >>= 7;
        }
        *p++ = (uint8_t) v;
    }
    return (size_t) (p - dst);
}

int
gc_payload_sparse_section (gc_buf_t *out, const gc_layout_t *layout, size_t layer,
                           const uint32_t *idx, const float *val, size_t nnz,
                           uint32_t base, int valfmt, gc_err_t *err)
{
    size_t count = layout->layers [layer].count;
    size_t vs = gc_valfmt_size (valfmt);
    size_t vbytes = gc_varint_size (idx, nnz, base);
    size_t bmbytes = (count + 7) / 8;
    bool bitmap = 4 + bmbytes < 8 + vbytes;
    size_t body_len = (bitmap ? 4 + bmbytes : 8 + vbytes) + nnz * vs;
    //  Nearly every entry selected: the layer as a dense section of the
    //  values with zeros between them is smaller. So a sparse payload is
    //  never larger than the dense one, which is the receivers' limit
    //  (gc_engine_max_payload): at ratio 1 a bitmap section took 4.125
    //  bytes an entry and every payload was refused as oversize.
    if (count * vs < body_len) {
        uint8_t *p = gc_payload_section (out, layout, layer, GC_ENC_DENSE, valfmt, count * vs, err);
        if (!p)
            return -1;
        memset (p, 0, count * vs);         /* +0 in fp32 and in fp16 */
        for (size_t i = 0; i < nnz; i++)
            gc_payload_put_values (p + (size_t) (idx [i] - base) * vs, val + i, 1, valfmt);
        return 0;
    }
    uint8_t *p = gc_payload_section (out, layout, layer,
                                     bitmap ? GC_ENC_SPARSE_BITMAP : GC_ENC_SPARSE_VARINT,
                                     valfmt, body_len, err);
    if (!p)
        return -1;
    gc_put_u32 (p, (uint32_t) nnz);
    if (bitmap) {
        uint8_t *bm = p + 4;
        memset (bm, 0, bmbytes);
        for (size_t i = 0; i < nnz; i++) {
            uint32_t j = idx [i] - base;
            bm [j >> 3] |= (uint8_t) (1u << (j & 7));
        }
        p = bm + bmbytes;
    }
    else {
        gc_put_u32 (p + 4, (uint32_t) vbytes);
        p += 8 + gc_varint_write (p + 8, idx, nnz, base);
    }
    gc_payload_put_values (p, val, nnz, valfmt);
    return 0;
}

int
gc_payload_dense_section (gc_buf_t *out, const gc_layout_t *layout, size_t layer,
                          const float *x, int valfmt, gc_err_t *err)
{
    const gc_layer_t *l = &layout->layers [layer];
    uint8_t *p = gc_payload_section (out, layout, layer, GC_ENC_DENSE, valfmt,
                                     l->count * gc_valfmt_size (valfmt), err);
    if (!p)
        return -1;
    gc_payload_put_values (p, x + l->offset, l->count, valfmt);
    return 0;
}

int
gc_payload_encode_dense (gc_buf_t *out, const gc_layout_t *layout, const float *x,
                         int method, int valfmt, uint8_t flags, gc_err_t *err)
{
    if (gc_payload_begin (out, layout, method, flags, 0, err))
        return -1;
    //  One allocation for the whole payload.
    if (gc_buf_reserve (out, layout->n_layers * GC_PAYLOAD_SECTION_SIZE
                             + layout->n_params * gc_valfmt_size (valfmt), err))
        return -1;
    for (size_t l = 0; l < layout->n_layers; l++)
        if (gc_payload_dense_section (out, layout, l, x, valfmt, err))
            return -1;
    return 0;
}

int
gc_payload_lgc_section (gc_buf_t *out, const gc_layout_t *layout, size_t layer,
                        const uint32_t *idx, const float *val, size_t nnz, uint32_t base,
                        const gc_lgc_codec_t *codec, gc_err_t *err)
{
    uint32_t m = gc_lgc_codec_m (codec);
    size_t ib = gc_varint_size (idx, nnz, base), nc = gc_lgc_chunks (nnz);
    uint8_t *p = gc_payload_section (out, layout, layer, GC_ENC_LGC, GC_VAL_FP16,
                                     12 + ib + gc_lgc_code_bytes (nnz, m) + (nnz + 7) / 8, err);
    if (!p)
        return -1;
    gc_put_u32 (p, (uint32_t) nnz);
    gc_put_u32 (p + 4, (uint32_t) ib);
    gc_put_u16 (p + 8, (uint16_t) m);
    gc_put_u16 (p + 10, 0);
    gc_varint_write (p + 12, idx, nnz, base);
    //  The codec sees magnitudes, chunk by chunk; the signs go as bits.
    uint8_t *scales = p + 12 + ib, *codes = scales + 2 * nc, *sign = codes + 2 * (size_t) m * nc;
    memset (sign, 0, (nnz + 7) / 8);
    float mag [GC_LGC_CHUNK];
    for (size_t c = 0, at = 0; at < nnz; c++, at += GC_LGC_CHUNK) {
        size_t r = nnz - at < GC_LGC_CHUNK ? nnz - at : GC_LGC_CHUNK;
        for (size_t i = 0; i < r; i++) {
            mag [i] = fabsf (val [at + i]);
            sign [(at + i) >> 3] |= (uint8_t) (signbit (val [at + i]) ? 1u << ((at + i) & 7) : 0);
        }
        gc_lgc_codec_encode (codec, mag, r, scales + 2 * c, codes + 2 * m * c);
    }
    return 0;
}

int
gc_payload_attach_codec (gc_buf_t *out, const gc_lgc_codec_t *codec, gc_err_t *err)
{
    if (out->len < GC_PAYLOAD_HEADER_SIZE || (out->data [5] & GC_PAYLOAD_FLAG_CODEC))
        return gc_err_set (err, GC_E_ARG, "payload: no header, or a codec attached already");
    size_t blob = gc_lgc_blob_size (gc_lgc_codec_m (codec)), old = out->len;
    if (!gc_buf_extend (out, 4 + blob, err))
        return gc_err_prefix (err, "payload: ");
    uint8_t *at = out->data + GC_PAYLOAD_HEADER_SIZE;
    memmove (at + 4 + blob, at, old - GC_PAYLOAD_HEADER_SIZE);
    gc_put_u32 (at, (uint32_t) blob);
    gc_lgc_codec_write (codec, at + 4);
    out->data [5] |= GC_PAYLOAD_FLAG_CODEC;
    return 0;
}
