/*  gc_attack_adaptive — the adaptive model attacks of issue 22 (the math).

    minmax, minsum (Shejwalkar & Houmansadr, NDSS 2021, "AGR-agnostic"):
    z = mu - g * sigma / ||sigma||, with the largest g for which z stays as
    close to the observed models as they are to each other:
      minmax: max_j ||z - x_j||^2      <= max_{i,j} ||x_i - x_j||^2
      minsum: sum_j ||z - x_j||^2      <= max_i sum_j ||x_i - x_j||^2
    g by bisection (the condition is monotone in g past its minimum, and g
    = 0 always satisfies it up to the models' spread), as in the paper's
    search, on the attacker's observed models (own + replicas, or its
    victims' models when omniscient). The late:R: prefix (gc_attack.h)
    is the wrapper that sends honestly until round R. docs/ALGORITHMS.md
    has the exact definitions. */
#ifndef GC_ATTACK_ADAPTIVE_H
#define GC_ATTACK_ADAPTIVE_H

#include <stdbool.h>
#include <stddef.h>

/*  z = mean - g * std / ||std|| for the largest g in [0, 4 max pairwise
    distance] meeting the min-max (sum = false) or min-sum condition over
    the k models (k <= 1024); returns g (0 when k < 2, k > 1024 or std is 0:
    z = mean). */
double gc_attack_minmax (const float *const *models, size_t k, size_t d, const float *mean,
                         const float *std, bool sum, float *z);

#endif
