/*  gc_xent — softmax cross-entropy at the top of every model kind. */
#ifndef GC_XENT_H
#define GC_XENT_H

#include <stddef.h>
#include <stdint.h>

/*  Turn logits (batch x classes) into alpha * dL/dlogits in place, that is
    alpha (softmax - target) / batch; returns the summed loss and counts
    correct argmaxes into *correct (if not NULL). Every later gradient is
    linear in this delta, so alpha scales them all for free.

    The target is the one-hot label smoothed by eps (label smoothing,
    Szegedy et al. 2016): (1 - eps) onehot + eps / classes, so the loss is
    (1 - eps) (-log p_y) + eps mean_c (-log p_c). eps = 0 is plain
    cross-entropy, computed exactly as it was before eps existed (the same
    bytes); the caller keeps 0 <= eps < 1. */
double gc_softmax_xent (float *logits, const uint8_t *y, size_t batch, size_t classes,
                        float eps, float alpha, size_t *correct);

#endif
