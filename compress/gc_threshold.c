/*  Threshold: every entry with |x| above TAU, as sparse sections. */
#include <stdio.h>

#include "gc_compress_method.h"
#include "gc_payload.h"

#define S_DEFAULT_TAU 1e-3

static int
s_parse (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    double v = S_DEFAULT_TAU;
    if (gc_compress_opt_number (sp, at, 0.0, 3.0e38, false, "threshold", &v, err) < 0)
        return -1;
    self->tau = (float) v;
    return gc_compress_opt_valfmts (self, sp, at, err);
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "threshold:%g:%s", (double) self->tau, gc_compress_valfmt_name (self));
}

static int
s_encode (gc_compressor_t *self, const float *x, uint64_t round, uint64_t seed,
          size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    (void) round;
    (void) seed;
    const gc_layout_t *layout = &self->layout;
    size_t base = layout->layers [lo].offset;
    size_t m = layout->layers [hi - 1].offset + layout->layers [hi - 1].count - base;
    if (gc_select_threshold (self->select, x + base, m, self->tau, err))
        return gc_select_input_error (x, base + m, err);
    return gc_select_emit_sections (self, lo, hi, out, err);
}

const gc_compress_method_t gc_method_threshold = {
    .name = "threshold", .alias = "thresh", .wire_id = GC_METHOD_THRESHOLD,
    .usage = "threshold[:TAU=0.001][:fp32|fp16]",
    .help = "every entry with |x| > TAU",
    .example = "threshold:0.5:fp16", .malformed = "threshold:-1",
    .sections = GC_SECTION_BITS (GC_ENC_SPARSE_VARINT) | GC_SECTION_BITS (GC_ENC_SPARSE_BITMAP)
              | GC_SECTION_BITS (GC_ENC_DENSE),
    .checks_finite = true,
    .parse = s_parse, .describe = s_describe, .init = gc_select_init, .encode = s_encode,
};
