/*  libFuzzer target for the encoders: byte 0 picks a layout, byte 1 a
    method, the rest are the input floats (non-finite ones zeroed, missing
    ones zero). Every compressor must produce a payload that its own
    decoder accepts and that decodes to finite values, also through liec
    (whose sync round sends input + residual, which alone may overflow). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_layouts.h"
#include "gc_compressor.h"
#include "gc_ec.h"

static const char *s_specs [] = {
    "none", "fp16", "topk:0.05", "topk:0.3:layer:exact:fp16", "topk:0.01:sampled", "randk:0.1",
    "randk:0.5:unscaled:fp16", "threshold:0.5", "qsgd:16:bucket=64", "qsgd:1:bucket=3",
    "sign:bucket=5", "sign", "powersgd:2", "powersgd:3:fp16", "lbs:topk:0.1", "lbs:budget=0.1:qsgd:4",
};
#define S_NSPECS (sizeof s_specs / sizeof s_specs [0])

static float s_x [FUZZ_MAX_PARAMS], s_q [FUZZ_MAX_PARAMS];

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    gc_layout_t layout;
    fuzz_layout (data [0], &layout);
    const char *spec = s_specs [data [1] % S_NSPECS];
    bool ef = data [1] >= 128;
    size_t n = layout.n_params;
    memset (s_x, 0, n * sizeof *s_x);
    size_t nf = (size - 2) / 4 < n ? (size - 2) / 4 : n;
    memcpy (s_x, data + 2, nf * 4);
    for (size_t i = 0; i < nf; i++)
        if (!isfinite (s_x [i]))
            s_x [i] = 0.0f;
    gc_compressor_t *comp = gc_compressor_new (spec, &layout, data [0], NULL);
    gc_ec_t *ec = gc_ec_new (ef ? "liec:2" : "none", comp, NULL);
    if (!comp || !ec)
        abort ();
    gc_buf_t out;
    gc_buf_init (&out);
    for (uint64_t round = 0; round < 2; round++) {
        gc_err_t err;
        if (gc_ec_step (ec, s_x, round, &out, s_q, NULL, &err)) {
            //  Only input + residual overflowing (inputs near FLT_MAX,
            //  fp16 saturation) may fail, never a payload check.
            if (err.code != GC_E_NONFINITE)
                abort ();
            break;
        }
        for (size_t i = 0; i < n; i++)
            if (!isfinite (s_q [i]))
                abort ();
    }
    gc_buf_free (&out);
    gc_ec_destroy (&ec);
    gc_compressor_destroy (&comp);
    return 0;
}
