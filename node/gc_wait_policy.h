/*  gc_wait_policy — one wait policy as gc_wait sees it: its keyword, parser,
    how many fresh neighbours it waits for, and what it learns at the end of
    a round. Each policy defines one const gc_wait_policy_t in its own file
    (gc_wait_sync.c, ...); gc_wait_policies.c lists them, the only place that
    does. docs/ARCHITECTURE.md says how to add one. */
#ifndef GC_WAIT_POLICY_H
#define GC_WAIT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_parse.h"
#include "gc_wait.h"

typedef struct gc_wait_policy_t gc_wait_policy_t;

/*  The wait object; the policies read and keep their state in it. */
struct gc_wait_t {
    const gc_wait_policy_t *policy;
    size_t   n;                 /* in-neighbours */
    size_t   quorum;            /* quorum: Q; adaptive: the current target */
    size_t   min_fresh;
    int64_t  timeout_ns;
    int64_t  begin;
    double  *estimate;          /* adaptive: delay estimate per neighbour (ns) */
    double  *scratch;
    char     name [32];
};

struct gc_wait_policy_t {
    const char *name;           /* keyword, sp->tok [0] */
    const char *usage;          /* "quorum:Q", for help texts and errors */
    const char *help;           /* one line */
    const char *example;        /* a spec it accepts (the registry test parses it) */
    const char *malformed;      /* one it rejects, with an error naming the spec */
    /*  The tokens after the keyword, and the policy's state (n, min_fresh and
        timeout_ns are set); the message need not name the spec. */
    int    (*parse) (gc_wait_t *self, const gc_spec_t *sp, gc_err_t *err);
    /*  How many fresh neighbours end the wait now. */
    size_t (*target) (const gc_wait_t *self);
    /*  After a round (NULL: nothing learnt): see gc_wait_end. */
    void   (*end) (gc_wait_t *self, const int64_t *arrival, int64_t now);
};

/*  The registry, NULL-terminated. */
extern const gc_wait_policy_t *const gc_wait_policies [];
extern const gc_wait_policy_t gc_wait_policy_sync, gc_wait_policy_quorum,
       gc_wait_policy_adaptive;

/*  By keyword, or NULL. */
const gc_wait_policy_t *gc_wait_policy_find (const char *keyword);

#endif
