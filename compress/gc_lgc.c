/*  LGC, Learned Gradient Compression in gossip: top-k (global, as topk)
    whose values travel as an autoencoder's codes (gc_lgc_codec.c).

    Phase one, the first `warmup` rounds this compressor encodes: plain
    sparse sections (the values as fp32), while the codec trains on the
    magnitudes of the values it selects, the peer's own only. Phase two: the
    codec is frozen, the header seed names it (its id), each layer is one
    lgc section (indices, the codec's codes of the magnitudes, sign bits), and
    the first S_ANNOUNCE payloads carry the decoder (GC_PAYLOAD_FLAG_CODEC);
    so do the peer's keyframes (the engine attaches gc_compressor_codec).
    A receiver decodes a peer's lgc sections only with that peer's decoder
    of that id (docs/ALGORITHMS.md). poison=B (Byzantine experiments only)
    publishes a hostile decoder instead (gc_lgc_codec_poison). */
#include <math.h>
#include <stdio.h>

#include "gc_compress_method.h"
#include "gc_lgc_codec.h"
#include "gc_payload.h"
#include "gc_rng.h"

#define S_DEFAULT_RATIO  0.01
#define S_DEFAULT_M      8
#define S_DEFAULT_WARMUP 100
#define S_DEFAULT_STEPS  2
#define S_DEFAULT_LR     0.003
//  Payloads after the switch that carry the decoder: a receiver that lost
//  them all finds an unknown codec, counts a gap and gets the decoder with
//  the keyframe it then asks for.
#define S_ANNOUNCE       3

static int
s_parse (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    self->ratio = S_DEFAULT_RATIO;
    double m = S_DEFAULT_M, warmup = S_DEFAULT_WARMUP, steps = S_DEFAULT_STEPS, lr = S_DEFAULT_LR;
    double poison = 0;
    if (gc_compress_opt_number (sp, at, 1e-9, 1.0, false, "ratio", &self->ratio, err) < 0)
        return -1;
    if (gc_compress_opt_number (sp, at, 1, GC_LGC_MAX_CODE, true, "code size M", &m, err) < 0)
        return -1;
    for (; *at < sp->n; (*at)++) {
        const char *t = sp->tok [*at];
        bool matched = false;
        if (gc_compress_opt_keyval (t, "warmup", 0, 1e9, &warmup, &matched, err)
        ||  (!matched && gc_compress_opt_keyval (t, "steps", 0, 1000, &steps, &matched, err))
        ||  (!matched && gc_compress_opt_keyval (t, "lr", 1e-9, 1.0, &lr, &matched, err))
        ||  (!matched && gc_compress_opt_keyval (t, "poison", 0, GC_LGC_MAX_WEIGHT, &poison,
                                                 &matched, err)))
            return -1;
        if (!matched)
            return gc_compress_opt_unknown (self, t, err);
    }
    if (warmup != (double) (uint32_t) warmup || steps != (double) (uint32_t) steps)
        return gc_err_set (err, GC_E_SPEC, "warmup and steps must be integers");
    self->lgc_m = (uint32_t) m;
    self->lgc_warmup = (uint32_t) warmup;
    self->lgc_steps = (uint32_t) steps;
    self->lgc_lr = (float) lr;
    self->lgc_poison = (float) poison;
    return 0;
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    int n = snprintf (buf, size, "lgc:%g:%u:warmup=%u:steps=%u:lr=%g", self->ratio, self->lgc_m,
                      self->lgc_warmup, self->lgc_steps, (double) self->lgc_lr);
    if (self->lgc_poison > 0 && n >= 0 && (size_t) n < size)
        snprintf (buf + n, size - (size_t) n, ":poison=%g", (double) self->lgc_poison);
}

static void
s_poison (gc_compressor_t *self)
{
    if (self->lgc_poison > 0)
        gc_lgc_codec_poison (self->lgc, self->lgc_poison, self->seed);
}

static int
s_init (gc_compressor_t *self, gc_err_t *err)
{
    if (gc_select_init (self, err))
        return -1;
    //  The codec's start is the peer's own (its seed): peers' codecs differ.
    self->lgc = gc_lgc_codec_new (self->lgc_m, gc_seed_derive (self->seed, 0x6c6763), err);
    if (!self->lgc)
        return -1;
    if (self->lgc_warmup == 0)
        s_poison (self);
    return 0;
}

static void
s_fini (gc_compressor_t *self)
{
    gc_lgc_codec_destroy (&self->lgc);
}

static bool
s_learning (const gc_compressor_t *self)
{
    return self->lgc_calls < self->lgc_warmup;
}

//  Phase two's header seed is the codec id; phase one's is 0.
static uint64_t
s_header_seed (const gc_compressor_t *self, uint64_t round)
{
    (void) round;
    return s_learning (self) ? 0 : gc_lgc_codec_id (self->lgc);
}

//  One layer's selected entries: phase one trains on them and sends them
//  plain, phase two sends their codes.
static int
s_layer (gc_compressor_t *self, size_t l, const uint32_t *idx, const float *val, size_t nnz,
         uint32_t base, bool learning, gc_buf_t *out, gc_err_t *err)
{
    if (!learning)
        return gc_payload_lgc_section (out, &self->layout, l, idx, val, nnz, base, self->lgc, err);
    //  The codec learns the magnitudes (the signs travel as bits).
    if (gc_compressor_fscratch (self, nnz, err))
        return -1;
    for (size_t i = 0; i < nnz; i++)
        self->fscratch [i] = fabsf (val [i]);
    for (uint32_t s = 0; s < self->lgc_steps; s++)
        gc_lgc_codec_train (self->lgc, self->fscratch, nnz, self->lgc_lr);
    return gc_payload_sparse_section (out, &self->layout, l, idx, val, nnz, base,
                                      GC_VAL_FP32, err);
}

static int
s_encode (gc_compressor_t *self, const float *x, uint64_t round, uint64_t header_seed,
          size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    (void) header_seed;
    bool learning = s_learning (self);
    if (self->lgc_calls == self->lgc_warmup)
        self->lgc_announce = S_ANNOUNCE;
    self->lgc_calls++;
    //  A Byzantine experiment publishes a hostile codec after phase one
    //  (poisoned now: the next header names the codec by its id).
    if (self->lgc_calls == self->lgc_warmup)
        s_poison (self);
    if (!learning && self->lgc_announce > 0) {
        if (gc_payload_attach_codec (out, self->lgc, err))
            return -1;
        self->lgc_announce--;
    }
    const gc_layout_t *layout = &self->layout;
    size_t base = layout->layers [lo].offset;
    size_t m = layout->layers [hi - 1].offset + layout->layers [hi - 1].count - base;
    if (gc_select_topk (self->select, x + base, m, gc_k_of_ratio (gc_compressor_ratio_at (self, 0), m),
                        self->exact, gc_seed_derive (self->seed, round), err))
        return gc_select_input_error (x, base + m, err);
    const gc_select_t *sel = self->select;
    size_t j = 0;
    for (size_t l = lo; l < hi && j < sel->count; l++) {
        size_t end = layout->layers [l].offset + layout->layers [l].count - base;
        size_t j0 = j;
        while (j < sel->count && sel->idx [j] < end)
            j++;
        if (j > j0 && s_layer (self, l, sel->idx + j0, sel->val + j0, j - j0,
                               (uint32_t) (layout->layers [l].offset - base), learning, out, err))
            return -1;
    }
    return 0;
}

gc_lgc_codec_t *
gc_compressor_codec (const gc_compressor_t *self)
{
    if (self->lbs)
        return gc_compressor_codec (gc_lbs_inner (self->lbs));
    return self->lgc && self->lgc_calls > self->lgc_warmup ? self->lgc : NULL;
}

const gc_compress_method_t gc_method_lgc = {
    .name = "lgc", .wire_id = GC_METHOD_LGC,
    .usage = "lgc[:RATIO=0.01][:M=8][:warmup=100][:steps=2][:lr=0.003][:poison=0]",
    .help = "top-k whose values travel as M learned fp16 codes per 64 (a codec trained for warmup rounds)",
    .example = "lgc:0.05:4:warmup=5:steps=1", .malformed = "lgc:0.05:99",
    .sections = GC_SECTION_BITS (GC_ENC_SPARSE_VARINT) | GC_SECTION_BITS (GC_ENC_SPARSE_BITMAP)
              | GC_SECTION_BITS (GC_ENC_DENSE) | GC_SECTION_BIT (GC_ENC_LGC, GC_VAL_FP16),
    .checks_finite = true,
    .parse = s_parse, .describe = s_describe, .init = s_init, .fini = s_fini,
    .header_seed = s_header_seed, .encode = s_encode,
};
