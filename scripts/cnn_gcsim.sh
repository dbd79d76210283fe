#!/bin/sh
# The LeNet preset decentralized against one machine, at the same samples per peer:
# 16 peers on a 4x4 torus in gcsim, dense and top-k 1 % + liec, ROUNDS rounds of one
# step of batch 32, against `gcnode train` over ROUNDS steps of batch 32 (the same
# cosine schedule over the same number of steps). Prints one line per run.
#   scripts/cnn_gcsim.sh [ROUNDS] [OUTDIR]     (default 200, runs/cnn-gcsim)
set -eu
rounds=${1:-200}
out=${2:-runs/cnn-gcsim}
build=${BUILD:-build}
mkdir -p "$out"
for mode in dense topk; do
    if [ $mode = dense ]; then compress=none; ec=none; else compress=topk:0.01; ec=liec; fi
    cat > "$out/lenet-$mode.zpl" <<ZPL
scenario
    name = "cnn-lenet-$mode"
    peers = 16
    timeout_s = 36000
node
    eval_every = "$rounds"
topology
    kind = "torus:4x4"
train
    split = "iid"
    model = "cnn:lenet"
    rounds = "$rounds"
    local_steps = "1"
    batch = "32"
    test_samples = "2000"
gossip
    compress = "$compress"
    ec = "$ec"
    aggregator = "mean"
    wait = "sync"
sim
    skip_crypto = "1"
ZPL
    start=$(date +%s)
    acc=$("$build/gcsim" "$out/lenet-$mode.zpl" -o "$out/lenet-$mode" | sed -n 's/^honest_mean_accuracy=//p')
    echo "gcsim lenet $mode: honest_mean_accuracy=$acc after $rounds rounds ($(( $(date +%s) - start )) s)"
done
start=$(date +%s)
acc=$("$build/gcnode" train --model cnn:lenet --batch 32 --epochs 1 --train-samples $((rounds * 32)) --quiet |
      sed -n 's/^test_accuracy=//p')
echo "gcnode train lenet: test_accuracy=$acc after $rounds steps ($(( $(date +%s) - start )) s)"
