#!/usr/bin/python3
"""A straightforward PyTorch simulation of gcsim's table-1 setting: the plain
alternative the speed table of docs/RESULTS.md compares gcsim with.

    /usr/bin/python3 scripts/pysim_reference.py --aggregator cwtm:1 --attack alie

16 peers on a 4x4 torus (row-major, wraparound: 4 neighbours each), Fashion-MNIST
split iid across them, MLP 784-256-128-10 with ReLU, softmax cross-entropy. Each
round every peer takes one SGD step on a minibatch of 32 of its own shard (lr 0.03
with a cosine schedule over the rounds, heavy-ball momentum 0.9, decoupled weight
decay 5e-3, as gcnode's train/gc_optim.c), then every peer replaces its model by
the aggregate of its own model and the 4 models its neighbours sent (dense, in
lock-step, mixing step 1):

  mean          plain average
  cwtm:B        coordinate-wise trimmed mean: sort the 5 values of each coordinate,
                drop the B lowest and B highest, average the rest
  scclip        self-centred clipping (ClippedGossip) with gcnode's adaptive radius
                (scclip:auto:0.25): tau^2 = (1/delta) * sum of w_j ||x_j - x_own||^2
                over the nearest inputs holding weight 1 - delta;
                out = x_own + sum_j w_j clip_tau(x_j - x_own)
  scclip:TAU    the same with a fixed radius; scclip:auto:DELTA another delta

--attack alie: peers 0, 1, 10, 11 are Byzantine (every honest peer has exactly one
Byzantine neighbour). They train and mix like everyone, but send mu - z*sigma, the
coordinate-wise mean and (n - 1) standard deviation of the models they observe: their
own and their 4 neighbours' trained models of this round (gcnode's attackers use their
replicas, which in lock-step hold the previous round's models and, of a Byzantine
neighbour, what it sent). z is gcnode's: the ALIE formula (Baruch et al.) for the
inputs a victim aggregates, n = 5 of which f = 1 Byzantine, z = 0.2533
(node/gc_engine.c: gc_attack_alie_z(n_in + 1, 1)); --alie-z sets another, e.g. 0.4888,
the formula for n = 16, f = 4.

The models are 16 nn.Modules with 16 torch.optim.SGD optimisers; mixing flattens
them (parameters_to_vector) and aggregates stacked tensors peer by peer. Timing:
rounds_per_s = rounds / wall seconds of the round loop only (data loading, model
set-up and the final evaluation excluded). Needs PyTorch: Debian's python3-torch,
run with /usr/bin/python3.
"""
import argparse
import gzip
import json
import math
import os
import statistics
import struct
import sys
import time

torch = nn = F = None           # imported by import_torch, after the options are read


def import_torch(threads):
    """Import PyTorch with `threads` threads in all: torch's own pool and, on Debian, the
    OpenBLAS behind its matrix products (which reads its thread count at load time)."""
    global torch, nn, F
    os.environ["OMP_NUM_THREADS"] = str(threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError:
        sys.exit(f"{os.path.basename(__file__)} needs PyTorch, which {sys.executable} cannot import: "
                 "install it with `sudo apt-get install python3-torch` and run this script with "
                 "/usr/bin/python3 (Debian's Python; a pyenv or venv python3 does not see apt packages)")
    torch.set_num_threads(threads)

DATA_DIR = "/usr/share/datasets/fashion-mnist"     # Debian package dataset-fashion-mnist
ROWS, COLS = 4, 4
PEERS = ROWS * COLS
BYZANTINE = [0, 1, 10, 11]
LAYERS = [784, 256, 128, 10]
BATCH = 32
LR, MOMENTUM, WEIGHT_DECAY = 0.03, 0.9, 5e-3


# --- data -------------------------------------------------------------------------------

def read_idx(path):
    """An IDX file (gzip or not) as a uint8 tensor of its shape."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        sys.exit(f"{path}: {len(data)} bytes, shorter than an IDX header")
    zero, dtype, ndims = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08 or ndims == 0 or len(data) < 4 + 4 * ndims:
        sys.exit(f"{path}: not an IDX file of unsigned bytes")
    dims = struct.unpack(">" + "I" * ndims, data[4:4 + 4 * ndims])
    body = data[4 + 4 * ndims:]
    if len(body) != math.prod(dims):
        sys.exit(f"{path}: {len(body)} bytes of data, its header {'x'.join(map(str, dims))} says {math.prod(dims)}")
    return torch.frombuffer(bytearray(body), dtype=torch.uint8).reshape(dims)


def find(data_dir, name):
    for candidate in (os.path.join(data_dir, name), os.path.join(data_dir, name + ".gz")):
        if os.path.exists(candidate):
            return candidate
    sys.exit(f"{data_dir}: no {name}[.gz] (sudo apt-get install dataset-fashion-mnist)")


def load_fashion_mnist(data_dir):
    """Pixels / 255, then standardised with the training set's mean and standard deviation
    over all pixels (one scalar each), as train/gc_dataset.c gc_dataset_standardise."""
    x_train = read_idx(find(data_dir, "train-images-idx3-ubyte")).reshape(-1, 784).float() / 255
    y_train = read_idx(find(data_dir, "train-labels-idx1-ubyte")).long()
    x_test = read_idx(find(data_dir, "t10k-images-idx3-ubyte")).reshape(-1, 784).float() / 255
    y_test = read_idx(find(data_dir, "t10k-labels-idx1-ubyte")).long()
    mean = x_train.double().mean()
    var = (x_train.double() ** 2).mean() - mean ** 2
    scale = 1.0 / math.sqrt(var.item() if var.item() > 1e-12 else 1.0)
    x_train = (x_train - mean.item()) * scale
    x_test = (x_test - mean.item()) * scale
    return x_train, y_train, x_test, y_test


class Sampler:
    """Minibatches without replacement from one peer's shard, reshuffled every epoch
    (an incomplete last batch is skipped), as train/gc_sampler.c."""

    def __init__(self, x, y, batch, generator):
        self.x, self.y, self.batch, self.gen = x, y, batch, generator
        self.perm = torch.randperm(len(y), generator=generator)
        self.pos = 0

    def next(self):
        if self.pos + self.batch > len(self.y):
            self.perm = torch.randperm(len(self.y), generator=self.gen)
            self.pos = 0
        idx = self.perm[self.pos:self.pos + self.batch]
        self.pos += self.batch
        return self.x[idx], self.y[idx]


# --- model ------------------------------------------------------------------------------

def make_mlp():
    layers = []
    for i in range(len(LAYERS) - 1):
        layers.append(nn.Linear(LAYERS[i], LAYERS[i + 1]))
        if i < len(LAYERS) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def init_like_gcnode(model):
    """He-uniform weights (bound sqrt(6 / fan_in)), zero biases: train/gc_mlp.c."""
    with torch.no_grad():
        for m in model:
            if isinstance(m, nn.Linear):
                bound = math.sqrt(6.0 / m.in_features)
                m.weight.uniform_(-bound, bound)
                m.bias.zero_()


def lr_at(t, total):
    """Cosine schedule over the rounds (gc_optim_lr_at with the default schedule)."""
    return LR * 0.5 * (1.0 + math.cos(math.pi * min(t / total, 1.0)))


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


# --- topology, attack, aggregation --------------------------------------------------------

def torus_neighbours(i):
    r, c = divmod(i, COLS)
    return [((r - 1) % ROWS) * COLS + c, ((r + 1) % ROWS) * COLS + c,
            r * COLS + (c - 1) % COLS, r * COLS + (c + 1) % COLS]


def alie_z(n, f):
    """Baruch et al.: s = floor(n/2 + 1) - f, z = Phi^-1((n - s) / n) (node/gc_attack.c)."""
    s = math.floor(n / 2 + 1) - f
    p = (n - s) / n
    if p <= 0 or p >= 1:
        return 0.0
    return max(statistics.NormalDist().inv_cdf(p), 0.0)


def number(spec, text, lo, hi):
    """A float in (lo, hi), or a usage error naming the spec."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not lo < v < hi:
        raise argparse.ArgumentTypeError(f"aggregator '{spec}': '{text}' is not a number in ({lo:g}, {hi:g})")
    return v


def parse_aggregator(spec):
    parts = spec.split(":")
    if parts == ["mean"]:
        return ("mean",)
    if parts[0] == "cwtm" and len(parts) == 2 and parts[1].isdigit():
        return ("cwtm", int(parts[1]))
    if parts[0] == "scclip" and len(parts) == 1:
        return ("scclip_auto", 0.25)
    if parts[0] == "scclip" and parts[1:2] == ["auto"] and len(parts) <= 3:
        return ("scclip_auto", number(spec, parts[2], 0, 1) if len(parts) == 3 else 0.25)
    if parts[0] == "scclip" and len(parts) == 2:
        return ("scclip", number(spec, parts[1], 0, math.inf))
    raise argparse.ArgumentTypeError(
        f"aggregator '{spec}': expected mean, cwtm:B, scclip, scclip:TAU or scclip:auto:DELTA")


def checked_aggregator(spec):
    parse_aggregator(spec)
    return spec


def aggregate(rule, inputs):
    """inputs: (k, d), row 0 the peer's own model; uniform weights 1/k (Metropolis
    weights on a regular graph)."""
    k = inputs.shape[0]
    if rule[0] == "mean":
        return inputs.mean(0)
    if rule[0] == "cwtm":
        b = rule[1]
        return inputs.sort(0).values[b:k - b].mean(0)
    own = inputs[0]
    diff = inputs - own
    d2 = (diff.double() ** 2).sum(1)
    w = 1.0 / k
    if rule[0] == "scclip_auto":
        delta = rule[1]
        budget, total = 1.0 - delta, 0.0
        for dist2 in d2.sort().values.tolist():
            if budget <= 0:
                break
            take = min(w, budget)
            total += take * dist2
            budget -= take
        tau = math.sqrt(total / delta)
    else:
        tau = rule[1]
    dist = d2.sqrt()
    clip = torch.where(dist > tau, tau / dist, torch.ones_like(dist)).float()
    return own + (w * clip) @ diff


# --- the simulation ---------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200, help="rounds (default 200)")
    parser.add_argument("--aggregator", type=checked_aggregator, default="mean", metavar="RULE",
                        help="mean, cwtm:B, scclip (= scclip:auto:0.25), scclip:TAU, scclip:auto:DELTA "
                        "(default mean)")
    parser.add_argument("--attack", choices=["none", "alie"], default="none",
                        help="none, or alie from peers 0, 1, 10, 11 (default none)")
    parser.add_argument("--alie-z", type=float, default=None, metavar="Z",
                        help="ALIE's z (default: gcnode's, the formula for n = 5 inputs, f = 1)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads in all: torch.set_num_threads and OpenBLAS (default 1)")
    parser.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    parser.add_argument("--data", default=DATA_DIR, help=f"Fashion-MNIST directory (default {DATA_DIR})")
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = parser.parse_args()
    if args.rounds < 1 or args.threads < 1:
        parser.error("--rounds and --threads must be at least 1")
    if args.alie_z is not None and not math.isfinite(args.alie_z):
        parser.error(f"--alie-z {args.alie_z}: not a finite number")
    rule = parse_aggregator(args.aggregator)
    if rule[0] == "cwtm" and 2 * rule[1] >= 5:
        parser.error(f"cwtm:{rule[1]} needs more than {2 * rule[1]} inputs, a peer aggregates 5")

    import_torch(args.threads)
    torch.manual_seed(args.seed)
    x_train, y_train, x_test, y_test = load_fashion_mnist(args.data)

    # iid split: a random permutation dealt out round-robin
    gen = torch.Generator().manual_seed(args.seed)
    perm = torch.randperm(len(y_train), generator=gen)
    samplers = []
    for i in range(PEERS):
        idx = perm[i::PEERS]
        g = torch.Generator().manual_seed(args.seed * 1000 + i)
        samplers.append(Sampler(x_train[idx], y_train[idx], BATCH, g))

    # every peer starts from the same model
    models = [make_mlp() for _ in range(PEERS)]
    init_like_gcnode(models[0])
    for m in models[1:]:
        m.load_state_dict(models[0].state_dict())
    optims = [torch.optim.SGD(m.parameters(), lr=LR, momentum=MOMENTUM) for m in models]
    neighbours = [torus_neighbours(i) for i in range(PEERS)]
    byzantine = set(BYZANTINE) if args.attack == "alie" else set()
    honest = [i for i in range(PEERS) if i not in byzantine]
    z = args.alie_z if args.alie_z is not None else alie_z(len(neighbours[0]) + 1, 1)

    train_s = 0.0
    t0 = time.perf_counter()
    for r in range(args.rounds):
        t_round = time.perf_counter()
        lr = lr_at(r, args.rounds)
        # local step: heavy ball, decoupled weight decay w <- (1 - lr wd) w - lr v
        for i in range(PEERS):
            model, opt = models[i], optims[i]
            x, y = samplers[i].next()
            for group in opt.param_groups:
                group["lr"] = lr
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p.mul_(1.0 - lr * WEIGHT_DECAY)
            opt.step()
        train_s += time.perf_counter() - t_round
        # gossip: what each peer sends (its model, or the attack), then mixing
        with torch.no_grad():
            trained = [nn.utils.parameters_to_vector(m.parameters()) for m in models]
            sent = list(trained)
            for b in byzantine:
                seen = torch.stack([trained[b]] + [trained[j] for j in neighbours[b]])
                sent[b] = seen.mean(0) - z * seen.std(0)
            for i in range(PEERS):
                inputs = torch.stack([trained[i]] + [sent[j] for j in neighbours[i]])
                nn.utils.vector_to_parameters(aggregate(rule, inputs), models[i].parameters())
    loop_s = time.perf_counter() - t0

    accs = {i: accuracy(models[i], x_test, y_test) for i in honest}
    for i in honest:
        print(f"peer {i:2d} test_accuracy={accs[i]:.4f}")
    mean_acc = statistics.mean(accs.values())
    rps = args.rounds / loop_s
    print(f"honest_min_accuracy={min(accs.values()):.4f}")
    print(f"honest_mean_accuracy={mean_acc:.4f}")
    print(f"loop_s={loop_s:.3f} (training {train_s:.3f}, attack and mixing {loop_s - train_s:.3f})")
    print(f"rounds_per_s={rps:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "loop_s": loop_s, "rounds_per_s": rps,
                       "train_s": train_s, "mix_s": loop_s - train_s,
                       "honest_mean_accuracy": mean_acc, "honest_min_accuracy": min(accs.values()),
                       "aggregator": args.aggregator, "attack": args.attack,
                       "alie_z": z if byzantine else None, "threads": args.threads, "seed": args.seed,
                       "torch": torch.__version__}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
