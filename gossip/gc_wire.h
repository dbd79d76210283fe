/*  gc_wire — the gossip message codec: a fixed, signed 192-byte header and an
    opaque payload, as two ZeroMQ frames [header][payload]. docs/PROTOCOL.md is
    the byte-exact specification; this file implements it on byte buffers and
    knows nothing about sockets.

    Sending: gc_wire_encode hashes the payload once (SHA-256), puts the digest
    in the header and signs the header once (Ed25519), whatever the payload
    size. The same header + payload go to every neighbour.

    Receiving: gc_wire_decode checks, in this order, and stops at the first
    failure with a reason code (gc_wire_reason.h):
      frame sizes and the receiver's maximum -> magic, version, type, flags,
      reserved bytes, seq rules -> network id -> sender in the trust store ->
      replay window (gc_wire_decode_ex only) -> header signature -> payload
      length -> payload digest -> accept (then the replay window advances).
    Everything before the signature is cheap and touches only the header;
    the payload is read only by the final digest. */
#ifndef GC_WIRE_H
#define GC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_key.h"
#include "gc_replay.h"
#include "gc_sha256.h"
#include "gc_trust.h"
#include "gc_wire_reason.h"

#define GC_WIRE_VERSION         1
#define GC_WIRE_HEADER_SIZE     192
#define GC_WIRE_SIGNED_SIZE     128     /* header bytes covered by the signature */
#define GC_WIRE_NETWORK_ID_SIZE 16
#define GC_WIRE_NETWORK_NAME_MAX 255
#define GC_WIRE_DOMAIN          "gcnode/gossip/v1"  /* 16 bytes, no NUL, signed first */
#define GC_WIRE_DOMAIN_SIZE     16
#define GC_WIRE_MAGIC0 'G'
#define GC_WIRE_MAGIC1 'C'
#define GC_WIRE_MAGIC2 'N'
#define GC_WIRE_MAGIC3 'W'

//  Message types (0 and 7..255 are rejected as bad_type by version 1).
enum {
    GC_MSG_HELLO = 1,               /* announce: who I am, where, my state */
    GC_MSG_DELTA = 2,               /* compressed model delta */
    GC_MSG_KEYFRAME = 3,            /* full model state */
    GC_MSG_KEYFRAME_REQUEST = 4,    /* ask one peer for a keyframe */
    GC_MSG_EVIDENCE = 5,            /* equivocation proof against a third peer */
    GC_MSG_WITNESS = 6,             /* headers the sender accepted, for its neighbours to compare */
    GC_MSG_TYPE_MAX = 6
};

//  Flags. Bits not defined for a message's type are rejected (bad_flags).
#define GC_WIRE_FLAG_EXACT 0x01     /* DELTA: after it, the replica equals the sender's model */

//  Payload lengths fixed or bounded by the type.
#define GC_WIRE_HELLO_MAX       4096
#define GC_WIRE_REQUEST_SIZE    8                           /* target peer id */
#define GC_WIRE_EVIDENCE_SIZE   (2 * GC_WIRE_HEADER_SIZE)   /* two headers */
#define GC_WIRE_WITNESS_MAX     64                          /* headers in one WITNESS */

typedef struct {
    uint8_t  version;
    uint8_t  type;
    uint8_t  flags;
    uint8_t  network_id [GC_WIRE_NETWORK_ID_SIZE];
    uint8_t  sender [GC_PEER_ID_SIZE];
    uint64_t round;
    uint64_t seq;               /* >= 1, unique per sender, increasing */
    uint64_t base_seq;          /* state this message builds on (see PROTOCOL.md) */
    uint32_t payload_len;
    uint8_t  payload_digest [GC_SHA256_SIZE];
    uint8_t  signature [GC_SIG_SIZE];
} gc_msg_header_t;

/*  network_id = first 16 bytes of SHA-256("gcnode/network/v1:" || name);
    name is 1..255 bytes of text. */
int  gc_wire_network_id (const char *name, uint8_t out [GC_WIRE_NETWORK_ID_SIZE], gc_err_t *err);

/*  Fill and sign a header for payload. In hdr the caller sets type, flags,
    round, seq, base_seq; encode sets the rest (version, network, sender,
    length, digest, signature). header_out gets GC_WIRE_HEADER_SIZE bytes.
    Refuses (-1) a header the decoder would reject. */
int  gc_wire_encode (gc_key_t *signer, const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE],
                     gc_msg_header_t *hdr, const uint8_t *payload, size_t len,
                     uint8_t *header_out, gc_err_t *err);

/*  The same header with the digest and the signature left zero: only for a
    simulator whose receivers skip those checks (gc_engine.h, skip_crypto). */
int  gc_wire_encode_unsigned (gc_key_t *signer, const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE],
                              gc_msg_header_t *hdr, const uint8_t *payload, size_t len,
                              uint8_t *header_out, gc_err_t *err);

/*  Decode and verify. Returns GC_WIRE_OK or a reason code, with err naming
    the (claimed) peer and the field; err->code is the reason's kind
    (gc_wire_reason_code: GC_E_FORMAT or GC_E_PROTOCOL), not the reason. Once the header parses, *out holds its
    fields even on rejection: unauthenticated unless the result is OK. */
int  gc_wire_decode (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                     size_t max_payload,
                     const uint8_t *header, size_t header_len,
                     const uint8_t *payload, size_t payload_len,
                     gc_msg_header_t *out, gc_err_t *err);
/*  The same with a replay guard (may be NULL): checked before the signature,
    advanced only when the message is accepted. */
int  gc_wire_decode_ex (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                        gc_replay_t *replay, size_t max_payload,
                        const uint8_t *header, size_t header_len,
                        const uint8_t *payload, size_t payload_len,
                        gc_msg_header_t *out, gc_err_t *err);

/*  Only the checks that need no keys and no payload bytes (the first two
    steps above); payload_len is the length of the payload frame. */
int  gc_wire_parse (const uint8_t *header, size_t header_len, size_t payload_len,
                    size_t max_payload, gc_msg_header_t *out, gc_err_t *err);
/*  gc_wire_parse after refusing (GC_WIRE_INTERNAL) a frame with a length
    but no buffer: the first half of gc_wire_decode_ex. */
int  gc_wire_parse_frames (const uint8_t *header, size_t header_len, const uint8_t *payload,
                           size_t payload_len, size_t max_payload, gc_msg_header_t *out,
                           gc_err_t *err);
/*  The second half on a header hdr parsed from header (the receiver parses
    once and hands the struct down): network id, sender, replay window,
    signature, payload length, digest, replay accept. crypto false skips
    the signature and the digest (gc_wire_encode_unsigned's messages). */
int  gc_wire_verify (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                     gc_replay_t *replay, const uint8_t *header, const gc_msg_header_t *hdr,
                     const uint8_t *payload, size_t payload_len, bool crypto, gc_err_t *err);

/*  Only the header's network, sender (in the trust store) and signature, for
    a header whose payload is not at hand or not needed (a second header
    under a seq already accepted: equivocation, section 9 of PROTOCOL.md). */
int  gc_wire_verify_header (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                            const uint8_t *header, const gc_msg_header_t *hdr, gc_err_t *err);

/*  "hello", "delta", ...; "unknown" otherwise. */
const char *gc_wire_type_name (int type);

/*  Equivocation evidence: two validly signed headers from one sender with the
    same seq and different signed bytes. Payloads are not needed, the headers
    carry their digests. build writes the EVIDENCE payload (the two headers in
    byte order, so a pair has one encoding); -1 if the headers are equal. */
int  gc_wire_evidence_build (const uint8_t a [GC_WIRE_HEADER_SIZE],
                             const uint8_t b [GC_WIRE_HEADER_SIZE],
                             uint8_t out [GC_WIRE_EVIDENCE_SIZE], gc_err_t *err);
/*  GC_WIRE_OK and the accused peer id when payload proves equivocation under
    this network by a trusted key; GC_WIRE_UNKNOWN_SENDER if the accused is
    not trusted here; GC_WIRE_BAD_EVIDENCE otherwise. */
int  gc_wire_evidence_verify (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE],
                              gc_trust_t *trust, const uint8_t *payload, size_t len,
                              uint8_t accused [GC_PEER_ID_SIZE], gc_err_t *err);

#endif
