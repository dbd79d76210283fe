"""kill -9 of a PyTorch peer, and its resume from the checkpoint libgcnode
wrote: three PyTorch peers (as test_torch_byzantine, no attacker) checkpoint
every 2 rounds; peer 2 is killed with SIGKILL once its status file shows
round >= 8 and restarted with --resume. Asserted: the restarted peer starts
from a checkpoint (round >= 6: checkpoints every 2 rounds, killed at >= 8;
10 measured), every peer finishes all rounds, and
every peer reaches test accuracy >= 0.72."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "examples"))
import localnet  # noqa: E402
import torchnet  # noqa: E402

ROUNDS, FLOOR, KILL_AT = 30, 0.72, 8
net = localnet.Net("torch-resume", 3, dict(torchnet.COMMON, **{"train/rounds": ROUNDS}))
for i in range(3):
    os.makedirs(net.path("ck%d" % i))
    net.write_config(i, dict(torchnet.COMMON, **{"train/rounds": ROUNDS,
                                                 "node/checkpoint_dir": net.path("ck%d" % i),
                                                 "node/checkpoint_every": 2}))


def status_round(i):
    try:
        with open(net.path("p%d.status" % i)) as f:
            text = f.read()
    except OSError:
        return -1
    import json
    try:
        return int(json.loads(text).get("round", -1))
    except ValueError:
        return -1


try:
    for i in range(3):
        torchnet.start_torch(net, i, 3)
    deadline = time.time() + 60
    while status_round(2) < KILL_AT and time.time() < deadline:
        time.sleep(0.05)
    at = status_round(2)
    if at < KILL_AT:
        localnet.fail("peer 2 never reached round %d:\n%s" % (KILL_AT, net.log(2)[-3000:]))
    net.procs[2].send_signal(signal.SIGKILL)
    net.procs[2].wait()
    print("killed peer 2 at round %d" % at)
    torchnet.start_torch(net, 2, 3, ["--resume"])
    net.wait_success(120, "peer")
    for i in range(3):
        rounds, acc, start = torchnet.result(net, i)
        print("peer %d: rounds %d accuracy %.4f started at round %d" % (i, rounds, acc, start))
        if rounds != ROUNDS:
            localnet.fail("peer %d did %d rounds" % (i, rounds))
        if acc < FLOOR:
            localnet.fail("peer %d: accuracy %.4f < %.2f" % (i, acc, FLOOR))
    _, _, start = torchnet.result(net, 2)
    if start < KILL_AT - 2 or start == 0:
        localnet.fail("peer 2 resumed at round %d, not from a checkpoint >= %d" % (start, KILL_AT - 2))
    print("ok")
finally:
    net.close()
