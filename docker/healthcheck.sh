#!/bin/bash
# Container health check: healthy while the peer's rounds advance, i.e. while a metrics
# file under $GCNODE_METRICS_DIR (one JSON line per round) was written in the last
# $GCNODE_HEALTH_MAX_AGE seconds (default 60: longer than any round's wait timeout).
set -uo pipefail
dir=${GCNODE_METRICS_DIR:-/var/lib/gcnode/metrics}
max_age=${GCNODE_HEALTH_MAX_AGE:-60}
fresh=$(find "$dir" -maxdepth 1 -name '*.jsonl' -newermt "-${max_age} seconds" -print -quit 2>/dev/null)
if [ -n "$fresh" ]; then
  tail -n 1 "$fresh" | cut -c1-200
  exit 0
fi
echo "no metrics written under $dir in the last ${max_age} s"
exit 1
