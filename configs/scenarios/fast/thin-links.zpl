#   Fast heterogeneous links: 4 fully connected peers with the bandwidth ratio
#   policy (gossip/policy = bandwidth): peers 0 and 1 send through links capped
#   at 20 kB/s (gcnode's fault layer, from the start), 2 and 3 through uncapped
#   ones. gcnode run hands the cap to the policy, which budgets a send to half
#   the round's compute time at that rate: the capped peers send at the
#   policy's floor (top-k R/10), the others at R. tests/harness/test_gcnet.c
#   (case thin_links) reads every peer's send_budget from its metrics.
scenario
    name = "fast-thin-links"
    description = "two peers on 20 kB/s links: the bandwidth policy budgets them down"
    peers = 4
    timeout_s = 180
node
    eval_every = 20
topology
    kind = "complete"
train
    data = "synthetic:12000:2000:784"
    rounds = 60
gossip
    compress = "topk:0.1"
    ec = "liec:1000"
    policy = "bandwidth:frac=0.5"
    aggregator = "mean"
    timeout_ms = 300
timeline
    thin
        at = "time 0"
        peers = "0,1"
        do = "rate 20000"
assert
    honest_crashes = "== 0"
    min_rounds = ">= 60"
    events_not_fired = "== 0"
