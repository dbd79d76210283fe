//  keep_unsent: under liec, mix around x - λ g instead of x, where g is the
//  peer's own training progress that no payload has carried yet.
//
//  Why: liec mixes around the exact x while the neighbours hold x̂ = x - e.
//  Each mix pulls x a fraction (1 - w_ii) of the way towards replicas that
//  lack e, so the part of the peer's own progress still in e is undone by
//  that fraction every round: error feedback can then never grow a small
//  coordinate until top-k selects it, and what top-k leaves out is lost to
//  the network for good (docs/ALGORITHMS.md, "Error compensation modes").
//  Leaving g out of the centre keeps it; the rest of e (the consensus
//  corrections the mix itself made and has not sent) is still pulled back,
//  which is what keeps liec stable where CHOCO at γ = 1 is not.
//
//  Bookkeeping without a second model-sized buffer: between a mix and the
//  next publish, unsent holds g - x; the training in between moves x, and
//  the publish adds x back, which leaves g plus this round's training. A
//  coordinate the payload carried (sent != 0) starts again from zero; an
//  exact round or a lossless compressor sends everything.
#include "gc_engine_internal.h"

#include <string.h>

#include "gc_mem.h"
#include "gc_vec.h"

int
gc_unsent_new (gc_engine_t *self, gc_err_t *err)
{
    double lambda = self->cfg.keep_unsent;
    if (!(lambda >= 0 && lambda <= 1))
        return gc_err_set (err, GC_E_CONFIG, "gossip/keep_unsent: %g is outside [0, 1]", lambda);
    if (lambda == 0)
        return 0;
    //  ef mixes around x̂ already (g is kept); none keeps no residual that
    //  would ever send g
    if (strncmp (self->cfg.ec, "liec", 4) || (self->cfg.ec [4] && self->cfg.ec [4] != ':'))
        return gc_err_set (err, GC_E_CONFIG, "gossip/keep_unsent needs gossip/ec liec (it is %s)",
                           self->cfg.ec);
    self->learn.unsent = gc_falloc (self->learn.n);
    if (!self->learn.unsent)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory for keep_unsent");
    gc_unsent_forget (self);
    return 0;
}

void
gc_unsent_destroy (gc_engine_t *self)
{
    gc_mem_free (self->learn.unsent);
    self->learn.unsent = NULL;
}

void
gc_unsent_forget (gc_engine_t *self)
{
    float *g = self->learn.unsent;
    if (!g)
        return;
    //  g = 0 from the current x on
    for (size_t i = 0; i < self->learn.n; i++)
        g [i] = -self->learn.x [i];
    self->learn.unsent_is_g = false;
}

void
gc_unsent_published (gc_engine_t *self, bool everything)
{
    float *restrict g = self->learn.unsent;
    if (!g)
        return;
    //  a second publish without a mix in between (no driver does that):
    //  g already holds x's progress, only the send resets it
    const float *restrict x = self->learn.x;
    float keep = self->learn.unsent_is_g ? 0.0f : 1.0f;
    const float *restrict sent = self->learn.sent;
    size_t n = self->learn.n;
    if (everything)
        gc_vec_zero (g, n);
    else
        for (size_t i = 0; i < n; i++)
            g [i] = sent [i] != 0.0f ? 0.0f : g [i] + keep * x [i];
    self->learn.unsent_is_g = true;
}

const float *
gc_unsent_centre (gc_engine_t *self, float *scratch)
{
    const float *x = self->learn.x;
    if (!self->learn.unsent || !self->learn.unsent_is_g)
        return x;                       /* no delta since the last mix: g = 0 */
    const float *restrict g = self->learn.unsent;
    float lambda = (float) self->cfg.keep_unsent;
    for (size_t i = 0; i < self->learn.n; i++)
        scratch [i] = x [i] - lambda * g [i];
    return scratch;
}

void
gc_unsent_mixed (gc_engine_t *self)
{
    float *restrict g = self->learn.unsent;
    if (!g)
        return;
    if (!self->learn.unsent_is_g) {
        gc_unsent_forget (self);
        return;
    }
    const float *restrict x = self->learn.x;
    for (size_t i = 0; i < self->learn.n; i++)
        g [i] -= x [i];
    self->learn.unsent_is_g = false;
}
