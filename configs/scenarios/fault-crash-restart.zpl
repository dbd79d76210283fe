#   Crash and restart: 4 honest peers (2, 7, 8, 13) are killed with SIGKILL at
#   round 100 and started again with --resume 5 s later, from their newest
#   checkpoint (every 25 rounds). Their neighbours go on meanwhile; the restarted
#   peers resynchronise by keyframes and catch up.
#   600 rounds, so that the restarted peers rejoin running neighbours: with the
#   default guard the 12 running peers do not wait for the crashed ones, and
#   at 300 rounds they finished before the restarted ones were back
#   (docs/SCENARIOS.md, "The library").
scenario
    name = "fault-crash-restart"
    description = "kill -9 of 4 of 16 peers at round 100, restarted 5 s later from their checkpoints"
    peers = 16
    timeout_s = 900
node
    eval_every = 25
    checkpoint_every = 25
topology
    kind = "torus:4x4"
train
    split = "iid"
    rounds = 600
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "guard"
    wait = "adaptive"
timeline
    crash
        at = "round 100"
        do = "kill"
        peers = "2,7,8,13"
    restart
        at = "after crash 5"
        do = "restart resume"
        peers = "2,7,8,13"
assert
    honest_mean_accuracy = ">= 0.80"
    honest_min_accuracy = ">= 0.75"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 600"
    events_not_fired = "== 0"
