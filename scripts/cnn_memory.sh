#!/bin/sh
# gcsim's memory per CNN peer (docs/RESULTS.md, "Memory per peer"): the maximum RSS
# of 2 rounds of one step of batch 32 on a ring, top-k 5 % + mean, one thread, at
# each peer count given; the difference between two counts over the peers added is
# what a peer keeps.
#   scripts/cnn_memory.sh PRESET PEERS...     e.g. scripts/cnn_memory.sh lenet 128 1024
set -eu
preset=${1:?usage: cnn_memory.sh PRESET PEERS...}
shift
build=${BUILD:-build}
out=${OUT:-runs/cnn-memory}
mkdir -p "$out"
for peers in "$@"; do
    cat > "$out/$preset-$peers.zpl" <<ZPL
scenario
    name = "memory-$preset-$peers"
    peers = $peers
    timeout_s = 36000
node
    eval_every = "2"
topology
    kind = "ring"
train
    model = "cnn:$preset"
    rounds = "2"
    local_steps = "1"
    batch = "32"
    train_samples = "4000"
    test_samples = "200"
gossip
    compress = "topk:0.05"
    aggregator = "mean"
sim
    skip_crypto = "1"
ZPL
    # gcsim's own summary line names its maximum RSS
    rss=$("$build/gcsim" "$out/$preset-$peers.zpl" -o "$out/$preset-$peers" --threads 1 2>&1 |
          sed -n 's/.*max RSS \([0-9]*\) MB.*/\1/p' | tail -1)
    echo "$preset peers=$peers max_rss_mb=$rss"
done
