#include "gc_attack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_parse.h"
#include "gc_vec.h"

static const struct {
    const char      *name;
    gc_attack_kind_t kind;
    double           default_param;
    bool             takes_param;
} s_attacks [] = {
    { "none", GC_ATTACK_NONE, 0, false },
    { "signflip", GC_ATTACK_SIGNFLIP, 1.0, true },
    { "noise", GC_ATTACK_NOISE, 10.0, true },
    { "alie", GC_ATTACK_ALIE, 0.0, true },
    { "ipm", GC_ATTACK_IPM, 0.5, true },
    { "labelflip", GC_ATTACK_LABELFLIP, 0, false },
    { "dissensus", GC_ATTACK_DISSENSUS, 1.0, true },
    { "mimic", GC_ATTACK_MIMIC, 0, false },
    { "equivocate", GC_ATTACK_EQUIVOCATE, 1.0, true },
    { "replay", GC_ATTACK_REPLAY, 0, false },
    { "untrusted", GC_ATTACK_UNTRUSTED, 0, false },
    { "malformed", GC_ATTACK_MALFORMED, 0, false },
    { "flood", GC_ATTACK_FLOOD, 0, false },
    { "nan", GC_ATTACK_NAN, 0, false },
    { "silent", GC_ATTACK_SILENT, 0, false },
    { "minmax", GC_ATTACK_MINMAX, 0, false },
    { "minsum", GC_ATTACK_MINSUM, 0, false },
    { "fork", GC_ATTACK_FORK, 0, false },
    { "stealth", GC_ATTACK_STEALTH, 2.0, true },
};
#define S_N (sizeof s_attacks / sizeof s_attacks [0])

//  stealth[:K[:RHO]][:balanced]: K in [0, 100], RHO in [0, 1].
static int
s_parse_stealth (const char *spec, const gc_spec_t *s, gc_attack_t *out, gc_err_t *err)
{
    out->param2 = 0.5;
    int n = s->n;
    out->balanced = n > 1 && !strcmp (s->tok [n - 1], "balanced");
    n -= out->balanced;
    if (n > 3)
        return gc_err_set (err, GC_E_SPEC, "attack '%s': stealth takes K[:RHO][:balanced]", spec);
    out->param_given = n > 1;
    if (n > 1 && gc_parse_double (s->tok [1], 0, 100, &out->param, "attack stealth K", err))
        return -1;
    if (n > 2 && gc_parse_double (s->tok [2], 0, 1, &out->param2, "attack stealth RHO", err))
        return -1;
    return 0;
}

int
gc_attack_parse (const char *spec, gc_attack_t *out, gc_err_t *err)
{
    memset (out, 0, sizeof *out);
    if (!spec || !*spec)
        return 0;
    gc_spec_t s;
    if (gc_spec_split (&s, spec, ':', "attack", err))
        return -1;
    if (!strcmp (s.tok [0], "late")) {
        //  late:R:ATTACK: the inner spec is the text after the second ':'
        const char *inner = strchr (spec, ':');
        inner = inner ? strchr (inner + 1, ':') : NULL;
        double start;
        if (s.n < 3 || !inner)
            return gc_err_set (err, GC_E_SPEC, "attack '%s': late takes ROUNDS:ATTACK", spec);
        if (gc_parse_double (s.tok [1], 0, 1e9, &start, "attack late rounds", err)
        ||  gc_attack_parse (inner + 1, out, err))
            return -1;
        if (!gc_attack_is_model (out->kind) || out->start > 0)
            return gc_err_set (err, GC_E_SPEC, "attack '%s': late wraps one model attack", spec);
        out->start = floor (start);
        return 0;
    }
    for (size_t i = 0; i < S_N; i++) {
        if (strcmp (s.tok [0], s_attacks [i].name))
            continue;
        out->kind = s_attacks [i].kind;
        out->param = s_attacks [i].default_param;
        if (out->kind == GC_ATTACK_STEALTH)
            return s_parse_stealth (spec, &s, out, err);
        if (s.n == 1)
            return 0;
        if (s.n > 2 || !s_attacks [i].takes_param)
            return gc_err_set (err, GC_E_SPEC, "attack '%s': %s takes %s", spec, s_attacks [i].name,
                               s_attacks [i].takes_param ? "one parameter" : "no parameter");
        out->param_given = true;
        return gc_parse_double (s.tok [1], 0, 1e6, &out->param, "attack parameter", err);
    }
    return gc_err_set (err, GC_E_SPEC, "attack '%s': unknown (signflip, noise, alie, ipm, labelflip, dissensus, "
                       "mimic, equivocate, replay, untrusted, malformed, flood, nan, silent, minmax, minsum, fork, "
                       "stealth, late:R:ATTACK)", spec);
}

const char *
gc_attack_name (gc_attack_kind_t kind)
{
    for (size_t i = 0; i < S_N; i++)
        if (s_attacks [i].kind == kind)
            return s_attacks [i].name;
    return "unknown";
}

bool
gc_attack_is_model (gc_attack_kind_t kind)
{
    return kind == GC_ATTACK_SIGNFLIP || kind == GC_ATTACK_NOISE || kind == GC_ATTACK_ALIE
        || kind == GC_ATTACK_IPM || kind == GC_ATTACK_DISSENSUS || kind == GC_ATTACK_MIMIC
        || kind == GC_ATTACK_EQUIVOCATE || kind == GC_ATTACK_MINMAX || kind == GC_ATTACK_MINSUM
        || kind == GC_ATTACK_STEALTH;
}

//  Phi^-1 by bisection on Phi(x) = erfc(-x / sqrt 2) / 2: slow but plainly
//  right, and it runs once.
static double
s_normal_quantile (double p)
{
    double lo = -10, hi = 10;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc (-mid / M_SQRT2) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double
gc_attack_alie_z (size_t n, size_t f)
{
    if (n == 0)
        return 0;
    double s = floor ((double) n / 2.0 + 1.0) - (double) f;
    double p = ((double) n - s) / (double) n;
    if (p <= 0.0 || p >= 1.0)
        return 0;
    double z = s_normal_quantile (p);
    return z > 0 ? z : 0;
}

void
gc_attack_moments (const float *const *models, size_t k, size_t d, float *mean, float *std)
{
    //  Block by block, so that the k models are read from memory once, not
    //  twice (mean, then deviations); each entry sees the same operations in
    //  the same order as whole-vector passes would give it.
    enum { S_BLOCK = 2048 };
    float w = 1.0f / (float) k;
    float inv = k > 1 ? 1.0f / (float) (k - 1) : 0.0f;
    for (size_t b = 0; b < d; b += S_BLOCK) {
        size_t m = d - b < S_BLOCK ? d - b : S_BLOCK;
        float *restrict mb = mean + b, *restrict sb = std + b;
        for (size_t i = 0; i < m; i++)
            mb [i] = sb [i] = 0.0f;
        for (size_t j = 0; j < k; j++) {
            const float *restrict x = models [j] + b;
            for (size_t i = 0; i < m; i++)
                mb [i] += w * x [i];
        }
        for (size_t j = 0; j < k; j++) {
            const float *restrict x = models [j] + b;
            for (size_t i = 0; i < m; i++) {
                float diff = x [i] - mb [i];
                sb [i] += diff * diff;
            }
        }
        for (size_t i = 0; i < m; i++)
            sb [i] = sqrtf (sb [i] * inv);
    }
}

static float
s_rms (const float *x, size_t d)
{
    return d ? (float) sqrt (gc_vec_norm2sq (x, d) / (double) d) : 0.0f;
}

static int
s_cmp_float (const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;
    return (x > y) - (x < y);
}

float
gc_attack_scale (const float *const *models, size_t k, size_t d, float *rms)
{
    if (k == 0)
        return 0.0f;
    for (size_t j = 0; j < k; j++)
        rms [j] = s_rms (models [j], d);
    qsort (rms, k, sizeof *rms, s_cmp_float);
    return rms [k / 2];
}

void
gc_attack_target (const gc_attack_t *attack, double alie_z, const float *mean, const float *std,
                  const float *prev_mean, float scale_ref, size_t d, gc_rng_t *rng, float *z)
{
    float p = (float) attack->param;
    switch (attack->kind) {
        case GC_ATTACK_SIGNFLIP:
            for (size_t i = 0; i < d; i++)
                z [i] = -p * mean [i];
            break;
        case GC_ATTACK_NOISE:
        case GC_ATTACK_EQUIVOCATE: {
            float scale = p * scale_ref;
            for (size_t i = 0; i < d; i++)
                z [i] = mean [i] + scale * (float) gc_rng_normal (rng);
            break;
        }
        case GC_ATTACK_ALIE: {
            float zz = (float) (attack->param_given ? attack->param : alie_z);
            for (size_t i = 0; i < d; i++)
                z [i] = mean [i] - zz * std [i];
            break;
        }
        case GC_ATTACK_IPM:
            for (size_t i = 0; i < d; i++)
                z [i] = prev_mean [i] - p * (mean [i] - prev_mean [i]);
            break;
        default:
            gc_vec_copy (z, mean, d);
            break;
    }
}

void
gc_attack_dissensus (double eps, const float *victim, const float *mean, size_t d, float *z)
{
    float e = (float) eps;
    for (size_t i = 0; i < d; i++)
        z [i] = victim [i] - e * (mean [i] - victim [i]);
}

//  The fixed sign of coordinate i in a balanced stealth's direction (a
//  32-bit mixer of the index: about as many coordinates of each sign).
static inline float
s_balanced_sign (size_t i)
{
    uint32_t h = (uint32_t) i * 0x9e3779b1u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h & 1 ? -1.0f : 1.0f;
}

void
gc_attack_stealth_dirs (const float *std, size_t d, bool balanced, gc_rng_t *rng, float *e,
                        float *xi)
{
    double ns = sqrt (gc_vec_norm2sq (std, d));
    float inv = ns > 0 ? (float) (-1.0 / ns) : 0.0f;
    for (size_t i = 0; i < d; i++) {
        e [i] = inv * std [i] * (balanced ? s_balanced_sign (i) : 1.0f);
        xi [i] = (float) gc_rng_normal (rng);
    }
    float along = (float) gc_vec_dot (xi, e, d);
    for (size_t i = 0; i < d; i++)
        xi [i] -= along * e [i];
    double nx = sqrt (gc_vec_norm2sq (xi, d));
    float scale = nx > 0 ? (float) (1.0 / nx) : 0.0f;
    for (size_t i = 0; i < d; i++)
        xi [i] *= scale;
}

void
gc_attack_stealth (double k, double rho, double step, const float *victim, const float *e,
                   const float *xi, size_t d, float *z)
{
    float a = (float) (k * step * rho), b = (float) (k * step * sqrt (1.0 - rho * rho));
    for (size_t i = 0; i < d; i++)
        z [i] = victim [i] + a * e [i] + b * xi [i];
}
