#   A compose network on real data (docker/README.md): 6 peers train the
#   784-256-128-10 MLP on Fashion-MNIST (in the image), each on its own iid shard,
#   all neighbours of each other. Peer 5 is Byzantine (ALIE: a crafted model just
#   inside the honest spread), in the compose profile `byzantine`; the honest peers
#   mix with a coordinate-wise trimmed mean that tolerates one Byzantine input.
#       gcnet compose --scenario docker/scenarios/fashion.zpl --out docker/out/fashion
scenario
    name = "fashion"
    description = "6 peers on Fashion-MNIST, 1 ALIE attacker in the byzantine profile"
    peers = 6
node
    network = "fashion"
    eval_every = 20
    checkpoint_every = 50
topology
    kind = "complete"
train
    split = "iid"
    rounds = 400
    test_samples = 5000
gossip
    compress = "topk:0.01:fp16"
    aggregator = "cwtm:1"
    timeout_ms = 2000
group
    attackers
        peers = "5"
        role
            attack = "alie"
