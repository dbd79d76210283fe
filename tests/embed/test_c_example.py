"""examples/toy_peer (C, gcnode.h only): three peers on loopback, each pulled
towards its own target (0, 1, 2), gossip with top-k + error compensation
and a robust rule (cwmed: guard clips a neighbour that starts 2 away
from it, so it would keep the peers apart here) until they agree. Alone each would end at its target (2
apart); the test asserts they end within 0.3 of each other and near the
targets' middle, and that compression sent fewer bytes than dense. The model
is 40 floats, so a message's 192-byte header weighs: top-k 50 % came within
0.3 % of dense, and a HELLO or a keyframe more made it fail; 25 % leaves a
margin."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "examples"))
import localnet  # noqa: E402

TOY = os.path.join(localnet.BUILD, "toy_peer")
ROUNDS = 40

net = localnet.Net("toy", 3, {"topology/kind": "complete", "train/rounds": ROUNDS,
                            "gossip/compress": "topk:0.25", "gossip/ec": "liec:100",
                            "gossip/aggregator": "cwmed",
                            "gossip/wait": "sync",
                            "gossip/timeout_ms": 2000})
try:
    for i in range(3):
        net.start(i, [TOY, net.path("p%d.zpl" % i), str(i)])
    net.wait_success(60, "toy_peer")
    xs = []
    for i in range(3):
        f = localnet.fields(net.last_line(i, "peer="))
        if int(f["rounds"]) != ROUNDS:
            localnet.fail("peer %d did %s rounds, not %d" % (i, f["rounds"], ROUNDS))
        print("peer %d sent %s bytes, dense %s" % (i, f["sent"], f["dense"]))
        if not 0 < int(f["sent"]) < int(f["dense"]):
            localnet.fail("peer %d sent %s bytes, dense would be %s" % (i, f["sent"], f["dense"]))
        xs.append([float(v) for v in f["x"].split(",")])
    spread = max(abs(a - b) for k in range(len(xs[0])) for a in (x[k] for x in xs) for b in (x[k] for x in xs))
    mean = sum(sum(x) for x in xs) / (3 * len(xs[0]))
    print("spread=%.4f mean=%.4f (targets 0, 1, 2)" % (spread, mean))
    if spread > 0.3:
        localnet.fail("peers disagree by %.4f > 0.3" % spread)
    if abs(mean - 1.0) > 0.5:
        localnet.fail("mean %.4f is not between the targets' middle +- 0.5" % mean)
    print("ok")
finally:
    net.close()
