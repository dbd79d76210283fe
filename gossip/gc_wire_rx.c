#include "gc_wire_rx.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gc_wire_rx_t {
    uint8_t      network_id [GC_WIRE_NETWORK_ID_SIZE];
    gc_trust_t  *trust;
    gc_replay_t *replay;
    size_t       max_payload;
    bool         has_self;
    uint8_t      self_id [GC_PEER_ID_SIZE];
    uint64_t     counts [GC_WIRE_NREASONS];
};

gc_wire_rx_t *
gc_wire_rx_new (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                size_t max_payload, unsigned window, gc_err_t *err)
{
    gc_wire_rx_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_WIRE_INTERNAL, "receiver: out of memory");
        return NULL;
    }
    if (!(self->replay = gc_replay_new (window, err))) {
        free (self);
        return NULL;
    }
    memcpy (self->network_id, network_id, GC_WIRE_NETWORK_ID_SIZE);
    self->trust = trust;
    self->max_payload = max_payload;
    return self;
}

void
gc_wire_rx_set_self (gc_wire_rx_t *self, const uint8_t peer_id [GC_PEER_ID_SIZE])
{
    memcpy (self->self_id, peer_id, GC_PEER_ID_SIZE);
    self->has_self = true;
}

void
gc_wire_rx_set_max_payload (gc_wire_rx_t *self, size_t max_payload)
{
    self->max_payload = max_payload;
}

static int
s_after_accept (gc_wire_rx_t *self, const gc_msg_header_t *hdr, const uint8_t *payload,
                uint8_t accused [GC_PEER_ID_SIZE], gc_err_t *err)
{
    //  Both run on an authenticated payload; its author already used its seq.
    if (hdr->type == GC_MSG_KEYFRAME_REQUEST && self->has_self
    &&  memcmp (payload, self->self_id, GC_PEER_ID_SIZE)) {
        char from [GC_PEER_ID_HEX_LEN + 1], to [GC_PEER_ID_HEX_LEN + 1];
        gc_peer_id_hex (hdr->sender, from);
        gc_peer_id_hex (payload, to);
        gc_err_set (err, GC_WIRE_WRONG_TARGET, "peer %s: wrong_target: keyframe_request "
                    "seq %llu is addressed to %s", from, (unsigned long long) hdr->seq, to);
        return GC_WIRE_WRONG_TARGET;
    }
    if (hdr->type == GC_MSG_EVIDENCE) {
        uint8_t who [GC_PEER_ID_SIZE];
        int r = gc_wire_evidence_verify (self->network_id, self->trust, payload,
                                         GC_WIRE_EVIDENCE_SIZE, who, err);
        if (r != GC_WIRE_OK)
            return r;
        if (accused)
            memcpy (accused, who, GC_PEER_ID_SIZE);
    }
    return GC_WIRE_OK;
}

static int
s_counted (gc_wire_rx_t *self, int r)
{
    if (r >= 0 && r < GC_WIRE_NREASONS)
        self->counts [r]++;
    return r;
}

int
gc_wire_rx_parse (gc_wire_rx_t *self, const uint8_t *header, size_t header_len,
                  const uint8_t *payload, size_t payload_len, gc_msg_header_t *out, gc_err_t *err)
{
    int r = gc_wire_parse_frames (header, header_len, payload, payload_len, self->max_payload, out, err);
    return r == GC_WIRE_OK ? r : s_counted (self, r);
}

int
gc_wire_rx_verify (gc_wire_rx_t *self, const uint8_t *header, const gc_msg_header_t *hdr,
                   const uint8_t *payload, size_t payload_len, bool crypto,
                   uint8_t accused [GC_PEER_ID_SIZE], gc_err_t *err)
{
    int r = gc_wire_verify (self->network_id, self->trust, self->replay, header, hdr, payload,
                            payload_len, crypto || hdr->type == GC_MSG_EVIDENCE, err);
    if (r == GC_WIRE_OK)
        r = s_after_accept (self, hdr, payload, accused, err);
    return s_counted (self, r);
}

int
gc_wire_rx_decode (gc_wire_rx_t *self, const uint8_t *header, size_t header_len,
                   const uint8_t *payload, size_t payload_len,
                   gc_msg_header_t *out, uint8_t accused [GC_PEER_ID_SIZE], gc_err_t *err)
{
    int r = gc_wire_rx_parse (self, header, header_len, payload, payload_len, out, err);
    if (r != GC_WIRE_OK)
        return r;
    return gc_wire_rx_verify (self, header, out, payload, payload_len, true, accused, err);
}

uint64_t
gc_wire_rx_count (const gc_wire_rx_t *self, int reason)
{
    return reason >= 0 && reason < GC_WIRE_NREASONS ? self->counts [reason] : 0;
}

gc_replay_t *
gc_wire_rx_replay (gc_wire_rx_t *self)
{
    return self->replay;
}

void
gc_wire_rx_destroy (gc_wire_rx_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_replay_destroy (&(*self_p)->replay);
    free (*self_p);
    *self_p = NULL;
}
