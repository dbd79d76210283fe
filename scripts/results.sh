#!/usr/bin/env bash
# Regenerate a gcsim results table of docs/RESULTS.md: scripts/results.sh TABLE
# (1 1l 1r 1c 1x 2 2p 2pc 2h 2ht 2l 3 4 5 speed all) [--jobs J] [--threads T] [--force]. Builds first.
# Details: scripts/gcsim_tables.py --help.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GC_ROOT"
gc_build build -DCMAKE_BUILD_TYPE=Release >&2
# the speed table runs a PyTorch reference with Debian's python3 (scripts/pysim_reference.py)
case "${1:-}" in speed|all) (GC_PACKAGES=(python3-torch); gc_install_deps) >&2 ;; esac
export OPENBLAS_NUM_THREADS=1
exec python3 scripts/gcsim_tables.py "$@"
