/*  LIEC: error feedback with a periodic exact synchronisation (every round
    with round % H == H - 1 sends u + e dense fp32 and zeroes e). */
#include <stdio.h>

#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_ec_mode.h"

static int
s_parse (const gc_spec_t *sp, uint64_t *param, gc_err_t *err)
{
    *param = GC_EC_DEFAULT_H;
    if (sp->n > 2)
        return gc_err_set (err, GC_COMPRESS_ERR_SPEC, "liec takes one parameter, H");
    long h;
    if (sp->n == 2) {
        if (gc_parse_long (sp->tok [1], 1, 1000000, &h, "liec sync period H", err))
            return -1;
        *param = (uint64_t) h;
    }
    return 0;
}

static void
s_describe (uint64_t h, char *buf, size_t size)
{
    snprintf (buf, size, "liec:%llu", (unsigned long long) h);
}

static bool
s_exact_round (uint64_t h, uint64_t round)
{
    return round % h == h - 1;
}

const gc_ec_mode_t gc_ec_mode_liec = {
    .name = "liec", .usage = "liec[:H=8]",
    .help = "error feedback, and every H-th round an exact dense sync that zeroes e",
    .example = "liec:100", .malformed = "liec:0",
    .residual = true,
    .parse = s_parse, .describe = s_describe, .exact_round = s_exact_round,
};
