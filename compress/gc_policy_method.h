/*  gc_policy_method — what one ratio policy is to gc_policy.c: its keyword,
    options, and decision. Each policy defines one const gc_policy_method_t
    in its own file (gc_policy_lazy.c, ...); gc_ratio_policies.c lists them
    and is the only place that does (the parser, the "known" list and the
    registry test walk it). docs/ARCHITECTURE.md, "A ratio policy". */
#ifndef GC_POLICY_METHOD_H
#define GC_POLICY_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_compressor.h"
#include "gc_err.h"
#include "gc_layout.h"
#include "gc_parse.h"
#include "gc_policy.h"

#define GC_POLICY_MAX_OPTS 6

typedef struct gc_policy_method_t gc_policy_method_t;

/*  What a policy sees of a round. */
typedef struct {
    const float *update;        /* u, n_params floats */
    const float *input;         /* u + e, what the compressor would get */
    double       sq_update;     /* |u|^2 when the policy uses_norm, else 0 */
    uint64_t     round;
} gc_policy_round_t;

typedef struct {
    double ratio;
    bool   skip;
} gc_policy_decision_t;

/*  One "key=value" option: its default (may depend on the base ratio) and
    bounds. */
typedef struct {
    const char *key;
    double      lo, hi;
    bool        integer;
    bool        ratio_default;  /* def is a multiple of the base ratio (capped at 1) */
    double      def;
} gc_policy_opt_t;

struct gc_policy_method_t {
    const char *name;
    const char *usage;
    const char *help;
    const char *example;        /* a spec it accepts (with a topk compressor) */
    const char *malformed;      /* one it rejects */
    bool        skips;          /* may skip sends: needs a residual EC mode */
    bool        needs_ratio;    /* budgets the compressor's RATIO */
    bool        layered;        /* per-layer budgets: topk only */
    bool        uses_norm;      /* decide reads sq_update (one pass over u; else 0) */
    gc_policy_opt_t opts [GC_POLICY_MAX_OPTS];  /* key NULL ends */
    /*  State after parsing (NULL: none) and the release of what it points
        to (NULL: the state is one allocation, which gc_policy_destroy frees). */
    int   (*init) (gc_policy_t *self, gc_err_t *err);
    void  (*fini) (gc_policy_t *self);
    /*  The round's budget into d: ratio (whole vector; preset to the base,
        or, in a chain, to HUGE_VAL, "no opinion", which a stage with nothing
        to go on may leave) or self->layer (per layer, ratio then 0), or
        skip. NULL: the base. */
    void  (*decide) (gc_policy_t *self, const gc_policy_round_t *r, gc_policy_decision_t *d);
};

/*  What the driver tells a policy about the rounds (gc_policy_set_env,
    gc_policy_note_sent) and what the last decision budgeted: one per chain,
    which its stages share. */
typedef struct {
    double compute_s, rate;             /* gc_policy_set_env */
    double round_s;                     /* gc_policy_set_round */
    size_t last_len;                    /* bytes of the last payload sent */
    size_t last_k;                      /* entries it was budgeted */
} gc_policy_env_t;

/*  The object; policies keep their state in `state` (their init). */
struct gc_policy_t {
    const gc_policy_method_t *desc;
    gc_compressor_t   *comp;            /* borrowed */
    const gc_layout_t *layout;
    double             base;            /* the compressor's parsed ratio */
    double             opt [GC_POLICY_MAX_OPTS];    /* desc->opts' values */
    char               name [256];      /* canonical spec, a chain's stages joined by '+' */
    gc_policy_env_t   *env;             /* the chain head's env_own */
    gc_policy_env_t    env_own;
    double            *layer;           /* n_layers ratios (layered policies) */
    double             budget;          /* last round's, for the metrics */
    uint64_t           skipped;
    void              *state;
    gc_policy_t       *next;            /* a chain's next stage: a cap on this one's ratio */
};

/*  The mean |u| of windows of rounds (accordion, settle): gc_policy_window_add
    adds one round's |u| and, when the window of n rounds closes, returns
    true with its mean in *mean and starts the next. */
typedef struct {
    double   sum;
    uint32_t count;
} gc_policy_window_t;

static inline bool
gc_policy_window_add (gc_policy_window_t *w, double v, uint32_t n, double *mean)
{
    w->sum += v;
    if (++w->count < n)
        return false;
    *mean = w->sum / w->count;
    w->sum = 0;
    w->count = 0;
    return true;
}

/*  The registry, NULL-terminated. */
extern const gc_policy_method_t *const gc_policy_methods [];
extern const gc_policy_method_t gc_policy_fixed, gc_policy_lazy, gc_policy_accordion,
       gc_policy_bandwidth, gc_policy_lgreco, gc_policy_settle, gc_policy_phase;

const gc_policy_method_t *gc_policy_method_find (const char *keyword);

#endif
