#   scripts/same.sh: table 3 row: adaptive waiting, peers 0,5,10,15 five times slower
scenario
    name = "same-t3-adaptive-slow"
    peers = 16
    timeout_s = 3600
node
    eval_every = "10"
topology
    kind = "torus:4x4"
train
    split = "iid"
    rounds = "40"
    local_steps = "4"
    batch = "32"
    test_samples = "1000"
gossip
    compress = "none"
    ec = "none"
    aggregator = "cwtm:1"
    wait = "adaptive"
group
    slow
        peers = "0,5,10,15"
        sim
            slow = "5"
sim
    skip_crypto = "1"
