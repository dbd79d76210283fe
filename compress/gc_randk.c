/*  Random-k: k indices per layer drawn from a seed that travels in the
    payload, so only the values are sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_method.h"
#include "gc_payload.h"
#include "gc_rng.h"

#define S_DEFAULT_RATIO 0.01

uint64_t
gc_randk_round_seed (uint64_t sender_seed, uint64_t round)
{
    return gc_seed_derive (sender_seed, round);
}

void
gc_randk_bitmap (uint64_t index_seed, size_t layer, uint32_t count, uint32_t k,
                 uint64_t *bitmap)
{
    memset (bitmap, 0, ((size_t) count + 63) / 64 * sizeof *bitmap);
    gc_rng_t rng;
    gc_rng_init (&rng, index_seed, layer);
    //  Floyd: for j = count-k .. count-1 draw t in [0, j]; take t, or j when
    //  t is taken already. Every k-subset is equally likely.
    for (uint64_t j = (uint64_t) count - k; j < count; j++) {
        uint64_t t = gc_rng_below (&rng, j + 1);
        if ((bitmap [t >> 6] >> (t & 63)) & 1)
            t = j;
        bitmap [t >> 6] |= 1ull << (t & 63);
    }
}

static int
s_parse (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    self->ratio = S_DEFAULT_RATIO;
    if (gc_compress_opt_number (sp, at, 1e-9, 1.0, false, "ratio", &self->ratio, err) < 0)
        return -1;
    for (; *at < sp->n; (*at)++) {
        const char *t = sp->tok [*at];
        if (!gc_compress_opt_valfmt (self, t)
        &&  !gc_compress_opt_choice (t, "unscaled", "scaled", &self->unscaled))
            return gc_compress_opt_unknown (self, t, err);
    }
    return 0;
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "randk:%g:%s:%s", self->ratio, self->unscaled ? "unscaled" : "scaled",
              gc_compress_valfmt_name (self));
}

//  The receiver draws the same indices from the seed in the header.
static uint64_t
s_header_seed (const gc_compressor_t *self, uint64_t round)
{
    return gc_randk_round_seed (self->seed, round);
}

static int
s_encode (gc_compressor_t *self, const float *x, uint64_t round, uint64_t index_seed,
          size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    (void) round;
    const gc_layout_t *layout = &self->layout;
    size_t vs = gc_valfmt_size (self->valfmt);
    for (size_t l = lo; l < hi; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        uint32_t count = (uint32_t) layer->count;
        uint32_t k = (uint32_t) gc_k_of_ratio (gc_compressor_ratio_at (self, 0), count);
        size_t words = ((size_t) count + 63) / 64;
        if (words > self->bitmap_words) {
            free (self->bitmap);
            self->bitmap = malloc (words * sizeof *self->bitmap);
            self->bitmap_words = self->bitmap ? words : 0;
            if (!self->bitmap)
                return gc_err_set (err, GC_E_NOMEM, "random-k: out of memory");
        }
        if (gc_compressor_fscratch (self, k, err))
            return -1;
        gc_randk_bitmap (index_seed, l, count, k, self->bitmap);
        const float *src = x + layer->offset;
        uint32_t j = 0;
        for (size_t w = 0; w < words; w++)
            for (uint64_t word = self->bitmap [w]; word; word &= word - 1)
                self->fscratch [j++] = src [w * 64 + (size_t) __builtin_ctzll (word)];
        //  Scaled by count/k each kept entry is unbiased: E[q_i] = x_i.
        float scale = self->unscaled ? 1.0f : (float) ((double) count / k);
        uint8_t *p = gc_payload_section (out, layout, l, GC_ENC_RANDK, self->valfmt,
                                         4 + (size_t) k * vs, err);
        if (!p)
            return -1;
        gc_put_u32 (p, k);
        gc_payload_put_values_scaled (p + 4, self->fscratch, k, scale, self->valfmt);
    }
    return 0;
}

const gc_compress_method_t gc_method_randk = {
    .name = "randk", .wire_id = GC_METHOD_RANDK,
    .usage = "randk[:RATIO=0.01][:scaled|unscaled][:fp32|fp16]",
    .help = "RATIO of each layer at random (indices from the header's seed; scaled: unbiased)",
    .example = "randk:0.1:unscaled:fp16", .malformed = "randk:0.1:layer",
    .sections = GC_SECTION_BITS (GC_ENC_RANDK),
    .parse = s_parse, .describe = s_describe, .header_seed = s_header_seed, .encode = s_encode,
};
