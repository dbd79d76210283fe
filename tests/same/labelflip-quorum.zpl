#   scripts/same.sh: label flip attackers against gm with quorum waiting, keyframes every 10
scenario
    name = "same-labelflip-quorum"
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
    compress = "qsgd:16"
    ec = "ef"
    aggregator = "gm"
    wait = "quorum:3"
    keyframe_every = "10"
    gamma = "0.5"
group
    attackers
        peers = "0,1,10,11"
        role
            attack = "labelflip"
sim
    skip_crypto = "1"
