#include "gc_attack_adaptive.h"

#include <math.h>

//  Bisection steps: g to 2^-30 of its range, far below float resolution.
#define S_STEPS 30

static double
s_dist2 (const float *a, const float *b, size_t d)
{
    double s = 0;
    for (size_t i = 0; i < d; i++) {
        double v = (double) a [i] - (double) b [i];
        s += v * v;
    }
    return s;
}

//  ||mean - g u - x_j||^2 = ||mean - x_j||^2 - 2 g u.(mean - x_j) + g^2 (||u|| = 1):
//  the per-model constants are computed once and the bisection is O(k).
double
gc_attack_minmax (const float *const *models, size_t k, size_t d, const float *mean,
                  const float *std, bool sum, float *z)
{
    double norm = 0;
    for (size_t i = 0; i < d; i++)
        norm += (double) std [i] * (double) std [i];
    norm = sqrt (norm);
    for (size_t i = 0; i < d; i++)
        z [i] = mean [i];
    if (k < 2 || !(norm > 0) || k > 1024)
        return 0;
    double base [1024], dot [1024];
    double bound = 0, widest = 0;
    for (size_t j = 0; j < k; j++) {
        double b = 0, p = 0;
        for (size_t i = 0; i < d; i++) {
            double v = (double) mean [i] - (double) models [j][i];
            b += v * v;
            p += v * (double) std [i] / norm;
        }
        base [j] = b;
        dot [j] = p;
        double row = 0;
        for (size_t l = 0; l < k; l++)
            if (l != j) {
                double dd = s_dist2 (models [j], models [l], d);
                row += dd;
                widest = fmax (widest, dd);
            }
        bound = fmax (bound, sum ? row : 0);
    }
    if (!sum)
        bound = widest;
    double lo = 0, hi = 4 * sqrt (widest);
    for (int it = 0; it < S_STEPS; it++) {
        double g = 0.5 * (lo + hi), worst = 0, total = 0;
        for (size_t j = 0; j < k; j++) {
            double q = base [j] - 2 * g * dot [j] + g * g;
            worst = fmax (worst, q);
            total += q;
        }
        if ((sum ? total : worst) <= bound)
            lo = g;
        else
            hi = g;
    }
    for (size_t i = 0; i < d; i++)
        z [i] = (float) ((double) mean [i] - lo * (double) std [i] / norm);
    return lo;
}
