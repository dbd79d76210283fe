#!/usr/bin/env python3
"""Generate tests/vectors/wire_v1.txt: gcnode wire protocol v1 test vectors.

An implementation of docs/PROTOCOL.md written from the document alone (no code
shared with the C implementation), with the `cryptography` package for
Ed25519. The C test suite decodes and re-encodes every vector, so the two
implementations check each other.

    python3 gen_vectors.py           write wire_v1.txt next to this script
    python3 gen_vectors.py --check   regenerate and compare (exit 1 if different)
"""
import hashlib
import os
import struct
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

DOMAIN = b"gcnode/gossip/v1"
MAGIC = b"GCNW"
HEADER_SIZE = 192
HELLO, DELTA, KEYFRAME, REQUEST, EVIDENCE = 1, 2, 3, 4, 5
EXACT = 0x01
NETWORK = "gcnode-test-vectors"
MAX_PAYLOAD = 65536
WINDOW = 32


def sha256(b):
    return hashlib.sha256(b).digest()


def network_id(name):
    return sha256(b"gcnode/network/v1:" + name.encode())[:16]


class Key:
    def __init__(self, name, trusted):
        self.name = name
        self.trusted = trusted
        self.seed = sha256(b"gcnode test vector key " + name.encode())
        self.sk = Ed25519PrivateKey.from_private_bytes(self.seed)
        self.public = self.sk.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.peer_id = sha256(self.public)[:8]


def signed_part(net, sender, typ, flags, rnd, seq, base, payload, *, version=1, magic=MAGIC,
                declared_len=None, reserved=b""):
    plen = len(payload) if declared_len is None else declared_len
    head = (magic + bytes([version, typ, flags, 0]) + net + sender
            + struct.pack("<QQQII", rnd, seq, base, plen, 0) + sha256(payload) + bytes(32))
    assert len(head) == 128
    if reserved:
        off, val = reserved
        head = head[:off] + bytes([val]) + head[off + 1:]
    return head


def sign(key, net, head):
    return head + key.sk.sign(DOMAIN + net + head)


def message(key, typ, flags, rnd, seq, base, payload, net=None, **kw):
    net = net if net is not None else network_id(NETWORK)
    return sign(key, net, signed_part(net, key.peer_id, typ, flags, rnd, seq, base, payload, **kw))


def pattern(n, mult, add):
    return bytes((i * mult + add) & 255 for i in range(n))


def flip(b, byte, bit=0):
    b = bytearray(b)
    b[byte] ^= 1 << bit
    return bytes(b)


def build():
    A, B, C, R = Key("A", True), Key("B", True), Key("C", False), Key("R", True)
    net = network_id(NETWORK)
    out = []

    def rec(**fields):
        out.append(fields)

    rec(network=NETWORK, network_id=net.hex(), max_payload=MAX_PAYLOAD, window=WINDOW,
        receiver=R.peer_id.hex())
    for k in (A, B, C, R):
        rec(key=k.name, seed=k.seed.hex(), public=k.public.hex(), peer_id=k.peer_id.hex(),
            trusted="yes" if k.trusted else "no")

    def vec(name, note, header, payload, expect, fields=None, **extra):
        r = dict(vector=name, note=note)
        if fields:
            signer, typ, flags, rnd, seq, base = fields
            r.update(signer=signer.name, type=typ, flags=flags, round=rnd, seq=seq, base_seq=base)
        r.update(extra)
        r.update(header=header.hex(), payload=payload.hex(), expect=expect)
        out.append(r)

    def ok(name, note, key, typ, flags, rnd, seq, base, payload, **extra):
        vec(name, note, message(key, typ, flags, rnd, seq, base, payload), payload, "ok",
            (key, typ, flags, rnd, seq, base), **extra)

    hello = b"endpoint=tcp://10.0.0.1:5555\nmodel=784-256-128-10\n"
    ok("hello", "HELLO from A", A, HELLO, 0, 0, 1000001, 1000000, hello)
    delta = pattern(300, 7, 3)
    ok("delta_exact", "DELTA from A with the EXACT flag", A, DELTA, EXACT, 7, 1000002, 1000000, delta)
    ok("delta_empty", "DELTA from A with an empty payload frame", A, DELTA, 0, 8, 1000003, 1000002, b"")
    ok("keyframe", "KEYFRAME from B", B, KEYFRAME, 0, 9, 2000005, 2000003, pattern(1024, 13, 1))
    ok("keyframe_request", "KEYFRAME_REQUEST from B to the receiver R; base_seq is B's state of R",
       B, REQUEST, 0, 9, 2000006, 77, R.peer_id)
    # Two different DELTAs by B under one seq: equivocation; A reports it.
    h1 = message(B, DELTA, 0, 10, 2000010, 2000009, pattern(64, 3, 0))
    h2 = message(B, DELTA, 0, 10, 2000010, 2000009, pattern(64, 3, 1))
    evidence = min(h1, h2, key=lambda h: h[:128]) + max(h1, h2, key=lambda h: h[:128])
    ok("evidence", "EVIDENCE from A: two DELTA headers by B with seq 2000010",
       A, EVIDENCE, 0, 8, 1000004, 1000003, evidence, accused=B.peer_id.hex())

    # Rejections. Vectors are fed in file order to one receiver, so each uses
    # a seq not accepted before unless it tests the replay guard.
    vec("replay", "the hello vector again", message(A, HELLO, 0, 0, 1000001, 1000000, hello),
        hello, "replay")
    vec("stale", "A, seq 40 below its highest accepted (window 32)",
        message(A, DELTA, 0, 1, 1000004 - 40, 999000, delta), delta, "stale")
    other = network_id("another-network")
    vec("wrong_network", "A's delta signed for network 'another-network'",
        message(A, DELTA, 0, 11, 1000011, 1000003, delta, net=other), delta, "wrong_network")
    vec("unknown_sender", "a delta by C, whom the receiver does not trust",
        message(C, DELTA, 0, 1, 5, 4, delta), delta, "unknown_sender")
    vec("bad_magic", "magic GCNX", message(A, DELTA, 0, 11, 1000012, 1000003, delta, magic=b"GCNX"),
        delta, "bad_magic")
    vec("bad_version", "version 2", message(A, DELTA, 0, 11, 1000013, 1000003, delta, version=2),
        delta, "bad_version")
    vec("bad_type", "type 9", message(A, 9, 0, 11, 1000014, 1000003, delta), delta, "bad_type")
    vec("bad_flags", "DELTA with flag bit 1", message(A, DELTA, 0x02, 11, 1000015, 1000003, delta),
        delta, "bad_flags")
    vec("bad_flags_keyframe", "KEYFRAME with the EXACT bit (defined for DELTA only)",
        message(A, KEYFRAME, EXACT, 11, 1000016, 1000003, delta), delta, "bad_flags")
    vec("bad_reserved", "byte 100 (reserved area) is 1",
        message(A, DELTA, 0, 11, 1000017, 1000003, delta, reserved=(100, 1)), delta, "bad_reserved")
    vec("bad_field_seq0", "seq 0", message(A, HELLO, 0, 11, 0, 0, hello), hello, "bad_field")
    vec("bad_field_base", "DELTA with base_seq == seq",
        message(A, DELTA, 0, 11, 1000018, 1000018, delta), delta, "bad_field")
    good = message(A, DELTA, 0, 12, 1000019, 1000003, delta)
    vec("bad_signature", "a fresh delta with bit 0 of signature byte 10 flipped",
        flip(good, 128 + 10), delta, "bad_signature")
    vec("bad_signature_round", "the same delta with bit 3 of the round flipped",
        flip(good, 32, 3), delta, "bad_signature")
    vec("digest_mismatch", "the same delta with bit 0 of payload byte 99 flipped",
        good, flip(delta, 99), "digest_mismatch")
    vec("truncated_payload", "the same delta, payload frame one byte short",
        good, delta[:-1], "truncated")
    vec("bad_length_payload", "the same delta, payload frame one byte long",
        good, delta + b"\x00", "bad_length")
    vec("truncated_header", "the same delta, header frame 191 bytes", good[:191], delta, "truncated")
    vec("oversize", "a header declaring a 65537-byte payload (limit 65536), empty frame",
        message(A, DELTA, 0, 12, 1000020, 1000003, b"", declared_len=65537), b"", "oversize")
    vec("bad_length_request", "KEYFRAME_REQUEST with a 9-byte payload",
        message(B, REQUEST, 0, 12, 2000020, 0, R.peer_id + b"\x00"), R.peer_id + b"\x00", "bad_length")
    vec("wrong_target", "KEYFRAME_REQUEST from B addressed to A, received by R",
        message(B, REQUEST, 0, 12, 2000021, 0, A.peer_id), A.peer_id, "wrong_target")
    h3 = message(B, DELTA, 0, 10, 2000011, 2000009, pattern(64, 3, 0))
    bogus = min(h1, h3, key=lambda h: h[:128]) + max(h1, h3, key=lambda h: h[:128])
    vec("bad_evidence", "EVIDENCE from A with two headers by B of different seq",
        message(A, EVIDENCE, 0, 12, 1000021, 1000003, bogus), bogus, "bad_evidence")
    ok("intact_after_rejections", "the delta the bad_signature vectors corrupted, intact: "
       "rejected messages do not use up a seq", A, DELTA, 0, 12, 1000019, 1000003, delta)
    ok("reordered", "A's seq 1000005: below its highest accepted (1000021) but inside the "
       "window and not seen before", A, DELTA, 0, 13, 1000005, 1000003, delta)
    return out


def render(records):
    lines = ["# gcnode wire protocol v1 test vectors (docs/PROTOCOL.md section 11).",
             "# Generated by gen_vectors.py; do not edit. Feed the vectors in order to one",
             "# receiver: network below, trust store = keys with trusted = yes, self id =",
             "# receiver, replay window = window, maximum payload = max_payload.", ""]
    for r in records:
        for k, v in r.items():
            lines.append(f"{k} = {v}")
        lines.append("")
    return "\n".join(lines)


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire_v1.txt")
    text = render(build())
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        with open(path) as f:
            if f.read() != text:
                print(f"{path} differs from what gen_vectors.py generates", file=sys.stderr)
                return 1
        print("vectors match")
        return 0
    with open(path, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
