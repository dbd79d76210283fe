#   /etc/gcnode/gcnode.zpl — one peer of a LAN network run by systemd
#   (docs/OPERATIONS.md). Paths are absolute: the unit runs in /var/lib/gcnode.
#   Every key and its default: docs/CONFIG.md. Copy to each machine and change
#   node/index, and point the own entry of peers at node.pub (the others at
#   peerN.pub, as copied from machine N); everything else must agree.
node
    index = 0
    network = "lab"
    key = "/etc/gcnode/keys/node.key"           #   own identity, mode 0600, owner gcnode
    #   node.curve (CURVE secret) is found next to node.key
    metrics = "/var/lib/gcnode/metrics.jsonl"
    status_file = "/var/lib/gcnode/status.json"
    checkpoint_dir = "/var/lib/gcnode/checkpoints"
    metrics_http = "127.0.0.1:9100"             #   Prometheus /metrics, /status; empty: off
    log_to = "syslog"                           #   or stderr (the journal reads both)
    curve = 1                                   #   the default: encrypt links, admit only trusted keys
    #   node/bind: empty binds this peer's own peers/N/endpoint address. A peer
    #   found by discovery has none to derive it from, so this file names one
    #   for every machine: every interface, which CURVE (on) guards; a single
    #   LAN address (e.g. tcp://192.168.1.11:7100) is narrower.
    bind = "tcp://*:7100"
peers
    0
        endpoint = "tcp://192.168.1.10:7100"
        key = "/etc/gcnode/keys/node.pub"       #   this machine (index 0): its own node.pub
        #   the other machines' keys: peerN.pub, with peerN.curve.pub next to it
    1
        endpoint = "discover"                   #   found by beacon (discovery below)
        key = "/etc/gcnode/keys/peer1.pub"
    2
        endpoint = "discover"
        key = "/etc/gcnode/keys/peer2.pub"
    3
        endpoint = "tcp://192.168.1.13:7100"
        key = "/etc/gcnode/keys/peer3.pub"
        #   revoked = 1                         #   revokes peer 3 (docs/OPERATIONS.md)
discovery
    enabled = 1
    port = 7099
    interface = ""                              #   e.g. "eth0" on a machine with several
    wait_s = 120
topology
    kind = "ring"
train
    data = ""                                   #   Fashion-MNIST when installed
    rounds = 3000
gossip
    aggregator = "cwtm:1"
    timeout_ms = 2000
