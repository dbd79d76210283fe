/*  gc_lgc_codec — the autoencoder of Learned Gradient Compression (LGC):
    chunks of GC_LGC_CHUNK values (a layer's top-k values in index order),
    each normalised by its max |v| (an fp16 scale), encoded to m codes and
    decoded back (docs/ALGORITHMS.md, "Learned Gradient Compression").

    Encoder 64 -> 32 -> m and decoder m -> 32 -> 64. The hidden layers and
    the code use a bounded tanh-like activation computed with plain float
    arithmetic (no libm), and the output is clamped to [-1, 1] before it is
    multiplied by the scale: the same bits on every receiver (compress/ is
    built without contraction), and |decoded| <= scale whatever the weights.

    A codec made here (gc_lgc_codec_new) holds both halves and trains with
    Adam on chunks the caller gives it (the peer's own). A codec read from
    the wire (gc_lgc_codec_load) holds only the decoder; its bytes are
    hostile and checked: fixed architecture, every weight finite and within
    +-GC_LGC_MAX_WEIGHT, the length exact. The codec id is the first 8 bytes
    of SHA-256 of the serialised decoder (little-endian), the name payloads
    carry. */
#ifndef GC_LGC_CODEC_H
#define GC_LGC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_buf.h"
#include "gc_err.h"

#define GC_LGC_CHUNK        64          /* values per chunk */
#define GC_LGC_HIDDEN       32          /* hidden width of both halves */
#define GC_LGC_MAX_CODE     32          /* largest code size m */
#define GC_LGC_MAX_WEIGHT   1e4f        /* |weight| a decoder read may hold */
#define GC_LGC_BLOB_HEADER  12          /* bytes before the decoder weights */

typedef struct gc_lgc_codec_t gc_lgc_codec_t;

/*  A trainable codec with code size m (1..GC_LGC_MAX_CODE), weights drawn
    from seed (Glorot uniform). NULL with err (GC_E_ARG, GC_E_NOMEM). */
gc_lgc_codec_t *gc_lgc_codec_new (uint32_t m, uint64_t seed, gc_err_t *err);
void gc_lgc_codec_destroy (gc_lgc_codec_t **self_p);

uint32_t gc_lgc_codec_m (const gc_lgc_codec_t *self);
/*  Whether it holds an encoder (made here) or only a decoder (loaded). */
bool     gc_lgc_codec_can_encode (const gc_lgc_codec_t *self);

/*  Chunks of n values, and the payload bytes they take: per chunk one fp16
    scale and m fp16 codes. */
size_t   gc_lgc_chunks (size_t n);
size_t   gc_lgc_code_bytes (size_t n, uint32_t m);

/*  One Adam step (rate lr) on the chunks of v[0..n) (a layer's values in
    index order), each normalised by its own max |v|; returns the mean
    squared reconstruction error of the batch before the step, in
    normalised units (0 when n is 0). Encoder needed. */
double   gc_lgc_codec_train (gc_lgc_codec_t *self, const float *v, size_t n, float lr);

/*  Encode v[0..n): scales (2 bytes per chunk) and codes (2m bytes per
    chunk), fp16 little-endian. The encoder sees each chunk divided by its
    max |v| (rounded up to an fp16); a code lies in [-1, 1]; the scale sent
    is the least-squares fit of the chunk to its decoded shape y, so that
    |v - scale y| <= |v| (within fp16 rounding of the scale; |scale| <=
    65504). Encoder needed. */
void     gc_lgc_codec_encode (const gc_lgc_codec_t *self, const float *v, size_t n,
                              uint8_t *scales, uint8_t *codes);

/*  Check what a payload carries for n values with code size m: every
    scale finite (of either sign), every code finite within [-1, 1]. 0, or
    -1 with err (GC_E_PAYLOAD_NONFINITE / GC_E_PAYLOAD_RANGE) naming the
    chunk. */
int      gc_lgc_check_codes (const uint8_t *scales, const uint8_t *codes, size_t n,
                             uint32_t m, gc_err_t *err);

/*  out[0..n) = decoded values of checked scales and codes (m = the
    codec's); |out[i]| <= |its chunk's scale|. Cannot fail. */
void     gc_lgc_codec_decode (const gc_lgc_codec_t *self, const uint8_t *scales,
                              const uint8_t *codes, size_t n, float *out);

/*  Relative squared error sum (v - decode (encode (v)))^2 / sum v^2 through
    the fp16 wire path (0 for a zero v). Encoder needed. */
double   gc_lgc_codec_error (const gc_lgc_codec_t *self, const float *v, size_t n);

/*  The serialised decoder: "LGC" 1, u16 chunk, u16 hidden, u16 m, u16 0,
    then fp32 W1 [hidden][m], b1 [hidden], W2 [chunk][hidden], b2 [chunk]
    (docs/PAYLOAD.md). Its size for code size m. */
size_t   gc_lgc_blob_size (uint32_t m);
/*  Append it to out; or write it at dst (gc_lgc_blob_size bytes). */
int      gc_lgc_codec_save (const gc_lgc_codec_t *self, gc_buf_t *out, gc_err_t *err);
void     gc_lgc_codec_write (const gc_lgc_codec_t *self, uint8_t *dst);
/*  Check len hostile bytes as gc_lgc_codec_load does, without keeping
    them: 0, or -1 with err as load's. */
int      gc_lgc_blob_check (const uint8_t *blob, size_t len, gc_err_t *err);
/*  A decoder-only codec from len hostile bytes; NULL with err naming the
    field (GC_E_PAYLOAD_MAGIC, _VERSION, _PARAM, _LENGTH, _NONFINITE,
    _RANGE) or GC_E_NOMEM. */
gc_lgc_codec_t *gc_lgc_codec_load (const uint8_t *blob, size_t len, gc_err_t *err);

/*  For Byzantine experiments (lgc's poison=B): the decoder's weights
    become uniform draws from +-bound (at most GC_LGC_MAX_WEIGHT, seeded)
    and encode sends every scale at +-65504, the largest a chunk may have:
    the most hostile codec the wire accepts. Renames the codec. */
void     gc_lgc_codec_poison (gc_lgc_codec_t *self, float bound, uint64_t seed);

/*  The codec id (first 8 bytes of SHA-256 of the blob, little-endian);
    recomputed after training changed the weights. */
uint64_t gc_lgc_codec_id (gc_lgc_codec_t *self);
/*  Whether the codec's id, as last computed (always, for a loaded one), is
    id: what a receiver asks before it decodes a payload naming id. */
bool     gc_lgc_codec_named (const gc_lgc_codec_t *self, uint64_t id);

#endif
