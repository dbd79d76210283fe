/*  gc_wire_rx — one receiving peer's view of the wire: its network id, trust
    store, payload limit, replay guard and rejection counters.

    gc_wire_rx_decode is gc_wire_decode_ex plus the checks that need to know
    who is receiving: a keyframe request must name this peer as its target,
    and an evidence message must carry valid evidence. Every result, accepted
    or not, is counted by reason (the metrics). Not thread-safe: one per
    receiving thread. */
#ifndef GC_WIRE_RX_H
#define GC_WIRE_RX_H

#include <stddef.h>
#include <stdint.h>

#include "gc_wire.h"

typedef struct gc_wire_rx_t gc_wire_rx_t;

/*  trust is borrowed and must outlive the receiver; window is the replay
    reorder window (0..GC_REPLAY_MAX_WINDOW). */
gc_wire_rx_t *gc_wire_rx_new (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE],
                              gc_trust_t *trust, size_t max_payload, unsigned window,
                              gc_err_t *err);

/*  This peer's id: keyframe requests for anyone else are rejected
    (wrong_target). Unset, requests are not checked for their target. */
void gc_wire_rx_set_self (gc_wire_rx_t *self, const uint8_t peer_id [GC_PEER_ID_SIZE]);
/*  The peer sets the limit from its model size (a keyframe must fit). */
void gc_wire_rx_set_max_payload (gc_wire_rx_t *self, size_t max_payload);

/*  GC_WIRE_OK or the reason, as gc_wire_decode. For an accepted EVIDENCE
    message, accused (if not NULL) gets the proven equivocator's peer id. */
int  gc_wire_rx_decode (gc_wire_rx_t *self, const uint8_t *header, size_t header_len,
                        const uint8_t *payload, size_t payload_len,
                        gc_msg_header_t *out, uint8_t accused [GC_PEER_ID_SIZE], gc_err_t *err);

/*  gc_wire_rx_decode in two steps, for a receiver that looks at the parsed
    header in between (its prefilter): parse checks the frames and the
    header fields (counting a failure); verify runs the rest on that header
    and counts the result. crypto false skips the signature and the digest
    for a simulator's unsigned messages (gc_engine.h, skip_crypto); an
    EVIDENCE message is always verified in full. */
int  gc_wire_rx_parse (gc_wire_rx_t *self, const uint8_t *header, size_t header_len,
                       const uint8_t *payload, size_t payload_len, gc_msg_header_t *out,
                       gc_err_t *err);
int  gc_wire_rx_verify (gc_wire_rx_t *self, const uint8_t *header, const gc_msg_header_t *hdr,
                        const uint8_t *payload, size_t payload_len, bool crypto,
                        uint8_t accused [GC_PEER_ID_SIZE], gc_err_t *err);

/*  Messages seen with this result (GC_WIRE_OK = accepted). */
uint64_t     gc_wire_rx_count (const gc_wire_rx_t *self, int reason);
gc_replay_t *gc_wire_rx_replay (gc_wire_rx_t *self);

void gc_wire_rx_destroy (gc_wire_rx_t **self_p);

#endif
