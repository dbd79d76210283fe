"""Shared by the PyTorch tests: the peer script, its common arguments and
the settings every peer's config gets."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "examples"))
import localnet  # noqa: E402

PEER = os.path.join(localnet.SOURCE, "python", "examples", "fashion_torch.py")
PYTHON = "/usr/bin/python3"

SAMPLES, TEST = 4000, 1000
MODEL = "784-32-10"
COMMON = {"topology/kind": "complete", "train/model": MODEL, "train/train_samples": SAMPLES,
          "train/test_samples": TEST, "train/batch": 32, "train/local_steps": 4,
          "train/lr": 0.05, "train/momentum": 0.0, "node/eval_every": 0,
          "train/schedule": "constant", "train/weight_decay": 0,  # as torch.optim.SGD here
          "gossip/compress": "topk:0.1", "gossip/ec": "liec:100", "gossip/wait": "quorum:2",
          "gossip/timeout_ms": 2000}


def start_torch(net, i, n_peers, extra=None):
    net.start(i, [PYTHON, PEER, "--config", net.path("p%d.zpl" % i), "--peers", str(n_peers),
                  "--model", "mlp:" + MODEL, "--samples", str(SAMPLES), "--test", str(TEST),
                  "--lr", "0.05", "--batch", "32", "--local-steps", "4", "--eval-every", "0"]
              + (extra or []))


def result(net, i):
    f = localnet.fields(net.last_line(i, "peer="))
    return int(f["rounds"]), float(f["test_accuracy"]), int(f.get("start_round", 0))
