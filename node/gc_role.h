/*  gc_role — what a peer publishes each round: the honest update, or one of
    the Byzantine behaviours of gc_attack.h. The engine's round phases know
    nothing about attacks: gc_engine_publish calls the role's publish, then
    serves and asks for keyframes as every role does.

    A role is a table of operations and its own state:
      build      after the engine is built (model, neighbours, gossip):
                 allocate the role's state (may be NULL = none needed)
      destroy    free it
      train_data optional: the shard to train on instead of the given one
                 (labelflip); called before the sampler is built
      publish    the round's messages (through gc_engine_send / _seq)
      on_sent    optional: every message the engine signed and sent (replay
                 keeps a few)
      silent     sends no HELLO at start

    The roles live in gc_role_honest.c (honest, labelflip), gc_role_model.c
    (crafted models: signflip, noise, alie, ipm, dissensus, mimic,
    equivocate, minmax, minsum, stealth; late:R: publishes as the honest role before
    round R) and gc_role_protocol.c (replay, untrusted, malformed,
    flood, nan, silent, fork); gc_role.c maps each attack kind to its role. */
#ifndef GC_ROLE_H
#define GC_ROLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_attack.h"
#include "gc_dataset.h"
#include "gc_err.h"

typedef struct gc_engine_t gc_engine_t;
typedef struct gc_role_ops_t gc_role_ops_t;

typedef struct {
    const gc_role_ops_t *ops;
    gc_attack_t          attack;    /* the parsed spec (kind NONE: honest) */
    void                *state;     /* the role's own, from build */
} gc_role_t;

struct gc_role_ops_t {
    const char *name;
    bool        silent;
    int         (*build) (gc_engine_t *engine, gc_role_t *role, gc_err_t *err);
    void        (*destroy) (gc_role_t *role);
    const gc_dataset_t *(*train_data) (gc_role_t *role, const gc_dataset_t *shard, gc_err_t *err);
    int         (*publish) (gc_engine_t *engine, gc_role_t *role, int64_t now, gc_err_t *err);
    void        (*on_sent) (gc_engine_t *engine, gc_role_t *role, const uint8_t *header,
                            const uint8_t *payload, size_t len);
};

extern const gc_role_ops_t gc_role_honest;
extern const gc_role_ops_t gc_role_labelflip;
extern const gc_role_ops_t gc_role_model;
extern const gc_role_ops_t gc_role_replay;
extern const gc_role_ops_t gc_role_untrusted;
extern const gc_role_ops_t gc_role_malformed;
extern const gc_role_ops_t gc_role_flood;
extern const gc_role_ops_t gc_role_nan;
extern const gc_role_ops_t gc_role_silent;
extern const gc_role_ops_t gc_role_fork;

/*  Parse an attack spec (NULL or "" = honest) and pick its role; state
    stays NULL until build. */
int  gc_role_select (const char *attack, gc_role_t *role, gc_err_t *err);
void gc_role_destroy (gc_role_t *role);

#endif
