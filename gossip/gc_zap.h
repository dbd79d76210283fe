/*  gc_zap — the process's ZAP handler (ZeroMQ RFC 27) for CURVE servers.

    libzmq asks the handler at inproc://zeromq.zap.01 about every CURVE
    client that completed the key exchange, before the client can send a
    frame. gc_zap admits a client whose public key is an allowed entry of
    its table and refuses every other, and remembers the last refusal
    (remote address, client key, the configured peer that key belongs to,
    if any) so that the operator's warning names who knocked and from
    where. The admitted client's User-Id is its key in Z85 text (what
    gc_zmq mutes by).

    Written instead of using CZMQ's zauth, which names nobody and aborts
    the process when the ZAP endpoint is already bound. One per process
    (the endpoint belongs to CZMQ's global context): a second gc_zap_new
    fails with GC_E_CONFIG while the first lives. */
#ifndef GC_ZAP_H
#define GC_ZAP_H

#include <stdbool.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_ZAP_KEY_TXT  41          /* Z85 text of a 32-byte key, with NUL */
#define GC_ZAP_NO_PEER  UINT32_MAX

typedef struct {
    uint8_t  key [32];              /* CURVE public key */
    uint32_t peer;                  /* the configured peer it belongs to */
    bool     allowed;               /* false: known, but refused (revoked) */
} gc_zap_key_t;

typedef struct {
    uint64_t admitted;
    uint64_t refused;               /* key unknown or not allowed */
    uint64_t malformed;             /* requests that were not ZAP 1.0 CURVE */
    char     last_address [64];     /* of the last refusal; "" before one */
    char     last_key [GC_ZAP_KEY_TXT];
    uint32_t last_peer;             /* GC_ZAP_NO_PEER: no configured peer's key */
} gc_zap_stats_t;

typedef struct gc_zap_t gc_zap_t;

/*  Bind the ZAP endpoint and start answering with a copy of keys. */
gc_zap_t *gc_zap_new (const gc_zap_key_t *keys, size_t n_keys, gc_err_t *err);
void gc_zap_stats (gc_zap_t *self, gc_zap_stats_t *out);
/*  After the CURVE servers it answers for are closed. */
void gc_zap_destroy (gc_zap_t **self_p);

#endif
