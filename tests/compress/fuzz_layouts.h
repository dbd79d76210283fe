/*  The layer tables the payload fuzzer decodes against; the first input
    byte picks one. Shared with test_fuzz_corpus, which writes and checks
    the seed corpus. */
#ifndef FUZZ_LAYOUTS_H
#define FUZZ_LAYOUTS_H

#include "gc_layout.h"

#define FUZZ_N_LAYOUTS   4
#define FUZZ_MAX_PARAMS  4224

static inline void
fuzz_layout (int which, gc_layout_t *l)
{
    gc_layout_init (l);
    switch (which % FUZZ_N_LAYOUTS) {
        case 0:     /* small MLP: 57 floats */
            gc_layout_add_matrix (l, "fc1.w", 6, 5, NULL);
            gc_layout_add_vector (l, "fc1.b", 6, NULL);
            gc_layout_add_matrix (l, "fc2.w", 3, 6, NULL);
            gc_layout_add_vector (l, "fc2.b", 3, NULL);
            break;
        case 1:     /* one flat vector */
            gc_layout_add_vector (l, "flat", 1000, NULL);
            break;
        case 2:     /* MLP: 2060 floats */
            gc_layout_add_matrix (l, "fc1.w", 40, 30, NULL);
            gc_layout_add_vector (l, "fc1.b", 40, NULL);
            gc_layout_add_matrix (l, "fc2.w", 20, 40, NULL);
            gc_layout_add_vector (l, "fc2.b", 20, NULL);
            gc_layout_add_matrix (l, "out.w", 1, 20, NULL);
            break;
        default:    /* a square matrix for low rank: 4160 floats */
            gc_layout_add_matrix (l, "w", 64, 64, NULL);
            gc_layout_add_vector (l, "b", 64, NULL);
            break;
    }
}

#endif
