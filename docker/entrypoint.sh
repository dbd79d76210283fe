#!/bin/bash
# gcnode container entrypoint.
#
#   (no command) | run [gcnode run options]   start a peer from $GCNODE_CONFIG
#   any other COMMAND [args]                  gcnode COMMAND args (keygen, id, train, ...)
#
# Environment overrides, the docker way: every GCNODE__SECTION__KEY=value becomes
# `--set section/key=value` (double underscores separate the path, lower-cased), e.g.
#   GCNODE__GOSSIP__AGGREGATOR=cwmed  GCNODE__TRAIN__ROUNDS=500  GCNODE__PEERS__3__ENDPOINT=...
# They apply after the config file and before options given on the command line, so the
# command line wins. When neither sets node/metrics, metrics go to
# $GCNODE_METRICS_DIR/peer<index>.jsonl (the health check reads them there).
set -euo pipefail

case "${1:-run}" in
  run) (($# > 0)) && shift ;;
  --version|--help|-h|help) exec gcnode "$1" ;;
  -*) ;;                                   # options of run
  *) exec gcnode "$@" ;;
esac
for a in "$@"; do
  case "$a" in --help|-h|--help-config) exec gcnode run "$@" ;; esac
done

config=${GCNODE_CONFIG:-/etc/gcnode/gcnode.zpl}
if [ ! -r "$config" ]; then
  echo "gcnode-entrypoint: no readable config at $config: mount one there" \
       "(e.g. -v \$PWD/peer0.zpl:/etc/gcnode/gcnode.zpl:ro) or set GCNODE_CONFIG" >&2
  exit 2
fi

sets=()
while IFS='=' read -r name value; do
  case "$name" in
    GCNODE__*__*)
      key=${name#GCNODE__}
      key=${key//__//}
      sets+=(--set "${key,,}=$value")
      ;;
  esac
done < <(env | LC_ALL=C sort)

args=(--config "$config" "${sets[@]}" "$@")
# The effective configuration also validates it: on an error, fall through and let
# `gcnode run` print the message and exit 2.
if effective=$(gcnode run "${args[@]}" --print-config 2>/dev/null); then
  metrics=$(sed -n '/^node$/,/^[^ ]/ s/^    metrics = "\(.*\)"$/\1/p' <<<"$effective")
  index=$(sed -n '/^node$/,/^[^ ]/ s/^    index = \([0-9]*\)$/\1/p' <<<"$effective")
  if [ -z "$metrics" ]; then
    args=(--config "$config" --set "node/metrics=${GCNODE_METRICS_DIR:-/var/lib/gcnode/metrics}/peer${index}.jsonl"
          "${sets[@]}" "$@")
  fi
fi
exec gcnode run "${args[@]}"
