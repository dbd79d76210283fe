/*  gc_augment — seeded image augmentation of training batches: random crops
    of the padded image (shifts of up to `crop` pixels each way; the padding
    repeats the border pixels, so a black background stays black after
    standardisation, which zero padding would not), horizontal flips, and
    random erasing (Zhong et al. 2017: with probability P %, a rectangle of 2 to
    40 % of the image, aspect ratio 0.3 to 3.3, set to 0, the training split's
    mean after standardisation, in every channel). Only for data with an image
    shape; flips only where mirror images are the same class (Fashion-MNIST,
    CIFAR-10; not digits).

    Spec: "none", or a comma list of "crop:P" (1 <= P <= 16), "flip" and
    "erase:P" (1 <= P <= 100), e.g. "crop:4,flip". The same seed gives the same
    batches byte for byte; a spec without erase draws what it drew before. */
#ifndef GC_AUGMENT_H
#define GC_AUGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_rng.h"

typedef struct {
    int  crop;      /* pixels of padding and the largest shift; 0: no crops */
    bool flip;
    int  erase;     /* percent of samples with an erased rectangle; 0: none */
} gc_augment_t;

/*  Parse spec (NULL or "none": nothing); -1 with err naming it. */
int  gc_augment_parse (const char *spec, gc_augment_t *out, gc_err_t *err);
bool gc_augment_active (const gc_augment_t *self);
/*  Augment batch samples of c x h x w floats in place, drawing from rng;
    scratch holds h x w floats. */
void gc_augment_apply (const gc_augment_t *self, float *x, size_t batch, size_t c,
                       size_t h, size_t w, gc_rng_t *rng, float *scratch);

#endif
