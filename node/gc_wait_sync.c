/*  sync: every in-neighbour, or the timeout. */
#include "gc_wait_policy.h"

static int
s_parse (gc_wait_t *self, const gc_spec_t *sp, gc_err_t *err)
{
    (void) self;
    return sp->n == 1 ? 0 : gc_err_set (err, 1, "sync takes no parameter");
}

static size_t
s_target (const gc_wait_t *self)
{
    return self->n;
}

const gc_wait_policy_t gc_wait_policy_sync = {
    .name = "sync", .usage = "sync", .help = "all in-neighbours, or the timeout",
    .example = "sync", .malformed = "sync:2",
    .parse = s_parse, .target = s_target,
};
