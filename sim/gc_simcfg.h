/*  gc_simcfg — the simulator-only keys of a scenario (docs/SCENARIOS.md,
    "gcsim"): the `sim` section for every peer, and group/NAME/sim for the
    peers of a group (later groups override earlier ones, as for gcnode keys).
    gcnet ignores both.

      sim
          latency_ms = 0.1        one-way latency of a link (the slower end decides)
          jitter_ms = 0           plus uniform [0, jitter) per message (order kept)
          bandwidth = off         bytes/s of a link ("100mbit", "12.5MB", off)
          slow = 1                compute slow-down factor (stragglers)
          compute_jitter = 0      each round's compute x (1 + uniform [0, jitter))
          start_ms = 0            the peer's first round starts after uniform [0, start_ms)
          round_ms = 0            virtual time of a round's gossip work (added to the compute)
          cores = 0               (sim section only) the peers share this many cores, as
                                  gcnet's processes share this machine's: compute x peers / cores
          step_ms = 0             virtual time of one local SGD step (0: from gflops)
          gflops = 100            6 * params * batch / gflops = one step's time
          omniscient = 0          a Byzantine peer sees every honest model
          skip_crypto = 0         (sim section only) no signing / verification
          threads = 1             (sim section only) 1 or 2 */
#ifndef GC_SIMCFG_H
#define GC_SIMCFG_H

#include <stdbool.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_scenario.h"

typedef struct {
    double latency_ms;
    double jitter_ms;
    double bandwidth;       /* bytes/s, 0 = unlimited */
    double slow;
    double compute_jitter;
    double start_ms;
    double round_ms;
    double step_ms;         /* 0: derived from gflops */
    double gflops;
    bool   omniscient;
} gc_simpeer_t;

typedef struct {
    uint32_t      n_peers;
    gc_simpeer_t *peers;
    bool          skip_crypto;
    int           threads;
    long          cores;        /* 0: one per peer */
} gc_simcfg_t;

/*  Read the sim keys of path for the peers of sc. */
gc_simcfg_t *gc_simcfg_load (const char *path, const gc_scenario_t *sc, gc_err_t *err);
void         gc_simcfg_destroy (gc_simcfg_t **self_p);

#endif
