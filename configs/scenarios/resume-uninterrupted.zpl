#   The reference for resume-kill-all.zpl: the same 4 peers, data and rounds,
#   never interrupted. The two final accuracies must agree within 1 point
#   (docs/RESULTS.md, fault-injection suite).
scenario
    name = "resume-uninterrupted"
    description = "4 honest peers on a ring, Fashion-MNIST, 300 rounds, no fault (reference for resume-kill-all)"
    peers = 4
    timeout_s = 600
node
    eval_every = 25
    checkpoint_every = 10
topology
    kind = "ring"
train
    split = "iid"
    rounds = 300
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "cwtm:1"
    wait = "adaptive"
assert
    honest_mean_accuracy = ">= 0.85"
    honest_min_accuracy = ">= 0.84"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
