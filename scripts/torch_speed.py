#!/usr/bin/python3
"""Training throughput of gcnode's CNN presets against Debian's PyTorch
(python3-torch) on the same network, batch and one thread, in the same run.

    scripts/torch_speed.py [--gcbench build/gcbench] [--batch 64] [--min-time 3] [--rounds 1] [--plain-malloc]

Builds each preset in PyTorch from gcnode's canonical spec (the JSON of
`gcbench train` carries it), times a step (forward, cross-entropy, backward,
plain SGD) the way bench/bench_cnn.c does, runs gcbench in the same run, and
prints samples/s of both, the ratio and gcnode's sgemm fraction. Both are
timed on the wall clock and on the calling thread's CPU clock (gcbench's
*_cpu_samples_per_s, time.thread_time here: with one thread PyTorch computes
on the calling thread), the second of which does not count what the
scheduler gives other processes on a shared machine; the sgemm fraction is
of the CPU time.

--rounds N repeats the whole comparison N times, one after the other, and
prints each round's CPU-clock ratio and their median: on a shared machine
PyTorch's own figure moved by 10-20 % between runs a minute apart, which one
round took for a difference between the two.

PyTorch allocates its activations afresh every step. glibc's malloc hands
blocks of this size back to the kernel when they are freed (mmap, then
trimming), so each step pays page faults for them again: on a VM where
faults are slow (an AMD EPYC Zen 5 here, 2026-12-07, 20 % system time) that
made PyTorch's `lenet` 3x slower (1200-2300 samples/s against 3900-4400).
The script therefore re-executes itself once with MALLOC_MMAP_THRESHOLD_
and MALLOC_TRIM_THRESHOLD_ set so that freed blocks stay in the heap, the
setting a PyTorch user would pick (or jemalloc/tcmalloc); gcnode allocates
its workspace once and is not affected. --plain-malloc keeps glibc's
defaults (the figures in docs/RESULTS.md before that date ran so).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HEAP_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "2000000000", "MALLOC_TRIM_THRESHOLD_": "4000000000"}
if "--plain-malloc" not in sys.argv and any(os.environ.get(k) != v for k, v in HEAP_MALLOC.items()):
    os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **HEAP_MALLOC})

import torch  # noqa: E402 (after the re-exec above)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Block(nn.Module):
    """rO[sS][z]: c3-gn-relu-c3-gn plus a shortcut (1x1 conv + gn when the shape changes),
    relu; z: the second gn's scale starts at 0."""

    def __init__(self, cin, out, stride, groups, zero=False):
        super().__init__()
        self.c1 = nn.Conv2d(cin, out, 3, stride, 1)
        self.g1 = nn.GroupNorm(groups, out)
        self.c2 = nn.Conv2d(out, out, 3, 1, 1)
        self.g2 = nn.GroupNorm(groups, out)
        if zero:
            nn.init.zeros_(self.g2.weight)
        self.short = None
        if stride != 1 or cin != out:
            self.short = nn.Sequential(nn.Conv2d(cin, out, 1, stride, 0), nn.GroupNorm(groups, out))

    def forward(self, x):
        y = self.g2(self.c2(F.relu(self.g1(self.c1(x)))))
        return F.relu(y + (self.short(x) if self.short is not None else x))


def build(spec):
    """The network of a canonical spec, cnn:CxHxW/LAYER,... (docs/CONFIG.md)."""
    m = re.fullmatch(r"cnn:(\d+)x(\d+)x(\d+)/(.*)", spec)
    if not m:
        sys.exit(f"torch_speed: not a canonical CNN spec: {spec}")
    c, h, w = (int(m.group(i)) for i in (1, 2, 3))
    shape = (c, h, w)
    layers = []
    for tok in m.group(4).split(","):
        c, h, w = shape
        if tok == "relu":
            layers.append(nn.ReLU())
        elif tok == "gap":
            layers.append(nn.AdaptiveAvgPool2d(1))
            shape = (c, 1, 1)
        elif (g := re.fullmatch(r"gn(\d+)", tok)):
            layers.append(nn.GroupNorm(int(g.group(1)), c))
        elif (g := re.fullmatch(r"(mp|ap)(\d+)s(\d+)", tok)):
            k, s = int(g.group(2)), int(g.group(3))
            layers.append((nn.MaxPool2d if g.group(1) == "mp" else nn.AvgPool2d)(k, s))
            shape = (c, (h - k) // s + 1, (w - k) // s + 1)
        elif (g := re.fullmatch(r"c(\d+)k(\d+)s(\d+)p(\d+)", tok)):
            o, k, s, p = (int(v) for v in g.groups())
            layers.append(nn.Conv2d(c, o, k, s, p))
            shape = (o, (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1)
        elif (g := re.fullmatch(r"r(\d+)s(\d+)x(\d+)g(\d+)(z?)", tok)):
            o, s, n, groups = (int(v) for v in g.groups()[:4])
            for i in range(n):
                layers.append(Block(c if i == 0 else o, o, s if i == 0 else 1, groups, g.group(5) == "z"))
            shape = (o, (h + 2 - 3) // s + 1, (w + 2 - 3) // s + 1)
        elif (g := re.fullmatch(r"f(\d+)", tok)):
            if not any(isinstance(l, nn.Flatten) for l in layers):
                layers.append(nn.Flatten())
            o = int(g.group(1))
            layers.append(nn.Linear(c * h * w, o))
            shape = (o, 1, 1)
        else:
            sys.exit(f"torch_speed: layer {tok} of {spec} unknown")
    return nn.Sequential(*layers), (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def torch_samples_per_s(spec, batch, min_time):
    torch.manual_seed(1)
    model, (c, h, w) = build(spec)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xs = [torch.randn(batch, c, h, w) for _ in range(4)]
    ys = [torch.randint(0, 10, (batch,)) for _ in range(4)]
    n_params = sum(p.numel() for p in model.parameters())

    def steps(k):
        for i in range(k):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(xs[i % 4]), ys[i % 4]).backward()
            opt.step()

    steps(2)
    best, best_cpu, start = 1e300, 1e300, time.perf_counter()
    while time.perf_counter() - start < min_time or best == 1e300:
        t0, c0 = time.perf_counter(), time.thread_time()
        steps(5)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.thread_time() - c0)
    return 5 * batch / best, 5 * batch / best_cpu, n_params


def one_round(a):
    """gcbench train, then PyTorch on each preset: {preset: (ours, theirs, ours_cpu, theirs_cpu, frac, params)}."""
    out = subprocess.run([a.gcbench, "train", "--json", "--min-time", str(a.min_time)],
                         check=True, capture_output=True, text=True,
                         env={"OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}).stdout
    figures = {}
    for line in out.splitlines():
        if line.startswith("{"):
            f = json.loads(line)
            figures[f["name"]] = f
    res = {}
    for preset in PRESETS:
        key = f"train_cnn_{preset}_bs{a.batch}"
        if key + "_samples_per_s" not in figures:
            sys.exit(f"torch_speed: gcbench train gave no {key}_samples_per_s")
        ours = figures[key + "_samples_per_s"]
        theirs, theirs_cpu, n_params = torch_samples_per_s(ours["model"], a.batch, a.min_time)
        res[preset] = (ours["value"], theirs, figures[key + "_cpu_samples_per_s"]["value"], theirs_cpu,
                       figures[key + "_sgemm_fraction"]["value"], n_params)
    return res


PRESETS = ("lenet", "resnet8-gn", "lenet-w", "lenet-w-res", "resnet20-gn")


def main():
    #  no abbreviations: the re-exec above looks for --plain-malloc spelled out
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    ap.add_argument("--gcbench", default="build/gcbench")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--min-time", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=1, help="repeat the comparison; report the median ratio")
    ap.add_argument("--plain-malloc", action="store_true",
                    help="run PyTorch with glibc's default malloc settings (page faults every step)")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("torch_speed: --rounds must be at least 1")
    torch.set_num_threads(1)
    heap = all(os.environ.get(k) == v for k, v in HEAP_MALLOC.items())
    malloc = "freed blocks kept in the heap" if heap else "glibc defaults"
    print(f"torch {torch.__version__}, 1 thread, mkldnn {torch.backends.mkldnn.is_available()}, batch {a.batch}, "
          f"malloc: {malloc}")
    cpu_ratios = {p: [] for p in PRESETS}
    for r in range(a.rounds):
        res = one_round(a)
        if a.rounds > 1:
            print(f"round {r + 1} of {a.rounds}")
        print(f"{'preset':12} {'gcnode/s':>10} {'torch/s':>10} {'ratio':>6}"
              f" {'cpu gc/s':>10} {'cpu t/s':>10} {'cpu r':>6} {'sgemm':>6}  params")
        for preset in PRESETS:
            ours, theirs, ours_cpu, theirs_cpu, frac, n_params = res[preset]
            print(f"{preset:12} {ours:10.0f} {theirs:10.0f} {ours / theirs:6.2f}"
                  f" {ours_cpu:10.0f} {theirs_cpu:10.0f} {ours_cpu / theirs_cpu:6.2f} {frac:6.2f}  {n_params}")
            print(f"ratio_{preset}={ours / theirs:.3f}")
            print(f"cpu_ratio_{preset}={ours_cpu / theirs_cpu:.3f}")
            cpu_ratios[preset].append(ours_cpu / theirs_cpu)
    if a.rounds > 1:
        for preset in PRESETS:
            v = cpu_ratios[preset]
            print(f"median_cpu_ratio_{preset}={statistics.median(v):.3f} "
                  f"(rounds: {' '.join(f'{x:.2f}' for x in v)})")


if __name__ == "__main__":
    main()
