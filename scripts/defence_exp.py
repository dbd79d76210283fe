#!/usr/bin/env python3
"""Issue 22 experiments: one gcsim run per call, appended to docs/research/defence-log.md.

    scripts/defence_exp.py GRAPH SPLIT AGG ATTACK OMN ROUNDS SCHEDULE SEED [GAMMA]

GRAPH: torus (4x4, Byzantine 0,1,10,11), ring (the honest-minority malicious ring:
honest 0..4 on a ring, each with two Byzantine leaves, 11 Byzantine of 16), expo
(exponential graph of 16, no attackers only), regular (24 peers on a random 6-regular
graph drawn from the seed, Byzantine 2,9,14,21: a graph none of the tables has), cycle (a plain ring of
16, Byzantine 0,4,8,12: every other honest peer has one Byzantine neighbour of two), expob (the
exponential graph of 16, Byzantine 0,4,8,12: every honest peer at most one of its 4 in-neighbours).
ATTACK '' or none = no attack.
Environment: VALIDATE sets gossip/validate (e.g. off, 64:10; unset: the default, auto),
COMPRESS and EC set gossip/compress and gossip/ec (unset: none, none; e.g. topk:0.01:fp16, liec:100),
TAG adds a tag to the run directory's name, GCSIM names the gcsim binary.

    scripts/defence_exp.py table BINARY          the log's rows of BINARY by setting, over seeds
    scripts/defence_exp.py compare BINARY [RULE] validation on against off (RULE: guard)
Dense gossip, wait sync, one local step of 32 per round, as table 1."""
import json, os, subprocess, sys, time
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from gcsim_tables import ring_edges, zpl  # noqa: E402

RING_HONEST = 5

def main():
    if len(sys.argv) < 9 or sys.argv[1] not in ("torus", "ring", "expo", "regular", "cycle", "expob"):
        sys.exit("usage: defence_exp.py torus|ring|expo|regular|cycle|expob SPLIT AGG ATTACK OMN ROUNDS SCHEDULE SEED [GAMMA]")
    graph, split, agg, attack, omn, rounds, sched, seed = sys.argv[1:9]
    gamma = sys.argv[9] if len(sys.argv) > 9 else "1"
    attack = "" if attack in ("", "none") else attack
    topo = {"torus": "torus:4x4", "ring": "edges:" + ring_edges(), "expo": "exponential",
            "regular": "regular:6", "cycle": "ring", "expob": "exponential"}[graph]
    byz = {"torus": "0,1,10,11", "ring": ",".join(str(i) for i in range(5, 16)), "expo": "",
           "regular": "2,9,14,21", "cycle": "0,4,8,12", "expob": "0,4,8,12"}[graph]
    peers = 24 if graph == "regular" else 16
    sections = {"node": {"eval_every": 0}, "topology": {"kind": topo},
                "train": {"split": split, "rounds": rounds, "local_steps": 1, "batch": 32,
                          "schedule": sched},
                "gossip": {"compress": os.environ.get("COMPRESS") or "none",
                           "ec": os.environ.get("EC") or "none", "aggregator": agg, "wait": "sync",
                           "gamma": gamma}}
    validate = os.environ.get("VALIDATE", "")       # gossip/validate; unset: the default (auto)
    if validate:
        sections["gossip"]["validate"] = validate
    groups = None
    if attack:
        keys = {"role/attack": attack}
        if omn == "1":
            keys["sim/omniscient"] = 1
        groups = {"attackers": (byz, keys)}
    key = "-".join([graph, split.replace(":", ""), agg.replace(":", "").replace("+", "_"),
                    (attack or "none").replace(":", ""), "omn" if omn == "1" else "real",
                    rounds, sched.replace(":", ""), "s" + seed, "g" + gamma]
                   + (["v" + validate.replace(":", "_")] if validate else [])
                   + (["c" + (os.environ.get("COMPRESS") or "none").replace(":", "_") + "-"
                       + (os.environ.get("EC") or "none").replace(":", "_")]
                      if os.environ.get("COMPRESS") or os.environ.get("EC") else []) + ([os.environ["TAG"]] if os.environ.get("TAG") else []))
    out = os.path.join(ROOT, "runs", "i22", key)
    os.makedirs(out, exist_ok=True)
    scen = os.path.join(out, "scenario.zpl")
    with open(scen, "w") as f:
        f.write(zpl("i22", peers, sections, groups, {"skip_crypto": 1}))
    t0 = time.time()
    cmd = [os.environ.get("GCSIM", os.path.join(ROOT, "build", "gcsim")), scen, "--out", out, "--quiet", "--threads", "1",
           "--seed", seed]
    p = subprocess.run(cmd, capture_output=True, text=True)
    with open(os.path.join(out, "stderr.txt"), "w") as f:
        f.write(p.stderr)
    rep = json.load(open(os.path.join(out, "report.json")))
    h = rep["honest"]
    five = [q["final_accuracy"] for q in rep["peers"][:RING_HONEST] if q.get("final_accuracy") is not None]
    ring5 = sum(five) / len(five) if graph == "ring" and five else float("nan")
    comp = (f" compress={os.environ.get('COMPRESS') or 'none'}+{os.environ.get('EC') or 'none'}"
            if os.environ.get("COMPRESS") or os.environ.get("EC") else "")
    line = (f"| {time.strftime('%H:%M')} | {graph} | {split} | `{agg}`{' validate=' + validate if validate else ''}{comp} | {attack or 'none'} | "
            f"{'omn' if omn == '1' else 'real'} | {rounds} | {sched} | {seed} | {gamma} | "
            f"{h.get('mean_accuracy', float('nan')):.4f} | {h.get('min_accuracy', float('nan')):.4f} | "
            f"{h.get('consensus_distance', float('nan')):.4g} | {ring5:.4f} | {time.time() - t0:.0f}s rc={p.returncode} {os.path.basename(cmd[0])} |")
    with open(os.path.join(ROOT, "docs", "research", "defence-log.md"), "a") as f:
        f.write(line + "\n")
    print(line)

def table(binary):
    """Summarise the log rows run with BINARY: per (graph, split, rule, attack, view, rounds,
    schedule) the mean over seeds and the spread (max - min), and the difference to the same
    rule's no-attack mean (ring: peers 0-4 against the no-attack run's peers 0-4)."""
    import collections
    import statistics
    rows = collections.defaultdict(dict)
    with open(os.path.join(ROOT, "docs", "research", "defence-log.md")) as f:
        for line in f:
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) < 15 or not c[14].endswith(binary) or c[0] == "time":
                continue
            acc = float(c[13]) if c[1] == "ring" else float(c[10])
            rows[(c[1], c[2], c[3].strip("`"), c[4], c[5], c[6], c[7])][c[8]] = acc
    print("| graph | split | rule | attack | view | rounds | schedule | seeds | mean | spread | vs no attack |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(rows):
        seeds = rows[key]
        m = statistics.mean(seeds.values())
        base = rows.get(key[:3] + ("none", "real") + key[5:])
        common = [x for x in seeds if base and x in base]
        d = (statistics.mean(seeds[x] for x in common) - statistics.mean(base[x] for x in common)) * 100 \
            if common and key[3] != "none" else float("nan")
        print(f"| {' | '.join(key)} | {','.join(sorted(seeds))} | {m:.4f} | "
              f"{(max(seeds.values()) - min(seeds.values())) * 100:.1f} | {d:+.1f} |")


def compare(binary, rule="guard"):
    """Validation on against off for RULE, from the log rows run with BINARY: per setting and
    attack the mean over seeds of each variant's difference to its own no-attack run of the
    same seed (points), with the seeds and the spread; the no-attack rows against `mean`."""
    import collections
    import statistics
    acc = collections.defaultdict(dict)
    with open(os.path.join(ROOT, "docs", "research", "defence-log.md")) as f:
        for line in f:
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) < 15 or not c[14].endswith(binary) or c[0] == "time":
                continue
            variant = c[3].replace("`", "")
            a = float(c[13]) if c[1] == "ring" else float(c[10])
            acc[(c[1], c[2], c[6], c[7], c[4], c[5], variant)][c[8]] = a
    on, off = rule, rule + " validate=off"
    print("| graph | split | rounds | schedule | attack | view | seeds | on: mean | on: Δ (spread) | off: mean | off: Δ (spread) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    keys = sorted({k[:6] for k in acc if k[6] in (on, off)})
    def delta(k, variant):
        runs, base = acc.get(k + (variant,), {}), acc.get(k[:4] + ("none", "real", variant), {})
        seeds = sorted(x for x in runs if x in base)
        if not seeds:
            return "–", "–", []
        d = [(runs[x] - base[x]) * 100 for x in seeds]
        m = statistics.mean(runs[x] for x in seeds)
        return f"{m:.4f}", f"{statistics.mean(d):+.1f} ({max(d) - min(d):.1f})", seeds
    for k in keys:
        if k[4] == "none":
            res = []
            for variant in (on, off):
                runs, ref = acc.get(k + (variant,), {}), acc.get(k[:4] + ("none", "real", "mean"), {})
                seeds = sorted(x for x in runs if x in ref)
                d = [(runs[x] - ref[x]) * 100 for x in seeds]
                res.append((f"{statistics.mean(runs[x] for x in seeds):.4f}" if seeds else "–",
                            f"{statistics.mean(d):+.1f} vs mean" if seeds else "–", seeds))
            seeds = sorted(set(res[0][2]) | set(res[1][2]))
            print(f"| {' | '.join(k)} | {','.join(seeds)} | {res[0][0]} | {res[0][1]} | {res[1][0]} | {res[1][1]} |")
            continue
        m1, d1, s1 = delta(k, on)
        m0, d0, s0 = delta(k, off)
        print(f"| {' | '.join(k)} | {','.join(sorted(set(s1) | set(s0)))} | {m1} | {d1} | {m0} | {d0} |")


if __name__ == "__main__":
    if sys.argv[1] == "table":
        table(sys.argv[2])
    elif sys.argv[1] == "compare":
        compare(sys.argv[2], *sys.argv[3:4])
    else:
        main()
