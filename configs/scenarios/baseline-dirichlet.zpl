#   The reference run for the non-iid attacks (mimic): the baseline with a
#   Dirichlet(0.5) label-skewed split.
scenario
    name = "baseline-dirichlet"
    description = "16 honest peers, 4x4 torus, Fashion-MNIST (Dirichlet 0.5 split), top-k 1 % + LIEC, guard, adaptive wait"
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
assert
    honest_mean_accuracy = ">= 0.78"
    honest_min_accuracy = ">= 0.70"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
