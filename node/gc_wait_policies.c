/*  The wait policies' registry: the one place that lists them. Adding one:
    its own file defining a gc_wait_policy_t, one line here
    (docs/ARCHITECTURE.md, "How to add a wait policy"). */
#include <string.h>

#include "gc_wait_policy.h"

const gc_wait_policy_t *const gc_wait_policies [] = {
    &gc_wait_policy_sync,
    &gc_wait_policy_quorum,
    &gc_wait_policy_adaptive,
    NULL
};

const gc_wait_policy_t *
gc_wait_policy_find (const char *keyword)
{
    for (size_t i = 0; gc_wait_policies [i]; i++)
        if (!strcmp (keyword, gc_wait_policies [i]->name))
            return gc_wait_policies [i];
    return NULL;
}

static const char *
s_usage (size_t i)
{
    return gc_wait_policies [i] ? gc_wait_policies [i]->usage : NULL;
}

const char *
gc_wait_known (char *buf, size_t size)
{
    return gc_text_join (buf, size, ", ", s_usage);
}
