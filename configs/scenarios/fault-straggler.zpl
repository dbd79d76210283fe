#   Straggler: peer 6 trains 10 times slower than the others from the start
#   (control channel: slow 10). The others must not wait for it; it keeps up by
#   round catch-up and its updates are used while fresh enough.
scenario
    name = "fault-straggler"
    description = "one peer of 16 ten times slower"
    peers = 16
    timeout_s = 900
node
    eval_every = 25
topology
    kind = "torus:4x4"
train
    split = "iid"
    rounds = 300
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "guard"
    wait = "adaptive"
timeline
    slow
        at = "time 0"
        do = "slow 10"
        peers = "6"
assert
    honest_mean_accuracy = ">= 0.80"
    honest_min_accuracy = ">= 0.75"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
    events_not_fired = "== 0"
