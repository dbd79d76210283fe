#   Fast baseline: 4 honest peers on a ring, synthetic data, 40 rounds.
#   A few seconds; runs in ctest (tests/harness). docs/SCENARIOS.md
scenario
    name = "fast-baseline"
    description = "4 honest peers, ring, synthetic data: everybody learns, nobody crashes"
    peers = 4
    timeout_s = 120
node
    eval_every = 10
topology
    kind = "ring"
train
    data = "synthetic:12000:2000:784"
    rounds = 40
gossip
    aggregator = "cwtm:1"
    timeout_ms = 1000
assert
    honest_mean_accuracy = ">= 0.85"
    honest_min_accuracy = ">= 0.80"
    honest_crashes = "== 0"
    min_rounds = ">= 40"
    consensus_distance = "<= 0.05"
