/*  gc_ops — the operational side of a running peer, kept out of the round
    loop: LAN discovery (gc_discovery), CURVE (gc_curve), the status file
    (gc_status), the HTTP endpoint (gc_http + gc_prom) and systemd
    notifications (gc_notify). gcnode run calls it at five points:

        gc_ops_new        after the engine exists: loads CURVE keys, starts
                          the ZAP handler; with discovery, announces this
                          peer and waits (bounded) for the neighbours whose
                          endpoint is "discover", then fills them in
        gc_ops_transport  before the transport is created: the CURVE hook
        gc_ops_ready      after the transport is bound: HTTP endpoint,
                          status file, READY=1
        gc_ops_round      after each round (trainer thread): snapshot for
                          the endpoint and the status file, watchdog,
                          warnings about refused beacons and handshakes
        gc_ops_destroy    after the transport is closed, before the engine
                          is destroyed: STOPPING=1, final status

    Every function accepts NULL (does nothing). */
#ifndef GC_OPS_H
#define GC_OPS_H

#include "gc_config.h"
#include "gc_engine.h"
#include "gc_err.h"
#include "gc_key.h"
#include "gc_metrics.h"
#include "gc_trust.h"
#include "gc_zmq.h"

typedef struct {
    gc_config_t    *cfg;            /* "discover" endpoints are replaced */
    gc_key_t       *key;
    gc_trust_t     *trust;
    const uint8_t (*ids) [8];       /* peer id of every peer index */
    gc_engine_t    *engine;
} gc_ops_config_t;

typedef struct gc_ops_t gc_ops_t;

gc_ops_t *gc_ops_new (const gc_ops_config_t *cfg, gc_err_t *err);
/*  gc_cli_error for an error of gc_ops_new (cmd_run.c calls it). */
int       gc_ops_fail (const char *cmd, const gc_err_t *err);
void      gc_ops_transport (gc_ops_t *self, gc_zmq_config_t *zc);
int       gc_ops_ready (gc_ops_t *self, gc_zmq_t *zmq, gc_err_t *err);
/*  Also sets m->extra, for the metrics line written after it. */
void      gc_ops_round (gc_ops_t *self, gc_metrics_ctx_t *m);
void      gc_ops_destroy (gc_ops_t **self_p);

#endif
