/*  gc_curve — optional CURVE encryption and neighbour allowlisting of a
    peer's ZeroMQ links, on top of (never instead of) per-message Ed25519
    signatures.

    Keys are ZeroMQ certificates (zcert format, Z85 text): NAME.curve holds
    the secret and public key (mode 0600, refused when group or others can
    read it), NAME.curve.pub only the public key. `gcnode keygen` writes both
    next to the Ed25519 identity.

    With CURVE on, the inbox ROUTER is a CURVE server and each neighbour
    DEALER a CURVE client that knows the neighbour's public key (so it talks
    only to the holder of that key). The process's ZAP handler (gc_zap)
    answers for the inbox: a client is admitted only if its public key is
    one of the (not revoked) neighbours' keys, so an unknown client cannot
    send a single frame. The inbox's socket monitor (gc_zmq's) reports each
    handshake to gc_curve_event, which counts failed ones (wrong key, CURVE
    off on the other side), so an operator sees who is knocking.

    One started gc_curve_t per process: the ZAP handler endpoint is per
    ZeroMQ context, and gcnode uses CZMQ's global one (a second
    gc_curve_start fails until the first is destroyed). */
#ifndef GC_CURVE_H
#define GC_CURVE_H

#include <stdbool.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_CURVE_KEY_TXT 41         /* Z85 text of a 32-byte key, with NUL */
#define GC_CURVE_INBOX   UINT32_MAX /* the `peer` of the inbox in gc_curve_apply */

typedef struct {
    uint64_t handshake_failed_auth;     /* client key not allowed (ZAP said no) */
    uint64_t handshake_failed_protocol; /* e.g. the client does not speak CURVE */
    uint64_t handshake_failed_other;
    uint64_t handshake_succeeded;
    char     failed_address [64];       /* the last protocol failure's remote address ("" none) */
    char     refused_address [64];      /* the last refused key's remote address ("" none) */
    char     refused_key [GC_CURVE_KEY_TXT];
    uint32_t refused_peer;              /* the configured peer that key is of; UINT32_MAX none */
} gc_curve_stats_t;

typedef struct gc_curve_t gc_curve_t;

/*  Is CURVE usable with this libzmq? */
bool gc_curve_available (void);

/*  Generate a certificate and write path (secret, 0600) and path.pub
    (public, 0644), atomically (temporary file + rename). meta_id (may be
    NULL) is recorded as the certificate's "peer-id" metadata. */
int  gc_curve_keygen (const char *path, const char *meta_id, gc_err_t *err);
/*  The public key (Z85) of a certificate file; with secret, the file must
    hold a secret key that matches its public key, and mode 0600. */
int  gc_curve_read_key (const char *path, bool secret, char out [GC_CURVE_KEY_TXT], gc_err_t *err);

/*  own_secret: this peer's NAME.curve. */
gc_curve_t *gc_curve_new (const char *own_secret, gc_err_t *err);
/*  Before gc_curve_start: neighbour `peer` has the CURVE public key in
    public_file (NAME.curve.pub, or NAME.curve). */
int  gc_curve_add_peer (gc_curve_t *self, uint32_t peer, const char *public_file, gc_err_t *err);
/*  Before gc_curve_start: peer's key is known but refused (peers/N/revoked),
    so that its refusal names it. */
int  gc_curve_add_revoked (gc_curve_t *self, uint32_t peer, const char *public_file, gc_err_t *err);
/*  Start the ZAP handler (gc_zap) with the neighbours' keys. Must run
    before any socket of this process binds. */
int  gc_curve_start (gc_curve_t *self, gc_err_t *err);
/*  The socket hook (gc_zmq_config_t.secure): zsock is a zsock_t *. The
    inbox (peer == GC_CURVE_INBOX) becomes a CURVE server with a monitor;
    a DEALER to `peer` a CURVE client of that peer's key. */
int  gc_curve_apply (void *self, void *zsock, uint32_t peer, gc_err_t *err);
/*  A handshake event of the inbox (gc_zmq_config_t.secure_event), with
    the remote address where gc_zmq knows it (else NULL). */
void gc_curve_event (void *self, int event, const char *address);
void gc_curve_stats (gc_curve_t *self, gc_curve_stats_t *out);
const char *gc_curve_public_txt (const gc_curve_t *self);
/*  After the sockets it secured are closed. */
void gc_curve_destroy (gc_curve_t **self_p);

#endif
