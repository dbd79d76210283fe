/*  The robust rules' and pre-aggregations' registry: the one place that
    lists them. Adding one: its own file defining a gc_robust_rule_t (or
    gc_robust_pre_t), one line here (docs/ARCHITECTURE.md, "How to add a
    robust rule"). */
#include <string.h>

#include "gc_robust_rule.h"

const gc_robust_rule_t *const gc_robust_rules [] = {
    &gc_robust_rule_mean,
    &gc_robust_rule_cwmed,
    &gc_robust_rule_cwtm,
    &gc_robust_rule_krum,
    &gc_robust_rule_mkrum,
    &gc_robust_rule_bulyan,
    &gc_robust_rule_gm,
    &gc_robust_rule_cclip,
    &gc_robust_rule_scclip,
    &gc_robust_rule_guard,
    NULL
};

const gc_robust_pre_t *const gc_robust_pres [] = {
    &gc_robust_pre_nnm,
    &gc_robust_pre_bucket,
    NULL
};

const gc_robust_rule_t *
gc_robust_rule_find (const char *keyword)
{
    for (size_t i = 0; gc_robust_rules [i]; i++)
        if (!strcmp (keyword, gc_robust_rules [i]->name))
            return gc_robust_rules [i];
    return NULL;
}

const gc_robust_pre_t *
gc_robust_pre_find (const char *keyword)
{
    for (size_t i = 0; gc_robust_pres [i]; i++)
        if (!strcmp (keyword, gc_robust_pres [i]->name))
            return gc_robust_pres [i];
    return NULL;
}

static const char *
s_rule_usage (size_t i)
{
    return gc_robust_rules [i] ? gc_robust_rules [i]->usage : NULL;
}

static const char *
s_pre_usage (size_t i)
{
    return gc_robust_pres [i] ? gc_robust_pres [i]->usage : NULL;
}

const char *
gc_robust_known (char *buf, size_t size)
{
    return gc_text_join (buf, size, ", ", s_rule_usage);
}

const char *
gc_robust_pres_known (char *buf, size_t size)
{
    return gc_text_join (buf, size, " or ", s_pre_usage);
}
