#include "gc_augment.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_parse.h"

/*  The number of "NAME:V" in [lo, hi] into *out; the error names the spec
    and what the number is. */
static int
s_parse_arg (const char *arg, long lo, long hi, int *out, const char *spec, const char *what,
             gc_err_t *err)
{
    char label [128];
    long v;
    snprintf (label, sizeof label, "augmentation '%s': %s", spec, what);
    if (gc_parse_long (arg, lo, hi, &v, label, err))
        return -1;
    *out = (int) v;
    return 0;
}

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
        int rc = 0;
        if (!strcmp (t, "flip") && !out->flip)
            out->flip = true;
        else
        if (!strncmp (t, "crop:", 5) && !out->crop)
            rc = s_parse_arg (t + 5, 1, 16, &out->crop, spec, "crop padding", err);
        else
        if (!strncmp (t, "erase:", 6) && !out->erase)
            rc = s_parse_arg (t + 6, 1, 100, &out->erase, spec, "erase percentage", err);
        else
            return gc_err_set (err, GC_E_SPEC, "augmentation '%s': '%s' is not crop:P, flip or "
                               "erase:P (each at most once), nor is the whole none", spec, t);
        if (rc)
            return -1;
    }
    return 0;
}

bool
gc_augment_active (const gc_augment_t *self)
{
    return self->crop > 0 || self->flip || self->erase > 0;
}

/*  Random erasing's rectangle: area 2 - 40 % of the image, aspect ratio
    (height / width) log-uniform in [0.3, 3.3], redrawn until it fits (the
    paper's rule; a few tries suffice at these bounds, and after 10 the
    sample is left whole rather than looping on a tiny image). */
static void
s_erase (float *x, size_t c, size_t h, size_t w, gc_rng_t *rng)
{
    for (int attempt = 0; attempt < 10; attempt++) {
        double area = (0.02 + 0.38 * gc_rng_double (rng)) * (double) (h * w);
        double ratio = exp (log (0.3) + (log (3.3) - log (0.3)) * gc_rng_double (rng));
        size_t eh = (size_t) lround (sqrt (area * ratio));
        size_t ew = (size_t) lround (sqrt (area / ratio));
        if (eh < 1 || ew < 1 || eh > h || ew > w)
            continue;
        size_t y0 = (size_t) gc_rng_below (rng, h - eh + 1);
        size_t x0 = (size_t) gc_rng_below (rng, w - ew + 1);
        for (size_t ch = 0; ch < c; ch++)
            for (size_t y = y0; y < y0 + eh; y++)
                memset (x + (ch * h + y) * w + x0, 0, ew * sizeof (float));
        return;
    }
}

/*  Every channel of one sample shifted by (dy, dx), border repeated, and
    mirrored left-right if flip. */
static void
s_shift (float *x, size_t c, size_t h, size_t w, long dy, long dx, bool flip, float *scratch)
{
    for (size_t ch = 0; ch < c; ch++) {
        float *plane = x + ch * h * w;
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
        if (dy || dx || flip)
            s_shift (x + n * c * h * w, c, h, w, dy, dx, flip, scratch);
        //  drawn after the shift so that specs without erase draw as before
        if (self->erase && gc_rng_below (rng, 100) < (uint64_t) self->erase)
            s_erase (x + n * c * h * w, c, h, w, rng);
    }
}
