/*  A status file may be damaged or written by someone else: the reader
    must refuse or read any bytes without reading past them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gc_status.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *copy = malloc (size ? size : 1);      /* exact size: overruns are caught */
    if (!copy)
        return 0;
    memcpy (copy, data, size);
    gc_status_t st;
    if (gc_status_parse (copy, size, &st, NULL) == 0) {
        if (memchr (st.state, 0, sizeof st.state) == NULL || !isfinite (st.time))
            abort ();
    }
    free (copy);
    return 0;
}
