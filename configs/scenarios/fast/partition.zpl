#   Fast partition and heal: 6 peers on a 2x3 torus are cut into two sides
#   (peers 0-2 and 3-5, three of them per side) at round 20 for 2 seconds, then
#   healed; both sides keep learning alone and agree again after the heal.
#   (Consensus: 0.02 on an idle machine; the bound leaves room for a loaded
#   one, where slow peers mix stale replicas.)
scenario
    name = "fast-partition"
    description = "partition 0-2 | 3-5 for 2 s, then heal: both sides learn, consensus comes back"
    peers = 6
    timeout_s = 180
node
    eval_every = 50
topology
    kind = "torus:2x3"
train
    data = "synthetic:12000:2000:784"
    rounds = 300
gossip
    aggregator = "cwtm:1"
    timeout_ms = 300
timeline
    split
        at = "round 20"
        do = "partition 0-2 | 3-5"
    heal
        at = "after split 2"
        do = "heal"
assert
    honest_mean_accuracy = ">= 0.85"
    honest_min_accuracy = ">= 0.80"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
    consensus_distance = "<= 0.3"
    events_not_fired = "== 0"
