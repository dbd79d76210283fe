#!/usr/bin/env bash
# The libFuzzer targets in their long mode (docs/OPERATIONS.md, "Fuzzing"): each
# target for GC_FUZZ_SECONDS (default 600), one after the other, in the
# AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan, clang,
# GC_FUZZ=ON), starting from its seed corpus (tests/MODULE/corpus/NAME) and what
# earlier runs kept (build-asan/fuzz/NAME.corpus). ctest's runs (label fuzz,
# 10-20 s each) are the short CI mode.
#
#   GC_FUZZ_SECONDS=600 scripts/fuzz.sh [NAME ...]
#
# Per target it prints the executions, the coverage reached (edges) and how
# many functions outside the harness (tests/) the corpus covers, read back
# from libFuzzer's -print_coverage. None means the fuzzer gets no coverage
# feedback from the code under test (only its own harness is instrumented):
# that fails, as does any crash, leak or timeout (the input is kept as
# build-asan/fuzz/NAME-crash-*). Exit 0 when every target ran clean with
# feedback.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GC_ROOT"

seconds=${GC_FUZZ_SECONDS:-600}
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: GC_FUZZ_SECONDS must be a number of seconds" >&2; exit 2 ;; esac
command -v clang >/dev/null || { echo "fuzz.sh: the fuzzers need clang" >&2; exit 2; }
dir=build-asan/fuzz
targets=("$@")
if ((${#targets[@]})); then
  # only the targets named (and what they link)
  [ -f build-asan/CMakeCache.txt ] || cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGC_SANITIZE=ON -DCMAKE_C_COMPILER=clang -DGC_FUZZ=ON >/dev/null
  gc_log "building ${targets[*]}"
  cmake --build build-asan -j"$(nproc)" --target "${targets[@]}" -- --no-print-directory >/dev/null
else
  gc_build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGC_SANITIZE=ON -DCMAKE_C_COMPILER=clang -DGC_FUZZ=ON
  for f in "$dir"/fuzz_*; do
    [ -x "$f" ] && [ -f "$f" ] && targets+=("$(basename "$f")")
  done
fi
((${#targets[@]})) || { echo "fuzz.sh: no fuzz targets in $dir" >&2; exit 2; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OPENBLAS_NUM_THREADS=1
failed=0
printf '%-18s %8s %12s %9s %9s  %s\n' target seconds executions coverage functions result
for t in "${targets[@]}"; do
  bin=$dir/$t
  [ -x "$bin" ] || { echo "fuzz.sh: $bin not built" >&2; exit 2; }
  work=$dir/$t.corpus
  mkdir -p "$work"
  seeds=()
  for c in tests/*/corpus/"$t"; do [ -d "$c" ] && seeds+=("$c"); done
  log=$dir/$t.long.log
  rc=0
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$dir/$t-crash-" "$work" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  # the corpus once more, for the functions it covers outside the harness
  funcs=$("$bin" -runs=0 -print_coverage=1 "$work" "${seeds[@]}" 2>&1 |
          grep '^COVERED_FUNC' | grep -vc "$GC_ROOT/tests/" || true)
  result=ok
  if ((rc != 0)); then
    result="CRASH (exit $rc, see $log)"
  elif ((funcs == 0)); then
    result="NO COVERAGE FEEDBACK (no function outside the harness is instrumented)"
  fi
  [ "$result" = ok ] || failed=1
  printf '%-18s %8s %12s %9s %9s  %s\n' "$t" "$seconds" "${execs:-?}" "${cov:-?}" "$funcs" "$result"
done
exit $failed
