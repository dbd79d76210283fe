/*  gc_compressor — turn a dense float vector with its layer table into a
    small, self-describing payload, and back.

    The sender owns a compressor (it keeps whatever state a method needs:
    selection scratch, PowerSGD's warm start, LBS's window and deferred
    layers); the receiver needs no object at all: gc_payload_decompress_add
    validates a payload against the receiver's own layout and adds it into a
    dense replica. The byte layout is in docs/PAYLOAD.md, the algorithms in
    docs/ALGORITHMS.md.

    Spec grammar (tokens separated by ':'; the first numeric argument is
    optional and has the default shown; option tokens may come in any order).
    The methods are registered in gc_compress_methods.c; gc_compressor_usage
    prints this list from there:

      none                         dense fp32
      fp16                         dense fp16 (saturating at +-65504)
      topk[:RATIO=0.01][:global|layer][:sampled|exact][:fp32|fp16]
      randk[:RATIO=0.01][:scaled|unscaled][:fp32|fp16]
      threshold[:TAU=0.001][:fp32|fp16]
      qsgd[:LEVELS=16][:bucket=512]
      sign[:bucket=0]              0 = one scale per layer
      powersgd[:RANK=2][:fp32|fp16]
      lgc[:RATIO=0.01][:M=8][:warmup=100][:steps=2][:lr=0.003][:poison=0]
                                   top-k whose values travel as learned codes
      lbs[:budget=0.25][:maxage=8][:keep=0.5]:INNER
                                   INNER is any spec above but lbs

    Defaults in the brackets: topk is global and sampled, values fp32,
    randk is scaled (unbiased). */
#ifndef GC_COMPRESSOR_H
#define GC_COMPRESSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_buf.h"
#include "gc_err.h"
#include "gc_layout.h"

/*  err->code after a failed call is a GC_E_* of gc_err.h: GC_E_SPEC (bad
    method or EC spec), GC_E_NONFINITE (non-finite input), GC_E_INPUT (an
    input a method cannot take: empty layout, more than 2^32 entries),
    GC_E_ARG (NULL or overlapping buffers), GC_E_NOMEM, or for a malformed
    payload one of GC_E_PAYLOAD_FIRST..GC_E_PAYLOAD_LAST, which names its
    class; the message says which section, layer, field or index was wrong. */

typedef struct gc_compressor_t gc_compressor_t;

/*  spec: see above. layout: the layer table (copied). seed: the sender's
    identity seed; per-round seeds (random-k indices, QSGD rounding, sample
    positions) are derived from (seed, round). NULL with err on a bad spec. */
/*  The known method keywords, ", "-separated ("none, fp16, topk, ..."),
    and one usage line per method with its help text, from the registry;
    both write into buf (size bytes, truncated to fit) and return it. */
const char *gc_compressor_known (char *buf, size_t size);
const char *gc_compressor_usage (char *buf, size_t size);

gc_compressor_t *gc_compressor_new (const char *spec, const gc_layout_t *layout,
                                    uint64_t seed, gc_err_t *err);
void gc_compressor_destroy (gc_compressor_t **self_p);

/*  Compress x (layout n_params floats) for round `round` into out (reset
    first). -1 when x holds a non-finite value or memory runs out. */
int  gc_compressor_compress (gc_compressor_t *self, const float *x, uint64_t round,
                             gc_buf_t *out, gc_err_t *err);

/*  Whether decoding a payload gives back exactly what was compressed (plain
    fp32, no window): the sender then knows what it sent without decoding. */
bool gc_compressor_lossless (const gc_compressor_t *self);

/*  The canonical spec with every default spelled out ("topk:0.01:global:sampled:fp32"). */
const char *gc_compressor_name (const gc_compressor_t *self);
const gc_layout_t *gc_compressor_layout (const gc_compressor_t *self);

/*  LBS keeps layers it did not send in a deferred buffer and sends them
    later. When an error-compensation wrapper (ef, liec) or the caller's
    replica scheme already carries what was not sent, that buffer would
    count it twice: gc_ec_new turns deferral off. Other methods ignore this.
    Turning it off drops what is deferred. */
void gc_compressor_set_defer (gc_compressor_t *self, bool on);
/*  LBS's deferred sums (n_params floats), or NULL for other methods or
    when deferral is off; for checkpoints and tests. */
const float *gc_compressor_deferred (const gc_compressor_t *self);

/*  The ratio a budget policy scales (gc_policy.h): the parsed RATIO of topk
    and randk, of lbs's inner method; 0 for a method without one. */
double gc_compressor_ratio (const gc_compressor_t *self);
/*  This round's budget, until the next call: ratio (0: the parsed one) for
    the whole vector, or layer (n_layers ratios, copied; topk only) one per
    layer, which makes top-k select layer by layer. -1 (GC_E_ARG) for a
    method without a ratio, a ratio outside (0, 1], or layers on non-topk. */
int  gc_compressor_set_budget (gc_compressor_t *self, double ratio, const double *layer,
                               gc_err_t *err);

/*  Receiver side, stateless: validate the whole payload against layout,
    then into += decoded. On any error nothing is written to into and err
    names the field, section, layer or index (code: one of GC_E_PAYLOAD_*).
    Work and memory are bounded by O(n_params + len) (PowerSGD sections:
    O(rank * n_params), rank <= 64); into can still overflow if the
    replica itself is huge, the caller checks finiteness. */
int  gc_payload_decompress_add (const uint8_t *payload, size_t len,
                                const gc_layout_t *layout, float *into, gc_err_t *err);

/*  out = base + decoded (base NULL: zeros), both n_params floats, apart.
    The same validation as gc_payload_decompress_add and the same floats
    (base + decoded, added as decompress_add adds them), but base is only
    read: on an error out holds a partial result the caller throws away.
    Dense fp32 sections are checked block by block as they are added, one
    pass over the payload (a shared replica state, in gcsim). */
int  gc_payload_decode_onto (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                             const float *base, float *out, gc_err_t *err);

/*  ---- LGC (docs/ALGORITHMS.md, "Learned Gradient Compression in gossip") ---- */

typedef struct gc_lgc_codec_t gc_lgc_codec_t;

/*  The decoder an lgc compressor encodes with, once it has one (after its
    warm-up); NULL before and for every other method. A keyframe carries it
    (gc_payload_attach_codec), and the sender's own decode uses it. */
gc_lgc_codec_t *gc_compressor_codec (const gc_compressor_t *self);

/*  gc_payload_decompress_add and gc_payload_decode_onto with the decoder
    held of the payload's sender (NULL: none). An lgc section is decoded
    only with a codec whose id is the payload's: otherwise -1 with GC_E_CODEC
    (not a malformed payload: the receiver lacks the codec, a gap). */
int  gc_payload_decompress_add_with (const uint8_t *payload, size_t len,
                                     const gc_layout_t *layout, const gc_lgc_codec_t *codec,
                                     float *into, gc_err_t *err);
int  gc_payload_decode_onto_with (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                                  const gc_lgc_codec_t *codec, const float *base, float *out,
                                  gc_err_t *err);
/*  The codec id an lgc payload's header names (its sections need that
    decoder), or 0 for any other payload or a header too short to tell. */
uint64_t gc_payload_codec_id (const uint8_t *payload, size_t len);
/*  The decoder a payload carries (GC_PAYLOAD_FLAG_CODEC), loaded after the
    payload's validation; NULL with err->code 0 when it carries none, NULL
    with err on a malformed payload or blob. */
gc_lgc_codec_t *gc_payload_codec (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                                  gc_err_t *err);

/*  Payload header fields, after the same validation (for logs, counters). */
typedef struct {
    int      method;        /* gc_method_t in gc_payload.h */
    bool     exact;         /* LIEC synchronisation payload */
    bool     lbs;           /* sections cover an LBS window only */
    bool     codec;         /* carries an LGC decoder blob */
    size_t   n_sections;
    uint64_t seed;
} gc_payload_info_t;
int  gc_payload_inspect (const uint8_t *payload, size_t len, const gc_layout_t *layout,
                         gc_payload_info_t *info, gc_err_t *err);

#endif
