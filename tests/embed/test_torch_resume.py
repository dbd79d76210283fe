"""kill -9 of a PyTorch peer, and its resume from the checkpoint libgcnode
wrote: three PyTorch peers (as test_torch_byzantine, no attacker) checkpoint
every 2 rounds; peer 2 is killed with SIGKILL once its status file shows
round >= 8 and it has written a checkpoint, and restarted with --resume.
Asserted: the restarted peer starts from the newest checkpoint it wrote
(usually 8 or 10; not computed from the kill round, since a peer that fell
behind catches up on its neighbours' round and skips rounds, and their
checkpoints with them: docs/ALGORITHMS.md), every peer finishes all
rounds, and every peer reaches test accuracy >= 0.72."""
import os
import re
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


def checkpoints(i):
    """The rounds of the checkpoints peer i wrote (written atomically)."""
    return sorted(int(name[5:25]) for name in os.listdir(net.path("ck%d" % i))
                  if re.fullmatch(r"ckpt-[0-9]{20}\.gcc", name))


try:
    for i in range(3):
        torchnet.start_torch(net, i, 3)
    deadline = time.time() + 60
    while (status_round(2) < KILL_AT or not checkpoints(2)) and time.time() < deadline:
        time.sleep(0.05)
    at = status_round(2)
    if at < KILL_AT or not checkpoints(2):
        localnet.fail("peer 2 never reached round %d with a checkpoint:\n%s" % (KILL_AT, net.log(2)[-3000:]))
    net.procs[2].send_signal(signal.SIGKILL)
    net.procs[2].wait()
    saved = checkpoints(2)
    print("killed peer 2 at round %d, checkpoints of rounds %s" % (at, saved))
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
    if start != saved[-1] or start == 0:
        localnet.fail("peer 2 resumed at round %d, not from its newest checkpoint (round %d)" % (start, saved[-1]))
    print("ok")
finally:
    net.close()
