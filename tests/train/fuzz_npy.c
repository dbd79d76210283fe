/*  The .npy reader on arbitrary bytes (people's files): no crash, no leak,
    no read past the length; what parses has as many values as its shape. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gc_npy.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    //  an exact-size copy, so that reading past size is caught
    uint8_t *copy = malloc (size ? size : 1);
    if (!copy)
        return 0;
    memcpy (copy, data, size);
    gc_npy_t a;
    if (gc_npy_parse (copy, size, "fuzz.npy", &a, NULL) == 0) {
        size_t count = 1;
        for (int i = 0; i < a.ndim; i++)
            count *= a.shape [i];
        if (count != a.count || !a.data)
            abort ();
        gc_npy_free (&a);
    }
    free (copy);
    return 0;
}
