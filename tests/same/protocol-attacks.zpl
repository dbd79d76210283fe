#   scripts/same.sh: malformed, replay, nan and flood attackers, signed messages
scenario
    name = "same-protocol-attacks"
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
    malformed
        peers = "0"
        role
            attack = "malformed"
    replay
        peers = "1"
        role
            attack = "replay"
    nan
        peers = "10"
        role
            attack = "nan"
    flood
        peers = "11"
        role
            attack = "flood"
