#   scripts/same.sh: table 1 row, dissensus against cwtm:1, realistic
scenario
    name = "same-t1-dissensus-cwtm1-real"
    peers = 16
    timeout_s = 3600
node
    eval_every = "10"
topology
    kind = "torus:4x4"
train
    split = "dirichlet:0.5"
    rounds = "40"
    local_steps = "1"
    batch = "32"
    test_samples = "1000"
gossip
    compress = "none"
    ec = "none"
    aggregator = "cwtm:1"
    wait = "sync"
group
    attackers
        peers = "0,1,10,11"
        role
            attack = "dissensus"
sim
    skip_crypto = "1"
