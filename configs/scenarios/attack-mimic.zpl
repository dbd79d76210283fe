#   Attack (role/attack = mimic): each Byzantine peer copies one honest neighbour, over-
#   representing it.
#   4 of 16 peers (0, 1, 10, 11) are Byzantine on the 4x4 torus: every honest peer
#   has at most one Byzantine in-neighbour, which guard (the default rule) tolerates.
#   The honest peers must keep learning.
#   Data: Dirichlet(0.5) split, so that copying one peer is a bias.
#   Acceptance: honest mean accuracy within 2 points and honest min within 4 points
#   of the no-attack run with the same settings (baseline-dirichlet.zpl: 0.8453 on
#   the development machine, hence 0.825 and 0.805).
scenario
    name = "attack-mimic"
    description = "4 of 16 Byzantine (mimic) on a 4x4 torus; guard"
    peers = 16
    timeout_s = 900
node
    eval_every = 25
topology
    kind = "torus:4x4"
train
    split = "dirichlet:0.5"
    rounds = 300
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "guard"
    wait = "adaptive"
group
    attackers
        peers = "0,1,10,11"
        role
            attack = "mimic"
assert
    honest_mean_accuracy = ">= 0.825"
    honest_min_accuracy = ">= 0.805"
    consensus_distance = "<= 0.2"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
