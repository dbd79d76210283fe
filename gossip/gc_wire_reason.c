#include "gc_wire_reason.h"

#include "gc_err.h"

static const char *const s_names [GC_WIRE_NREASONS] = {
    [GC_WIRE_OK] = "ok",
    [GC_WIRE_TRUNCATED] = "truncated",
    [GC_WIRE_OVERSIZE] = "oversize",
    [GC_WIRE_BAD_LENGTH] = "bad_length",
    [GC_WIRE_BAD_MAGIC] = "bad_magic",
    [GC_WIRE_BAD_VERSION] = "bad_version",
    [GC_WIRE_BAD_TYPE] = "bad_type",
    [GC_WIRE_BAD_FLAGS] = "bad_flags",
    [GC_WIRE_BAD_RESERVED] = "bad_reserved",
    [GC_WIRE_BAD_FIELD] = "bad_field",
    [GC_WIRE_WRONG_NETWORK] = "wrong_network",
    [GC_WIRE_UNKNOWN_SENDER] = "unknown_sender",
    [GC_WIRE_REPLAY] = "replay",
    [GC_WIRE_STALE] = "stale",
    [GC_WIRE_BAD_SIGNATURE] = "bad_signature",
    [GC_WIRE_DIGEST_MISMATCH] = "digest_mismatch",
    [GC_WIRE_WRONG_TARGET] = "wrong_target",
    [GC_WIRE_BAD_EVIDENCE] = "bad_evidence",
    [GC_WIRE_INTERNAL] = "internal",
};

const char *
gc_wire_reason_name (int reason)
{
    if (reason < 0 || reason >= GC_WIRE_NREASONS)
        return "invalid";
    return s_names [reason];
}

int
gc_wire_reason_code (int reason)
{
    if (reason == GC_WIRE_OK)
        return GC_E_OK;
    if (reason >= GC_WIRE_TRUNCATED && reason <= GC_WIRE_BAD_FIELD)
        return GC_E_FORMAT;
    if (reason >= GC_WIRE_WRONG_NETWORK && reason <= GC_WIRE_BAD_EVIDENCE)
        return GC_E_PROTOCOL;
    return GC_E_SYS;
}
