#!/usr/bin/env bash
# The LAN procedure of docs/OPERATIONS.md followed as an operator would, on network
# namespaces: four "machines" (one namespace each, eth0 on one bridge, 10.77.0.0/24, an
# address range that exists only between these veth pairs), each with its own /etc/gcnode
# and /var/lib/gcnode under a scratch directory. Steps, in the document's order:
#   Keys        gcnode keygen on every machine, public halves copied as peerN.pub /
#               peerN.curve.pub, checked with `gcnode id` against the printed peer_id=
#   Config      configs/gcnode.zpl with the machine's index, addresses and paths
#               (two neighbours static, two found by LAN discovery, CURVE on)
#   Run         `gcnode run --config ... --resume` as the unit runs it
#   Status      `gcnode status --config` says ok on every machine while they run
#   Metrics     /metrics on 127.0.0.1:9100 (each namespace has its own loopback):
#               rounds, bytes, no CURVE handshake failures, no rejections
#   Revoking    one machine's public keys removed from the others' configuration and
#               trust store, the others restarted with --resume: the revoked machine's
#               connections are refused (CURVE auth failures counted), the rest go on
#   Adding      a fifth machine: keys made and distributed, every configuration lists
#               it, everyone restarted with --resume, the new machine learns
# Root only (network namespaces); otherwise it says so loudly and exits 77 (ctest: skipped).
#   tests/ops/lan_procedure.sh BUILD_DIR [REPO_DIR]
set -euo pipefail
build=$(cd "${1:?usage: lan_procedure.sh BUILD_DIR [REPO_DIR]}" && pwd)
repo=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
gcnode=$build/gcnode
tag=gcl$$
work=$(mktemp -d /tmp/gcnode-lan.XXXXXX)
rounds=${GC_LAN_ROUNDS:-300}

say () { echo "lan_procedure: $*"; }
fail () { echo "lan_procedure: FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
  echo "lan_procedure: SKIPPED: needs root for network namespaces (run as root to follow the LAN procedure)"
  exit 77
fi
if ! ip netns add "$tag-probe" 2>/dev/null; then
  echo "lan_procedure: SKIPPED: this machine cannot create network namespaces"
  exit 77
fi
ip netns del "$tag-probe"

pids=()
cleanup () {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for ns in $(ip netns list | awk '{print $1}' | grep "^$tag-" || true); do ip netns del "$ns"; done
  if [ "${GC_LAN_KEEP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# ---- the LAN: a bridge in a hub namespace, one veth per machine --------------------
ip netns add "$tag-hub"
ip -n "$tag-hub" link add br0 type bridge
ip -n "$tag-hub" link set br0 up
machine_up () {     # index
  local i=$1 ns="$tag-m$1"
  ip netns add "$ns"
  ip link add "$tag-v$i" type veth peer name "$tag-h$i"
  ip link set "$tag-v$i" netns "$ns"
  ip link set "$tag-h$i" netns "$tag-hub"
  ip -n "$ns" link set "$tag-v$i" name eth0
  ip -n "$ns" addr add "10.77.0.$((10 + i))/24" brd 10.77.0.255 dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$tag-hub" link set "$tag-h$i" master br0
  ip -n "$tag-hub" link set "$tag-h$i" up
  mkdir -p "$work/m$i/etc/gcnode/keys" "$work/m$i/var/lib/gcnode"
}
on () { local i=$1; shift; ip netns exec "$tag-m$i" "$@"; }
etc () { echo "$work/m$1/etc/gcnode"; }
var () { echo "$work/m$1/var/lib/gcnode"; }

# ---- Keys (OPERATIONS.md, "Keys") ----------------------------------------------------
declare -A peer_id
make_keys () {      # index
  local i=$1 out
  out=$("$gcnode" keygen --out "$(etc "$i")/keys" --name node)
  peer_id[$i]=$(sed -n 's/^peer_id=//p' <<<"$out")
  [ -n "${peer_id[$i]}" ] || fail "keygen on machine $i printed no peer_id= line: $out"
  [ "$(stat -c %a "$(etc "$i")/keys/node.key")" = 600 ] || fail "node.key of machine $i is not 0600"
}
# Copy machine j's public halves to machine i as peerJ.pub / peerJ.curve.pub (the
# "channel you trust" is cp), then check what arrived with gcnode id.
give_keys () {      # from to
  local j=$1 i=$2 got
  cp "$(etc "$j")/keys/node.pub" "$(etc "$i")/keys/peer$j.pub"
  cp "$(etc "$j")/keys/node.curve.pub" "$(etc "$i")/keys/peer$j.curve.pub"
  got=$("$gcnode" id "$(etc "$i")/keys/peer$j.pub")
  [ "$got" = "${peer_id[$j]}" ] || fail "machine $i: gcnode id peer$j.pub says $got, keygen said ${peer_id[$j]}"
}

# ---- Configuration (configs/gcnode.zpl, edited per machine) -------------------------
# The example lists peers 0-3 with peers 1 and 2 found by discovery; the edits are the
# ones the example's comments ask for (index, addresses, paths) plus a short run.
# write_config MACHINE MEMBERS...: MEMBERS are machines, their position the peer index.
write_config () {
  local m=$1; shift
  local members=("$@") n=$# cfg idx=-1 k j
  for k in "${!members[@]}"; do [ "${members[$k]}" = "$m" ] && idx=$k; done
  [ $idx -ge 0 ] || fail "machine $m is not among the members ${members[*]}"
  cfg=$(etc "$m")/gcnode.zpl
  {
    sed -n '1,/^    bind = /p' "$repo/configs/gcnode.zpl"
    echo "peers"
    for k in "${!members[@]}"; do
      j=${members[$k]}
      echo "    $k"
      if [ "$k" = 1 ] || [ "$k" = 2 ]; then
        echo '        endpoint = "discover"'
      else
        echo "        endpoint = \"tcp://10.77.0.$((10 + j)):7100\""
      fi
      if [ "$j" = "$m" ]; then
        echo "        key = \"/etc/gcnode/keys/node.pub\""
      else
        echo "        key = \"/etc/gcnode/keys/peer$j.pub\""
      fi
    done
    sed -n '/^discovery$/,$p' "$repo/configs/gcnode.zpl"
    cat <<ZPL
train
    train_samples = $((1500 * n))
    test_samples = 1000
node
    eval_every = 10
    checkpoint_every = 10
ZPL
  } | sed -e "s|/etc/gcnode|$(etc "$m")|g" -e "s|/var/lib/gcnode|$(var "$m")|g" \
          -e "s|^    index = 0|    index = $idx|" \
          -e 's|log_to = "syslog"|log_to = "stderr"|' \
          -e 's|interface = ""  |interface = "eth0"|' \
          -e "s|rounds = 3000|rounds = $rounds|" \
          -e 's|timeout_ms = 2000|timeout_ms = 3000|' > "$cfg"
}

declare -A run_pid
start () {          # index
  local i=$1
  #  ip netns exec directly, not through `on`: a function in the background
  #  runs in a subshell, and $! would be that shell, not gcnode, so `stop`
  #  and the cleanup's kill would leave the daemon running (it then wrote
  #  its checkpoint into the work tree while the cleanup removed it)
  ip netns exec "$tag-m$i" "$gcnode" run --config "$(etc "$i")/gcnode.zpl" --resume --progress off \
      >>"$(var "$i")/stdout.log" 2>>"$(var "$i")/stderr.log" &
  run_pid[$i]=$!
  pids+=("$!")
}
stop () {           # index: SIGTERM, as systemctl stop
  local i=$1
  kill -TERM "${run_pid[$i]}" 2>/dev/null || true
  wait "${run_pid[$i]}" 2>/dev/null || true
}

# status_ok INDEX: gcnode status --config exits 0
status_ok () { on "$1" "$gcnode" status --config "$(etc "$1")/gcnode.zpl" >/dev/null 2>&1; }

# metrics INDEX FAMILY...: each family's total on the machine's /metrics, space-separated
# ("none" for a family it lacks), or "down" when the endpoint does not answer; one request,
# one interpreter start per machine, so that the checks take little of the run
metrics () {
  on "$1" /usr/bin/python3 - "${@:2}" <<'PY'
import sys, urllib.request
try:
    body = urllib.request.urlopen("http://127.0.0.1:9100/metrics", timeout=5).read().decode()
except OSError:
    print("down")
    sys.exit(0)
out = []
for fam in sys.argv[1:]:
    total = None
    for line in body.splitlines():
        if line.startswith(fam + "{") or line.startswith(fam + " "):
            total = (total or 0) + float(line.rsplit(" ", 1)[1])
    out.append("none" if total is None else str(int(total)) if total == int(total) else str(total))
print(" ".join(out))
PY
}

# wait_round INDEX ROUND SECONDS: the status file shows at least ROUND
wait_round () {
  local i=$1 want=$2 limit=$3 t=0 r
  while :; do
    r=$(sed -n 's/.*"round":\([0-9]*\).*/\1/p' "$(var "$i")/status.json" 2>/dev/null || true)
    [ -n "$r" ] && [ "$r" -ge "$want" ] && return 0
    kill -0 "${run_pid[$i]}" 2>/dev/null || { tail -20 "$(var "$i")/stderr.log" >&2; fail "machine $i exited before round $want"; }
    t=$((t + 1)); [ $t -le "$limit" ] || { tail -20 "$(var "$i")/stderr.log" >&2; fail "machine $i did not reach round $want in $limit s (at ${r:-none})"; }
    sleep 1
  done
}

# final_accuracy INDEX: test_accuracy= of the machine's last finished run
final_accuracy () { sed -n 's/.*test_accuracy=//p' "$(var "$1")/stdout.log" | tail -1; }

# ---- 1: four machines -----------------------------------------------------------------
for i in 0 1 2 3; do machine_up $i; make_keys $i; done
for i in 0 1 2 3; do for j in 0 1 2 3; do [ $i = $j ] || give_keys $j $i; done; done
for i in 0 1 2 3; do write_config $i 0 1 2 3; done
say "4 machines keyed and configured ($work)"
for i in 0 1 2 3; do start $i; done
for i in 0 1 2 3; do wait_round $i 5 180; done
# /metrics first, while every machine is still early in its run (a loaded machine that
# spent its whole run on the checks would leave nothing to read)
declare -a seen
for i in 0 1 2 3; do
  seen[$i]=$(metrics $i gcnode_rounds_total gcnode_rejected_total gcnode_curve_handshake_failures_total)
done
for i in 0 1 2 3; do
  if [ "${seen[$i]}" = down ]; then
    kill -0 "${run_pid[$i]}" 2>/dev/null && fail "machine $i: /metrics does not answer while it runs"
    fail "machine $i: finished its $rounds rounds before its /metrics was read (a slow machine: raise GC_LAN_ROUNDS)"
  fi
  read -r m_rounds m_rejected m_curve <<< "${seen[$i]}"
  [ "$m_rounds" != none ] || fail "machine $i: no gcnode_rounds_total on /metrics"
  [ "$m_rejected" = 0 ] || fail "machine $i: rejections in an honest network ($m_rejected)"
  [ "$m_curve" = 0 ] || fail "machine $i: CURVE handshake failures in an honest network ($m_curve)"
done
for i in 0 1 2 3; do status_ok $i || { on $i "$gcnode" status --config "$(etc $i)/gcnode.zpl" || true; fail "gcnode status on machine $i is not ok while it runs"; }; done
say "running: status ok, /metrics up, no rejections, no CURVE failures"
for i in 0 1 2 3; do wait "${run_pid[$i]}" || fail "machine $i exited $?"; done
for i in 0 1 2 3; do
  acc=$(final_accuracy $i)
  say "machine $i: test_accuracy=$acc after $rounds rounds"
  awk -v a="$acc" 'BEGIN { exit !(a >= 0.70) }' || fail "machine $i learned too little ($acc < 0.70)"
done

# wait_log INDEX TEXT SECONDS FROM: the machine's stderr log has a line with TEXT
# at line FROM or later (its earlier runs' lines stay in the log)
wait_log () {
  local i=$1 text=$2 limit=$3 from=$4 t=0
  until tail -n +"$from" "$(var "$i")/stderr.log" | grep -q "$text"; do
    kill -0 "${run_pid[$i]}" 2>/dev/null || fail "machine $i exited before logging '$text'"
    t=$((t + 1)); [ $t -le "$limit" ] || fail "machine $i did not log '$text' in $limit s"
    sleep 1
  done
}

# ---- 2: revoking machine 3 ----------------------------------------------------------
#  The refusal must happen while 0-2 run, and 100 rounds took them about 1 s on an
#  idle machine: a machine 3 still loading its data could miss them. So machine 3 is
#  started first, the others once it announces itself (data loaded, waiting for its
#  discovered neighbour as they will), and they run 200 rounds.
rounds=$((rounds + 200))
for i in 0 1 2; do
  rm -f "$(etc $i)/keys/peer3.pub" "$(etc $i)/keys/peer3.curve.pub"
  write_config $i 0 1 2
done
write_config 3 0 1 2 3          # machine 3 keeps the old membership (and runs on)
from=$(($(wc -l < "$(var 3)/stderr.log") + 1))
start 3
wait_log 3 "discovery: announcing" 60 "$from"
for i in 0 1 2; do start $i; done
for i in 0 1 2; do wait "${run_pid[$i]}" || fail "machine $i exited $? after the revocation"; done
#  From the metrics file's last line (this run's counters): /metrics is gone
#  with the process, and these 200 rounds can be over before a query.
refused=0
for i in 0 2; do    # machine 3's ring neighbours in the old network
  f=$(tail -1 "$(var $i)/metrics.jsonl" | sed -n 's/.*"handshake_failed_auth":\([0-9]*\).*/\1/p')
  [ -n "$f" ] && [ "$f" -gt 0 ] && refused=1
done
[ $refused = 1 ] || fail "the revoked machine's connections were not refused (no CURVE auth failure at 0 or 2)"
#  and the operator is told who knocked, from where (OPERATIONS.md, "CURVE")
grep -h "CURVE: refused" "$(var 0)/stderr.log" "$(var 2)/stderr.log" | grep -q "from 10.77.0.13, a key of no configured peer" ||
  fail "no CURVE warning names the revoked machine's address (10.77.0.13)"
stop 3
say "revoked: machine 3's handshakes refused, machines 0-2 finished round $rounds"

# ---- 3: adding machine 4 (it takes index 3; machine 3 is still out there, revoked) ----
rounds=$((rounds + 100))
machine_up 4
make_keys 4
for j in 0 1 2; do give_keys $j 4; give_keys 4 $j; done
for i in 0 1 2 4; do write_config $i 0 1 2 4; done
for i in 0 1 2 4; do start $i; done
for i in 0 1 2 4; do wait "${run_pid[$i]}" || fail "machine $i exited $? after machine 4 was added"; done
acc=$(final_accuracy 4)
say "added: machine 4 test_accuracy=$acc after $rounds rounds"
awk -v a="$acc" 'BEGIN { exit !(a >= 0.70) }' || fail "machine 4 learned too little ($acc < 0.70)"
say "PASS"
