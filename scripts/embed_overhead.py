#!/usr/bin/env python3
"""Per-round overhead of the Python binding: publish + wait + mix driven from
Python (gcnode package, a NumPy buffer, one peer.step() per round) versus
the same driven by gcnode's own trainer loop (`gcnode run`), on the same
2-peer loopback network, model table, compressor, EC and rule.

Per-round cost = (wall time - training time) between the metrics lines of
round FIRST and the last round, divided by the rounds between: for gcnode
run the training is its SGD step (`time.train` in the metrics); for Python
there is no training, the round's cost includes the Python loop and a NumPy
update of the buffer (x += 1e-4 * noise, in place) standing in for the
embedder's optimiser step. Ratio = Python / native; near 1 means the
binding adds little to what gcnode itself costs per round. The engine's own
work per round (compress + sign + aggregate, from the metrics) is printed
beside it: the rest is waiting for the other peer, the transport and the
driver loop.

    /usr/bin/python3 scripts/embed_overhead.py [--rounds 300] [--model 784-256-128-10]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "examples"))
import localnet  # noqa: E402

DRIVER = r'''
import sys, numpy as np
sys.path.insert(0, %(pkg)r)
import gcnode
cfg = gcnode.Config(sys.argv[1])
x = np.zeros(%(n)d, np.float32)
peer = gcnode.Peer(cfg, x)                       # the table of train/model, seeded init
noise = (np.random.default_rng(peer.index).standard_normal(x.size) * 1e-4).astype(np.float32)
while not peer.done:
    x += noise                                   # the embedder's "optimiser step", in place
    peer.step()
peer.close()

'''


def per_round(metrics_path, first):
    rows = [json.loads(l) for l in open(metrics_path) if l.strip()]
    rows = [r for r in rows if r.get("round", 0) >= first]
    a, b = rows[0], rows[-1]
    rounds = b["round"] - a["round"]
    wall = b["t"] - a["t"]
    train = b["time"]["train"] - a["time"]["train"]
    work = sum(b["time"][k] - a["time"][k] for k in ("compress", "sign", "aggregate"))
    return (wall - train) / rounds, rounds, wall, train, work / rounds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--model", default="784-256-128-10")
    ap.add_argument("--compress", default="topk:0.01:fp16")
    ap.add_argument("--first", type=int, default=20, help="rounds skipped at the start")
    ap.add_argument("--order", default="native,python", help="which network runs first")
    args = ap.parse_args()
    dims = [int(d) for d in args.model.split("-")]
    n = sum(dims[i] * dims[i + 1] + dims[i + 1] for i in range(len(dims) - 1))
    settings = {"topology/kind": "complete", "train/rounds": args.rounds, "train/model": args.model,
                "train/local_steps": 1, "train/batch": 1, "train/train_samples": 2000,
                "train/test_samples": 100, "node/eval_every": 0, "gossip/wait": "sync",
                "gossip/compress": args.compress, "gossip/ec": "liec:100",
                "gossip/aggregator": "guard", "gossip/timeout_ms": 5000}
    results = {}
    for kind in args.order.split(","):
        net = localnet.Net("overhead-" + kind, 2, settings)
        try:
            driver = net.path("driver.py")
            with open(driver, "w") as f:
                f.write(DRIVER % {"pkg": os.path.join(HERE, "..", "python"), "n": n})
            for i in range(2):
                if kind == "native":
                    net.start_native(i)
                else:
                    net.start(i, ["/usr/bin/python3", driver, net.path("p%d.zpl" % i)],
                              env={"GCNODE_LIB": os.path.join(localnet.BUILD, "libgcnode.so.0")})
            codes = net.wait_all(600)
            if any(codes.values()):
                localnet.fail("%s run failed: %s\n%s" % (kind, codes, net.log(0)[-2000:]))
            results[kind] = [per_round(net.path("p%d.jsonl" % i), args.first) for i in range(2)]
        finally:
            net.close()
    print("model %s (%d floats), %s + liec:100, guard, wait sync, 2 peers on loopback, rounds %d-%d"
          % (args.model, n, args.compress, args.first, args.rounds))
    for kind, rs in results.items():
        for i, (pr, rounds, wall, train, work) in enumerate(rs):
            print("%-6s peer %d: %.3f ms per round besides training (wall %.2f s, training %.2f s, "
                  "%d rounds; of it compress + sign + aggregate %.3f ms)"
                  % (kind, i, pr * 1e3, wall, train, rounds, work * 1e3))
    nat = sum(r[0] for r in results["native"]) / 2
    py = sum(r[0] for r in results["python"]) / 2
    print("native_ms_per_round=%.3f python_ms_per_round=%.3f ratio=%.2f" % (nat * 1e3, py * 1e3, py / nat))


if __name__ == "__main__":
    main()
