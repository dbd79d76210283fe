#   Heterogeneous links: the uplinks of peers 0, 5, 10 and 15 carry 300 kB/s, the
#   others' 3 MB/s (gcnode's fault layer, per destination), and every peer budgets
#   its sends with the ratio policy chain settle+bandwidth: settle sends few
#   entries while the model moves fast and more as it settles, bandwidth caps each
#   round's payload at half the round's compute time at the link's rate (gcnode run
#   hands it the cap). Table 2h of docs/RESULTS.md runs this setting beside fixed
#   ratios (scripts/results.sh 2h); this file is its chain row, seed 1.
scenario
    name = "bandwidth-hetero"
    description = "4 of 16 peers on 10x thinner uplinks, ratio policy settle+bandwidth"
    peers = 16
    timeout_s = 1200
    target_accuracy = 0.84
node
    eval_every = 5
    seed = 1
topology
    kind = "torus:4x4"
train
    rounds = 150
    local_steps = 4
    batch = 32
    test_samples = 2000
    schedule = "cosine"
gossip
    compress = "topk:0.01"
    ec = "liec:100"
    keep_unsent = 0.7
    aggregator = "mean"
    wait = "sync"
    timeout_ms = 10000
    policy = "settle+bandwidth:frac=0.5"
timeline
    thin
        at = "time 0"
        peers = "0,5,10,15"
        do = "rate 300000"
    thick
        at = "time 0"
        peers = "1,2,3,4,6,7,8,9,11,12,13,14"
        do = "rate 3000000"
assert
    honest_mean_accuracy = ">= 0.85"
    honest_crashes = "== 0"
    min_rounds = ">= 150"
    events_not_fired = "== 0"
