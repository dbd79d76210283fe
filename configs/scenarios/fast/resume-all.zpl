#   Every peer killed at once and resumed: 4 peers on a ring get kill -9 at
#   round 60 (checkpoints every 10 rounds); half a second later all four start
#   again with --resume. Each continues from its newest checkpoint (at most 10
#   rounds are done again: `rounds_redone`), the replicas resync through
#   keyframes, and the network finishes as accurate as without the kill (the
#   uninterrupted run of the same settings, fast/baseline.zpl at 120 rounds,
#   ends near 0.97).
scenario
    name = "fast-resume-all"
    description = "kill -9 of every peer at round 60, all resumed from their checkpoints"
    peers = 4
    timeout_s = 180
node
    eval_every = 20
    checkpoint_every = 10
topology
    kind = "ring"
train
    data = "synthetic:12000:2000:784"
    rounds = 120
gossip
    aggregator = "cwtm:1"
    timeout_ms = 1000
timeline
    crash
        at = "round 60"
        do = "kill"
        peers = "0-3"
    back
        at = "after crash 0.5"
        do = "restart resume"
        peers = "0-3"
assert
    honest_mean_accuracy = ">= 0.90"
    honest_min_accuracy = ">= 0.88"
    honest_crashes = "== 0"
    min_rounds = ">= 120"
    rounds_redone = "<= 12"
    consensus_distance = "<= 0.05"
    events_not_fired = "== 0"
