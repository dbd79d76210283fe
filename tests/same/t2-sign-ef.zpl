#   scripts/same.sh: table 2 row: sign with error feedback, gamma 0.3
scenario
    name = "same-t2-sign-ef"
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
    compress = "sign"
    ec = "ef"
    aggregator = "mean"
    wait = "sync"
    gamma = "0.3"
sim
    skip_crypto = "1"
