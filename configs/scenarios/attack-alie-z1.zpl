#   Attack (role/attack = alie:1): each Byzantine peer sends z = mu - Z sigma ("A Little
#   Is Enough"), inside the spread of the honest models.
#   4 of 16 peers (0, 1, 10, 11) are Byzantine on the 4x4 torus: every honest peer
#   has at most one Byzantine in-neighbour, which guard (the default rule) tolerates.
#   The honest peers must keep learning.
#   Acceptance: honest mean accuracy within 2 points and honest min within 4 points
#   of the no-attack run with the same settings (baseline.zpl: 0.8525 on the
#   development machine, hence 0.83 and 0.81).
scenario
    name = "attack-alie-z1"
    description = "4 of 16 Byzantine (alie:1, z = 1) on a 4x4 torus; guard"
    peers = 16
    timeout_s = 900
node
    eval_every = 25
topology
    kind = "torus:4x4"
train
    split = "iid"
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
            attack = "alie:1"
assert
    honest_mean_accuracy = ">= 0.83"
    honest_min_accuracy = ">= 0.81"
    consensus_distance = "<= 0.2"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
