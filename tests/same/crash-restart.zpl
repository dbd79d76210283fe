#   scripts/same.sh: kill 4 peers at round 15, restart them from their checkpoints (signed)
scenario
    name = "same-crash-restart"
    peers = 16
    timeout_s = 3600
node
    eval_every = "10"
    checkpoint_every = "10"
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
    crash
        at = "round 15"
        do = "kill"
        peers = "2,7,8,13"
    restart
        at = "after crash 5"
        do = "restart resume"
        peers = "2,7,8,13"
