/*  Shared internals of compress/: the SIMD switch the tests flip to exercise
    the scalar fallbacks (the vector kernels themselves are per level, in
    gc_compress_kern.c), and the compressor object's layout. */
#ifndef GC_COMPRESS_INTERNAL_H
#define GC_COMPRESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_buf.h"
#include "gc_compressor.h"
#include "gc_layout.h"
#include "gc_select.h"

/*  When false, every kernel takes its portable scalar path. Default true. */
extern bool gc_compress_simd;

#if defined (__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#   define GC_LITTLE_ENDIAN 1
#else
#   define GC_LITTLE_ENDIAN 0
#endif

/*  gc_parse reports a bad number as GC_E_PARSE / GC_E_RANGE; to a caller
    of this module a bad number in a method or EC spec is a bad spec. The
    entry points (gc_compressor_new, gc_ec_new) pass their failures through
    this, which re-codes those two to GC_E_SPEC and leaves the rest. */
void gc_compress_spec_error (gc_err_t *err);

typedef struct gc_lbs_t gc_lbs_t;
typedef struct gc_compress_method_t gc_compress_method_t;

struct gc_compressor_t {
    gc_layout_t  layout;
    uint64_t     seed;
    const gc_compress_method_t *desc;   /* the method (gc_compress_method.h) */
    int          method;            /* gc_method_t (wire id; an lbs wrapper: its inner's) */
    char         name [160];
    //  Parameters (what applies to the method; a new method adds its own).
    double       ratio;             /* topk, randk */
    //  A ratio policy's budget for the current round (gc_compressor_set_budget):
    //  round_ratio > 0 replaces ratio; layer_ratio (n_layers, topk) replaces
    //  both, layer by layer. Unset (0, NULL): the parsed ratio, as always.
    double       round_ratio;
    double      *layer_ratio;
    bool         per_layer;         /* topk */
    bool         exact;             /* topk */
    bool         unscaled;          /* randk */
    int          valfmt;            /* gc_valfmt_t for methods that send values */
    float        tau;               /* threshold */
    uint32_t     levels;            /* qsgd */
    uint32_t     bucket;            /* qsgd, sign (0 = layer) */
    uint32_t     rank;              /* powersgd */
    uint32_t     lgc_m;             /* lgc: code size, warm-up rounds, steps a round, rate */
    uint32_t     lgc_warmup;
    uint32_t     lgc_steps;
    float        lgc_lr;
    float        lgc_poison;        /* lgc: > 0 publishes a hostile codec (experiments) */
    //  State.
    gc_select_t *select;            /* topk, threshold */
    float      **qt;                /* powersgd: per matrix layer, rank x cols warm start */
    uint32_t    *qt_rank;           /* powersgd: rank in use per layer (0 = dense) */
    gc_lbs_t    *lbs;               /* lbs: window state and the inner compressor */
    uint64_t    *bitmap;            /* randk: index bitmap scratch */
    size_t       bitmap_words;
    float       *fscratch;          /* powersgd / qsgd scratch */
    size_t       fscratch_len;
    struct gc_lgc_codec_t *lgc;     /* lgc: the peer's codec (trains, then frozen) */
    uint64_t     lgc_calls;         /* lgc: encodes so far (phase one: < lgc_warmup) */
    uint32_t     lgc_announce;      /* lgc: payloads still to carry the decoder */
};

/*  Compress layers [lo, hi) of x into out (reset first), header flags as
    given, through the method's encode; LBS calls it on its inner compressor
    with the window. */
int  gc_compressor_encode_range (gc_compressor_t *self, const float *x, uint64_t round,
                                 size_t lo, size_t hi, uint8_t flags,
                                 gc_buf_t *out, gc_err_t *err);

/*  The caller just sent an exact (LIEC synchronisation) payload instead. */
void gc_compressor_note_exact (gc_compressor_t *self);

/*  Top-k and threshold (gc_topk.c): the selection's ascending indices
    (relative to layer lo's first float) as one sparse section per layer. */
int  gc_select_emit_sections (gc_compressor_t *self, size_t lo, size_t hi, gc_buf_t *out,
                              gc_err_t *err);
/*  The selection scratch both need (their registry init). */
int  gc_select_init (gc_compressor_t *self, gc_err_t *err);
/*  A selection failure's error, naming the absolute entry of x (n floats). */
int  gc_select_input_error (const float *x, size_t n, gc_err_t *err);

/*  Random-k's index set of one layer as a bitmap of count bits
    ((count + 63) / 64 words, cleared here): Floyd's algorithm driven by
    gc_rng (index_seed, layer). Shared by the encoder and the decoder so
    both draw the same indices. */
void gc_randk_bitmap (uint64_t index_seed, size_t layer, uint32_t count, uint32_t k,
                      uint64_t *bitmap);
/*  Seed of a round's random-k indices. */
uint64_t gc_randk_round_seed (uint64_t sender_seed, uint64_t round);

/*  QSGD code width: bits for the 2s+1 signed levels. */
unsigned gc_qsgd_bits (uint32_t levels);
/*  n codes of `bits` bits (1..16) as an LSB-first bit stream of exactly
    ceil(n * bits / 8) bytes, padding zero; and back. */
void gc_bits_pack (uint8_t *dst, const uint32_t *codes, size_t n, unsigned bits);
void gc_bits_unpack (const uint8_t *src, size_t n, unsigned bits, uint32_t *codes);

/*  LBS (gc_lbs.c). */
gc_lbs_t *gc_lbs_new (const gc_layout_t *layout, double budget, uint32_t maxage,
                      double keep, gc_compressor_t *inner, gc_err_t *err);
void gc_lbs_destroy (gc_lbs_t **self_p);
int  gc_lbs_compress (gc_lbs_t *self, const float *x, uint64_t round,
                      gc_buf_t *out, gc_err_t *err);
void gc_lbs_set_defer (gc_lbs_t *self, bool on);
const float *gc_lbs_deferred (const gc_lbs_t *self);
/*  The inner compressor (a ratio policy budgets its ratio). */
gc_compressor_t *gc_lbs_inner (gc_lbs_t *self);
/*  Every layer was just synchronised exactly (LIEC): ages restart. */
void gc_lbs_note_all_sent (gc_lbs_t *self);

/*  The ratio of this round for layer l (the policy's, else the parsed one). */
double gc_compressor_ratio_at (const gc_compressor_t *self, size_t l);

/*  k for a ratio of m entries: round half up, at least 1, at most m. */
size_t gc_k_of_ratio (double ratio, size_t m);
/*  Grow the compressor's float scratch to n floats. */
int  gc_compressor_fscratch (gc_compressor_t *self, size_t n, gc_err_t *err);

#endif
