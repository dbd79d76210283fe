#   Message loss: every peer drops 20 % of its outgoing messages (gcnode's fault
#   layer; netem is not available here). Each lost delta desynchronises a replica
#   until a keyframe repairs it, so peers mix fewer inputs: consensus is looser
#   than in the baseline, learning must go on.
scenario
    name = "fault-drop"
    description = "20 % of messages dropped by every peer"
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
timeline
    loss
        at = "time 0"
        do = "drop 0.2"
assert
    honest_mean_accuracy = ">= 0.78"
    honest_min_accuracy = ">= 0.75"
    consensus_distance = "<= 0.5"
    honest_crashes = "== 0"
    min_rounds = ">= 300"
    events_not_fired = "== 0"
