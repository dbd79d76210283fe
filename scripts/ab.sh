#!/usr/bin/env bash
# A/B of gcsim's speed between two revisions, on one scenario, runs alternated
# so that both see the same machine (this one is shared and its speed moves):
#
#   scripts/ab.sh REV_A REV_B SCENARIO.zpl [RUNS] [gcsim options...]
#
# Builds gcsim at each revision in build-ab/<commit> (a git worktree, Release),
# runs `gcsim SCENARIO --quiet [options]` RUNS times each (default 3), A then B,
# and prints rounds/s without the final evaluation per run and the medians,
# with their ratio, and whether the two report.json files are byte-identical.
# -o "OPTS" adds gcsim options for B only, -e VAR=VALUE an environment variable
# for B only; with the same revision twice they A/B an option or a setting:
#   scripts/ab.sh -o --no-share HEAD HEAD scen.zpl 3 --threads 2
#   scripts/ab.sh -e GC_HUGEPAGES=0 HEAD HEAD scen.zpl 3 --threads 1
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GC_ROOT"

b_opts=() b_env=()
while getopts "o:e:" flag; do
  case $flag in
    o) read -r -a more <<< "$OPTARG"; b_opts+=("${more[@]}") ;;
    e) b_env+=("$OPTARG") ;;
    *) echo "usage: scripts/ab.sh [-o B_OPTS] [-e B_ENV] REV_A REV_B SCENARIO.zpl [RUNS] [gcsim options...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if (($# < 3)); then
  echo "usage: scripts/ab.sh [-o B_OPTS] [-e B_ENV] REV_A REV_B SCENARIO.zpl [RUNS] [gcsim options...]" >&2
  exit 2
fi
rev_a=$1 rev_b=$2 scenario=$3 runs=${4:-3}
shift $(($# < 4 ? 3 : 4))
[ -f "$scenario" ] || { echo "ab.sh: $scenario: no such scenario" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "ab.sh: RUNS '$runs' is not a positive count" >&2; exit 2; }
scenario=$(realpath "$scenario")

gcsim_a=$(gcsim_at "$rev_a")
gcsim_b=$(gcsim_at "$rev_b")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OPENBLAS_NUM_THREADS=1

# rounds/s of one run without the final evaluation, from its timing.json
# (revisions before the field was added: derived as gcsim derives it)
rate () {
  python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
r = t.get("rounds_per_s_without_eval") or t["rounds"] / (t["loop_s"] - t["eval_cpu_s"] / t["threads"])
print("%.2f" % r)' "$1/timing.json"
}

a_rates=() b_rates=()
for ((i = 1; i <= runs; i++)); do
  "$gcsim_a" "$scenario" --quiet --out "$out/a" "$@" >/dev/null || true
  a_rates+=("$(rate "$out/a")")
  env ${b_env[@]+"${b_env[@]}"} "$gcsim_b" "$scenario" --quiet --out "$out/b" "$@" ${b_opts[@]+"${b_opts[@]}"} >/dev/null || true
  b_rates+=("$(rate "$out/b")")
  echo "run $i: A ${a_rates[-1]} rounds/s, B ${b_rates[-1]} rounds/s"
done
python3 - "${a_rates[*]}" "${b_rates[*]}" <<'EOF'
import statistics, sys
a = [float(v) for v in sys.argv[1].split()]
b = [float(v) for v in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"median: A {ma:.1f} rounds/s, B {mb:.1f} rounds/s, B/A = {mb / ma:.2f}")
EOF
if cmp -s "$out/a/report.json" "$out/b/report.json"; then
  echo "report.json: identical"
else
  echo "report.json: differs"
fi
