#!/usr/bin/env bash
# Build the container image of each container function (functions/Dockerfile) on this
# machine: no Docker engine, no registry. buildah builds with chroot isolation, from a Debian
# bookworm base made by debootstrap and imported as a local image.
#
# Usage: scripts/build_image.sh [--rebuild] [FUNCTION...]    (default: every container function)
#        scripts/build_image.sh --list                        (print the container functions)
#   --rebuild   make the base anew from Debian's archive and build without the layer cache
# Environment:
#   PAPERSIFT_BASE_IMAGE   build from this image instead of the debootstrap base
#   PAPERSIFT_IMAGE_TAG    tag of the images (default latest; the tests use one per checkout)
#
# Writes build/image/<function>.iid (the image id) and tags localhost/papersift-<function>:TAG.
# Cached for re-runs: the base rootfs (build/image/base-*.tar.zst), the base image, and every
# build step in buildah's layer cache; a re-run with unchanged inputs takes seconds.
set -euo pipefail
shopt -s inherit_errexit   # a failure inside $(...) stops the script too
cd "$(dirname "$0")/.."

# The functions the stack deploys as images (infra/stacks/pipeline_stack.py, _container_function);
# a test of the stack checks that the two lists agree.
CONTAINER_FUNCTIONS=(unpack extract ocr export)
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
OUT=build/image
TAG="${PAPERSIFT_IMAGE_TAG:-latest}"
BUILDAH_ISOLATION=chroot   # the only isolation that runs here (no user namespaces, no crun)
export BUILDAH_ISOLATION

rebuild=0
functions=()
for arg in "$@"; do
  case "$arg" in
    --rebuild) rebuild=1 ;;
    --list) echo "${CONTAINER_FUNCTIONS[*]}"; exit 0 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "build_image: unknown option $arg" >&2; exit 2 ;;
    *) functions+=("$arg") ;;
  esac
done
[ ${#functions[@]} -gt 0 ] || functions=("${CONTAINER_FUNCTIONS[@]}")
for fn in "${functions[@]}"; do
  [ -f "functions/$fn/app.py" ] || { echo "build_image: functions/$fn/app.py does not exist" >&2; exit 2; }
done

log() { echo "build_image: $*" >&2; }

install_tools() {
  local missing=()
  command -v buildah >/dev/null 2>&1 || missing+=(buildah)
  if [ -z "${PAPERSIFT_BASE_IMAGE:-}" ]; then
    command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
    command -v zstd >/dev/null 2>&1 || missing+=(zstd)
  fi
  [ ${#missing[@]} -eq 0 ] && return
  if [ "$(id -u)" != 0 ]; then
    log "needs ${missing[*]} and this is not root: apt-get install ${missing[*]}"; exit 1
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

image_exists() { buildah inspect --type image "$1" >/dev/null 2>&1; }

# The base: `debootstrap --variant=minbase` (a plain Debian, as a fresh machine has it), its
# rootfs kept as a tarball and imported with `buildah from scratch` + `buildah add`. The tag
# carries a hash of how it was made, so a change of suite or mirror makes a new base.
local_base() {
  local key tarball image rootfs ctr
  key="$(printf '%s %s minbase' "$SUITE" "$MIRROR" | sha256sum | cut -c1-12)"
  tarball="$OUT/base-$SUITE-$key.tar.zst"
  image="localhost/papersift-base:$SUITE-$key"
  if [ "$rebuild" = 1 ] || [ ! -f "$tarball" ]; then
    rootfs="$OUT/rootfs.tmp"
    rm -rf "$rootfs"
    log "debootstrap $SUITE (minbase) from $MIRROR"
    debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$OUT/debootstrap.log" 2>&1 \
      || { log "debootstrap failed; see $OUT/debootstrap.log"; exit 1; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" --numeric-owner -c . | zstd -q -T0 -o "$tarball.tmp"
    mv "$tarball.tmp" "$tarball"
    rm -rf "$rootfs"
  fi
  if [ "$rebuild" = 1 ] || ! image_exists "$image"; then
    log "importing $tarball as $image"
    ctr="$(buildah from scratch)"
    # shellcheck disable=SC2064  # the container name is known now
    trap "buildah rm $ctr >/dev/null 2>&1 || true" EXIT
    buildah add --quiet "$ctr" "$tarball" / >/dev/null
    buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --cmd /bin/bash "$ctr"
    buildah commit --quiet --rm "$ctr" "$image" >/dev/null
    trap - EXIT
  fi
  echo "$image"
}

# The build context: what the Dockerfile copies, as the stack sends it at deploy. Word lists
# compiled on this machine stay out: the image compiles its own from its own pyspellchecker.
stage_context() {
  local context="$OUT/context"
  rm -rf "$context"
  mkdir -p "$context"
  tar -c --exclude=__pycache__ --exclude='*.pyc' --exclude=.pytest_cache --exclude=.mypy_cache \
      --exclude='layers/papersift/python/papersift/data/words-*' \
      functions layers/requirements.txt constraints.txt layers/papersift | tar -x -C "$context"
  echo "$context"
}

mkdir -p "$OUT"
install_tools
base="${PAPERSIFT_BASE_IMAGE:-$(local_base)}"
context="$(stage_context)"
build_flags=(--layers)
# pip in the build trusts what this machine trusts (here TLS to PyPI is intercepted)
ca_bundle=/etc/ssl/certs/ca-certificates.crt
[ ! -s "$ca_bundle" ] || build_flags+=(--secret "id=ca-certificates,src=$ca_bundle")

# What a build depends on: the staged context, the base image and the build flags. When a
# function's last build had the same inputs and its image still exists, buildah is not run at
# all (its layer cache would find every step, but checking them costs ~10 s of both cores).
inputs="$( (cd "$context" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
           buildah inspect --type image --format '{{.FromImageID}}' "$base"; echo "${build_flags[*]}")"
built=0
[ "$rebuild" = 0 ] || build_flags+=(--no-cache)

# bud NAME [ARGS...]: one build, its log in $OUT/NAME.build.log, its image id in $OUT/NAME.iid
bud() {
  local name="$1" started=$SECONDS stamp
  shift
  stamp="$(printf '%s\n%s' "$inputs" "$*" | sha256sum | cut -d' ' -f1)"
  if [ "$rebuild" = 0 ] && [ -f "$OUT/$name.iid" ] && [ "$(cat "$OUT/$name.stamp" 2>/dev/null)" = "$stamp" ] \
      && image_exists "$(cat "$OUT/$name.iid")"; then
    buildah tag "$(cat "$OUT/$name.iid")" "localhost/papersift-$name:$TAG"
    log "$name: $(cut -c1-19 "$OUT/$name.iid") unchanged"
    return
  fi
  rm -f "$OUT/$name.stamp"
  buildah bud --isolation chroot --ulimit nofile=20000:20000 "${build_flags[@]}" --pull=false --force-rm \
    --build-arg "BASE_IMAGE=$base" --iidfile "$OUT/$name.iid" -t "localhost/papersift-$name:$TAG" "$@" \
    -f "$context/functions/Dockerfile" "$context" >"$OUT/$name.build.log" 2>&1 \
    || { tail -n 40 "$OUT/$name.build.log" >&2; log "build of $name failed; log: $OUT/$name.build.log"; exit 1; }
  echo "$stamp" > "$OUT/$name.stamp"
  built=1
  log "$name: $(cut -c1-19 "$OUT/$name.iid") in $((SECONDS - started)) s"
}

log "building from $base: ${functions[*]}"
# The Python stage gets a tag of its own: the prune below removes untagged images that no other
# image is built on, and this stage's result is only copied from, yet it is the cache of the
# slowest step (pip).
bud python-packages --target python-packages
for fn in "${functions[@]}"; do
  bud "$fn" --build-arg "FUNCTION=$fn"
done
# Images of earlier builds that nothing refers to any more (the previous image of each tag).
[ "$built" = 0 ] || buildah rmi --prune >/dev/null 2>&1 || log "could not prune old images (another build running?)"
