#include "gc_augment.h"

#include <stdio.h>
#include <string.h>

#include "gc_parse.h"

int
gc_augment_parse (const char *spec, gc_augment_t *out, gc_err_t *err)
{
    memset (out, 0, sizeof *out);
    if (!spec || !strcmp (spec, "none"))
        return 0;
    gc_spec_t parts;
    if (gc_spec_split (&parts, spec, ',', "augmentation", err))
        return -1;
    for (int i = 0; i < parts.n; i++) {
        const char *t = parts.tok [i];
        long v;
        if (!strcmp (t, "flip") && !out->flip)
            out->flip = true;
        else
        if (!strncmp (t, "crop:", 5) && !out->crop) {
            char what [96];
            snprintf (what, sizeof what, "augmentation '%s': crop padding", spec);
            if (gc_parse_long (t + 5, 1, 16, &v, what, err))
                return -1;
            out->crop = (int) v;
        }
        else
            return gc_err_set (err, GC_E_SPEC, "augmentation '%s': '%s' is not crop:P or flip "
                               "(each at most once), nor is the whole none", spec, t);
    }
    return 0;
}

bool
gc_augment_active (const gc_augment_t *self)
{
    return self->crop > 0 || self->flip;
}

void
gc_augment_apply (const gc_augment_t *self, float *x, size_t batch, size_t c, size_t h,
                  size_t w, gc_rng_t *rng, float *scratch)
{
    long span = 2 * (long) self->crop + 1;
    for (size_t n = 0; n < batch; n++) {
        //  every channel of a sample moves together
        long dy = self->crop ? (long) gc_rng_below (rng, (uint64_t) span) - self->crop : 0;
        long dx = self->crop ? (long) gc_rng_below (rng, (uint64_t) span) - self->crop : 0;
        bool flip = self->flip && (gc_rng_next (rng) & 1);
        if (!dy && !dx && !flip)
            continue;
        for (size_t ch = 0; ch < c; ch++) {
            float *plane = x + (n * c + ch) * h * w;
            memcpy (scratch, plane, h * w * sizeof (float));
            for (long y = 0; y < (long) h; y++)
                for (long xx = 0; xx < (long) w; xx++) {
                    long sy = y + dy, sx = (flip ? (long) w - 1 - xx : xx) + dx;
                    sy = sy < 0 ? 0 : sy >= (long) h ? (long) h - 1 : sy;
                    sx = sx < 0 ? 0 : sx >= (long) w ? (long) w - 1 : sx;
                    plane [y * (long) w + xx] = scratch [sy * (long) w + sx];
                }
        }
    }
}
