/*  libFuzzer target for the payload decoder: byte 0 picks a layout, the
    rest is the payload. A decode must either succeed with finite values or
    fail without writing; decoding onto a base (gc_payload_decode_onto) must
    agree with it; nothing may read or write out of bounds (ASan). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_layouts.h"
#include "gc_compressor.h"

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
    int rc = gc_payload_decompress_add (payload, size - 1, &layout, s_into, &err);
    gc_payload_info_t info;
    int rc_inspect = gc_payload_inspect (payload, size - 1, &layout, &info, NULL);
    //  The out-of-place decoder agrees, float for float, and only reads its base.
    int rc_onto = gc_payload_decode_onto (payload, size - 1, &layout, s_before, s_onto, NULL);
    free (payload);
    if (rc != rc_inspect || rc != rc_onto)
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
    else if (memcmp (s_into, s_before, n * sizeof (float)) || err.code < GC_E_PAYLOAD_FIRST || err.code > GC_E_PAYLOAD_LAST)
        abort ();
    return 0;
}
