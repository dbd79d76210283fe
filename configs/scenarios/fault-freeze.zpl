#   Freeze: 2 peers (5 and 10) are frozen with SIGSTOP at round 50 and thawed
#   with SIGCONT 20 s later. Their neighbours must not stall (the adaptive wait
#   stops waiting for them), and they catch up when they run again.
scenario
    name = "fault-freeze"
    description = "SIGSTOP of 2 of 16 peers for 20 s, then SIGCONT"
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
    freeze
        at = "round 50"
        do = "stop"
        peers = "5,10"
    thaw
        at = "after freeze 20"
        do = "cont"
        peers = "5,10"
assert
    honest_mean_accuracy = ">= 0.80"
    honest_min_accuracy = ">= 0.75"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
    events_not_fired = "== 0"
