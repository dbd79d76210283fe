#!/usr/bin/env bash
# Every test: installs what is missing, builds, runs the suite (ctest), then the
# same suite again built with AddressSanitizer + UndefinedBehaviorSanitizer (with
# clang, which also builds and runs the libFuzzer targets for a bounded time),
# then the threaded tests (ctest label `threaded`: the transport, the engine on
# three threads, the status object, gcnode runs, gcsim on two threads) built
# with ThreadSanitizer.
# Exit non-zero on any failure.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GC_ROOT"

gc_install_deps
gc_build build -DCMAKE_BUILD_TYPE=Release
gc_log "tests (release build)"
(cd build && ctest --output-on-failure -j2 --timeout 600)

sanflags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGC_SANITIZE=ON)
if command -v clang >/dev/null; then
  sanflags+=(-DCMAKE_C_COMPILER=clang -DGC_FUZZ=ON)
else
  echo "clang not found: sanitizer build with gcc, fuzzers skipped" >&2
fi
gc_build build-asan "${sanflags[@]}"
gc_log "tests (AddressSanitizer + UndefinedBehaviorSanitizer build, fuzzers)"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   ctest --output-on-failure -j2 --timeout 900)

# ThreadSanitizer: only the threaded tests and what they run (gcnode), so the
# pass stays short. tests/tsan.supp says why libzmq's own accesses are ignored.
tsanflags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGC_SANITIZE=thread)
command -v clang >/dev/null && tsanflags+=(-DCMAKE_C_COMPILER=clang)
if [ ! -f build-tsan/CMakeCache.txt ]; then
  gc_log "configuring build-tsan"
  cmake -S . -B build-tsan "${tsanflags[@]}" >/dev/null
fi
gc_log "building build-tsan (threaded tests)"
cmake --build build-tsan -j"$(nproc)" --target test_zmq test_engine_threads test_status test_ops_run test_sim \
  -- --no-print-directory >/dev/null
gc_log "threaded tests (ThreadSanitizer build)"
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$GC_ROOT/tests/tsan.supp" \
   ctest -L threaded --output-on-failure -j2 --timeout 600)

if [ -x tests/docker/smoke.sh ]; then
  if docker info >/dev/null 2>&1; then
    gc_log "docker smoke test"
    tests/docker/smoke.sh
  else
    echo "docker smoke test skipped: no Docker engine"
  fi
fi
gc_log "all tests passed"
