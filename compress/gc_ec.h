/*  gc_ec — error compensation around a compressor.

    Input each round is the sender's update u_t (the change of its model
    since the last send). Modes:
      none     q = C(u_t)
      ef       q = C(u_t + e);  e <- u_t + e - q          (classic error feedback)
      liec:H   as ef, but in every round with round % H == H - 1 the payload
               is exact (dense fp32 of u_t + e, header flag EXACT) and e <- 0
               (local immediate error compensation with a periodic exact
               synchronisation; default H = 8)
    q is what the payload decodes to, bit for bit (the wrapper decodes its
    own payload), so e is exactly what the neighbours have not received.
    ef and liec turn the compressor's own deferral (LBS) off: e carries it. */
#ifndef GC_EC_H
#define GC_EC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_buf.h"
#include "gc_compressor.h"
#include "gc_err.h"

#define GC_EC_DEFAULT_H 8

typedef struct gc_ec_t gc_ec_t;

/*  The known modes' usages, ", "-separated ("none, ef, liec[:H=8]"), from
    the registry (gc_ec_modes.c); written into buf (size bytes), returned. */
const char *gc_ec_known (char *buf, size_t size);

/*  mode: "none" | "ef" | "liec" | "liec:H" (1 <= H <= 1e6). comp is borrowed
    and must outlive the wrapper. */
gc_ec_t *gc_ec_new (const char *mode, gc_compressor_t *comp, gc_err_t *err);
void     gc_ec_destroy (gc_ec_t **self_p);

/*  One round: compress (update + residual) into out (reset first). sent
    (optional, n floats) receives the dense decoded q; is_exact (optional)
    is set when the payload is an exact synchronisation. On error the
    residual is unchanged. */
int      gc_ec_step (gc_ec_t *self, const float *update, uint64_t round, gc_buf_t *out,
                     float *sent, bool *is_exact, gc_err_t *err);

/*  A ratio policy (gc_policy.h, borrowed, outliving the wrapper; NULL or
    `fixed`: none) decides each round's budget from then on. A skipped
    round sends an empty payload (header, no section), sent is zero and
    e <- u + e. -1 (GC_E_SPEC) for a skipping policy on a mode without a
    residual, where the skipped update would be lost. */
typedef struct gc_policy_t gc_policy_t;
int      gc_ec_set_policy (gc_ec_t *self, gc_policy_t *policy, gc_err_t *err);
/*  Whether the last gc_ec_step skipped its send. */
bool     gc_ec_skipped (const gc_ec_t *self);

/*  The residual e (n floats; zeros for mode none), for checkpoints. */
float   *gc_ec_residual (gc_ec_t *self);
/*  Whether sent is always 0 + update, bit for bit (mode none over a lossless
    compressor): the caller may then pass no sent and use the update itself
    (the engine's publish does). */
bool     gc_ec_passes_through (const gc_ec_t *self);
/*  The canonical mode ("none", "ef", "liec:8"). */
const char *gc_ec_name (const gc_ec_t *self);

#endif
