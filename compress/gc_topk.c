/*  Top-k and threshold encoders: select, then split the ascending indices
    into one sparse section per layer. */
#include "gc_compress_internal.h"
#include "gc_payload.h"
#include "gc_rng.h"
#include "gc_vec.h"

//  Selection reports positions relative to its slice; name the absolute one.
static int
s_input_error (const float *x, size_t n, gc_err_t *err)
{
    if (err && err->code == GC_COMPRESS_ERR_INPUT) {
        size_t bad = gc_vec_first_nonfinite (x, n);
        if (bad < n)
            return gc_err_set (err, GC_COMPRESS_ERR_INPUT, "input x[%zu] = %g is not finite",
                               bad, (double) x [bad]);
    }
    return -1;
}

//  The selection holds ascending indices relative to the first float of
//  layer lo; emit one section per layer that got any.
static int
s_emit_split (gc_compressor_t *self, size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
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

int
gc_topk_encode (gc_compressor_t *self, const float *x, uint64_t round,
                size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    const gc_layout_t *layout = &self->layout;
    uint64_t seed = gc_seed_derive (self->seed, round);
    if (!self->per_layer) {
        size_t base = layout->layers [lo].offset;
        size_t m = layout->layers [hi - 1].offset + layout->layers [hi - 1].count - base;
        if (gc_select_topk (self->select, x + base, m, gc_k_of_ratio (self->ratio, m),
                            self->exact, seed, err))
            return s_input_error (x, base + m, err);
        return s_emit_split (self, lo, hi, out, err);
    }
    for (size_t l = lo; l < hi; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        if (gc_select_topk (self->select, x + layer->offset, layer->count,
                            gc_k_of_ratio (self->ratio, layer->count), self->exact,
                            gc_seed_derive (seed, l), err))
            return s_input_error (x, layer->offset + layer->count, err);
        if (s_emit_split (self, l, l + 1, out, err))
            return -1;
    }
    return 0;
}

int
gc_threshold_encode (gc_compressor_t *self, const float *x, size_t lo, size_t hi,
                     gc_buf_t *out, gc_err_t *err)
{
    const gc_layout_t *layout = &self->layout;
    size_t base = layout->layers [lo].offset;
    size_t m = layout->layers [hi - 1].offset + layout->layers [hi - 1].count - base;
    if (gc_select_threshold (self->select, x + base, m, self->tau, err))
        return s_input_error (x, base + m, err);
    return s_emit_split (self, lo, hi, out, err);
}
