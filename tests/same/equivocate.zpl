#   scripts/same.sh: 4 equivocating attackers, signed messages
scenario
    name = "same-equivocate"
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
group
    attackers
        peers = "0,1,10,11"
        role
            attack = "equivocate"
