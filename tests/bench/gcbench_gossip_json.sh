#!/usr/bin/env bash
#   gcbench gossip's JSON names are an interface (docs/RESULTS.md, "One gossip
#   round"): every name is printed once with a positive value, and the CPU
#   ratio is the quotient of the two CPU medians it names.
#   Usage: gcbench_gossip_json.sh GCBENCH
set -eu
out=$(OPENBLAS_NUM_THREADS=1 "$1" gossip --json --quick 2>/dev/null)
value () {
    local lines
    lines=$(printf '%s\n' "$out" | grep -c "\"name\":\"$1\"") || true
    if [ "$lines" != 1 ]; then
        echo "FAIL: $1 printed $lines times" >&2
        exit 1
    fi
    printf '%s\n' "$out" | grep "\"name\":\"$1\"" | sed 's/.*"value":\([^,]*\),.*/\1/'
}
for name in gossip_round_train_ms gossip_round_compress_ms gossip_round_sign_ms \
            gossip_round_verify_ms gossip_round_decode_ms gossip_round_aggregate_ms \
            round_overhead_ratio gossip_aggregate_over_train gossip_bytes_per_round \
            gossip_dense_over_sent gossip_round_train_cpu_ms gossip_round_publish_cpu_ms \
            gossip_round_receive_cpu_ms gossip_round_aggregate_cpu_ms \
            gossip_aggregate_over_train_cpu; do
    v=$(value "$name")
    awk -v v="$v" -v n="$name" 'BEGIN { if (!(v + 0 > 0)) { print "FAIL: " n " = " v > "/dev/stderr"; exit 1 } }'
done
value gossip_round_wait_ms > /dev/null
train=$(value gossip_round_train_cpu_ms)
mix=$(value gossip_round_aggregate_cpu_ms)
ratio=$(value gossip_aggregate_over_train_cpu)
awk -v t="$train" -v m="$mix" -v r="$ratio" 'BEGIN {
    d = m / t - r; if (d < 0) d = -d
    if (d > 1e-4 * r) { print "FAIL: ratio " r " against " m " / " t > "/dev/stderr"; exit 1 }
}'
echo "gcbench gossip JSON: names and CPU ratio OK"
