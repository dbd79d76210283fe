#   scripts/same.sh: table 1 row, alie:1 against nnm+cwtm:1, realistic
scenario
    name = "same-t1-alie1-nnm_cwtm1-real"
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
    compress = "none"
    ec = "none"
    aggregator = "nnm+cwtm:1"
    wait = "sync"
group
    attackers
        peers = "0,1,10,11"
        role
            attack = "alie:1"
sim
    skip_crypto = "1"
