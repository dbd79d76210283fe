/*  gc_wait — the object and the deadline; the policies (gc_wait_policies.c
    lists them) say how many fresh neighbours end a round. */
#include "gc_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_parse.h"
#include "gc_wait_policy.h"

gc_wait_t *
gc_wait_new (const char *spec, size_t n, size_t min_fresh, int64_t timeout_ns, gc_err_t *err)
{
    gc_spec_t s;
    if (gc_spec_split (&s, spec, ':', "wait policy", err))
        return NULL;
    const gc_wait_policy_t *policy = gc_wait_policy_find (s.tok [0]);
    if (!policy) {
        char known [128];
        gc_err_set (err, 1, "wait policy '%s': unknown policy '%s' (known: %s)", spec, s.tok [0],
                    gc_wait_known (known, sizeof known));
        return NULL;
    }
    gc_wait_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, 1, "wait policy: out of memory");
        return NULL;
    }
    self->policy = policy;
    self->n = n;
    self->min_fresh = min_fresh < n ? min_fresh : n;
    self->timeout_ns = timeout_ns;
    if (policy->parse (self, &s, err)) {
        gc_err_prefix (err, "wait policy '%s': ", spec);
        gc_wait_destroy (&self);
        return NULL;
    }
    snprintf (self->name, sizeof self->name, "%s", spec);
    return self;
}

void
gc_wait_destroy (gc_wait_t **self_p)
{
    gc_wait_t *self = *self_p;
    if (!self)
        return;
    free (self->estimate);
    free (self->scratch);
    free (self);
    *self_p = NULL;
}

void
gc_wait_begin (gc_wait_t *self, int64_t now)
{
    self->begin = now;
}

size_t
gc_wait_target (const gc_wait_t *self)
{
    return self->policy->target (self);
}

bool
gc_wait_ready (const gc_wait_t *self, const bool *fresh, int64_t now)
{
    if (now >= gc_wait_deadline (self))
        return true;
    size_t count = 0;
    for (size_t j = 0; j < self->n; j++)
        count += fresh [j];
    return count >= gc_wait_target (self);
}

int64_t
gc_wait_deadline (const gc_wait_t *self)
{
    return self->begin + self->timeout_ns;
}

void
gc_wait_end (gc_wait_t *self, const int64_t *arrival, int64_t now)
{
    if (self->policy->end)
        self->policy->end (self, arrival, now);
}

double
gc_wait_estimate (const gc_wait_t *self, size_t j)
{
    return self->estimate && j < self->n ? self->estimate [j] : 0.0;
}

const char *
gc_wait_name (const gc_wait_t *self)
{
    return self->name;
}
