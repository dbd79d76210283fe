#!/usr/bin/env bash
# Docker smoke test: the compose path of docker/README.md, for real.
#
#   1. builds the gcnode image (scripts/docker-image.sh: cached base image and layers);
#      checks the kernel level it names, forced ones (GC_CPU), and, with qemu-user, that
#      it starts and trains on emulated CPUs without AVX-512 (avx2) and without AVX (generic)
#   2. generates a 4-peer network with gcnet compose (docker/scenarios/smoke.zpl:
#      peer 3 Byzantine, signing with a key no one trusts, in the `byzantine` profile)
#   3. brings it up on its user-defined network and waits until every honest peer has
#      passed $SMOKE_ROUNDS rounds; checks their test accuracy and that each counted
#      the Byzantine peer's messages as rejected (unknown_sender); waits until all 4
#      containers are healthy; asks peer 0 with `gcnode status` and its HTTP endpoint
#      (/metrics) when the gcnode in the image has them
#   4. kills one honest container (docker kill) and checks that the other peers go on
#      for $SMOKE_AFTER more rounds and still meet the accuracy bar
#   5. starts the killed container again and checks it resumes from its checkpoint
#   6. tears everything down: containers, network, generated files (also on failure
#      or Ctrl-C)
#
# Needs a reachable Docker engine (scripts/docker-engine.sh starts one as root) and
# docker compose v2 or docker-compose v1.28+. Exit 0 when every check passes.
# Environment: SMOKE_ROUNDS (100), SMOKE_AFTER (100), SMOKE_ACCURACY (0.85),
# SMOKE_TIMEOUT (seconds per wait, 240), SMOKE_KEEP=1 keeps the output directory,
# GC_IMAGE (gcnode:smoke), GC_COMPOSE (the compose command, e.g. "docker-compose").
set -euo pipefail

GC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SMOKE_ROUNDS=${SMOKE_ROUNDS:-100}
SMOKE_AFTER=${SMOKE_AFTER:-100}
SMOKE_ACCURACY=${SMOKE_ACCURACY:-0.85}
SMOKE_TIMEOUT=${SMOKE_TIMEOUT:-240}
GC_IMAGE=${GC_IMAGE:-gcnode:smoke}
HONEST=(0 1 2)
BYZANTINE=3
VICTIM=1                   # the honest peer whose container is killed
SURVIVORS=(0 2)

t0=$(date +%s)
say () { printf '[smoke %3ds] %s\n' $(($(date +%s) - t0)) "$*"; }
fail () { say "FAIL: $*"; exit 1; }

docker info >/dev/null 2>&1 || fail "no Docker engine reachable (scripts/docker-engine.sh start)"
if [ -n "${GC_COMPOSE:-}" ]; then
  read -r -a compose <<<"$GC_COMPOSE"
elif docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif command -v docker-compose >/dev/null; then
  compose=(docker-compose)
else
  fail "neither 'docker compose' nor docker-compose is installed"
fi
command -v python3 >/dev/null || fail "python3 is needed to read the metrics"
command -v curl >/dev/null || fail "curl is needed to read a peer's HTTP endpoint"

out=$(mktemp -d "${TMPDIR:-/tmp}/gcnode-smoke.XXXXXX")
project=gcsmoke$$
dc () { (cd "$out" && "${compose[@]}" --profile byzantine "$@"); }

teardown () {
  local rc=$?
  trap - EXIT INT TERM
  if ((rc != 0)) && [ -f "$out/compose.yml" ]; then
    say "diagnostics: container states and the last log lines"
    docker ps -a --filter "label=com.docker.compose.project=$project" \
      --format '  {{.Names}}  {{.Status}}' || true
    dc logs --no-color --tail 5 2>&1 | sed 's/^/  /' || true
  fi
  if [ -f "$out/compose.yml" ]; then
    say "teardown: ${compose[*]} down"
    dc down --volumes --remove-orphans --timeout 5 >/dev/null 2>&1 || true
  fi
  # Whatever compose could not remove (e.g. it failed half-way): by our project label.
  local left
  left=$(docker ps -aq --filter "label=com.docker.compose.project=$project")
  [ -n "$left" ] && docker rm -f $left >/dev/null 2>&1
  docker network ls -q --filter "label=com.docker.compose.project=$project" | xargs -r docker network rm >/dev/null 2>&1
  if [ "${SMOKE_KEEP:-0}" = 1 ]; then
    say "kept $out"
  else
    rm -rf "$out"
  fi
  if ((rc == 0)); then say "docker smoke test passed"; else say "docker smoke test FAILED (exit $rc)"; fi
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# --- 1. image ---------------------------------------------------------------------
say "building image $GC_IMAGE"
if ! "$GC_ROOT/scripts/docker-image.sh" --tag "$GC_IMAGE" >"$out/build.log" 2>&1; then
  tail -n 30 "$out/build.log"
  fail "image build failed"
fi
grep -E '^(base image|image )' "$out/build.log" | sed 's/^/  /' 

# --- 1b. kernel levels ------------------------------------------------------------
# The image is built portable (docker/Dockerfile): it names the level this CPU runs,
# GC_CPU forces the lower ones, and under qemu-user (Debian's qemu-user-static, when
# installed: scripts/docker-engine.sh installs it) the same binary starts on emulated
# CPUs without AVX-512 (EPYC-Rome: AVX2) and without AVX (Nehalem), picks avx2 and
# generic there, and trains.
level () { docker run --rm "$@" 2>/dev/null | sed -n 's/^gcnode .*(kernels \([a-z0-9]*\)).*/\1/p'; }
native=$(level "$GC_IMAGE" --version)
[ -n "$native" ] || fail "gcnode --version in the image names no kernel level"
say "kernels: $native on this CPU"
for forced in avx2 generic; do
  got=$(level -e GC_CPU=$forced "$GC_IMAGE" --version)
  [ "$got" = "$forced" ] || fail "GC_CPU=$forced: the image ran '$got'"
done
QEMU=${SMOKE_QEMU:-/usr/bin/qemu-x86_64-static}
if [ "$(uname -m)" = x86_64 ] && [ -x "$QEMU" ]; then
  for pair in EPYC-Rome:avx2 Nehalem:generic; do
    cpu=${pair%%:*} want=${pair#*:}
    emu=(-v "$QEMU:/qemu:ro" --entrypoint /qemu "$GC_IMAGE" -cpu "$cpu" /usr/local/bin/gcnode)
    got=$(level "${emu[@]}" --version)
    [ "$got" = "$want" ] || fail "emulated $cpu: the image ran '$got', expected $want"
    acc=$(docker run --rm "${emu[@]}" train --data synthetic --model 784-32-10 --epochs 1 \
            --train-samples 1000 --quiet 2>/dev/null | sed -n 's/^test_accuracy=//p')
    # the container's output is checked as a number before it is compared
    [[ $acc =~ ^[01]\.[0-9]+$ ]] && awk -v a="$acc" 'BEGIN { exit !(a > 0.8) }' ||
      fail "emulated $cpu: a short training ended at test_accuracy=${acc:-none}"
    say "kernels: $want on an emulated $cpu (qemu-user), a short training at $acc"
  done
else
  say "kernels: qemu-user not installed ($QEMU), the emulated CPUs are not tried"
fi

# --- 2. network -------------------------------------------------------------------
# The host's gcnet writes the compose file and makes the keys (with the host's gcnode).
if [ ! -x "$GC_ROOT/build/gcnet" ] || [ ! -x "$GC_ROOT/build/gcnode" ]; then
  say "building gcnet and gcnode on the host"
  [ -f "$GC_ROOT/build/CMakeCache.txt" ] || cmake -S "$GC_ROOT" -B "$GC_ROOT/build" >/dev/null
  cmake --build "$GC_ROOT/build" -j2 --target gcnet gcnode >/dev/null
fi
"$GC_ROOT/build/gcnet" compose --scenario "$GC_ROOT/docker/scenarios/smoke.zpl" --out "$out" \
  --image "$GC_IMAGE" --project "$project" --subnet "${SMOKE_SUBNET:-172.30.78.0/24}" >/dev/null
say "generated $out/compose.yml (project $project, ${compose[*]})"

# --- metrics ----------------------------------------------------------------------
# One line per peer asked for: "round accuracy unknown_sender rejected" from the last
# complete JSON line of its metrics (accuracy: the last one evaluated; nan before any).
stats () {   # stats PEER...
  python3 - "$out" "$@" <<'EOF'
import json, sys
out, peers = sys.argv[1], sys.argv[2:]
for p in peers:
    last, acc = None, float("nan")
    try:
        with open(f"{out}/peer{p}/metrics/peer{p}.jsonl") as f:
            for line in f:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue                # the line being written right now
                last = d
                acc = d.get("accuracy", acc)
    except OSError:
        pass
    last = last or {}
    print(last.get("round", 0), acc,
          last.get("rejections_unattributed", {}).get("unknown_sender", 0), last.get("rejected", 0))
EOF
}
metric () {  # metric PEER FIELD (round, accuracy, unknown_sender, rejected)
  local f
  case "$2" in round) f=1 ;; accuracy) f=2 ;; unknown_sender) f=3 ;; rejected) f=4 ;; esac
  stats "$1" | cut -d' ' -f"$f"
}

# wait_rounds TARGET PEER...: until every PEER's round >= TARGET, or the timeout.
wait_rounds () {
  local target=$1; shift
  local deadline=$(($(date +%s) + SMOKE_TIMEOUT)) p r slow rounds
  while :; do
    slow=""
    read -r -a rounds <<<"$(stats "$@" | cut -d' ' -f1 | tr '\n' ' ')"
    for p in "$@"; do
      r=${rounds[0]}; rounds=("${rounds[@]:1}")
      ((r >= target)) || slow+=" peer$p@$r"
    done
    [ -z "$slow" ] && return 0
    (($(date +%s) < deadline)) || fail "not at round $target after ${SMOKE_TIMEOUT} s:$slow"
    sleep 1
  done
}

running () {  # running PEER -> "true"/"false"
  local id
  id=$(dc ps -q "peer$1" 2>/dev/null)
  [ -n "$id" ] && docker inspect -f '{{.State.Running}}' "$id" 2>/dev/null || echo false
}

check_accuracy () {  # check_accuracy WHEN PEER...
  local when=$1 p r a u rej; shift
  for p in "$@"; do
    read -r r a u rej <<<"$(stats "$p")"
    awk -v a="$a" -v min="$SMOKE_ACCURACY" 'BEGIN { exit !(a != "nan" && a + 0 >= min + 0) }' \
      || fail "$when: peer$p test accuracy $a < $SMOKE_ACCURACY"
    say "  $when: peer$p round $r, test accuracy $a, rejected $rej (unknown_sender $u)"
  done
}

wait_healthy () {  # wait_healthy PEER...: the image's HEALTHCHECK says healthy
  local deadline=$(($(date +%s) + 90)) p h
  for p in "$@"; do
    while h=$(docker inspect -f '{{.State.Health.Status}}' "$(dc ps -q "peer$p")" 2>/dev/null) \
          && [ "$h" != healthy ]; do
      (($(date +%s) < deadline)) || fail "peer$p health is '$h' after 90 s"
      sleep 1
    done
  done
}

# --- 3. up, train, check ----------------------------------------------------------
say "up: 4 peers (3 honest, peer$BYZANTINE Byzantine: untrusted key) on network ${project}_gcnet"
dc up -d >/dev/null 2>&1 || { dc up -d; fail "compose up failed"; }
n=$(docker ps -q --filter "label=com.docker.compose.project=$project" | wc -l)
((n == 4)) || fail "$n containers running, expected 4"
docker network inspect "${project}_gcnet" --format '{{.Name}}: driver {{.Driver}}, {{len .Containers}} containers' \
  | sed 's/^/  network /'

wait_rounds "$SMOKE_ROUNDS" "${HONEST[@]}"
say "honest peers passed round $SMOKE_ROUNDS"
check_accuracy "trained" "${HONEST[@]}"
for p in "${HONEST[@]}"; do
  u=$(metric "$p" unknown_sender)
  ((u > 0)) || fail "peer$p counted no unknown_sender rejection: the Byzantine peer's messages were not rejected"
done
say "every honest peer rejected the untrusted Byzantine peer's messages (unknown_sender > 0)"
[ "$(running $BYZANTINE)" = true ] || fail "the Byzantine peer's container is not running"
wait_healthy "${HONEST[@]}" "$BYZANTINE"
say "all 4 containers healthy (the image's HEALTHCHECK)"
# The peer's own view: gcnode status on its status file, and its HTTP endpoint's
# Prometheus metrics on the compose network (peer 0 is host 2 of the subnet).
if docker exec "$(dc ps -q peer0)" gcnode status --help >/dev/null 2>&1; then
  # 0 OK or 1 WARNING: the Byzantine peer's refused messages may count as rising rejections
  st=$(docker exec "$(dc ps -q peer0)" gcnode status --file /var/lib/gcnode/metrics/status) \
    || [ $? -le 1 ] || fail "gcnode status in peer0: $st"
  say "  gcnode status (peer0): $st"
  ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$(dc ps -q peer0)")
  prom=$(curl -sf --max-time 5 "http://$ip:9100/metrics") || fail "no answer from http://$ip:9100/metrics"
  grep -q '^gcnode_rejected_total' <<<"$prom" || fail "http://$ip:9100/metrics has no gcnode_rejected_total"
  say "  http://$ip:9100/metrics: $(grep -c '^gcnode_' <<<"$prom") samples, e.g. $(grep -m1 '^gcnode_rejected_total' <<<"$prom")"
fi

# --- 4. kill one container ----------------------------------------------------------
victim_id=$(dc ps -q "peer$VICTIM")
declare -A at_kill
for p in "${SURVIVORS[@]}"; do at_kill[$p]=$(metric "$p" round); done
say "docker kill peer$VICTIM (at rounds: $(for p in "${SURVIVORS[@]}"; do printf 'peer%s@%s ' "$p" "${at_kill[$p]}"; done))"
docker kill "$victim_id" >/dev/null
sleep 2
[ "$(running $VICTIM)" = false ] || fail "peer$VICTIM still running after docker kill"
say "  peer$VICTIM: $(docker inspect -f '{{.State.Status}}, exit code {{.State.ExitCode}}' "$victim_id")"
target=0
for p in "${SURVIVORS[@]}"; do ((at_kill[$p] + SMOKE_AFTER > target)) && target=$((at_kill[$p] + SMOKE_AFTER)); done
wait_rounds "$target" "${SURVIVORS[@]}"
say "the other honest peers went on to round $target"
# The accuracy evaluated after the kill (eval_every = 10 rounds).
check_accuracy "after the kill" "${SURVIVORS[@]}"
for p in "${SURVIVORS[@]}" "$BYZANTINE"; do
  [ "$(running "$p")" = true ] || fail "peer$p stopped after peer$VICTIM was killed"
done
say "4 containers, honest peers trained, peer$VICTIM killed, the others continued"

# --- 5. restart the killed peer: it resumes from its checkpoint volume ---------------
docker start "$victim_id" >/dev/null
ckpt_round=$(ls "$out/peer$VICTIM/checkpoints" | sed -n 's/^ckpt-0*\([0-9][0-9]*\)\.gcc$/\1/p' | sort -n | tail -1)
deadline=$(($(date +%s) + 60))
until docker logs "$victim_id" 2>&1 | grep -q "resumed from"; do
  (($(date +%s) < deadline)) || fail "peer$VICTIM did not resume from a checkpoint after docker start"
  sleep 1
done
say "docker start peer$VICTIM: $(docker logs "$victim_id" 2>&1 | grep -o 'resumed from.*' | tail -1)"
wait_rounds $((${ckpt_round:-0} + 20)) "$VICTIM"
say "  peer$VICTIM goes on from its checkpoint (round $(metric "$VICTIM" round))"
