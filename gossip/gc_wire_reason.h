/*  gc_wire_reason — why a gossip message was rejected.

    The numbers and names are stable: names are metric labels and appear in
    docs/PROTOCOL.md; a new reason gets a new number at the end. */
#ifndef GC_WIRE_REASON_H
#define GC_WIRE_REASON_H

enum {
    GC_WIRE_OK = 0,
    GC_WIRE_TRUNCATED,          /* header frame, or payload frame, shorter than required */
    GC_WIRE_OVERSIZE,           /* payload larger than the receiver's maximum */
    GC_WIRE_BAD_LENGTH,         /* frame longer than declared, or a length the type forbids */
    GC_WIRE_BAD_MAGIC,
    GC_WIRE_BAD_VERSION,
    GC_WIRE_BAD_TYPE,
    GC_WIRE_BAD_FLAGS,          /* a flag bit not defined for the type */
    GC_WIRE_BAD_RESERVED,       /* a reserved byte is not zero */
    GC_WIRE_BAD_FIELD,          /* seq / base_seq break the rules */
    GC_WIRE_WRONG_NETWORK,
    GC_WIRE_UNKNOWN_SENDER,     /* peer id not in the trust store */
    GC_WIRE_REPLAY,             /* seq already accepted from this sender */
    GC_WIRE_STALE,              /* seq older than the reorder window */
    GC_WIRE_BAD_SIGNATURE,
    GC_WIRE_DIGEST_MISMATCH,    /* payload does not hash to the signed digest */
    GC_WIRE_WRONG_TARGET,       /* keyframe request addressed to another peer */
    GC_WIRE_BAD_EVIDENCE,       /* equivocation evidence that proves nothing */
    GC_WIRE_INTERNAL,           /* out of memory or a crypto library failure */
    GC_WIRE_NREASONS
};

/*  "ok", "truncated", "bad_signature", ...; "invalid" for an out-of-range code. */
const char *gc_wire_reason_name (int reason);

/*  The reason is what a decoder returns and what the receive counters count;
    err->code is the project-wide kind (gc_err.h) this maps it to: GC_E_FORMAT
    for a frame that is not a well-formed message (truncated .. bad_field),
    GC_E_PROTOCOL for a well-formed one the protocol refuses (wrong_network ..
    bad_evidence), GC_E_SYS for internal; 0 for ok. */
int gc_wire_reason_code (int reason);

#endif
