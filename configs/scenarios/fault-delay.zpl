#   Latency: every message is held back 50 ms plus up to 20 ms of jitter (gcnode's
#   fault layer). Rounds get longer, nothing else should change.
scenario
    name = "fault-delay"
    description = "50 ms (+ up to 20 ms) latency on every message"
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
    latency
        at = "time 0"
        do = "delay 50 20"
assert
    honest_mean_accuracy = ">= 0.80"
    honest_min_accuracy = ">= 0.75"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
    events_not_fired = "== 0"
