//  The receive path (network side): one message, one order of checks, in
//  this function and nowhere else (docs/PROTOCOL.md section 7 is the wire
//  part, docs/ARCHITECTURE.md the rest):
//    1. parse the header once (frame sizes, fields): gc_wire_rx_parse
//    2. prefilter on the claimed sender: partitioned away? muted?
//       excluded for equivocation?
//    3. verify that header (network, sender, replay window, signature,
//       payload length, digest, accept, request target, evidence):
//       gc_wire_rx_verify; a replay or stale seq whose header differs from
//       the one accepted under it is checked for equivocation (gc_equiv.c)
//    4. attribution: the verified sender is one of our peers
//    5. type rules: is it a neighbour for this type, rate limits
//    6. apply: payload decoded into the replica (gc_replica.c)
//  Every rejection is counted once, by reason; against the sender's peer
//  index only when it is the author's own fault (authenticated, with an
//  edge for the type), unattributed otherwise.
#include "gc_engine_internal.h"

#include "gc_reject_log.h"
#include "gc_time.h"

#define S_MUTE_WINDOW_NS (10 * 1000000000LL)

uint32_t
gc_engine_peer_of (gc_engine_t *self, const uint8_t id [8])
{
    size_t lo = 0, hi = self->n_peers;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = memcmp (self->by_id [mid].id, id, 8);
        if (c == 0)
            return self->by_id [mid].peer;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return UINT32_MAX;
}

//  An authenticated sender keeps failing: mute it for a while.
gc_deliver_t
gc_engine_reject (gc_engine_t *self, gc_contact_t *c, int reason, int64_t now)
{
    gc_engine_count (self, c, reason);
    gc_reject_log_note (c ? c->peer : UINT32_MAX, c ? self->cfg.peer_ids [c->peer] : NULL, reason, now);
    if (c) {
        if (now - c->window_start > S_MUTE_WINDOW_NS) {
            c->window_start = now;
            c->failures = 0;
        }
        if (++c->failures >= self->cfg.mute_after) {
            c->muted_until = now + self->cfg.mute_for_ns;
            c->failures = 0;
        }
    }
    return GC_DELIVER_REJECTED;
}

//  Step 2: cheap checks on the claimed sender before any cryptography: a
//  sender on the other side of an emulated partition (REJECTED: the fault
//  is ours, the connection is not to blame), or a muted one
//  (UNAUTHENTICATED: whoever claims a muted key counts against its
//  connection). GC_DELIVER_OK: go on.
static gc_deliver_t
s_prefilter (gc_engine_t *self, const gc_msg_header_t *h, int64_t now)
{
    gc_contact_t *c = gc_engine_contact (self, gc_engine_peer_of (self, h->sender));
    if (c && atomic_load_explicit (&c->blocked, memory_order_relaxed)) {
        gc_counter_add (&self->ctr.partitioned, 1);
        return GC_DELIVER_REJECTED;
    }
    if (c && c->muted_until > now) {
        gc_engine_count (self, c, GC_REJECT_MUTED);
        gc_reject_log_note (c->peer, h->sender, GC_REJECT_MUTED, now);
        return GC_DELIVER_UNAUTHENTICATED;
    }
    //  A proven equivocator is out for good; the claim costs no verify.
    if (gc_engine_excluded (self, gc_engine_peer_of (self, h->sender))) {
        gc_engine_count (self, c, GC_REJECT_EQUIVOCATED);
        return GC_DELIVER_UNAUTHENTICATED;
    }
    return GC_DELIVER_OK;
}

//  The window refused h's seq (replay or stale). The same header again is a
//  replay, as it says; a different one under a seq the author already used
//  is a forgery, or, authentic, equivocation: the author is excluded here
//  and the proof passed on. GC_DELIVER_OK: it was the same message.
static gc_deliver_t
s_second_header (gc_engine_t *self, const uint8_t *header, const gc_msg_header_t *h)
{
    uint32_t peer = gc_engine_peer_of (self, h->sender);
    gc_contact_t *c = peer == UINT32_MAX ? NULL : gc_engine_contact (self, peer);
    uint8_t proof [GC_WIRE_EVIDENCE_SIZE];
    double t0 = gc_now_s ();
    int r = gc_equiv_check (self, c, header, h, proof);
    if (r == 0)
        return GC_DELIVER_OK;
    gc_gauge_add (&self->ctr.t_verify, gc_now_s () - t0);
    gc_counter_add (&self->ctr.verifies, 1);
    if (r != 1) {
        gc_engine_count (self, NULL, r);
        return GC_DELIVER_UNAUTHENTICATED;
    }
    gc_counter_add (&self->ctr.evidence_found, 1);
    gc_equiv_convict (self, peer, proof);
    gc_engine_count (self, c, GC_REJECT_EQUIVOCATED);
    return GC_DELIVER_REJECTED;
}

//  Whether gc_wire_rx_verify got as far as the signature: the checks before
//  it (network, trust store, replay window) are the only cheap refusals.
static bool
s_verify_spent (const gc_engine_t *self, int reason)
{
    return !self->cfg.skip_crypto && reason != GC_WIRE_WRONG_NETWORK
        && reason != GC_WIRE_UNKNOWN_SENDER && reason != GC_WIRE_REPLAY && reason != GC_WIRE_STALE;
}

//  Step 5: which edge a message type needs. DELTA, KEYFRAME and WITNESS
//  come from an in-neighbour, a KEYFRAME_REQUEST from an out-neighbour;
//  HELLO and EVIDENCE from any peer.
static bool
s_has_edge (const gc_contact_t *c, int type)
{
    switch (type) {
        case GC_MSG_DELTA:
        case GC_MSG_KEYFRAME:
        case GC_MSG_WITNESS:
            return c && c->in >= 0;
        case GC_MSG_KEYFRAME_REQUEST:
            return c && c->out;
        default:
            return true;
    }
}

static gc_deliver_t
s_on_message (gc_engine_t *self, const uint8_t *header, size_t header_len,
              const uint8_t *payload, size_t payload_len, int64_t now)
{
    gc_counter_add (&self->ctr.msgs_recv, 1);
    gc_counter_add (&self->ctr.bytes_recv, header_len + payload_len);
    gc_msg_header_t h;
    gc_err_t err = { 0 };
    uint8_t accused [GC_PEER_ID_SIZE];
    int reason = gc_wire_rx_parse (self->rx, header, header_len, payload, payload_len, &h, &err);
    bool parsed = reason == GC_WIRE_OK;
    if (reason == GC_WIRE_OK) {
        //  a muted (or partitioned) sender costs no verify
        gc_deliver_t d = s_prefilter (self, &h, now);
        if (d != GC_DELIVER_OK)
            return d;
        double t0 = gc_now_s ();
        reason = gc_wire_rx_verify (self->rx, header, &h, payload, payload_len,
                                    !self->cfg.skip_crypto, accused, &err);
        gc_gauge_add (&self->ctr.t_verify, gc_now_s () - t0);
        if (s_verify_spent (self, reason))
            gc_counter_add (&self->ctr.verifies, 1);
        if (reason == GC_WIRE_REPLAY || reason == GC_WIRE_STALE) {
            d = s_second_header (self, header, &h);
            if (d != GC_DELIVER_OK)
                return d;
        }
    }
    //  The forwarder signed evidence that proves nothing: its own fault
    //  (the accused's key signed nothing of it), counted against it.
    if (reason == GC_WIRE_BAD_EVIDENCE) {
        gc_contact_t *f = gc_engine_contact (self, gc_engine_peer_of (self, h.sender));
        if (f)
            return gc_engine_reject (self, f, reason, now);
    }
    //  Nothing before the signature (and a replay of an authentic message
    //  after it) proves who sent this: whoever forged or relayed it is the
    //  connection's, so the claimed sender's counters stay clean.
    if (reason != GC_WIRE_OK) {
        gc_engine_count (self, NULL, reason);
        gc_reject_log_note (UINT32_MAX, parsed ? h.sender : NULL, reason, now);
        return GC_DELIVER_UNAUTHENTICATED;
    }
    //  Authentic, but a signed header names no recipient: a peer we have no
    //  edge with for this type (or no peer of ours at all) reached us through
    //  a relay or a misconfigured sender, so it costs the author nothing.
    uint32_t peer = gc_engine_peer_of (self, h.sender);
    gc_contact_t *c = peer == UINT32_MAX ? NULL : gc_engine_contact (self, peer);
    if (c)
        gc_equiv_record (self, c, header, h.seq);
    if (!c || !s_has_edge (c, h.type)) {
        int why = !c ? GC_REJECT_UNKNOWN_PEER : GC_REJECT_NOT_NEIGHBOUR;
        gc_engine_count (self, NULL, why);
        gc_reject_log_note (UINT32_MAX, h.sender, why, now);
        return GC_DELIVER_UNAUTHENTICATED;
    }
    gc_counter_add (&c->bytes_recv, header_len + payload_len);
    if (h.type == GC_MSG_DELTA || h.type == GC_MSG_KEYFRAME)
        gc_equiv_witness_note (self, header);
    //  The author signed this round: past the run's last one it is a lie
    //  (every honest peer stops there), and bounding it keeps the round
    //  arithmetic of freshness, staleness and catch-up far from overflow.
    if (h.round > self->cfg.rounds)
        return gc_engine_reject (self, c, GC_REJECT_BAD_ROUND, now);
    switch (h.type) {
        case GC_MSG_DELTA:
            reason = gc_replica_on_delta (self, c, &h, payload, payload_len, now);
            break;
        case GC_MSG_KEYFRAME:
            reason = gc_replica_on_keyframe (self, c, &h, payload, payload_len, now);
            break;
        case GC_MSG_KEYFRAME_REQUEST:
            //  serve one at the next publish, at most one per interval per peer
            gc_counter_add (&self->ctr.kf_requests_recv, 1);
            if (c->last_request_seen && now - c->last_request_seen < self->cfg.keyframe_interval_ns)
                reason = GC_REJECT_RATE_LIMITED;
            else {
                c->last_request_seen = now;
                atomic_store (&c->keyframe_pending, true);
            }
            break;
        case GC_MSG_HELLO:
            //  A (re)joining neighbour holds an old state of ours (or the
            //  initial one): our next delta shows it a gap and it asks for a
            //  keyframe, so nothing is sent blindly here.
            gc_counter_add (&self->ctr.hellos, 1);
            break;
        case GC_MSG_WITNESS:
            gc_counter_add (&self->ctr.witness_recv, 1);
            reason = gc_equiv_on_witness (self, c, payload, payload_len, now);
            break;
        case GC_MSG_EVIDENCE:
            //  verified in full by the decoder (both of the accused's
            //  signatures): the forwarder is not trusted for any of it
            gc_counter_add (&self->ctr.evidence_recv, 1);
            gc_equiv_convict (self, gc_engine_peer_of (self, accused), payload);
            break;
        default:
            break;
    }
    return reason == GC_WIRE_OK ? GC_DELIVER_OK : gc_engine_reject (self, c, reason, now);
}

gc_deliver_t
gc_engine_on_message (gc_engine_t *self, const uint8_t *header, size_t header_len,
                      const uint8_t *payload, size_t payload_len, int64_t now)
{
    GC_ENGINE_ENTER (self->receiver_busy);
    gc_deliver_t d = s_on_message (self, header, header_len, payload, payload_len, now);
    GC_ENGINE_LEAVE (self->receiver_busy);
    return d;
}
