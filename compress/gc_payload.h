/*  gc_payload — the byte layout of a compressed payload (docs/PAYLOAD.md),
    the writer helpers the methods use, and the validating decoder.

    A payload is a 24-byte header followed by one section per layer that
    carries something, in strictly increasing layer order. Every integer is
    little-endian. The decoder first validates everything (phase 1, no
    writes), then applies (phase 2, cannot fail). */
#ifndef GC_PAYLOAD_H
#define GC_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gc_buf.h"
#include "gc_err.h"
#include "gc_layout.h"

#define GC_PAYLOAD_VERSION       1
#define GC_PAYLOAD_HEADER_SIZE   24
#define GC_PAYLOAD_SECTION_SIZE  12

/*  Header flags. */
#define GC_PAYLOAD_FLAG_EXACT    0x01   /* LIEC synchronisation: dense fp32 of u + e */
#define GC_PAYLOAD_FLAG_LBS      0x02   /* sections cover an LBS window */
#define GC_PAYLOAD_FLAG_CODEC    0x04   /* an LGC decoder blob follows the header */

/*  Hard limits the decoder enforces (they bound a hostile payload's cost). */
#define GC_POWERSGD_MAX_RANK     64
#define GC_QSGD_MAX_LEVELS       32767

typedef enum {
    GC_METHOD_NONE = 0,
    GC_METHOD_FP16 = 1,
    GC_METHOD_TOPK = 2,
    GC_METHOD_RANDK = 3,
    GC_METHOD_THRESHOLD = 4,
    GC_METHOD_QSGD = 5,
    GC_METHOD_SIGN = 6,
    GC_METHOD_POWERSGD = 7,
    GC_METHOD_LGC = 8,
    GC_METHOD_COUNT
} gc_method_t;

typedef enum {
    GC_ENC_DENSE = 0,
    GC_ENC_SPARSE_VARINT = 1,
    GC_ENC_SPARSE_BITMAP = 2,
    GC_ENC_RANDK = 3,
    GC_ENC_QSGD = 4,
    GC_ENC_SIGN = 5,
    GC_ENC_LOWRANK = 6,
    GC_ENC_LGC = 7,
    GC_ENC_COUNT
} gc_encoding_t;

typedef enum {
    GC_VAL_FP32 = 0,
    GC_VAL_FP16 = 1
} gc_valfmt_t;

const char *gc_method_name (int method);

/*  ---- little-endian access (unaligned, any host byte order) ---- */

static inline void
gc_put_u16 (uint8_t *p, uint16_t v)
{
    p [0] = (uint8_t) v;
    p [1] = (uint8_t) (v >> 8);
}

static inline void
gc_put_u32 (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p [i] = (uint8_t) (v >> (8 * i));
}

static inline void
gc_put_u64 (uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p [i] = (uint8_t) (v >> (8 * i));
}

static inline void
gc_put_f32 (uint8_t *p, float v)
{
    uint32_t u;
    memcpy (&u, &v, 4);
    gc_put_u32 (p, u);
}

static inline uint16_t
gc_get_u16 (const uint8_t *p)
{
    return (uint16_t) (p [0] | (uint16_t) p [1] << 8);
}

static inline uint32_t
gc_get_u32 (const uint8_t *p)
{
    return (uint32_t) p [0] | (uint32_t) p [1] << 8 | (uint32_t) p [2] << 16
         | (uint32_t) p [3] << 24;
}

static inline uint64_t
gc_get_u64 (const uint8_t *p)
{
    return (uint64_t) gc_get_u32 (p) | (uint64_t) gc_get_u32 (p + 4) << 32;
}

/*  Bytes of one value in a format. */
static inline size_t
gc_valfmt_size (int fmt)
{
    return fmt == GC_VAL_FP16 ? 2 : 4;
}

/*  ---- writing ---- */

/*  Begin a payload in out (reset first): the header with n_sections 0.
    Sections are appended with gc_payload_section; the header's section
    count is updated as they are. */
int      gc_payload_begin (gc_buf_t *out, const gc_layout_t *layout, int method,
                           uint8_t flags, uint64_t seed, gc_err_t *err);
/*  Append a section header for `layer` with a body of body_len bytes and
    return a pointer to the body (to be filled by the caller). */
uint8_t *gc_payload_section (gc_buf_t *out, const gc_layout_t *layout, size_t layer,
                             int encoding, int valfmt, size_t body_len, gc_err_t *err);

/*  Write n values in a format (fp16 saturates at +-65504, rounds to nearest even). */
void     gc_payload_put_values (uint8_t *dst, const float *src, size_t n, int fmt);
/*  Same with every value multiplied by scale first. */
void     gc_payload_put_values_scaled (uint8_t *dst, const float *src, size_t n,
                                       float scale, int fmt);

/*  Bytes that delta + LEB128 needs for ascending indices idx[0..nnz)
    (the first is written as is, the rest as differences). */
size_t   gc_varint_size (const uint32_t *idx, size_t nnz, uint32_t base);
/*  Write them; returns bytes written (== gc_varint_size). idx are
    absolute; base is subtracted from each (the layer's offset). */
size_t   gc_varint_write (uint8_t *dst, const uint32_t *idx, size_t nnz, uint32_t base);

/*  Append a sparse section (varint or bitmap, whichever gives the smaller
    body; ties go to varint) for layer `layer` from ascending indices idx[]
    (layer-local index = idx[i] - base) with values val[], nnz > 0; or,
    when it is smaller still (nearly every entry selected), a dense
    section of the values with +0 at the entries not selected, so that no
    section is larger than the layer's dense one. */
int      gc_payload_sparse_section (gc_buf_t *out, const gc_layout_t *layout, size_t layer,
                                    const uint32_t *idx, const float *val, size_t nnz,
                                    uint32_t base, int valfmt, gc_err_t *err);

/*  Append a dense section of layer `layer` from x (the whole vector). */
int      gc_payload_dense_section (gc_buf_t *out, const gc_layout_t *layout, size_t layer,
                                   const float *x, int valfmt, gc_err_t *err);

/*  Append an LGC section for layer `layer`: the varint indices of idx[]
    (as a sparse section), the codec's scales and codes of |val[]| and the
    signs of val[] as bits, nnz > 0. The codec must encode. */
typedef struct gc_lgc_codec_t gc_lgc_codec_t;
int      gc_payload_lgc_section (gc_buf_t *out, const gc_layout_t *layout, size_t layer,
                                 const uint32_t *idx, const float *val, size_t nnz,
                                 uint32_t base, const gc_lgc_codec_t *codec, gc_err_t *err);
/*  Insert the codec's decoder blob right after the header of the payload
    in out (u32 length, then the blob) and set GC_PAYLOAD_FLAG_CODEC: how
    LGC payloads and keyframes carry a decoder to the receivers. */
int      gc_payload_attach_codec (gc_buf_t *out, const gc_lgc_codec_t *codec, gc_err_t *err);

/*  A whole dense payload (method none/fp16, flags as given). */
int      gc_payload_encode_dense (gc_buf_t *out, const gc_layout_t *layout, const float *x,
                                  int method, int valfmt, uint8_t flags, gc_err_t *err);

/*  ---- reading ---- */

/*  into += alpha * decoded, after full validation (alpha = -1 lets error
    feedback subtract what was sent without a second buffer). */
int      gc_payload_apply (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                           float *into, float alpha, gc_err_t *err);
/*  The same, LGC sections decoded with codec (the sender's; NULL: none). */
int      gc_payload_apply_codec (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                                 const gc_lgc_codec_t *codec, float *into, float alpha,
                                 gc_err_t *err);

#endif
