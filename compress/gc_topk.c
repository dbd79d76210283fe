/*  Top-k: select the k largest magnitudes (of the whole vector or of each
    layer), then split the ascending indices into one sparse section per
    layer. The section writer is shared with threshold (gc_threshold.c). */
#include <stdio.h>

#include "gc_compress_method.h"
#include "gc_payload.h"
#include "gc_rng.h"
#include "gc_vec.h"

#define S_DEFAULT_RATIO 0.01

//  Selection reports positions relative to its slice; name the absolute one.
int
gc_select_input_error (const float *x, size_t n, gc_err_t *err)
{
    if (err && err->code == GC_E_NONFINITE) {
        size_t bad = gc_vec_first_nonfinite (x, n);
        if (bad < n)
            return gc_err_set (err, GC_E_NONFINITE, "input x[%zu] = %g is not finite",
                               bad, (double) x [bad]);
    }
    return -1;
}

//  The selection holds ascending indices relative to the first float of
//  layer lo; emit one section per layer that got any.
int
gc_select_emit_sections (gc_compressor_t *self, size_t lo, size_t hi, gc_buf_t *out,
                         gc_err_t *err)
{
    const gc_layout_t *layout = &self->layout;
    const gc_select_t *sel = self->select;
    size_t base = layout->layers [lo].offset;
    //  One reservation for the worst case (5-byte varints), so sections do
    //  not reallocate the buffer one after another.
    size_t vs = gc_valfmt_size (self->valfmt);
    if (gc_buf_reserve (out, (hi - lo) * (GC_PAYLOAD_SECTION_SIZE + 8) + sel->count * (5 + vs), err))
        return -1;
    size_t j = 0;
    for (size_t l = lo; l < hi && j < sel->count; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        size_t end = layer->offset + layer->count - base;
        size_t j0 = j;
        while (j < sel->count && sel->idx [j] < end)
            j++;
        if (j > j0 && gc_payload_sparse_section (out, layout, l, sel->idx + j0, sel->val + j0,
                                                 j - j0, (uint32_t) (layer->offset - base),
                                                 self->valfmt, err))
            return -1;
    }
    return 0;
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
        &&  !gc_compress_opt_choice (t, "layer", "global", &self->per_layer)
        &&  !gc_compress_opt_choice (t, "exact", "sampled", &self->exact))
            return gc_compress_opt_unknown (self, t, err);
    }
    return 0;
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "topk:%g:%s:%s:%s", self->ratio, self->per_layer ? "layer" : "global",
              self->exact ? "exact" : "sampled", gc_compress_valfmt_name (self));
}

int
gc_select_init (gc_compressor_t *self, gc_err_t *err)
{
    self->select = gc_select_new ();
    if (!self->select)
        return gc_err_set (err, GC_E_NOMEM, "compressor: out of memory");
    return 0;
}

static int
s_encode (gc_compressor_t *self, const float *x, uint64_t round, uint64_t header_seed,
          size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    (void) header_seed;
    const gc_layout_t *layout = &self->layout;
    uint64_t seed = gc_seed_derive (self->seed, round);
    if (!self->per_layer && !self->layer_ratio) {
        size_t base = layout->layers [lo].offset;
        size_t m = layout->layers [hi - 1].offset + layout->layers [hi - 1].count - base;
        if (gc_select_topk (self->select, x + base, m, gc_k_of_ratio (gc_compressor_ratio_at (self, 0), m),
                            self->exact, seed, err))
            return gc_select_input_error (x, base + m, err);
        return gc_select_emit_sections (self, lo, hi, out, err);
    }
    for (size_t l = lo; l < hi; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        if (gc_select_topk (self->select, x + layer->offset, layer->count,
                            gc_k_of_ratio (gc_compressor_ratio_at (self, l), layer->count), self->exact,
                            gc_seed_derive (seed, l), err))
            return gc_select_input_error (x, layer->offset + layer->count, err);
        if (gc_select_emit_sections (self, l, l + 1, out, err))
            return -1;
    }
    return 0;
}

const gc_compress_method_t gc_method_topk = {
    .name = "topk", .wire_id = GC_METHOD_TOPK,
    .usage = "topk[:RATIO=0.01][:global|layer][:sampled|exact][:fp32|fp16]",
    .help = "the largest RATIO of magnitudes, of the vector or of each layer",
    .example = "topk:0.05:layer:exact:fp16", .malformed = "topk:0.1:fast",
    .sections = GC_SECTION_BITS (GC_ENC_SPARSE_VARINT) | GC_SECTION_BITS (GC_ENC_SPARSE_BITMAP)
              | GC_SECTION_BITS (GC_ENC_DENSE),
    .checks_finite = true,
    .parse = s_parse, .describe = s_describe, .init = gc_select_init, .encode = s_encode,
};
