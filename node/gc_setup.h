/*  gc_setup — one peer's engine settings from its configuration: the one
    mapping of config keys (gc_config.c's table, the only source of their
    defaults) to gc_engine_config_t, used by gcnode, gcsim and the tests, and
    the data every peer loads the same way.

    What a driver supplies besides the configuration comes in
    gc_setup_parts_t: its own key, the trusted keys, every peer's id, the
    topology and the datasets (gcnode loads them from files, gcsim builds them
    once for every peer). The transport is the driver's gc_engine_io_t, given
    to gc_engine_new. Simulator-only settings (observer, skip_crypto,
    seq_start) are left zero for the driver to set. */
#ifndef GC_SETUP_H
#define GC_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "gc_config.h"
#include "gc_dataset.h"
#include "gc_engine.h"
#include "gc_err.h"

typedef struct {
    const gc_topology_t *topology;
    gc_key_t            *key;
    gc_trust_t          *trust;
    const uint8_t      (*peer_ids) [8];
    const gc_dataset_t  *train, *test;
} gc_setup_parts_t;

/*  ec from cfg (node/index is the peer's own index) and parts (NULL: none,
    the pointers stay NULL). Fails only on a bad train/schedule (err, which
    names the key). */
int gc_setup_engine (const gc_config_t *cfg, const gc_setup_parts_t *parts, gc_engine_config_t *ec,
                     gc_err_t *err);

/*  train/data opened with node/seed (Fashion-MNIST, an MNIST-format
    directory or synthetic: *fell_back when the default was asked for and is
    not installed), cut to train/train_samples and train/test_samples, and
    standardised with the training set's statistics. The split is the
    driver's: gcnode keeps its own part, gcsim parts it for every peer. */
int gc_setup_data (const gc_config_t *cfg, gc_dataset_t *train, gc_dataset_t *test, bool *fell_back,
                   gc_err_t *err);

#endif
