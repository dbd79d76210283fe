#   The docker smoke test's network (tests/docker/smoke.sh): 4 peers, all
#   neighbours of each other; peer 3 is Byzantine and signs with a key that no
#   one trusts, so the honest peers reject every message it sends (counted as
#   unknown_sender) and learn from each other. Synthetic data: no dataset in
#   the way. Rounds: enough to outlast the test, which stops the network itself.
#       gcnet compose --scenario docker/scenarios/smoke.zpl --out DIR
scenario
    name = "docker-smoke"
    description = "4 peers in containers, 1 untrusted Byzantine; one honest peer is killed"
    peers = 4
node
    network = "docker-smoke"
    eval_every = 10
    checkpoint_every = 50
topology
    kind = "complete"
train
    data = "synthetic"
    rounds = 3000
    test_samples = 2000
gossip
    #   median: the two honest peers left after the kill still mix (cwtm:1
    #   needs three inputs, and the untrusted peer never gives one)
    aggregator = "cwmed"
    timeout_ms = 1000
group
    byz
        peers = "3"
        role
            attack = "untrusted"
