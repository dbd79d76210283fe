/*  Dense methods: every layer sent whole, as fp32 ("none") or fp16. */
#include <stdio.h>

#include "gc_compress_method.h"
#include "gc_payload.h"

//  No options: any token is an unknown one.
static int
s_parse (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    return *at < sp->n ? gc_compress_opt_unknown (self, sp->tok [*at], err) : 0;
}

static int
s_parse_fp16 (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err)
{
    self->valfmt = GC_VAL_FP16;
    return s_parse (self, sp, at, err);
}

static void
s_describe (const gc_compressor_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "%s", self->desc->name);
}

static int
s_encode (gc_compressor_t *self, const float *x, uint64_t round, uint64_t seed,
          size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err)
{
    (void) round;
    (void) seed;
    for (size_t l = lo; l < hi; l++)
        if (gc_payload_dense_section (out, &self->layout, l, x, self->valfmt, err))
            return -1;
    return 0;
}

const gc_compress_method_t gc_method_none = {
    .name = "none", .alias = "fp32", .wire_id = GC_METHOD_NONE,
    .usage = "none", .help = "dense fp32 (lossless)",
    .example = "none", .malformed = "none:1",
    .sections = GC_SECTION_BIT (GC_ENC_DENSE, GC_VAL_FP32),
    .parse = s_parse, .describe = s_describe, .encode = s_encode,
};

const gc_compress_method_t gc_method_fp16 = {
    .name = "fp16", .wire_id = GC_METHOD_FP16,
    .usage = "fp16", .help = "dense fp16 (saturating at +-65504)",
    .example = "fp16", .malformed = "fp16:fp32",
    .sections = GC_SECTION_BIT (GC_ENC_DENSE, GC_VAL_FP16),
    .parse = s_parse_fp16, .describe = s_describe, .encode = s_encode,
};
