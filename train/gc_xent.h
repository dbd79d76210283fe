/*  gc_xent — softmax cross-entropy at the top of every model kind. */
#ifndef GC_XENT_H
#define GC_XENT_H

#include <stddef.h>
#include <stdint.h>

/*  Turn logits (batch x classes) into alpha * dL/dlogits in place, that is
    alpha (softmax - onehot) / batch; returns the summed loss and counts
    correct argmaxes into *correct (if not NULL). Every later gradient is
    linear in this delta, so alpha scales them all for free. */
double gc_softmax_xent (float *logits, const uint8_t *y, size_t batch, size_t classes,
                        float alpha, size_t *correct);

#endif
