#   Bandwidth-capped links, dense fp32 models: every link carries at most 20 Mbit/s
#   (fault layer token bucket per destination; with gcnet run --netns, tc tbf on
#   each veth). Compare with bandwidth-topk.zpl: same cap, same rounds, the wall
#   time and bytes in the two reports tell what compression buys on a thin link.
scenario
    name = "bandwidth-dense"
    description = "20 Mbit/s per link, dense fp32 models"
    peers = 16
    timeout_s = 1200
node
    eval_every = 10
topology
    kind = "torus:4x4"
train
    split = "iid"
    rounds = 100
gossip
    compress = "none"
    ec = "none"
    aggregator = "cwtm:1"
    wait = "adaptive"
timeline
    cap
        at = "time 0"
        do = "rate 20mbit"
assert
    honest_mean_accuracy = ">= 0.75"
    honest_min_accuracy = ">= 0.70"
    consensus_distance = "<= 0.1"
    honest_crashes = "== 0"
    min_rounds = ">= 100"
    events_not_fired = "== 0"
