#!/usr/bin/env bash
# Does a change leave what gcsim learns exactly as it was? Runs every scenario of
# tests/same/ (a fixed list that covers every path of the round engine: table 1's
# ALIE, dissensus and mimic rows with two rules, omniscient and not; table 2's
# top-k + liec and sign + ef rows; table 3's adaptive waiting with stragglers; a
# crash + restart + resume; a partition; drop and delay; equivocating and
# protocol attackers, signed) with gcsim built at two revisions, and compares
# their report.json files byte for byte:
#
#   scripts/same.sh REV_A [REV_B] [SCENARIO.zpl ...]
#
# REV_B defaults to the working tree: build/gcsim as it is (build it first).
# Other scenarios can be named instead of the list. Exit 0 when every report is
# identical, 1 when any differs (the differing files are kept and named), 2 on
# a usage error.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GC_ROOT"

usage="usage: scripts/same.sh REV_A [REV_B|-] [SCENARIO.zpl ...]"
(($# >= 1)) || { echo "$usage" >&2; exit 2; }
case $1 in -h|--help) echo "$usage"; exit 0 ;; esac
rev_a=$1; shift
rev_b=-
if (($# >= 1)) && [[ $1 != *.zpl ]]; then rev_b=$1; shift; fi
scenarios=("$@")
((${#scenarios[@]})) || scenarios=(tests/same/*.zpl)
for s in "${scenarios[@]}"; do
  [ -f "$s" ] || { echo "same.sh: $s: no such scenario" >&2; exit 2; }
done

gcsim_a=$(gcsim_at "$rev_a")
if [ "$rev_b" = - ]; then
  gcsim_b="$GC_ROOT/build/gcsim"
  [ -x "$gcsim_b" ] || { echo "same.sh: $gcsim_b not built (cmake --build build --target gcsim)" >&2; exit 2; }
  label_b="working tree"
else
  gcsim_b=$(gcsim_at "$rev_b")
  label_b=$(git rev-parse --short "$rev_b")
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/gc-same.XXXXXX")
export OPENBLAS_NUM_THREADS=1
echo "A = $(git rev-parse --short "$rev_a"), B = $label_b; outputs in $out"

differ=0
for s in "${scenarios[@]}"; do
  name=$(basename "$s" .zpl)
  "$gcsim_a" "$s" --quiet --out "$out/$name/a" >"$out/$name.a.log" 2>&1 || true
  "$gcsim_b" "$s" --quiet --out "$out/$name/b" >"$out/$name.b.log" 2>&1 || true
  acc=$(grep -o 'honest_mean_accuracy=[0-9.na]*' "$out/$name.b.log" | tail -1 || true)
  if [ ! -f "$out/$name/a/report.json" ] || [ ! -f "$out/$name/b/report.json" ]; then
    printf '%-34s NO REPORT (see %s.{a,b}.log)\n' "$name" "$out/$name"
    differ=1
  elif cmp -s "$out/$name/a/report.json" "$out/$name/b/report.json"; then
    printf '%-34s identical  %s\n' "$name" "$acc"
    rm -rf "${out:?}/$name"
  else
    printf '%-34s DIFFERS    %s (diff %s/{a,b}/report.json)\n' "$name" "$acc" "$out/$name"
    differ=1
  fi
done
if ((differ)); then
  echo "same.sh: some reports differ"
  exit 1
fi
echo "same.sh: all ${#scenarios[@]} reports identical"
rm -rf "$out"
