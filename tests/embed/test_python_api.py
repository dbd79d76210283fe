"""The Python API itself, in one process: two peers (NumPy buffers, a layer
table from shapes, one thread each, as gcnode.h's thread rules allow; CURVE
off, as a second CURVE peer in one process is refused, tested first) gossip
until they agree; the buffers are the models (changed in place, never
copied); stats and rejections read from another thread; errors are
GcnodeError with gcnode's message and code name; a step after the last
round fails as `stopped`; the library leaves SIGINT to Python
(KeyboardInterrupt still works after a peer opened)."""
import ctypes
import os
import signal
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "examples"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import localnet  # noqa: E402
import gcnode  # noqa: E402
import gcnode.numpy as gnp  # noqa: E402

ROUNDS = 25
SHAPES = [("w", (3, 5)), ("b", (5,))]
N = 20


def expect_error(fn, words, code_name):
    try:
        fn()
    except gcnode.GcnodeError as e:
        if words not in str(e) or e.code_name != code_name:
            localnet.fail("error %r (%s), expected %r (%s)" % (str(e), e.code_name, words, code_name))
        return
    localnet.fail("no GcnodeError (expected %r)" % words)


expect_error(lambda: gcnode.Config().set("no/such_key", 1), "unknown key 'no/such_key'", "config")
expect_error(lambda: gcnode.Config("/nonexistent/p.zpl"), "/nonexistent/p.zpl", "io")
expect_error(lambda: gcnode.Peer(gcnode.Config(), np.zeros(4, np.float64)), "float32", "arg")
expect_error(lambda: gcnode.Peer(gcnode.Config(), np.zeros(4, np.float32)),
             "has 235146 parameters, the buffer 4", "config")
if "bad_signature" not in gcnode.reason_names():
    localnet.fail("reason_names lacks bad_signature: %s" % gcnode.reason_names())

# CURVE (the default; localnet's keys include it) has one ZAP handler per
# process: a second peer with it is refused with an error, not an abort.
alone = localnet.Net("pyapi-curve", 1, {"train/rounds": 1})
try:
    first = gnp.peer(gcnode.Config(alone.path("p0.zpl")), np.zeros(N, np.float32), SHAPES)
    expect_error(lambda: gnp.peer(gcnode.Config(alone.path("p0.zpl")), np.zeros(N, np.float32), SHAPES),
                 "another peer of this process has CURVE on", "config")
    first.close()
finally:
    alone.close()

# Two peers in this process, so CURVE off (silent on loopback).
net = localnet.Net("pyapi", 2, {"topology/kind": "complete", "train/rounds": ROUNDS,
                                "gossip/compress": "none", "gossip/aggregator": "mean",
                                "gossip/wait": "sync", "gossip/timeout_ms": 2000,
                                "node/curve": 0})
try:
    expect_error(lambda: gnp.peer(gcnode.Config(net.path("p0.zpl")), np.zeros(N, np.float32),
                                  [("w", (3, 5)), ("b", (4,))]),
                 "covers 19 floats, the buffer has 20", "config")
    bufs = [np.full(N, float(i), np.float32) for i in range(2)]
    peers = [None, None]
    errors = []

    def run(i):
        try:
            peers[i] = p = gnp.peer(gcnode.Config(net.path("p%d.zpl" % i)), bufs[i], SHAPES)
            addr = bufs[i].ctypes.data
            while not p.done:
                bufs[i] += 0.01 * (i - bufs[i])          # pulled towards its own target
                p.step()
            if bufs[i].ctypes.data != addr:
                errors.append("peer %d: buffer moved" % i)
        except Exception as e:  # reported by the main thread
            errors.append("peer %d: %r" % (i, e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    if errors:
        localnet.fail("; ".join(errors))
    spread = float(np.abs(bufs[0] - bufs[1]).max())
    print("after %d rounds: peer 0 %.4f, peer 1 %.4f, spread %.5f" % (ROUNDS, bufs[0][0], bufs[1][0], spread))
    if spread > 0.05 or not 0.2 < float(bufs[0].mean()) < 0.8:
        localnet.fail("the two buffers did not meet between their targets 0 and 1")
    for i, p in enumerate(peers):
        s = p.stats()
        if s["round"] != ROUNDS or s["bytes_sent"] == 0 or p.rejections() != 0 or p.rejections(1 - i) != 0:
            localnet.fail("peer %d stats %s rejections %d" % (i, s, p.rejections()))
        if p.model != peers[0].model or not p.model.startswith("external:table:20:"):
            localnet.fail("model specs %s / %s" % (p.model, peers[0].model))
    #  gcnode_stats_t is filled up to the size given: the equivocation
    #  counters (appended last) are written with the full size and left alone
    #  with the size of a caller built before them.
    from gcnode._lib import Stats
    full, short = Stats(), Stats()
    ctypes.memset(ctypes.byref(full), 0xff, ctypes.sizeof(full))
    ctypes.memset(ctypes.byref(short), 0xff, ctypes.sizeof(short))
    handle = peers[0]._handle()
    if gcnode._lib.lib().gcnode_peer_stats(handle, ctypes.byref(full), ctypes.sizeof(full)) != 0 \
            or gcnode._lib.lib().gcnode_peer_stats(handle, ctypes.byref(short), Stats.equivocators.offset) != 0:
        localnet.fail("gcnode_peer_stats failed")
    if (full.equivocators, full.evidence_found, full.evidence_sent) != (0, 0, 0) or full.round != ROUNDS:
        localnet.fail("full-size stats: equivocators %d round %d" % (full.equivocators, full.round))
    if short.equivocators != 2**64 - 1 or short.round != ROUNDS:
        localnet.fail("a short size wrote past it (equivocators %d)" % short.equivocators)
    expect_error(peers[0].step, "all train/rounds are done", "stopped")
    expect_error(lambda: peers[0].rejections(0, "no_such_reason"), "no_such_reason", "arg")
    try:
        os.kill(os.getpid(), signal.SIGINT)
        signal.pthread_kill(threading.get_ident(), 0)
        import time
        time.sleep(0.2)
        localnet.fail("SIGINT did not raise KeyboardInterrupt: a handler other than Python's took it")
    except KeyboardInterrupt:
        pass
    for p in peers:
        p.close()
        p.close()                                       # idempotent
    print("ok")
finally:
    net.close()
