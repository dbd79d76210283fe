#   Bandwidth-capped links, top-k 1 % (fp16 values) + LIEC: every link carries at most
#   20 Mbit/s (the fault layer's token bucket per destination; with gcnet run --netns, tc
#   tbf on each veth). Its pair is bandwidth-dense.zpl (same cap): the
#   reports' "s to target" (wall seconds until the honest mean accuracy first reached
#   0.85) tell what compression buys on such a link; rounds are set so that both get
#   there (dense needs about 70, top-k about 220, in gcsim). Every peer waits for all
#   its neighbours (wait sync, up to 10 s): with adaptive waiting a peer behind a
#   thin link runs ahead on stale replicas instead, and dense never gets to 0.85.
scenario
    name = "bandwidth-topk"
    description = "20 Mbit/s per link, top-k 1 % + LIEC"
    peers = 16
    timeout_s = 1800
    target_accuracy = 0.85
node
    eval_every = 10
topology
    kind = "torus:4x4"
train
    split = "iid"
    rounds = 300
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "cwtm:1"
    wait = "sync"
    timeout_ms = 10000
timeline
    cap
        at = "time 0"
        do = "rate 20mbit"
assert
    honest_mean_accuracy = ">= 0.84"
    honest_min_accuracy = ">= 0.83"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
    events_not_fired = "== 0"
