#!/usr/bin/env bash
# Build the gcnode image (docker/Dockerfile) with whatever base image can be had here.
#
#   scripts/docker-image.sh [--tag NAME] [--base-only] [--refresh-base] [-- docker build args]
#
# The Dockerfile starts FROM debian:bookworm. When the engine does not have that image and
# cannot pull it (no registry reachable), it is made locally: debootstrap --variant=minbase
# bookworm, then `docker import` as debian:bookworm. The root file system tarball is cached
# in $GC_DOCKER_CACHE (default /var/cache/gcnode-docker) and reused by later runs and
# later engines; --refresh-base makes it anew. The build runs with --network host so apt
# inside the build reaches Debian's archive even on an engine started with --bridge=none,
# and it reuses the engine's layer cache: a rebuild after a source change only recompiles
# (the build stage stays tagged gcnode-build:cache; older dangling images are pruned).
set -euo pipefail

GC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "$(id -u)" -eq 0 ]; then
  GC_DOCKER_CACHE=${GC_DOCKER_CACHE:-/var/cache/gcnode-docker}
else
  GC_DOCKER_CACHE=${GC_DOCKER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gcnode-docker}
fi
GC_DEBIAN_MIRROR=${GC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE=debian:bookworm
TAG=gcnode:latest
base_only=0
refresh=0
extra=()

usage () { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --tag) TAG=$2; shift 2 ;;
    --base-only) base_only=1; shift ;;
    --refresh-base) refresh=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "docker-image.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

log () { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
now () { date +%s%N; }
took () { local ms=$((($(now) - $1) / 1000000)); printf '%d.%d s' $((ms / 1000)) $((ms % 1000 / 100)); }

have_image () { docker image inspect "$1" >/dev/null 2>&1; }

# The root file system: debootstrap into a scratch directory beside the cache, then
# one tarball (numeric owners, so the import does not depend on this machine's users).
make_rootfs_tarball () {
  local tarball=$1 dir
  if [ "$(id -u)" -ne 0 ]; then
    echo "no $BASE image and no registry: making one with debootstrap needs root" >&2
    return 1
  fi
  command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  }
  dir=$(mktemp -d "$GC_DOCKER_CACHE/rootfs.XXXXXX")
  log "debootstrap --variant=minbase bookworm (log: $GC_DOCKER_CACHE/debootstrap.log)"
  if ! debootstrap --variant=minbase bookworm "$dir" "$GC_DEBIAN_MIRROR" \
       >"$GC_DOCKER_CACHE/debootstrap.log" 2>&1; then
    tail -n 20 "$GC_DOCKER_CACHE/debootstrap.log" >&2
    rm -rf "$dir"
    return 1
  fi
  # The same sources as the official image (updates and security too), and no caches.
  rm -f "$dir/etc/apt/sources.list"
  cat >"$dir/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $GC_DEBIAN_MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${GC_DEBIAN_MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/var/log/*.log
  chmod 0755 "$dir"            # mktemp made it 0700: it becomes the image's /
  tar --numeric-owner -C "$dir" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
  rm -rf "$dir"
}

ensure_base () {
  if ((refresh == 0)) && have_image "$BASE"; then
    echo "base image: $BASE present"
    return 0
  fi
  if ((refresh == 0)) && timeout 60 docker pull -q "$BASE" >/dev/null 2>&1; then
    echo "base image: $BASE pulled"
    return 0
  fi
  mkdir -p "$GC_DOCKER_CACHE"
  local tarball="$GC_DOCKER_CACHE/debian-bookworm-minbase.tar" t
  if ((refresh)) || [ ! -s "$tarball" ]; then
    t=$(now)
    make_rootfs_tarball "$tarball"
    echo "base image: debootstrap took $(took "$t"), cached in $tarball"
  else
    echo "base image: reusing $tarball"
  fi
  t=$(now)
  docker import --change 'CMD ["bash"]' \
    --change 'LABEL org.gcnode.base="debootstrap --variant=minbase bookworm"' \
    "$tarball" "$BASE" >/dev/null
  echo "base image: imported as $BASE in $(took "$t")"
}

ensure_base
((base_only)) && exit 0

t=$(now)
log "docker build -t $TAG -f docker/Dockerfile (network host)"
# The classic builder: it works with every engine and client here (BuildKit would need
# the buildx plugin with newer clients) and keeps a layer cache of its own.
DOCKER_BUILDKIT=0 docker build --force-rm --network host -t "$TAG" -f "$GC_ROOT/docker/Dockerfile" \
  "${extra[@]}" "$GC_ROOT"
echo "image $TAG built in $(took "$t")"
# Keep the build stage as the layer cache of the next build (a tag: all cache hits, no
# work), then drop the stale images of earlier builds: with the vfs storage driver
# each one is a full copy on disk (~0.8 GB for a build stage).
DOCKER_BUILDKIT=0 docker build -q --network host --target build -t gcnode-build:cache \
  -f "$GC_ROOT/docker/Dockerfile" "${extra[@]}" "$GC_ROOT" >/dev/null
docker image prune -f >/dev/null
