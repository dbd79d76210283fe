#!/usr/bin/env bash
# One line per peer of a network written by gcnet compose: its container's state and
# health, role, round, last test accuracy and rejections, from the metrics volume.
#   docker/status.sh DIR            (e.g. watch -n 2 docker/status.sh docker/out/fashion)
set -euo pipefail
dir=${1:?usage: docker/status.sh DIR (the --out directory of gcnet compose)}
[ -f "$dir/compose.yml" ] || { echo "$dir/compose.yml: not found" >&2; exit 2; }
project=$(sed -n 's/^COMPOSE_PROJECT_NAME=//p' "$dir/.env" 2>/dev/null)
printf '%-6s %-10s %-10s %-9s %6s %8s %8s\n' peer container health role round accuracy rejected
for cfg in "$dir"/peer*/gcnode.zpl; do
  peer=$(basename "$(dirname "$cfg")")
  role=honest
  grep -q 'kind = "byzantine"' "$cfg" && role=byzantine
  id=$(docker ps -aq --filter "label=com.docker.compose.project=$project" \
                    --filter "label=com.docker.compose.service=$peer" 2>/dev/null | head -1)
  state=- health=-
  if [ -n "$id" ]; then
    state=$(docker inspect -f '{{.State.Status}}' "$id")
    health=$(docker inspect -f '{{if and .State.Running .State.Health}}{{.State.Health.Status}}{{else}}-{{end}}' "$id")
  fi
  m="$dir/$peer/metrics/$peer.jsonl"
  round=0 acc=- rej=0
  if [ -s "$m" ]; then
    # the last complete line (the newest may be half-written)
    last=$(tail -n 2 "$m" | grep '}$' | tail -n 1)
    round=$(grep -o '"round":[0-9]*' <<<"$last" | cut -d: -f2)
    rej=$(grep -o '"rejected":[0-9]*' <<<"$last" | cut -d: -f2)
    acc=$(grep '"accuracy"' "$m" | grep '}$' | tail -n 1 | grep -o '"accuracy":[0-9.]*' | cut -d: -f2)
  fi
  printf '%-6s %-10s %-10s %-9s %6s %8s %8s\n' "$peer" "$state" "$health" "$role" "${round:-0}" "${acc:--}" "${rej:-0}"
done
