/*  The error-compensation modes' registry, and the two modes without
    parameters. Adding a mode: its own file defining a gc_ec_mode_t, one
    line here (docs/ARCHITECTURE.md, "How to add an EC mode"). */
#include <string.h>

#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_ec_mode.h"

const gc_ec_mode_t *const gc_ec_modes [] = {
    &gc_ec_mode_none,
    &gc_ec_mode_ef,
    &gc_ec_mode_liec,
    NULL
};

const gc_ec_mode_t *
gc_ec_mode_find (const char *keyword)
{
    for (size_t i = 0; gc_ec_modes [i]; i++)
        if (!strcmp (keyword, gc_ec_modes [i]->name))
            return gc_ec_modes [i];
    return NULL;
}

static const char *
s_usage (size_t i)
{
    return gc_ec_modes [i] ? gc_ec_modes [i]->usage : NULL;
}

const char *
gc_ec_known (char *buf, size_t size)
{
    return gc_text_join (buf, size, ", ", s_usage);
}

int
gc_ec_mode_parse_none (const gc_spec_t *sp, uint64_t *param, gc_err_t *err)
{
    (void) param;
    if (sp->n > 1)
        return gc_err_set (err, GC_COMPRESS_ERR_SPEC, "%s takes no parameter", sp->tok [0]);
    return 0;
}

const gc_ec_mode_t gc_ec_mode_none = {
    .name = "none", .usage = "none", .help = "send C(u) as it is",
    .example = "none", .malformed = "none:1",
    .parse = gc_ec_mode_parse_none,
};

const gc_ec_mode_t gc_ec_mode_ef = {
    .name = "ef", .usage = "ef", .help = "error feedback: send C(u + e), keep e <- u + e - C(u + e)",
    .example = "ef", .malformed = "ef:2",
    .residual = true,
    .parse = gc_ec_mode_parse_none,
};
