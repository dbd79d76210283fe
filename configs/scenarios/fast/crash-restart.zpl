#   Fast crash and restart: 6 peers on a 2x3 torus (3 neighbours each); peers
#   1 and 5 (not neighbours of each other) are killed with SIGKILL at round 20;
#   peer 1 is started again (from scratch: no checkpoint) at round 25 and
#   catches up while the others still run; peer 5 stays down. The others must
#   finish and stay accurate.
#   Timing: rounds take 10-25 ms here and a restarted peer needs a second or two
#   to load its data, so 400 rounds keep the others running until it is back.
#   (A restarted peer waits up to 10 s for all its neighbours: peer 5 is not
#   one of peer 1's, so peer 1 does not wait for it.)
scenario
    name = "fast-crash-restart"
    description = "kill -9 of 2 of 6 peers, one restarted: the rest finish, nobody else crashes"
    peers = 6
    timeout_s = 180
node
    eval_every = 100
topology
    kind = "torus:2x3"
train
    data = "synthetic"
    rounds = 400
    test_samples = 2000
gossip
    aggregator = "cwtm:1"
    timeout_ms = 300
timeline
    crash
        at = "round 20"
        do = "kill"
        peers = "1,5"
    back
        at = "round 25"
        do = "restart"
        peers = "1"
assert
    honest_mean_accuracy = ">= 0.85"
    honest_min_accuracy = ">= 0.80"
    honest_crashes = "== 0"
    min_rounds = ">= 400"
    events_not_fired = "== 0"
