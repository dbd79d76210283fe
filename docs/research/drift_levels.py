#!/usr/bin/env python3
"""The drift levels of docs/RESULTS.md, "The drift test": from the stderr.txt of runs made with
docs/research/guard-drift-trace.patch applied (GC_GUARD_TRACE=1 scripts/defence_exp.py ...),
the largest drift of an honest neighbour seen by an honest peer, per hundred calls (from call
50), and the smallest of a Byzantine one.

    git apply docs/research/guard-drift-trace.patch && cmake --build build -j2 --target gcsim
    GC_GUARD_TRACE=1 TAG=drifttrace scripts/defence_exp.py ring iid guard stealth:3:0.3 1 300 constant 1
    docs/research/drift_levels.py runs/i22/*drifttrace/stderr.txt
    git checkout robust/gc_robust_guard.c

The graph comes from the run directory's name (torus, ring, expo). An honest peer's line is
known by its neighbours: on the 4x4 torus the set of keys names the peer; on the ring the
honest peers are the ones with four neighbours (the Byzantine leaves have one or two)."""
import collections
import re
import sys

BYZANTINE = {"torus": {0, 1, 10, 11}, "ring": set(range(5, 16)), "expo": set()}


def torus_neighbours(p):
    r, c = divmod(p, 4)
    return {((r + 1) % 4) * 4 + c, ((r - 1) % 4) * 4 + c, r * 4 + (c + 1) % 4, r * 4 + (c - 1) % 4}


def honest_line(graph, keys):
    if graph == "torus":
        own = [p for p in range(16) if torus_neighbours(p) == keys]
        return bool(own) and own[0] not in BYZANTINE["torus"]
    return graph != "ring" or len(keys) >= 4


def main():
    for path in sys.argv[1:]:
        run = path.split("/")[-2]
        graph = run.split("-")[0]
        byz = BYZANTINE[graph] if "-none-" not in run else set()     # without attack all are honest
        honest, attackers = collections.defaultdict(float), []
        for line in open(path):
            if not line.startswith("drift"):
                continue
            t = int(re.search(r"t=(\d+)", line).group(1))
            ents = [(int(k), float(v)) for k, v, _ in re.findall(r"k(\d+)=([\d.]+)/(-?[\d.]+)", line)]
            if t < 50 or not honest_line(graph, {k for k, _ in ents}):
                continue
            for k, v in ents:
                if k in byz:
                    attackers.append(v)
                else:
                    honest[t // 100 * 100] = max(honest[t // 100 * 100], v)
        print(run, "honest max per hundred calls:", {k: round(v, 3) for k, v in sorted(honest.items())},
              "attackers min:", round(min(attackers), 3) if attackers else "-")


if __name__ == "__main__":
    main()
