#!/usr/bin/env python3
"""Check gcnode metrics files (node/metrics, JSON lines), independently of
the C code that wrote them.

    check_metrics.py [--min-lines N] [--final-round R] FILE...

Every line must parse as a JSON object (Python's strict parser: no NaN or
Infinity), carry the documented keys, and every counter must never go down
from one line to the next, including the nested ones (rejections by reason
and by peer, CURVE and discovery counters). There is one line per round the
process ran: the round goes up by one from a line to the next, by more only
with a round catch-up ("catchups" went up: a peer that fell behind skips
rounds, docs/ALGORITHMS.md), and repeats only on the last line (the one
written when the run ends). Exit 0 when all files pass; otherwise print
each problem and exit 1.
"""
import json
import sys

REQUIRED = ["unix_s", "t", "peer", "id", "round", "loss", "bytes_sent", "bytes_recv",
            "msgs_sent", "msgs_recv", "compression_ratio", "wait_s", "wait_total_s",
            "keyframes_sent", "keyframes_recv", "rejected", "staleness", "rejections",
            "rejections_by_peer", "rejections_unattributed", "bytes_offered", "staleness_ahead",
            "no_state", "never_delivered"]
COUNTERS = ["round", "bytes_sent", "bytes_offered", "bytes_recv", "msgs_sent", "msgs_recv", "dense_equiv_bytes",
            "keyframes_sent", "keyframes_recv", "keyframe_requests_sent",
            "keyframe_requests_recv", "deltas_applied", "gaps", "mix_skipped", "catchups", "sends_skipped", "equivocators", "evidence_found", "evidence_recv", "evidence_sent", "hellos", "witness_sent", "witness_recv",
            "rejected", "sent_frames", "send_dropped", "recv_muted", "recv_malformed",
            "connections_muted", "wait_total_s", "t", "unix_s", "validations"]
NESTED = ["rejections", "rejections_unattributed", "curve", "discovery", "time"]
GAUGES_IN_NESTED = {"discovery": {"peers_wanted", "peers_found"}}


def flatten(obj):
    """The counters of one line as {path: number}."""
    out = {}
    for key in COUNTERS:
        if key in obj:
            out[key] = obj[key]
    for key in NESTED:
        for sub, value in obj.get(key, {}).items():
            if sub not in GAUGES_IN_NESTED.get(key, set()):
                out[key + "." + sub] = value
    for peer, reasons in obj.get("rejections_by_peer", {}).items():
        for reason, value in reasons.items():
            out["rejections_by_peer.%s.%s" % (peer, reason)] = value
    return out


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def check(path, min_lines, final_round=None):
    problems = []
    previous = {}
    lines = 0
    repeated = None     # where a line repeated the round before it
    last_round = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            where = "%s:%d" % (path, number)
            try:
                obj = json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(
                    ValueError("non-standard constant " + c)))
            except ValueError as e:
                problems.append("%s: not JSON (%s)" % (where, e))
                continue
            if not isinstance(obj, dict):
                problems.append("%s: not an object" % where)
                continue
            lines += 1
            last_round = obj.get("round")
            missing = [k for k in REQUIRED if k not in obj]
            if missing:
                problems.append("%s: missing %s" % (where, ", ".join(missing)))
            current = flatten(obj)
            for key, value in current.items():
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    problems.append("%s: %s is not a number" % (where, key))
                elif key in previous and value < previous[key]:
                    problems.append("%s: %s went down from %s to %s" % (where, key, previous[key], value))
            # a counter, once reported, must stay reported (maps may only grow)
            for key in previous:
                if key not in current and not key.startswith("time."):
                    problems.append("%s: %s disappeared" % (where, key))
            # what reached the sockets is at most what the engine sent
            if isinstance(obj.get("bytes_sent"), int) and isinstance(obj.get("bytes_offered"), int) \
                    and obj["bytes_sent"] > obj["bytes_offered"]:
                problems.append("%s: bytes_sent %d > bytes_offered %d" % (where, obj["bytes_sent"],
                                                                          obj["bytes_offered"]))
            # local validation's factors are weights in [0, 1]
            for peer, factor in obj.get("validation_weight", {}).items():
                if not isinstance(factor, (int, float)) or isinstance(factor, bool) \
                        or not 0 <= factor <= 1:
                    problems.append("%s: validation_weight.%s is %r, not in [0, 1]" % (where, peer, factor))
            # one line per round run: +1 a line, more only with a catch-up,
            # the same round again only on the last line (the run's end)
            if repeated:
                problems.append("%s: round %s has a second line, and more lines follow it"
                                % (repeated, previous.get("round")))
            repeated = None
            before, now = previous.get("round"), current.get("round")
            if is_int(before) and is_int(now):
                caught_up = is_int(current.get("catchups")) and is_int(previous.get("catchups")) \
                    and current["catchups"] > previous["catchups"]
                if now == before:
                    repeated = where
                elif now > before + 1 and not caught_up:
                    problems.append("%s: round %d follows round %d without a catch-up "
                                    "(%d round(s) without a line)" % (where, now, before, now - before - 1))
            # every in-neighbour is in exactly one of staleness, staleness_ahead, no_state
            seen = list(obj.get("staleness", {})) + list(obj.get("staleness_ahead", {})) \
                + [str(p) for p in obj.get("no_state", [])]
            if len(seen) != len(set(seen)):
                problems.append("%s: an in-neighbour is listed twice in staleness/ahead/no_state" % where)
            previous = current
    if lines < min_lines:
        problems.append("%s: %d lines, expected at least %d" % (path, lines, min_lines))
    if final_round is not None and last_round != final_round:
        problems.append("%s: the last line is round %s, expected %d" % (path, last_round, final_round))
    return problems


def main(argv):
    min_lines = 1
    final_round = None
    files = []
    i = 1
    while i < len(argv):
        if argv[i] == "--min-lines":
            min_lines = int(argv[i + 1])
            i += 2
        elif argv[i] == "--final-round":
            final_round = int(argv[i + 1])
            i += 2
        else:
            files.append(argv[i])
            i += 1
    problems = []
    for path in files:
        problems += check(path, min_lines, final_round)
    for p in problems:
        print(p)
    print("%d file(s), %d problem(s)" % (len(files), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
