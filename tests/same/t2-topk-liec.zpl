#   scripts/same.sh: table 2 row: top-k 1 % with liec, plain averaging
scenario
    name = "same-t2-topk-liec"
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
    compress = "topk:0.01"
    ec = "liec"
    aggregator = "mean"
    wait = "sync"
sim
    skip_crypto = "1"
