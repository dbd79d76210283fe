/*  gc_attack — what a Byzantine peer sends instead of its honest update.

    Attacks are computed only from what the attacker itself observes: its own
    (honestly trained) model and the replicas it holds of its in-neighbours
    (the simulator may grant an omniscient view instead). Model attacks pick
    a target model z (per victim for dissensus and equivocation) and send it
    exactly, as a keyframe with a fresh state id, so the victims' replicas of
    the attacker become z. Protocol attacks send what an honest decoder must
    refuse. docs/ALGORITHMS.md defines each one exactly.

      signflip[:S]     z = -S * mu                         (S = 1)
      noise[:SIGMA]    z = mu + SIGMA * rms(mu) * N(0, I)   (SIGMA = 10)
      alie[:Z]         z = mu - Z * sigma (per coordinate)  (Z from n and f, below)
      ipm[:EPS]        z = mu_prev - EPS * (mu - mu_prev)   (EPS = 0.5)
      labelflip        trains on labels c -> C-1-c, sends honestly
      dissensus[:EPS]  z_i = x_i - EPS * (mu - x_i) for each victim i (EPS = 1)
      mimic            z = the replica of the attacker's first in-neighbour
      equivocate[:S]   mu + S * rms(mu) * N to half the neighbours, mu - ... to the
                       other half, both signed with the same seq  (S = 1)
      replay           honest updates, plus each round one of its own old messages
      untrusted        messages signed with a key no one trusts
      malformed        random bytes, truncated, wrong lengths, oversized frames
      flood            per round 50 times: a keyframe request to each neighbour and
                       a validly signed delta with an undecodable payload
      nan              payloads with NaN, and finite values that overflow to Inf
                       in the replica
      silent           sends nothing, not even HELLO
      fork             each round one seq, two validly signed deltas: its update to
                       the first half of the neighbours, the update negated to the
                       second half; the neighbour where the halves meet gets both
                       (so some peer can prove the equivocation, PROTOCOL.md 9)
      minmax, minsum   z = mu - g sigma/||sigma||, the largest g that keeps z as close
                       to the observed models as they are to each other (max, sum of
                       squared distances; Shejwalkar & Houmansadr 2021; gc_attack_adaptive.h)
      late:R:ATTACK    honest (trains and sends updates) before round R, then ATTACK
                       (a model attack)
      stealth[:K[:RHO]] z_i = x_i + K s_i (RHO e + sqrt(1 - RHO^2) xi) for each victim i:
                       a push the size of self-centred clipping's radius (s_i: how far
                       x_i moved since the last round; K = 2), RHO of it along ALIE's
                       direction e = -sigma/||sigma|| and the rest along a fresh random
                       direction xi (orthogonal to e) every round, so that the push's
                       consistency over rounds is about RHO (= 0.5); with `balanced`,
                       e's coordinates carry a fixed random sign each (as many up
                       as down: what a test of the running mean's signs cannot see)
    mu, sigma: coordinate-wise mean and standard deviation of the observed
    models (own + synced replicas); mu_prev: mu of the previous round. */
#ifndef GC_ATTACK_H
#define GC_ATTACK_H

#include <stdbool.h>
#include <stddef.h>

#include "gc_err.h"
#include "gc_rng.h"

typedef enum {
    GC_ATTACK_NONE = 0,
    GC_ATTACK_SIGNFLIP,
    GC_ATTACK_NOISE,
    GC_ATTACK_ALIE,
    GC_ATTACK_IPM,
    GC_ATTACK_LABELFLIP,
    GC_ATTACK_DISSENSUS,
    GC_ATTACK_MIMIC,
    GC_ATTACK_EQUIVOCATE,
    GC_ATTACK_REPLAY,
    GC_ATTACK_UNTRUSTED,
    GC_ATTACK_MALFORMED,
    GC_ATTACK_FLOOD,
    GC_ATTACK_NAN,
    GC_ATTACK_SILENT,
    GC_ATTACK_MINMAX,
    GC_ATTACK_MINSUM,
    GC_ATTACK_FORK,
    GC_ATTACK_STEALTH
} gc_attack_kind_t;

typedef struct {
    gc_attack_kind_t kind;
    double           param;         /* S, SIGMA, Z, EPS, K; NAN-free */
    double           param2;        /* stealth: RHO */
    bool             param_given;   /* alie: false = z from the formula */
    bool             balanced;      /* stealth: e with a fixed random sign per coordinate */
    double           start;         /* late:R: first round of the attack (0: from the start) */
} gc_attack_t;

/*  "" or "none" parse to GC_ATTACK_NONE. */
int         gc_attack_parse (const char *spec, gc_attack_t *out, gc_err_t *err);
const char *gc_attack_name (gc_attack_kind_t kind);
/*  Model attacks send a target model; the others change the protocol. */
bool        gc_attack_is_model (gc_attack_kind_t kind);

/*  ALIE's z for n inputs of which f are Byzantine (Baruch et al.):
    s = floor(n/2 + 1) - f, z = Phi^-1((n - s) / n); 0 when that is not > 0. */
double      gc_attack_alie_z (size_t n, size_t f);

/*  Coordinate-wise mean and standard deviation of k models. */
void        gc_attack_moments (const float *const *models, size_t k, size_t d,
                               float *mean, float *std);
/*  The models' scale for noise and equivocate: the median over the k models of
    their rms. Not rms(mean): a colluder's noisy model in the mean would set the
    next round's noise, and two noise attackers who see each other would grow
    their noise geometrically until it overflows. rms: k floats of scratch. */
float       gc_attack_scale (const float *const *models, size_t k, size_t d, float *rms);
/*  Target model z for the non-per-victim model attacks. mean/std/prev_mean
    as above (prev_mean may equal mean on the first round), scale from
    gc_attack_scale. */
void        gc_attack_target (const gc_attack_t *attack, double alie_z,
                              const float *mean, const float *std, const float *prev_mean,
                              float scale, size_t d, gc_rng_t *rng, float *z);
/*  Dissensus target for one victim. */
void        gc_attack_dissensus (double eps, const float *victim, const float *mean,
                                 size_t d, float *z);
/*  Stealth's two unit directions for a round: e = -std / ||std|| (0 when std
    is 0; balanced: each coordinate times a fixed random sign) and xi = a
    N(0, I) draw with its component along e removed, scaled to norm 1. */
void        gc_attack_stealth_dirs (const float *std, size_t d, bool balanced, gc_rng_t *rng,
                                    float *e, float *xi);
/*  Stealth target for one victim that moved by step since the last round:
    z = victim + k step (rho e + sqrt(1 - rho^2) xi). */
void        gc_attack_stealth (double k, double rho, double step, const float *victim,
                               const float *e, const float *xi, size_t d, float *z);

#endif
