/*  The ratio policies' registry, and `fixed`. Adding a policy: its own file
    defining a gc_policy_method_t, one line here (docs/ARCHITECTURE.md,
    "A ratio policy"). */
#include "gc_policy_method.h"

const gc_policy_method_t *const gc_policy_methods [] = {
    &gc_policy_fixed,
    &gc_policy_lazy,
    &gc_policy_accordion,
    &gc_policy_settle,
    &gc_policy_bandwidth,
    &gc_policy_lgreco,
    &gc_policy_phase,
    NULL
};

//  No decide: the compressor keeps its parsed ratio and nothing is computed.
const gc_policy_method_t gc_policy_fixed = {
    .name = "fixed", .usage = "fixed", .help = "the compressor's own ratio every round",
    .example = "fixed", .malformed = "fixed:1",
};
