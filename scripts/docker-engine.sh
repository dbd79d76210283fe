#!/usr/bin/env bash
# A Docker engine for the docker/ images and tests/docker/smoke.sh.
#
#   scripts/docker-engine.sh [start]   make `docker info` answer: nothing to do when an engine
#                                      is reachable; else (root only) install docker.io,
#                                      docker-compose, debootstrap and qemu-user-static (the
#                                      smoke test's emulated CPUs) from Debian if missing
#                                      and start dockerd in the background
#   scripts/docker-engine.sh stop      stop the dockerd this script started (by its pid file)
#   scripts/docker-engine.sh status    exit 0 when an engine answers
#
# The engine runs as on machines without systemd, bridges or iptables rules of their own:
#   dockerd --storage-driver=vfs --iptables=false --bridge=none
# (user-defined networks still work: containers reach each other by name on them). Its log
# goes to $GC_DOCKERD_LOG. Idempotent: a second start finds the engine and returns at once.
set -euo pipefail

GC_DOCKERD_LOG=${GC_DOCKERD_LOG:-/var/log/gcnode-dockerd.log}
GC_DOCKERD_PIDFILE=${GC_DOCKERD_PIDFILE:-/run/gcnode-dockerd.pid}
GC_DOCKER_PACKAGES=(docker.io docker-compose debootstrap qemu-user-static)

log () { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

engine_up () { docker info >/dev/null 2>&1; }

install_missing () {
  local missing=() p
  for p in "${GC_DOCKER_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The package's own service start fails without systemd; dockerd is started below.
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

start () {
  if engine_up; then
    echo "docker engine: reachable ($(docker info --format '{{.ServerVersion}} {{.Driver}}' 2>/dev/null))"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "docker engine: not reachable, and starting one needs root (run as root: $0 start)" >&2
    return 1
  fi
  install_missing
  command -v dockerd >/dev/null || { echo "dockerd not found after installing docker.io" >&2; return 1; }
  # A dockerd of ours that died leaves its pid file and socket behind.
  if [ -f "$GC_DOCKERD_PIDFILE" ] && ! kill -0 "$(cat "$GC_DOCKERD_PIDFILE")" 2>/dev/null; then
    rm -f "$GC_DOCKERD_PIDFILE"
  fi
  log "starting dockerd (log: $GC_DOCKERD_LOG)"
  mkdir -p "$(dirname "$GC_DOCKERD_LOG")"
  # setsid: the engine outlives this shell and is not in its process group, so a
  # Ctrl-C in the caller's terminal does not reach it.
  setsid dockerd --storage-driver=vfs --iptables=false --bridge=none \
    --pidfile /run/docker.pid >>"$GC_DOCKERD_LOG" 2>&1 </dev/null &
  echo $! >"$GC_DOCKERD_PIDFILE"
  local i
  for ((i = 0; i < 120; i++)); do
    if engine_up; then
      echo "docker engine: started in $((i / 4)) s, pid $(cat "$GC_DOCKERD_PIDFILE")"
      return 0
    fi
    kill -0 "$(cat "$GC_DOCKERD_PIDFILE")" 2>/dev/null || break
    sleep 0.25
  done
  echo "dockerd did not come up; last lines of $GC_DOCKERD_LOG:" >&2
  tail -n 20 "$GC_DOCKERD_LOG" >&2
  return 1
}

stop () {
  [ -f "$GC_DOCKERD_PIDFILE" ] || { echo "docker engine: not started by $0"; return 0; }
  local pid
  pid=$(cat "$GC_DOCKERD_PIDFILE")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    local i
    for ((i = 0; i < 120 && $(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0); i++)); do
      sleep 0.25
    done
    kill -0 "$pid" 2>/dev/null && { echo "dockerd $pid did not stop within 30 s" >&2; return 1; }
    echo "docker engine: stopped (pid $pid)"
  fi
  rm -f "$GC_DOCKERD_PIDFILE"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) engine_up ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac
