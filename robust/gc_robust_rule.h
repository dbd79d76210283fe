/*  gc_robust_rule — the robust rules and pre-aggregations as the pipeline in
    gc_robust.c sees them, and the state they share.

    A rule (mean, cwtm, krum, ...) defines one const gc_robust_rule_t, a
    pre-aggregation (nnm, bucket) one gc_robust_pre_t, each in its own file
    (gc_robust_mean.c, ...); gc_robust_rules.c lists them, the only place
    that does: the spec parser, the canonical names, the minimum-input rule,
    the aggregation and the "known rules" of error messages all go through
    those lists. docs/ARCHITECTURE.md says how to add one. */
#ifndef GC_ROBUST_RULE_H
#define GC_ROBUST_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_parse.h"
#include "gc_rng.h"
#include "gc_robust.h"
#include "gc_robust_guard.h"
#include "gc_robust_internal.h"

typedef struct gc_robust_rule_t gc_robust_rule_t;
typedef struct gc_robust_pre_t gc_robust_pre_t;

/*  A parsed rule: which, and its parameters (what applies to it; a new rule
    may add its own). */
typedef struct {
    const gc_robust_rule_t *desc;
    long     f;             /* cwtm b; krum, mkrum, bulyan f; -1 when none */
    long     m;             /* mkrum: inputs averaged */
    double   nu, tol;       /* gm */
    long     iters;         /* gm: iteration cap; cclip: L */
    double   tau;           /* cclip, scclip (fixed) */
    bool     adaptive;      /* scclip */
    double   delta;         /* scclip adaptive: Byzantine weight bound */
    gc_robust_guard_cfg_t guard;
} gc_robust_params_t;

/*  A parsed pre-aggregation stage. */
typedef struct {
    const gc_robust_pre_t *desc;
    long     arg;           /* nnm: F (-1: the rule's f); bucket: S */
} gc_robust_stage_t;

#define GC_ROBUST_MAX_PRE (GC_SPEC_MAX_TOKENS - 1)

struct gc_robust_t {
    gc_robust_stage_t  pre [GC_ROBUST_MAX_PRE];
    size_t             n_pre;
    gc_robust_params_t rule;
    size_t    min_inputs;
    char      name [2 * GC_SPEC_MAX_LEN];
    gc_rng_t  rng;
    gc_robust_ws_t   ws;
    gc_robust_info_t info;
    size_t   *bad;          /* inputs found non-finite by the last call */
    size_t    n_bad, bad_cap;
    /*  A stateful rule's state across calls (guard): created by its run on
        first use, released by its fini in gc_robust_destroy. */
    void     *state;
    const uint64_t *keys;   /* gc_robust_set_keys, for the next call only (else NULL) */
    const bool *moved;      /* per input: a message changed it since the last call (NULL: all) */
    size_t    n_keys;
    gc_robust_mix_t mix;    /* gc_robust_set_mix, for the next call only (x NULL: none) */
    bool      mixed;        /* the last call left its output in mix.x */
};

/*  What the pipeline knows about its current (virtual) inputs. Pre-
    aggregations keep them as a mixing matrix ws.mix over the originals
    (virtual a = sum_j mix[a * k + j] in[j]); see gc_robust.c. */
typedef struct {
    const float *const *in;     /* originals */
    size_t  k, d;
    const float *own;           /* peer's vector or explicit centre, or NULL */
    size_t  kv;                 /* virtual inputs */
    bool    mixed;              /* false: virtual = originals, mix unused */
    bool    have_dist;          /* ws->dist holds the originals' distances */
    bool    have_vdist;         /* ws->vdist holds the virtual distances */
} gc_robust_run_t;

/*  Return codes of the ops below: 0, 1 an input holds NaN or Inf, 2 the
    inputs do not suit the rule (too few, no centre), -1 out of memory. */

struct gc_robust_rule_t {
    const char *name;           /* keyword, the stage's first token */
    const char *usage;          /* "cwtm:B", for help texts and errors */
    const char *help;           /* one line */
    const char *example;        /* a spec it accepts (the registry test parses it) */
    const char *malformed;      /* one it rejects */
    bool        coords;         /* works on coordinates: gets the virtual inputs
                                   materialised and the weights normalised */
    bool        needs_centre;   /* fails without the peer's own vector or a centre */
    /*  The stage's tokens (t->tok [0] is the keyword) into r (f preset to
        -1); the caller prefixes the message with the spec. */
    int    (*parse) (gc_robust_params_t *r, const gc_spec_t *t, const char *text, gc_err_t *err);
    /*  Fewest inputs (NULL: 1), e.g. 2f + 3 for krum. */
    size_t (*min_inputs) (const gc_robust_params_t *r);
    /*  Canonical text, every default spelled out (appended at *used). */
    void   (*describe) (const gc_robust_params_t *r, char *buf, size_t size, size_t *used);
    /*  Aggregate st's kv virtual inputs into out (d floats). For coords
        rules x / w are the kv materialised inputs and their normalised
        weights; for the others NULL (they read ws.vdist and ws.mix). */
    int    (*run) (gc_robust_t *self, gc_robust_run_t *st, const float *const *x,
                   const double *w, float *out);
    /*  Rules that are one window of the sorted virtual inputs per
        coordinate (NULL: not one): its rows lo..hi of n, so that mixed
        inputs are formed in cache by the window kernel instead of
        materialised (run then sees only unmixed inputs). */
    void   (*window) (const gc_robust_params_t *r, size_t n, size_t *lo, size_t *hi);
    /*  Stateful rules only (NULL: stateless): release self->state. */
    void   (*fini) (void *state);
    /*  Rules with a per-neighbour history (NULL: none): whether it holds
        the neighbour of this key suspect (gc_robust_suspects). */
    bool   (*suspects) (const void *state, uint64_t key);
};

struct gc_robust_pre_t {
    const char *name;
    const char *usage;          /* "nnm[:F]" */
    int         min_tokens;     /* tokens with the keyword (0: 1) */
    int         max_tokens;
    const char *help;
    const char *example;        /* a whole spec using it ("nnm:1+cwtm:1") */
    const char *malformed;
    int    (*parse) (gc_robust_stage_t *p, const gc_spec_t *t, const char *text, gc_err_t *err);
    /*  The rule behind needs *need inputs: set *need to what this stage
        needs in front of it, resolving its defaults from the rule. */
    int    (*compose) (gc_robust_stage_t *p, const gc_robust_params_t *rule, size_t *need,
                       const char *spec, gc_err_t *err);
    void   (*describe) (const gc_robust_stage_t *p, char *buf, size_t size, size_t *used);
    /*  Replace st's virtual inputs (edits ws.mix, ws.vw, st->kv). */
    int    (*stage) (gc_robust_t *self, gc_robust_run_t *st, const gc_robust_stage_t *p);
};

/*  The registries, NULL-terminated. */
extern const gc_robust_rule_t *const gc_robust_rules [];
extern const gc_robust_pre_t *const gc_robust_pres [];
extern const gc_robust_rule_t gc_robust_rule_mean, gc_robust_rule_cwmed, gc_robust_rule_cwtm,
       gc_robust_rule_krum, gc_robust_rule_mkrum, gc_robust_rule_bulyan, gc_robust_rule_gm,
       gc_robust_rule_cclip, gc_robust_rule_scclip, gc_robust_rule_guard;
extern const gc_robust_pre_t gc_robust_pre_nnm, gc_robust_pre_bucket;

/*  By keyword, or NULL. */
const gc_robust_rule_t *gc_robust_rule_find (const char *keyword);
const gc_robust_pre_t  *gc_robust_pre_find (const char *keyword);
/*  The pre-aggregations' usages, " or "-separated, for errors. */
const char *gc_robust_pres_known (char *buf, size_t size);

/*  ---- shared by the rules (gc_robust.c) ---- */

/*  Ensure ws.vdist: one Gram pass over the originals, then the quadratic
    form for mixed inputs. */
int    gc_robust_vdist (gc_robust_t *self, gc_robust_run_t *st);
/*  Make the mixing matrix explicit (identity) before a stage edits it. */
void   gc_robust_ensure_mix (gc_robust_t *self, gc_robust_run_t *st);
/*  idx[0..n) ordered by (key, key2, index), key2 may be NULL; allocation-free. */
void   gc_robust_order2 (size_t *idx, size_t n, const double *key, const double *key2);
void   gc_robust_order (size_t *idx, size_t n, const double *key);
/*  min(1, tau / sqrt(d2)). */
double gc_robust_clip_factor (double d2, double tau);
/*  Shortest %g form that reads back as the same double. */
void   gc_robust_fmt_double (char *buf, size_t size, double v);
/*  For rules without parameters: one token, and the name is the keyword. */
int    gc_robust_parse_plain (gc_robust_params_t *r, const gc_spec_t *t, const char *text,
                              gc_err_t *err);
void   gc_robust_describe_plain (const gc_robust_params_t *r, char *buf, size_t size, size_t *used);
/*  "'TEXT': wrong number of parameters (USAGE)" for r->desc. */
int    gc_robust_parse_count_error (const gc_robust_params_t *r, const char *text, gc_err_t *err);
/*  Krum scores of candidates cand[0..nc) (gc_robust_krum.c; Bulyan uses it). */
void   gc_robust_krum_scores (gc_robust_t *self, size_t kv, const size_t *cand, size_t nc,
                              size_t nb, double *score, double *total);

#endif
