#   scripts/same.sh: partition 0-7 | 8-15 at round 10 for 5 s, then heal
scenario
    name = "same-partition"
    peers = 16
    timeout_s = 3600
node
    eval_every = "10"
topology
    kind = "torus:4x4"
train
    split = "iid"
    rounds = "40"
    local_steps = "1"
    batch = "32"
    test_samples = "1000"
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "nnm+cwtm:1"
    wait = "adaptive"
timeline
    split
        at = "round 10"
        do = "partition 0-7 | 8-15"
    heal
        at = "after split 5"
        do = "heal"
