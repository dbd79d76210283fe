/*  libFuzzer target for the payload decoder: byte 0 picks a layout, the
    rest is the payload. A decode must either succeed with finite values or
    fail without writing; decoding onto a base (gc_payload_decode_onto) must
    agree with it; nothing may read or write out of bounds (ASan). An LGC
    decoder the payload carries is loaded and used for its lgc sections
    (what a receiver does), so mutations of codes, scales and indices reach
    the decoder; a changed blob names another codec (GC_E_CODEC). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_layouts.h"
#include "gc_compressor.h"
#include "gc_lgc_codec.h"

static float s_into [FUZZ_MAX_PARAMS];
static float s_before [FUZZ_MAX_PARAMS];
static float s_onto [FUZZ_MAX_PARAMS];

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    gc_layout_t layout;
    fuzz_layout (data [0], &layout);
    size_t n = layout.n_params;
    for (size_t i = 0; i < n; i++)
        s_before [i] = s_into [i] = (float) (i % 13) - 6.0f;
    //  The payload in its own allocation, so ASan sees any read past it.
    uint8_t *payload = malloc (size - 1 ? size - 1 : 1);
    memcpy (payload, data + 1, size - 1);
    gc_err_t err;
    gc_lgc_codec_t *codec = gc_payload_codec (payload, size - 1, &layout, NULL);
    int rc = gc_payload_decompress_add_with (payload, size - 1, &layout, codec, s_into, &err);
    gc_payload_info_t info;
    int rc_inspect = gc_payload_inspect (payload, size - 1, &layout, &info, NULL);
    //  The out-of-place decoder agrees, float for float, and only reads its base.
    int rc_onto = gc_payload_decode_onto_with (payload, size - 1, &layout, codec, s_before, s_onto, NULL);
    gc_lgc_codec_destroy (&codec);
    free (payload);
    //  Inspection needs no codec: a missing one fails the decode alone.
    bool codec_missing = rc && err.code == GC_E_CODEC;
    if ((!codec_missing && rc != rc_inspect) || rc != rc_onto)
        abort ();
    for (size_t i = 0; i < n; i++)
        if (s_before [i] != (float) (i % 13) - 6.0f)
            abort ();
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            if (!isfinite (s_into [i]))
                abort ();
        if (memcmp (s_into, s_onto, n * sizeof (float)))
            abort ();
    }
    else if (memcmp (s_into, s_before, n * sizeof (float))
         || (!codec_missing && (err.code < GC_E_PAYLOAD_FIRST || err.code > GC_E_PAYLOAD_LAST)))
        abort ();
    return 0;
}
