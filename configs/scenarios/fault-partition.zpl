#   Partition: the torus is cut in two halves (peers 0-7 and 8-15: rows 0-1 and
#   rows 2-3) at round 50 for 30 s, then healed. Each half keeps learning alone;
#   after the heal the halves mix again and agree. 600 rounds: the run must go on
#   well after the heal (at 300 rounds the peers had finished before it).
scenario
    name = "fault-partition"
    description = "partition 0-7 | 8-15 for 30 s at round 50, then heal"
    peers = 16
    timeout_s = 900
node
    eval_every = 50
topology
    kind = "torus:4x4"
train
    split = "iid"
    rounds = 600
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "guard"
    wait = "adaptive"
timeline
    split
        at = "round 50"
        do = "partition 0-7 | 8-15"
    heal
        at = "after split 30"
        do = "heal"
assert
    honest_mean_accuracy = ">= 0.80"
    honest_min_accuracy = ">= 0.75"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 600"
    events_not_fired = "== 0"
