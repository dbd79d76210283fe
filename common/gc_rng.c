#include "gc_rng.h"

#include <math.h>

uint64_t
gc_mix64 (uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t
gc_seed_derive (uint64_t a, uint64_t b)
{
    return gc_mix64 (gc_mix64 (a) ^ (b + 0x632BE59BD9B4E019ull));
}

void
gc_rng_init (gc_rng_t *self, uint64_t seed, uint64_t stream)
{
    uint64_t x = gc_seed_derive (seed, stream);
    for (int i = 0; i < 4; i++) {
        x = gc_mix64 (x);
        self->s [i] = x;
    }
    //  xoshiro must not start from the all-zero state
    if (!(self->s [0] | self->s [1] | self->s [2] | self->s [3]))
        self->s [0] = 1;
}

static inline uint64_t
s_rotl (uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t
gc_rng_next (gc_rng_t *self)
{
    uint64_t *s = self->s;
    uint64_t result = s_rotl (s [1] * 5, 7) * 9;
    uint64_t t = s [1] << 17;
    s [2] ^= s [0];
    s [3] ^= s [1];
    s [1] ^= s [2];
    s [0] ^= s [3];
    s [2] ^= t;
    s [3] = s_rotl (s [3], 45);
    return result;
}

double
gc_rng_double (gc_rng_t *self)
{
    return (double) (gc_rng_next (self) >> 11) * 0x1.0p-53;
}

float
gc_rng_float (gc_rng_t *self)
{
    return (float) (gc_rng_next (self) >> 40) * 0x1.0p-24f;
}

uint64_t
gc_rng_below (gc_rng_t *self, uint64_t n)
{
    //  Lemire's multiply-shift with rejection of the biased low region
    unsigned __int128 m = (unsigned __int128) gc_rng_next (self) * n;
    uint64_t low = (uint64_t) m;
    if (low < n) {
        uint64_t threshold = -n % n;
        while (low < threshold) {
            m = (unsigned __int128) gc_rng_next (self) * n;
            low = (uint64_t) m;
        }
    }
    return (uint64_t) (m >> 64);
}

double
gc_rng_normal (gc_rng_t *self)
{
    //  Box-Muller; u1 in (0, 1] so that log never sees zero
    double u1 = 1.0 - gc_rng_double (self);
    double u2 = gc_rng_double (self);
    return sqrt (-2.0 * log (u1)) * cos (2.0 * M_PI * u2);
}

double
gc_rng_gamma (gc_rng_t *self, double shape)
{
    if (shape < 1.0) {
        //  Gamma(a) = Gamma(a + 1) * U^(1/a)
        double u = 1.0 - gc_rng_double (self);
        return gc_rng_gamma (self, shape + 1.0) * pow (u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0;
    double c = 1.0 / sqrt (9.0 * d);
    for (;;) {
        double x = gc_rng_normal (self);
        double v = 1.0 + c * x;
        if (v <= 0.0)
            continue;
        v = v * v * v;
        double u = 1.0 - gc_rng_double (self);
        if (log (u) < 0.5 * x * x + d - d * v + d * log (v))
            return d * v;
    }
}

void
gc_rng_shuffle_u32 (gc_rng_t *self, uint32_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t) gc_rng_below (self, i);
        uint32_t t = a [i - 1];
        a [i - 1] = a [j];
        a [j] = t;
    }
}

void
gc_rng_fill_normal (gc_rng_t *self, float *a, size_t n, float mean, float std)
{
    for (size_t i = 0; i < n; i++)
        a [i] = mean + std * (float) gc_rng_normal (self);
}
