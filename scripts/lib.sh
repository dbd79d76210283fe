# Shared by demo.sh and test.sh: install what is missing, configure, build.
# Sourced, not run. Idempotent and quick when everything is in place.

GC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian 12 packages the project needs (build, tests, data, plots, metrics).
GC_PACKAGES=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libzmq3-dev libczmq-dev libssl-dev libopenblas-dev libcmocka-dev zlib1g-dev
  libmicrohttpd-dev libsystemd-dev gnuplot-nox dataset-fashion-mnist
  iproute2 curl procps python3 python3-cryptography python3-prometheus-client
  python3-numpy python3-torch python3-pip
)

gc_log () { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

gc_install_deps () {
  local missing=()
  for p in "${GC_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  gc_log "installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; return 1; }
    sudo="sudo"
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# gc_build DIR [cmake args...]: configure once, then build incrementally.
gc_build () {
  local dir=$1; shift
  if [ ! -f "$GC_ROOT/$dir/CMakeCache.txt" ]; then
    gc_log "configuring $dir"
    cmake -S "$GC_ROOT" -B "$GC_ROOT/$dir" "$@" >/dev/null
  fi
  gc_log "building $dir"
  cmake --build "$GC_ROOT/$dir" -j"$(nproc)" -- --no-print-directory >/dev/null
}

# gcsim built at a revision (a git worktree in build-ab/<commit>, Release):
# prints the binary's path. Used by scripts/ab.sh and scripts/same.sh.
gcsim_at () {
  local commit tree
  commit=$(git rev-parse --verify --quiet "$1^{commit}") || { echo "$(basename "$0"): '$1' is not a revision" >&2; exit 2; }
  tree="$GC_ROOT/build-ab/$commit"
  if [ ! -x "$tree/build/gcsim" ]; then
    [ -d "$tree" ] || git worktree add --detach --quiet "$tree" "$commit"
    gc_log "building gcsim at ${commit:0:7}"
    cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$tree/build" -j"$(nproc)" --target gcsim -- --no-print-directory >/dev/null
  fi
  echo "$tree/build/gcsim"
}

