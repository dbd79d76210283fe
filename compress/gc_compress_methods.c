/*  The compression methods' registry: the one place that lists them.
    Adding a method: its own file defining a gc_compress_method_t, one line
    here (docs/ARCHITECTURE.md, "How to add a compressor"). */
#include <string.h>

#include "gc_compress_method.h"
#include "gc_payload.h"

const gc_compress_method_t *const gc_compress_methods [] = {
    &gc_method_none,
    &gc_method_fp16,
    &gc_method_topk,
    &gc_method_randk,
    &gc_method_threshold,
    &gc_method_qsgd,
    &gc_method_sign,
    &gc_method_powersgd,
    &gc_method_lgc,
    &gc_method_lbs,
    NULL
};

const gc_compress_method_t *
gc_compress_method_find (const char *keyword)
{
    for (size_t i = 0; gc_compress_methods [i]; i++) {
        const gc_compress_method_t *m = gc_compress_methods [i];
        if (!strcmp (keyword, m->name) || (m->alias && !strcmp (keyword, m->alias)))
            return m;
    }
    return NULL;
}

const gc_compress_method_t *
gc_compress_method_by_id (int wire_id)
{
    for (size_t i = 0; wire_id >= 0 && gc_compress_methods [i]; i++)
        if (gc_compress_methods [i]->wire_id == wire_id)
            return gc_compress_methods [i];
    return NULL;
}

const char *
gc_method_name (int method)
{
    const gc_compress_method_t *m = gc_compress_method_by_id (method);
    return m ? m->name : "unknown";
}

static const char *
s_name (size_t i)
{
    return gc_compress_methods [i] ? gc_compress_methods [i]->name : NULL;
}

const char *
gc_compressor_known (char *buf, size_t size)
{
    return gc_text_join (buf, size, ", ", s_name);
}

const char *
gc_compressor_usage (char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf [0] = 0;
    for (size_t i = 0; gc_compress_methods [i]; i++)
        gc_text_add (buf, size, &used, "  %-52s %s\n", gc_compress_methods [i]->usage,
                     gc_compress_methods [i]->help);
    return buf;
}
