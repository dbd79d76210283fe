#include "gc_role.h"

#include <string.h>

//  One entry per attack kind: adding a role is a file with its ops and a
//  line here (and its name in gc_attack.c's parser).
static const gc_role_ops_t *const s_roles [] = {
    [GC_ATTACK_NONE]       = &gc_role_honest,
    [GC_ATTACK_SIGNFLIP]   = &gc_role_model,
    [GC_ATTACK_NOISE]      = &gc_role_model,
    [GC_ATTACK_ALIE]       = &gc_role_model,
    [GC_ATTACK_IPM]        = &gc_role_model,
    [GC_ATTACK_LABELFLIP]  = &gc_role_labelflip,
    [GC_ATTACK_DISSENSUS]  = &gc_role_model,
    [GC_ATTACK_MIMIC]      = &gc_role_model,
    [GC_ATTACK_EQUIVOCATE] = &gc_role_model,
    [GC_ATTACK_REPLAY]     = &gc_role_replay,
    [GC_ATTACK_UNTRUSTED]  = &gc_role_untrusted,
    [GC_ATTACK_MALFORMED]  = &gc_role_malformed,
    [GC_ATTACK_FLOOD]      = &gc_role_flood,
    [GC_ATTACK_NAN]        = &gc_role_nan,
    [GC_ATTACK_SILENT]     = &gc_role_silent,
    [GC_ATTACK_MINMAX]     = &gc_role_model,
    [GC_ATTACK_MINSUM]     = &gc_role_model,
    [GC_ATTACK_FORK]       = &gc_role_fork,
    [GC_ATTACK_STEALTH]    = &gc_role_model,
};

int
gc_role_select (const char *attack, gc_role_t *role, gc_err_t *err)
{
    memset (role, 0, sizeof *role);
    if (gc_attack_parse (attack, &role->attack, err))
        return gc_err_prefix (err, "role/attack: ");
    size_t kind = (size_t) role->attack.kind;
    if (kind >= sizeof s_roles / sizeof s_roles [0] || !s_roles [kind])
        return gc_err_set (err, GC_E_SPEC, "role/attack: %s has no role", gc_attack_name (role->attack.kind));
    role->ops = s_roles [kind];
    return 0;
}

void
gc_role_destroy (gc_role_t *role)
{
    if (role->ops && role->ops->destroy && role->state)
        role->ops->destroy (role);
    role->state = NULL;
    role->ops = NULL;
}
