#   scripts/same.sh: 20 % drop, then 50 ms + 20 ms jitter latency from round 20, a rate limit on peer 3
scenario
    name = "same-drop-delay"
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
    loss
        at = "time 0"
        do = "drop 0.2"
    latency
        at = "round 20"
        do = "delay 50 20"
