#   kill -9 of every peer at once, then all resumed from their checkpoints: the
#   4 peers of resume-uninterrupted.zpl get SIGKILL at round 150 (checkpoints
#   every 10 rounds) and start again with --resume a second later. Nothing
#   starts over (`rounds_redone`: at most the checkpoint interval plus the
#   lines in flight), the replicas resync through keyframes, and the final
#   accuracy matches the uninterrupted run within 1 point (docs/RESULTS.md).
scenario
    name = "resume-kill-all"
    description = "4 peers on a ring, Fashion-MNIST: kill -9 of all at round 150, all resumed from checkpoints"
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
timeline
    crash
        at = "round 150"
        do = "kill"
        peers = "0-3"
    back
        at = "after crash 1"
        do = "restart resume"
        peers = "0-3"
assert
    honest_mean_accuracy = ">= 0.85"
    honest_min_accuracy = ">= 0.84"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
    rounds_redone = "<= 12"
    events_not_fired = "== 0"
