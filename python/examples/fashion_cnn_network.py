#!/usr/bin/env python3
"""The PyTorch CNN example: 4 processes on loopback train a small CNN
(conv 8 - conv 16 - fc 64 - fc 10, 54 k parameters) on Fashion-MNIST with
gcnode: top-k compression with error compensation, the robust rule guard, a
complete graph; one of the four is a Byzantine gcnode peer sending ALIE
("A Little Is Enough") models. Each process is fashion_torch.py --model cnn;
the Byzantine one gets role/kind = byzantine (the engine's own attack role,
which replaces what it publishes).

    python3 python/examples/fashion_cnn_network.py [--rounds 80] [--out run/cnn]

Prints every peer's test accuracy and `honest_mean_accuracy=0.XXXX` last.
Needs the build (build/gcnode, build/libgcnode.so) and dataset-fashion-mnist."""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import localnet  # noqa: E402

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fashion_torch.py")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=80)
    ap.add_argument("--samples", type=int, default=12000)
    ap.add_argument("--test", type=int, default=2000)
    ap.add_argument("--compress", default="topk:0.05")
    ap.add_argument("--aggregator", default="guard")
    ap.add_argument("--attack", default="alie")
    ap.add_argument("--out", default=None, help="keep keys, configs, logs and metrics here")
    args = ap.parse_args()
    n = 4
    settings = {"topology/kind": "complete", "train/rounds": args.rounds,
                "gossip/compress": args.compress, "gossip/ec": "liec:100",
                "gossip/aggregator": args.aggregator, "gossip/wait": "quorum:2",
                "gossip/timeout_ms": 3000}
    net = localnet.Net("cnn", n, settings, where=args.out)
    net.write_config(n - 1, dict(settings, **{"role/kind": "byzantine", "role/attack": args.attack}))
    t0 = time.time()
    try:
        for i in range(n):
            net.start(i, ["/usr/bin/python3", PEER, "--config", net.path("p%d.zpl" % i), "--peers",
                          str(n), "--model", "cnn", "--samples", str(args.samples), "--test",
                          str(args.test), "--lr", "0.05", "--momentum", "0.9", "--batch", "32",
                          "--local-steps", "4", "--eval-every", "20"])
        net.wait_success(1800)
        honest = []
        for i in range(n):
            f = localnet.fields(net.last_line(i, "peer="))
            role = "byzantine (%s)" % args.attack if i == n - 1 else "honest"
            print("peer %d %-16s rounds %s test_accuracy %s  %s" % (
                i, role, f["rounds"], f["test_accuracy"], net.last_line(i, "rejections=")))
            if i < n - 1:
                honest.append(float(f["test_accuracy"]))
        print("elapsed %.0f s, %d rounds, %s + liec:100, %s" % (time.time() - t0, args.rounds,
                                                             args.compress, args.aggregator))
        print("honest_mean_accuracy=%.4f" % (sum(honest) / len(honest)))
    finally:
        net.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
