#include "gc_xent.h"

#include <math.h>

double
gc_softmax_xent (float *logits, const uint8_t *y, size_t batch, size_t classes,
                 float eps, float alpha, size_t *correct)
{
    double loss = 0;
    size_t right = 0;
    float inv = alpha / (float) batch;
    //  The smoothed target: every class gets eps / classes, the label
    //  1 - eps more. At eps = 0 spread and share are 0 and keep is 1, so
    //  every operation below gives the bytes of plain cross-entropy.
    float spread = inv * (eps / (float) classes), peak = inv * (1.0f - eps);
    double keep = 1.0 - (double) eps, share = (double) eps / (double) classes;
    for (size_t r = 0; r < batch; r++) {
        float *z = logits + r * classes;
        size_t arg = 0;
        for (size_t c = 1; c < classes; c++)
            if (z [c] > z [arg])
                arg = c;
        right += arg == y [r];
        //  the loss in log space: exp of a very negative logit underflows to
        //  0, and log(0) would make a confident mistake infinitely costly;
        //  -sum_c t_c log p_c = lse - (1 - eps) z_y - eps mean_c z_c, all
        //  relative to zmax (the logits' sum is read before exp overwrites them)
        float zmax = z [arg], sum = 0, zy = z [y [r]] - zmax;
        double zsum = 0;
        if (eps > 0.0f)
            for (size_t c = 0; c < classes; c++)
                zsum += (double) (z [c] - zmax);
        for (size_t c = 0; c < classes; c++) {
            z [c] = expf (z [c] - zmax);
            sum += z [c];
        }
        loss += log ((double) sum) - keep * (double) zy - share * zsum;
        float scale = inv / sum;
        for (size_t c = 0; c < classes; c++)
            z [c] = z [c] * scale - spread;
        z [y [r]] -= peak;
    }
    if (correct)
        *correct = right;
    return loss;
}
