#   The reference run: 16 honest peers on a 4x4 torus, Fashion-MNIST (when
#   installed; otherwise gcnode falls back to synthetic data and says so),
#   default algorithms. The other scenarios of the library change one thing.
scenario
    name = "baseline"
    description = "16 honest peers, 4x4 torus, Fashion-MNIST, top-k 1 % + LIEC, guard, adaptive wait"
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
assert
    honest_mean_accuracy = ">= 0.84"
    honest_min_accuracy = ">= 0.83"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
