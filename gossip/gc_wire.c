#include "gc_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gc_hex.h"

//  Header layout (docs/PROTOCOL.md has the table). All integers little-endian.
enum {
    S_OFF_MAGIC = 0,
    S_OFF_VERSION = 4,
    S_OFF_TYPE = 5,
    S_OFF_FLAGS = 6,
    S_OFF_RESERVED0 = 7,
    S_OFF_NETWORK = 8,
    S_OFF_SENDER = 24,
    S_OFF_ROUND = 32,
    S_OFF_SEQ = 40,
    S_OFF_BASE_SEQ = 48,
    S_OFF_PAYLOAD_LEN = 56,
    S_OFF_RESERVED1 = 60,
    S_OFF_DIGEST = 64,
    S_OFF_RESERVED2 = 96,
    S_OFF_SIGNATURE = 128
};
#define S_SIGNING_INPUT_SIZE (GC_WIRE_DOMAIN_SIZE + GC_WIRE_NETWORK_ID_SIZE + GC_WIRE_SIGNED_SIZE)

_Static_assert (sizeof GC_WIRE_DOMAIN - 1 == GC_WIRE_DOMAIN_SIZE, "domain string is 16 bytes");
_Static_assert (S_OFF_SIGNATURE == GC_WIRE_SIGNED_SIZE, "signature follows the signed bytes");
_Static_assert (S_OFF_SIGNATURE + GC_SIG_SIZE == GC_WIRE_HEADER_SIZE, "header size");

static const char *const s_type_names [] = {
    [GC_MSG_HELLO] = "hello",
    [GC_MSG_DELTA] = "delta",
    [GC_MSG_KEYFRAME] = "keyframe",
    [GC_MSG_KEYFRAME_REQUEST] = "keyframe_request",
    [GC_MSG_EVIDENCE] = "evidence",
    [GC_MSG_WITNESS] = "witness",
};

const char *
gc_wire_type_name (int type)
{
    if (type < GC_MSG_HELLO || type > GC_MSG_TYPE_MAX)
        return "unknown";
    return s_type_names [type];
}

static uint64_t
s_get64 (const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p [i];
    return v;
}

static uint32_t
s_get32 (const uint8_t *p)
{
    return (uint32_t) p [0] | (uint32_t) p [1] << 8 | (uint32_t) p [2] << 16 | (uint32_t) p [3] << 24;
}

static void
s_put64 (uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        p [i] = (uint8_t) v;
}

static void
s_put32 (uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++, v >>= 8)
        p [i] = (uint8_t) v;
}

static int
s_all_zero (const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p [i];
    return acc == 0;
}

//  Record a rejection and return its reason: err->code is the reason's kind
//  (gc_wire_reason_code), the message names the peer and the reason.
static int
s_reject (gc_err_t *err, int reason, const char *who, const char *fmt, ...)
        __attribute__ ((format (printf, 4, 5)));
static int
s_reject (gc_err_t *err, int reason, const char *who, const char *fmt, ...)
{
    if (err) {
        char what [GC_ERR_MSG_MAX];
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (what, sizeof what, fmt, ap);
        va_end (ap);
        gc_err_set (err, gc_wire_reason_code (reason), "%s: %s: %s", who, gc_wire_reason_name (reason), what);
    }
    return reason;
}

static uint8_t
s_allowed_flags (int type)
{
    return type == GC_MSG_DELTA ? GC_WIRE_FLAG_EXACT : 0;
}

int
gc_wire_network_id (const char *name, uint8_t out [GC_WIRE_NETWORK_ID_SIZE], gc_err_t *err)
{
    static const char prefix [] = "gcnode/network/v1:";
    size_t len = name ? strlen (name) : 0;
    if (len < 1 || len > GC_WIRE_NETWORK_NAME_MAX)
        return gc_err_set (err, GC_E_RANGE, "network name must be 1 to %d bytes, not %zu",
                           GC_WIRE_NETWORK_NAME_MAX, len);
    uint8_t buf [sizeof prefix - 1 + GC_WIRE_NETWORK_NAME_MAX];
    memcpy (buf, prefix, sizeof prefix - 1);
    memcpy (buf + sizeof prefix - 1, name, len);
    uint8_t digest [GC_SHA256_SIZE];
    gc_sha256 (buf, sizeof prefix - 1 + len, digest);
    memcpy (out, digest, GC_WIRE_NETWORK_ID_SIZE);
    return 0;
}

int
gc_wire_parse (const uint8_t *h, size_t header_len, size_t payload_len, size_t max_payload,
               gc_msg_header_t *out, gc_err_t *err)
{
    //  The claimed sender, for messages; nothing here is authenticated yet.
    char who [32] = "unknown peer";
    if (header_len >= S_OFF_SENDER + GC_PEER_ID_SIZE) {
        char hex [GC_PEER_ID_HEX_LEN + 1];
        gc_peer_id_hex (h + S_OFF_SENDER, hex);
        snprintf (who, sizeof who, "peer %s", hex);
    }
    if (header_len < GC_WIRE_HEADER_SIZE)
        return s_reject (err, GC_WIRE_TRUNCATED, who, "header frame is %zu bytes, a header is %d",
                         header_len, GC_WIRE_HEADER_SIZE);
    if (header_len > GC_WIRE_HEADER_SIZE)
        return s_reject (err, GC_WIRE_BAD_LENGTH, who, "header frame is %zu bytes, a header is %d",
                         header_len, GC_WIRE_HEADER_SIZE);
    if (payload_len > max_payload || payload_len > UINT32_MAX)
        return s_reject (err, GC_WIRE_OVERSIZE, who, "payload frame is %zu bytes, limit %zu",
                         payload_len, max_payload < UINT32_MAX ? max_payload : (size_t) UINT32_MAX);
    if (h [0] != GC_WIRE_MAGIC0 || h [1] != GC_WIRE_MAGIC1
    ||  h [2] != GC_WIRE_MAGIC2 || h [3] != GC_WIRE_MAGIC3)
        return s_reject (err, GC_WIRE_BAD_MAGIC, who, "magic is %02x%02x%02x%02x, not \"GCNW\"",
                         h [0], h [1], h [2], h [3]);
    int version = h [S_OFF_VERSION], type = h [S_OFF_TYPE], flags = h [S_OFF_FLAGS];
    if (version != GC_WIRE_VERSION)
        return s_reject (err, GC_WIRE_BAD_VERSION, who, "protocol version %d, this peer speaks %d",
                         version, GC_WIRE_VERSION);
    if (type < GC_MSG_HELLO || type > GC_MSG_TYPE_MAX)
        return s_reject (err, GC_WIRE_BAD_TYPE, who, "message type %d is unknown to version %d",
                         type, GC_WIRE_VERSION);
    const char *tname = gc_wire_type_name (type);
    uint32_t declared = s_get32 (h + S_OFF_PAYLOAD_LEN);
    if (declared > max_payload)
        return s_reject (err, GC_WIRE_OVERSIZE, who, "%s declares a %u-byte payload, limit %zu",
                         tname, declared, max_payload);
    if ((type == GC_MSG_HELLO && declared > GC_WIRE_HELLO_MAX)
    ||  (type == GC_MSG_KEYFRAME_REQUEST && declared != GC_WIRE_REQUEST_SIZE)
    ||  (type == GC_MSG_EVIDENCE && declared != GC_WIRE_EVIDENCE_SIZE)
    ||  (type == GC_MSG_WITNESS && (declared == 0 || declared % GC_WIRE_HEADER_SIZE
                                    || declared > GC_WIRE_WITNESS_MAX * GC_WIRE_HEADER_SIZE)))
        return s_reject (err, GC_WIRE_BAD_LENGTH, who, "%s with a %u-byte payload "
                         "(hello <= %d, keyframe_request = %d, evidence = %d, witness = 1..%d times %d)",
                         tname, declared, GC_WIRE_HELLO_MAX, GC_WIRE_REQUEST_SIZE, GC_WIRE_EVIDENCE_SIZE,
                         GC_WIRE_WITNESS_MAX, GC_WIRE_HEADER_SIZE);
    if (flags & ~s_allowed_flags (type))
        return s_reject (err, GC_WIRE_BAD_FLAGS, who, "flags 0x%02x on a %s (allowed 0x%02x)",
                         flags, tname, s_allowed_flags (type));
    if (h [S_OFF_RESERVED0] || !s_all_zero (h + S_OFF_RESERVED1, 4)
    ||  !s_all_zero (h + S_OFF_RESERVED2, S_OFF_SIGNATURE - S_OFF_RESERVED2))
        return s_reject (err, GC_WIRE_BAD_RESERVED, who, "reserved header bytes (7, 60-63, "
                         "96-127) must be zero");
    uint64_t seq = s_get64 (h + S_OFF_SEQ), base_seq = s_get64 (h + S_OFF_BASE_SEQ);
    if (seq == 0)
        return s_reject (err, GC_WIRE_BAD_FIELD, who, "seq 0 on a %s (sequence numbers start at 1)",
                         tname);
    //  A keyframe request's base_seq counts in the target's sequence space.
    if (type != GC_MSG_KEYFRAME_REQUEST && base_seq >= seq)
        return s_reject (err, GC_WIRE_BAD_FIELD, who, "%s with base_seq %llu >= seq %llu", tname,
                         (unsigned long long) base_seq, (unsigned long long) seq);
    out->version = (uint8_t) version;
    out->type = (uint8_t) type;
    out->flags = (uint8_t) flags;
    memcpy (out->network_id, h + S_OFF_NETWORK, GC_WIRE_NETWORK_ID_SIZE);
    memcpy (out->sender, h + S_OFF_SENDER, GC_PEER_ID_SIZE);
    out->round = s_get64 (h + S_OFF_ROUND);
    out->seq = seq;
    out->base_seq = base_seq;
    out->payload_len = declared;
    memcpy (out->payload_digest, h + S_OFF_DIGEST, GC_SHA256_SIZE);
    memcpy (out->signature, h + S_OFF_SIGNATURE, GC_SIG_SIZE);
    return GC_WIRE_OK;
}

static void
s_signing_input (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], const uint8_t *header,
                 uint8_t out [S_SIGNING_INPUT_SIZE])
{
    memcpy (out, GC_WIRE_DOMAIN, GC_WIRE_DOMAIN_SIZE);
    memcpy (out + GC_WIRE_DOMAIN_SIZE, network_id, GC_WIRE_NETWORK_ID_SIZE);
    memcpy (out + GC_WIRE_DOMAIN_SIZE + GC_WIRE_NETWORK_ID_SIZE, header, GC_WIRE_SIGNED_SIZE);
}

static int
s_encode (gc_key_t *signer, const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE],
          gc_msg_header_t *hdr, const uint8_t *payload, size_t len,
          uint8_t *header_out, bool sign, gc_err_t *err);

int
gc_wire_encode (gc_key_t *signer, const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE],
                gc_msg_header_t *hdr, const uint8_t *payload, size_t len,
                uint8_t *header_out, gc_err_t *err)
{
    return s_encode (signer, network_id, hdr, payload, len, header_out, true, err);
}

int
gc_wire_encode_unsigned (gc_key_t *signer, const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE],
                         gc_msg_header_t *hdr, const uint8_t *payload, size_t len,
                         uint8_t *header_out, gc_err_t *err)
{
    return s_encode (signer, network_id, hdr, payload, len, header_out, false, err);
}

static int
s_encode (gc_key_t *signer, const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE],
          gc_msg_header_t *hdr, const uint8_t *payload, size_t len,
          uint8_t *header_out, bool sign, gc_err_t *err)
{
    if (len > UINT32_MAX)
        return gc_err_set (err, GC_E_RANGE, "encode: a %zu-byte payload does not fit the "
                           "32-bit length field", len);
    if (!payload && len)
        return gc_err_set (err, GC_E_ARG, "encode: no payload buffer for %zu bytes", len);
    hdr->version = GC_WIRE_VERSION;
    memcpy (hdr->network_id, network_id, GC_WIRE_NETWORK_ID_SIZE);
    memcpy (hdr->sender, gc_key_peer_id (signer), GC_PEER_ID_SIZE);
    hdr->payload_len = (uint32_t) len;
    if (sign)
        gc_sha256 (payload && len ? payload : (const uint8_t *) "", len, hdr->payload_digest);
    else
        memset (hdr->payload_digest, 0, GC_SHA256_SIZE);

    uint8_t *h = header_out;
    memset (h, 0, GC_WIRE_HEADER_SIZE);
    h [0] = GC_WIRE_MAGIC0;
    h [1] = GC_WIRE_MAGIC1;
    h [2] = GC_WIRE_MAGIC2;
    h [3] = GC_WIRE_MAGIC3;
    h [S_OFF_VERSION] = hdr->version;
    h [S_OFF_TYPE] = hdr->type;
    h [S_OFF_FLAGS] = hdr->flags;
    memcpy (h + S_OFF_NETWORK, hdr->network_id, GC_WIRE_NETWORK_ID_SIZE);
    memcpy (h + S_OFF_SENDER, hdr->sender, GC_PEER_ID_SIZE);
    s_put64 (h + S_OFF_ROUND, hdr->round);
    s_put64 (h + S_OFF_SEQ, hdr->seq);
    s_put64 (h + S_OFF_BASE_SEQ, hdr->base_seq);
    s_put32 (h + S_OFF_PAYLOAD_LEN, hdr->payload_len);
    memcpy (h + S_OFF_DIGEST, hdr->payload_digest, GC_SHA256_SIZE);

    //  Never emit what a receiver would reject.
    gc_msg_header_t check;
    if (gc_wire_parse (h, GC_WIRE_HEADER_SIZE, len, UINT32_MAX, &check, err) != GC_WIRE_OK)
        return gc_err_prefix (err, "encode: ");
    if (!sign) {
        memset (hdr->signature, 0, GC_SIG_SIZE);
        return 0;
    }
    uint8_t input [S_SIGNING_INPUT_SIZE];
    s_signing_input (network_id, h, input);
    if (gc_key_sign (signer, input, sizeof input, h + S_OFF_SIGNATURE, err) != 0)
        return gc_err_prefix (err, "encode: ");
    memcpy (hdr->signature, h + S_OFF_SIGNATURE, GC_SIG_SIZE);
    return 0;
}

//  Network, sender in the trust store, replay window: the checks before the
//  signature. key (if not NULL) gets the sender's key.
static int
s_check_sender (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                gc_replay_t *replay, const gc_msg_header_t *hdr, gc_key_t **key_out,
                gc_err_t *err)
{
    char who [32];
    char hex [GC_PEER_ID_HEX_LEN + 1];
    gc_peer_id_hex (hdr->sender, hex);
    snprintf (who, sizeof who, "peer %s", hex);
    const char *tname = gc_wire_type_name (hdr->type);
    if (memcmp (hdr->network_id, network_id, GC_WIRE_NETWORK_ID_SIZE)) {
        char theirs [2 * GC_WIRE_NETWORK_ID_SIZE + 1], ours [2 * GC_WIRE_NETWORK_ID_SIZE + 1];
        gc_hex_encode (hdr->network_id, GC_WIRE_NETWORK_ID_SIZE, theirs);
        gc_hex_encode (network_id, GC_WIRE_NETWORK_ID_SIZE, ours);
        return s_reject (err, GC_WIRE_WRONG_NETWORK, who, "%s for network %s, this is %s",
                         tname, theirs, ours);
    }
    gc_key_t *key = gc_trust_lookup (trust, hdr->sender);
    if (!key)
        return s_reject (err, GC_WIRE_UNKNOWN_SENDER, who, "%s seq %llu from a key not in the "
                         "trust store", tname, (unsigned long long) hdr->seq);
    if (replay) {
        int r = gc_replay_check (replay, hdr->sender, hdr->seq);
        if (r != GC_WIRE_OK) {
            uint64_t last = 0;
            gc_replay_last (replay, hdr->sender, &last);
            return s_reject (err, r, who, "%s seq %llu (last accepted %llu, window %u)", tname,
                             (unsigned long long) hdr->seq, (unsigned long long) last,
                             gc_replay_window (replay));
        }
    }
    if (key_out)
        *key_out = key;
    return GC_WIRE_OK;
}

//  Network, sender and signature: what an evidence header needs as well.
static int
s_verify_header (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                 gc_replay_t *replay, const uint8_t *header, const gc_msg_header_t *hdr,
                 gc_err_t *err)
{
    gc_key_t *key = NULL;
    int r = s_check_sender (network_id, trust, replay, hdr, &key, err);
    if (r != GC_WIRE_OK)
        return r;
    uint8_t input [S_SIGNING_INPUT_SIZE];
    s_signing_input (network_id, header, input);
    if (gc_key_verify (key, input, sizeof input, hdr->signature) != 0) {
        char who [32];
        char hex [GC_PEER_ID_HEX_LEN + 1];
        gc_peer_id_hex (hdr->sender, hex);
        snprintf (who, sizeof who, "peer %s", hex);
        return s_reject (err, GC_WIRE_BAD_SIGNATURE, who, "%s seq %llu: header signature does "
                         "not verify", gc_wire_type_name (hdr->type), (unsigned long long) hdr->seq);
    }
    return GC_WIRE_OK;
}

int
gc_wire_verify_header (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                       const uint8_t *header, const gc_msg_header_t *hdr, gc_err_t *err)
{
    return s_verify_header (network_id, trust, NULL, header, hdr, err);
}

int
gc_wire_verify (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                gc_replay_t *replay, const uint8_t *header, const gc_msg_header_t *hdr,
                const uint8_t *payload, size_t payload_len, bool crypto, gc_err_t *err)
{
    int r = crypto ? s_verify_header (network_id, trust, replay, header, hdr, err)
                   : s_check_sender (network_id, trust, replay, hdr, NULL, err);
    if (r != GC_WIRE_OK)
        return r;
    char who [32];
    char hex [GC_PEER_ID_HEX_LEN + 1];
    gc_peer_id_hex (hdr->sender, hex);
    snprintf (who, sizeof who, "peer %s", hex);
    const char *tname = gc_wire_type_name (hdr->type);
    if (payload_len != hdr->payload_len)
        return s_reject (err, payload_len < hdr->payload_len ? GC_WIRE_TRUNCATED : GC_WIRE_BAD_LENGTH,
                         who, "%s seq %llu: payload frame is %zu bytes, the header says %u", tname,
                         (unsigned long long) hdr->seq, payload_len, hdr->payload_len);
    if (crypto) {
        uint8_t digest [GC_SHA256_SIZE];
        gc_sha256 (payload && payload_len ? payload : (const uint8_t *) "", payload_len, digest);
        if (memcmp (digest, hdr->payload_digest, GC_SHA256_SIZE))
            return s_reject (err, GC_WIRE_DIGEST_MISMATCH, who, "%s seq %llu: the %zu-byte payload "
                             "does not match its signed SHA-256", tname, (unsigned long long) hdr->seq,
                             payload_len);
    }
    if (replay) {
        r = gc_replay_accept (replay, hdr->sender, hdr->seq, err);
        if (r != GC_WIRE_OK)
            return r == GC_WIRE_INTERNAL ? r
                 : s_reject (err, r, who, "%s seq %llu", tname, (unsigned long long) hdr->seq);
    }
    return GC_WIRE_OK;
}

int
gc_wire_decode_ex (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                   gc_replay_t *replay, size_t max_payload,
                   const uint8_t *header, size_t header_len,
                   const uint8_t *payload, size_t payload_len,
                   gc_msg_header_t *out, gc_err_t *err)
{
    int r = gc_wire_parse_frames (header, header_len, payload, payload_len, max_payload, out, err);
    if (r != GC_WIRE_OK)
        return r;
    return gc_wire_verify (network_id, trust, replay, header, out, payload, payload_len, true, err);
}

int
gc_wire_parse_frames (const uint8_t *header, size_t header_len, const uint8_t *payload,
                      size_t payload_len, size_t max_payload, gc_msg_header_t *out, gc_err_t *err)
{
    if ((!header && header_len) || (!payload && payload_len)) {
        gc_err_set (err, GC_E_ARG, "decode: no buffer for a %zu-byte frame",
                    payload_len ? payload_len : header_len);
        return GC_WIRE_INTERNAL;
    }
    return gc_wire_parse (header, header_len, payload_len, max_payload, out, err);
}

int
gc_wire_decode (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                size_t max_payload, const uint8_t *header, size_t header_len,
                const uint8_t *payload, size_t payload_len, gc_msg_header_t *out, gc_err_t *err)
{
    return gc_wire_decode_ex (network_id, trust, NULL, max_payload, header, header_len,
                              payload, payload_len, out, err);
}

int
gc_wire_evidence_build (const uint8_t a [GC_WIRE_HEADER_SIZE], const uint8_t b [GC_WIRE_HEADER_SIZE],
                        uint8_t out [GC_WIRE_EVIDENCE_SIZE], gc_err_t *err)
{
    int c = memcmp (a, b, GC_WIRE_SIGNED_SIZE);
    if (c == 0)
        return gc_err_set (err, GC_E_ARG, "evidence: the two headers sign the same bytes");
    const uint8_t *first = c < 0 ? a : b, *second = c < 0 ? b : a;
    memcpy (out, first, GC_WIRE_HEADER_SIZE);
    memcpy (out + GC_WIRE_HEADER_SIZE, second, GC_WIRE_HEADER_SIZE);
    return 0;
}

int
gc_wire_evidence_verify (const uint8_t network_id [GC_WIRE_NETWORK_ID_SIZE], gc_trust_t *trust,
                         const uint8_t *payload, size_t len, uint8_t accused [GC_PEER_ID_SIZE],
                         gc_err_t *err)
{
    if (len != GC_WIRE_EVIDENCE_SIZE)
        return s_reject (err, GC_WIRE_BAD_EVIDENCE, "evidence", "%zu bytes, evidence is %d",
                         len, GC_WIRE_EVIDENCE_SIZE);
    const uint8_t *ha = payload, *hb = payload + GC_WIRE_HEADER_SIZE;
    gc_msg_header_t a, b;
    gc_err_t inner = { 0 };
    for (int i = 0; i < 2; i++) {
        const uint8_t *h = i ? hb : ha;
        int r = gc_wire_parse (h, GC_WIRE_HEADER_SIZE, 0, UINT32_MAX, i ? &b : &a, &inner);
        if (r == GC_WIRE_OK)
            r = s_verify_header (network_id, trust, NULL, h, i ? &b : &a, &inner);
        if (r != GC_WIRE_OK)
            return s_reject (err, r == GC_WIRE_UNKNOWN_SENDER ? r : GC_WIRE_BAD_EVIDENCE,
                             "evidence", "header %d: %s", i + 1, inner.msg);
    }
    if (memcmp (a.sender, b.sender, GC_PEER_ID_SIZE) || a.seq != b.seq)
        return s_reject (err, GC_WIRE_BAD_EVIDENCE, "evidence", "the headers differ in sender "
                         "or seq, so they prove nothing");
    //  The canonical order also rules out the same header given twice.
    if (memcmp (ha, hb, GC_WIRE_SIGNED_SIZE) >= 0)
        return s_reject (err, GC_WIRE_BAD_EVIDENCE, "evidence", "headers not distinct and in "
                         "byte order");
    memcpy (accused, a.sender, GC_PEER_ID_SIZE);
    return GC_WIRE_OK;
}
