/*  quorum:Q: the fastest Q in-neighbours (at most all of them), or the timeout. */
#include "gc_wait_policy.h"

static int
s_parse (gc_wait_t *self, const gc_spec_t *sp, gc_err_t *err)
{
    if (sp->n != 2)
        return gc_err_set (err, 1, "quorum takes one parameter, Q");
    long q;
    if (gc_parse_long (sp->tok [1], 1, 1 << 20, &q, "wait policy quorum size", err))
        return -1;
    self->quorum = (size_t) q < self->n ? (size_t) q : self->n;
    return 0;
}

static size_t
s_target (const gc_wait_t *self)
{
    return self->quorum;
}

const gc_wait_policy_t gc_wait_policy_quorum = {
    .name = "quorum", .usage = "quorum:Q", .help = "the fastest Q in-neighbours, or the timeout",
    .example = "quorum:3", .malformed = "quorum:0",
    .parse = s_parse, .target = s_target,
};
