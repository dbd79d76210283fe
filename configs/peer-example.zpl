#   An example gcnode peer configuration (ZPL: indentation is 4 spaces).
#   Peer 0 of a 4-peer ring on one machine; copy it per peer and change
#   node/index and node/key. Every key and its default: docs/CONFIG.md.
node
    index = 0
    network = "example"
    key = "keys/peer0.key"
    #   node/curve defaults to 1 (keys/peer0.curve, written by gcnode keygen);
    #   all on loopback here, so curve = 0 would be silent. The inbox binds
    #   this peer's own endpoint (127.0.0.1:7100), not every interface.
    metrics = "peer0.jsonl"
    eval_every = 10
peers
    0
        endpoint = "tcp://127.0.0.1:7100"
        key = "keys/peer0.pub"
    1
        endpoint = "tcp://127.0.0.1:7101"
        key = "keys/peer1.pub"
    2
        endpoint = "tcp://127.0.0.1:7102"
        key = "keys/peer2.pub"
    3
        endpoint = "tcp://127.0.0.1:7103"
        key = "keys/peer3.pub"
topology
    kind = "ring"
train
    data = ""                   #   Fashion-MNIST when installed, else synthetic
    split = "iid"
    rounds = 300
    local_steps = 4
    batch = 32
gossip
    compress = "topk:0.01:fp16"
    ec = "liec:100"
    aggregator = "cwtm:1"
    wait = "adaptive"
    timeout_ms = 2000
