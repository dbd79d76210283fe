/*  The JSON reader on arbitrary bytes (metrics files and control replies
    come from peers): no crash, no leak, no read past the length; what
    parses, also parses as a metrics line without trouble. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gc_json.h"
#include "gc_peerstat.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    //  an exact-size copy, so that reading past size is caught
    char *text = malloc (size ? size : 1);
    if (!text)
        return 0;
    memcpy (text, data, size);
    gc_json_t *j = gc_json_parse (text, size, NULL);
    if (j) {
        (void) gc_json_num (j, "round", 0);
        (void) gc_json_str (j, "id", NULL);
        gc_json_destroy (&j);
    }
    static gc_peerstat_t *st;
    if (!st)
        st = gc_peerstat_new ("/nonexistent");
    if (st)
        gc_peerstat_feed (st, text, size);
    free (text);
    return 0;
}
