#   Attack (role/attack = fork): each Byzantine peer signs two different deltas
#   under one sequence number every round, its update to half of its neighbours and
#   the update negated to the other half; the neighbour where the halves meet gets
#   both. That neighbour holds two validly signed headers for one (author, seq):
#   proof of equivocation (docs/PROTOCOL.md section 9). It excludes the author and
#   passes the proof on; every peer that receives it checks both signatures itself
#   and excludes the author too.
#   4 of 16 peers (0, 1, 10, 11) are Byzantine on the 4x4 torus.
#   Acceptance: honest mean accuracy within 2 points and honest min within 4 points
#   of the no-attack run with the same settings (baseline.zpl: 0.8525 on the
#   development machine, hence 0.83 and 0.81), and the honest peers refuse the
#   excluded authors' messages as `equivocated` (every round after the first: each
#   of the 4 has 4 out-neighbours, at least 1000 refusals over 300 rounds).
scenario
    name = "attack-fork"
    description = "4 of 16 Byzantine (fork: two deltas under one seq) on a 4x4 torus; guard"
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
            attack = "fork"
assert
    honest_mean_accuracy = ">= 0.83"
    honest_min_accuracy = ">= 0.81"
    consensus_distance = "<= 0.2"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
    rejected.equivocated = ">= 1000"
