/*  gc_rng — seeded, portable pseudo-random numbers (xoshiro256**).

    Every random choice in gcnode (data synthesis, partitions, minibatches,
    random-k indices, QSGD rounding, attacks, the simulator) comes from here, so
    that the same seed gives the same bytes on every run. A generator is a small
    value type: keep it on the stack or inside the object that owns it. */
#ifndef GC_RNG_H
#define GC_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t s [4];
} gc_rng_t;

/*  Seed from (seed, stream): different streams of one seed are independent. */
void     gc_rng_init (gc_rng_t *self, uint64_t seed, uint64_t stream);
uint64_t gc_rng_next (gc_rng_t *self);
/*  Uniform in [0, 1) with 53 (double) or 24 (float) random bits. */
double   gc_rng_double (gc_rng_t *self);
float    gc_rng_float (gc_rng_t *self);
/*  Uniform integer in [0, n), without modulo bias. n must be > 0. */
uint64_t gc_rng_below (gc_rng_t *self, uint64_t n);
/*  Standard normal N(0, 1). */
double   gc_rng_normal (gc_rng_t *self);
/*  Gamma(shape, 1), shape > 0 (Marsaglia and Tsang). */
double   gc_rng_gamma (gc_rng_t *self, double shape);
/*  Fisher-Yates shuffle. */
void     gc_rng_shuffle_u32 (gc_rng_t *self, uint32_t *a, size_t n);
/*  a[i] = mean + std * N(0, 1). */
void     gc_rng_fill_normal (gc_rng_t *self, float *a, size_t n, float mean, float std);

/*  A strong 64-bit mix (splitmix64 finaliser): derive seeds from tuples such
    as (sender, round) so that every receiver regenerates the same stream. */
uint64_t gc_mix64 (uint64_t x);
uint64_t gc_seed_derive (uint64_t a, uint64_t b);

#endif
