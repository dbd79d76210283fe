#!/usr/bin/env python3
"""One PyTorch peer of a gcnode network on Fashion-MNIST.

    python3 fashion_torch.py --config p0.zpl --peers 4 [--model mlp|cnn] ...

The model is trained here with torch.optim.SGD; after every --local-steps
steps GossipOptimizer runs one gossip round of the peer (publish the change,
wait, robust mix into the weights). Data: Debian's dataset-fashion-mnist
(/usr/share/datasets/fashion-mnist, as gcnode's own default), the first
--samples training images, standardised as gcnode does (one mean and scale
over the training set), split among the --peers peers by a seeded
permutation. Prints `peer=I rounds=R test_accuracy=0.XXXX start_round=S`
last, as gcnode run prints its own line. docs/EMBEDDING.md."""
from __future__ import annotations

import argparse
import gzip
import os
import struct
import sys
import time
from typing import Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gcnode  # noqa: E402
import gcnode.torch as gtorch  # noqa: E402

DATA = os.environ.get("GC_FASHION_DIR", "/usr/share/datasets/fashion-mnist")


def read_idx(path: str) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xff
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(samples: int, tests: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x = read_idx(os.path.join(DATA, "train-images-idx3-ubyte.gz"))[:samples].astype(np.float32) / 255
    y = read_idx(os.path.join(DATA, "train-labels-idx1-ubyte.gz"))[:samples].astype(np.int64)
    tx = read_idx(os.path.join(DATA, "t10k-images-idx3-ubyte.gz"))[:tests].astype(np.float32) / 255
    ty = read_idx(os.path.join(DATA, "t10k-labels-idx1-ubyte.gz"))[:tests].astype(np.int64)
    mean, std = float(x.mean()), float(x.std())
    return (x - mean) / std, y, (tx - mean) / std, ty


def mlp(sizes: str) -> nn.Module:
    """nn.Sequential of Linear + ReLU with gcnode's MLP layout (fcK.weight out x in, fcK.bias)."""
    dims = [int(s) for s in sizes.split("-")]
    layers = []
    for i in range(len(dims) - 1):
        layers.append(nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(nn.Flatten(), *layers)


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 5, padding=2)
        self.conv2 = nn.Conv2d(8, 16, 5, padding=2)
        self.fc1 = nn.Linear(16 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--peers", type=int, required=True, help="peers the data is split among")
    ap.add_argument("--model", default="mlp:784-64-10", help="mlp:SIZES (gcnode's layout) or cnn")
    ap.add_argument("--samples", type=int, default=6000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--local-steps", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=5)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)

    config = gcnode.Config(args.config)
    for kv in args.set:
        k, v = kv.split("=", 1)
        config.set(k, v)
    torch.manual_seed(args.seed)              # the same initial model on every peer
    if args.model.startswith("mlp:"):
        model = mlp(args.model[4:])
        config.set("train/model", args.model[4:])
        table = "config"                      # gcnode's MLP table and seeded init
    elif args.model == "cnn":
        model = SmallCNN()
        table = "module"
    else:
        ap.error("--model: mlp:SIZES or cnn")
    peer = gtorch.TorchPeer(model, config, table=table, resume=args.resume)
    me = peer.index
    x, y, tx, ty = load(args.samples, args.test)
    order = np.random.default_rng(args.seed).permutation(len(y))
    mine = order[me::args.peers]
    shape = (-1, 1, 28, 28)
    x = torch.from_numpy(x[mine].reshape(shape))
    y = torch.from_numpy(y[mine])
    tx = torch.from_numpy(tx.reshape(shape))
    ty = torch.from_numpy(ty)
    opt = gtorch.GossipOptimizer(torch.optim.SGD(model.parameters(), lr=args.lr,
                                                 momentum=args.momentum),
                                 peer, gossip_every=args.local_steps)
    rng = np.random.default_rng(args.seed * 1000 + me)
    t0 = time.time()
    print("peer=%d start_round=%d model=%s params=%d" % (me, peer.start_round, peer.model,
                                                        peer.n_params), flush=True)
    while not peer.done:
        for _ in range(args.local_steps):
            idx = torch.from_numpy(rng.integers(0, len(y), args.batch))
            opt.zero_grad()
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()                          # the last of local_steps also gossips
        if args.eval_every and peer.round % args.eval_every == 0:
            acc = accuracy(model, tx, ty)
            peer.report_accuracy(acc)
            print("round=%d accuracy=%.4f" % (peer.round, acc), flush=True)
    acc = accuracy(model, tx, ty)
    peer.report_accuracy(acc)
    s = peer.stats()
    rej = ",".join("%d:%d" % (j, peer.rejections(j)) for j in range(args.peers) if j != me)
    print("rejections=%s elapsed=%.1f sent=%d dense=%d" % (rej, time.time() - t0, s["bytes_sent"],
                                                          s["dense_equiv_bytes"]))
    rounds = peer.round
    peer.close()
    print("peer=%d rounds=%d test_accuracy=%.4f start_round=%d" % (me, rounds, acc, peer.start_round),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
