#   The main job (./scripts/demo.sh): 8 gcnode peers on Fashion-MNIST, on a 2x4
#   torus (3 neighbours each), top-k 1 % with local immediate error compensation,
#   trimmed mean after nearest-neighbour mixing, adaptive waiting. Peers 0 and 6
#   are Byzantine and send ALIE ("A Little Is Enough") models; they are placed so
#   that every honest peer has at most one Byzantine neighbour.
scenario
    name = "demo"
    description = "8 peers on Fashion-MNIST, 2 of them Byzantine (ALIE)"
    peers = 8
    timeout_s = 600
node
    eval_every = 50
topology
    kind = "torus:2x4"
train
    split = "iid"
    rounds = 600
    local_steps = 4
    batch = 32
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "guard"
    wait = "adaptive"
group
    attackers
        peers = "0,6"
        role
            attack = "alie"
assert
    honest_mean_accuracy = ">= 0.85"
    honest_min_accuracy = ">= 0.83"
    honest_crashes = "== 0"
    min_rounds = ">= 600"
