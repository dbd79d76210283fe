#   Fast freeze: 6 peers on a 2x3 torus (3 neighbours each); peer 2 is frozen
#   (SIGSTOP) at round 20 and thawed (SIGCONT) at round 120: its neighbours go
#   on without it (cwtm:1 needs 2 of their 3 neighbours), and it catches up
#   when it runs again.
scenario
    name = "fast-freeze"
    description = "SIGSTOP / SIGCONT of one peer of 6: nobody stalls, the frozen peer catches up"
    peers = 6
    timeout_s = 180
node
    eval_every = 40
topology
    kind = "torus:2x3"
train
    data = "synthetic:12000:2000:784"
    rounds = 200
gossip
    aggregator = "cwtm:1"
    timeout_ms = 500
timeline
    freeze
        at = "round 20"
        do = "stop"
        peers = "2"
    thaw
        at = "round 120"
        do = "cont"
        peers = "2"
assert
    honest_mean_accuracy = ">= 0.85"
    honest_min_accuracy = ">= 0.80"
    honest_crashes = "== 0"
    min_rounds = ">= 200"
    events_not_fired = "== 0"
