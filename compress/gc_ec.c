#include "gc_ec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_compress_internal.h"
#include "gc_ec_mode.h"
#include "gc_mem.h"
#include "gc_parse.h"
#include "gc_payload.h"
#include "gc_policy.h"
#include "gc_vec.h"

struct gc_ec_t {
    const gc_ec_mode_t *mode;   /* from the registry (gc_ec_modes.c) */
    uint64_t         param;     /* the mode's parameter (liec: H) */
    gc_compressor_t *comp;
    const gc_layout_t *layout;
    size_t           n;
    float           *e;         /* residual */
    float           *v;         /* u + e of the current round */
    gc_policy_t     *policy;    /* borrowed; NULL: the compressor's own ratio */
    bool             skipped;   /* the last step's send was skipped */
    char             name [32];
};

gc_ec_t *
gc_ec_new (const char *mode, gc_compressor_t *comp, gc_err_t *err)
{
    gc_spec_t sp;
    if (!comp) {
        gc_err_set (err, GC_E_ARG, "error compensation: no compressor");
        return NULL;
    }
    if (gc_spec_split (&sp, mode, ':', "error compensation mode", err)) {
        gc_compress_spec_error (err);
        return NULL;
    }
    gc_ec_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "error compensation: out of memory");
        return NULL;
    }
    self->comp = comp;
    self->layout = gc_compressor_layout (comp);
    self->n = self->layout->n_params;
    self->mode = gc_ec_mode_find (sp.tok [0]);
    if (!self->mode) {
        char known [128];
        gc_err_set (err, GC_E_SPEC, "error compensation '%s': unknown mode '%s' (known: %s)",
                    mode, sp.tok [0], gc_ec_known (known, sizeof known));
        goto fail;
    }
    if (self->mode->parse (&sp, &self->param, err)) {
        gc_compress_spec_error (err);
        gc_err_prefix (err, "error compensation '%s': ", mode);
        goto fail;
    }
    self->e = gc_falloc (self->n);
    self->v = gc_falloc (self->n);
    if (!self->e || !self->v) {
        gc_err_set (err, GC_E_NOMEM, "error compensation: out of memory for %zu floats", self->n);
        goto fail;
    }
    if (self->mode->describe)
        self->mode->describe (self->param, self->name, sizeof self->name);
    else
        snprintf (self->name, sizeof self->name, "%s", self->mode->name);
    //  The residual carries what LBS would otherwise defer a second time.
    if (self->mode->residual)
        gc_compressor_set_defer (comp, false);
    return self;
fail:
    gc_ec_destroy (&self);
    return NULL;
}

void
gc_ec_destroy (gc_ec_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_ec_t *self = *self_p;
    gc_mem_free (self->e);
    gc_mem_free (self->v);
    free (self);
    *self_p = NULL;
}

float *
gc_ec_residual (gc_ec_t *self)
{
    return self->e;
}

const char *
gc_ec_name (const gc_ec_t *self)
{
    return self->name;
}

bool
gc_ec_passes_through (const gc_ec_t *self)
{
    return !self->mode->residual && gc_compressor_lossless (self->comp);
}

int
gc_ec_set_policy (gc_ec_t *self, gc_policy_t *policy, gc_err_t *err)
{
    if (policy && gc_policy_skips (policy) && !self->mode->residual)
        return gc_err_set (err, GC_E_SPEC, "policy %s skips sends: EC mode %s keeps no "
                           "residual to carry them (use ef or liec)", gc_policy_name (policy),
                           self->name);
    //  fixed decides nothing: not consulting it keeps every byte as before.
    self->policy = policy && !gc_policy_is_fixed (policy) ? policy : NULL;
    return 0;
}

bool
gc_ec_skipped (const gc_ec_t *self)
{
    return self->skipped;
}

//  The policy's decision for the round, and the empty payload of a skip.
static int
s_decide (gc_ec_t *self, const float *update, const float *input, uint64_t round,
          gc_buf_t *out, bool *skip, gc_err_t *err)
{
    *skip = false;
    if (!self->policy)
        return 0;
    if (gc_policy_decide (self->policy, update, input, round, skip, err))
        return -1;
    if (*skip)
        return gc_compressor_encode_range (self->comp, input, round, 0, 0, 0, out, err);
    return 0;
}

int
gc_ec_step (gc_ec_t *self, const float *update, uint64_t round, gc_buf_t *out,
            float *sent, bool *is_exact, gc_err_t *err)
{
    if (is_exact)
        *is_exact = false;
    if (!update || !out)
        return gc_err_set (err, GC_E_ARG, "error compensation: NULL update or output");
    size_t n = self->n;
    bool skip;
    self->skipped = false;
    if (!self->mode->residual) {
        if (s_decide (self, update, update, round, out, &skip, err)
        ||  gc_compressor_compress (self->comp, update, round, out, err))
            return -1;
        if (self->policy)
            gc_policy_note_sent (self->policy, out->len);
        if (sent) {
            gc_vec_zero (sent, n);
            return gc_payload_apply_codec (out->data, out->len, self->layout,
                                           gc_compressor_codec (self->comp), sent, 1.0f, err);
        }
        return 0;
    }
    float *restrict v = self->v;
    const float *restrict e = self->e;
    for (size_t i = 0; i < n; i++)
        v [i] = update [i] + e [i];
    if (self->mode->exact_round && self->mode->exact_round (self->param, round)) {
        //  Synchronisation: everything, exactly. The residual is then zero.
        size_t bad = gc_vec_first_nonfinite (v, n);
        if (bad < n)
            return gc_err_set (err, GC_E_NONFINITE, "input + residual [%zu] is not finite", bad);
        if (gc_payload_encode_dense (out, self->layout, v, GC_METHOD_NONE, GC_VAL_FP32,
                                     GC_PAYLOAD_FLAG_EXACT, err))
            return -1;
        if (sent)
            gc_vec_copy (sent, v, n);
        gc_vec_zero (self->e, n);
        gc_compressor_note_exact (self->comp);
        if (self->policy)
            gc_policy_note_exact (self->policy);
        if (is_exact)
            *is_exact = true;
        return 0;
    }
    if (s_decide (self, update, v, round, out, &skip, err))
        return -1;
    if (skip) {
        //  Nothing sent: the whole of u + e stays in the residual.
        if (sent)
            gc_vec_zero (sent, n);
        gc_vec_copy (self->e, v, n);
        self->skipped = true;
        return 0;
    }
    if (gc_compressor_compress (self->comp, v, round, out, err))
        return -1;
    if (self->policy)
        gc_policy_note_sent (self->policy, out->len);
    //  e <- v - q, with q decoded from the payload itself (lgc: with the
    //  sender's own decoder, the one its neighbours hold).
    const gc_lgc_codec_t *codec = gc_compressor_codec (self->comp);
    if (sent) {
        gc_vec_zero (sent, n);
        if (gc_payload_apply_codec (out->data, out->len, self->layout, codec, sent, 1.0f, err))
            return -1;
    }
    if (gc_payload_apply_codec (out->data, out->len, self->layout, codec, v, -1.0f, err))
        return -1;
    gc_vec_copy (self->e, v, n);       /* keeps gc_ec_residual's pointer stable */
    return 0;
}
