#!/usr/bin/env bash
# The main job: installs what is missing, builds, and trains on Fashion-MNIST.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$GC_ROOT"

gc_install_deps
gc_build build -DCMAKE_BUILD_TYPE=Release
gc_log "training the default model (784-256-128-10) on Fashion-MNIST, 10 epochs"
exec ./build/gcnode train --epochs 10 "$@"
