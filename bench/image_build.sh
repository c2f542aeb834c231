#!/usr/bin/env bash
# Build times of the container image here (scripts/build_image.sh, buildah, debootstrap base) and
# its size, printed as a Markdown table for docs/benchmarks.md:
#   cold     --rebuild: debootstrap the base anew and build every layer without the cache
#   warm     nothing changed since the last build
#   core     one file of the core library changed (what most commits do)
# Usage: bash bench/image_build.sh [--no-cold]     (cold needs Debian's archive and PyPI)
set -euo pipefail
cd "$(dirname "$0")/.."

cold=1
[ "${1:-}" != "--no-cold" ] || cold=0
marker=layers/papersift/python/papersift/_bench_marker.py
trap 'rm -f "$marker"' EXIT

run() {  # run LABEL ARGS...: one timed build, one table row
  local label="$1" load started
  shift
  load="$(cut -d' ' -f1 /proc/loadavg)"
  started="$(date +%s.%N)"
  bash scripts/build_image.sh "$@" 2>/dev/null
  awk -v label="$label" -v start="$started" -v end="$(date +%s.%N)" -v load="$load" \
    'BEGIN { printf "| %s | %.1f | %s |\n", label, end - start, load }'
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(buildah --version)"
echo "command: bash bench/image_build.sh $*"
echo
echo "| build ($(bash scripts/build_image.sh --list)) | seconds | load (1 min) before |"
echo "|---|---|---|"
[ "$cold" = 0 ] || run "cold (--rebuild: debootstrap + every layer)" --rebuild
run "warm (nothing changed)"
echo "# changed by bench/image_build.sh $(date +%s%N)" > "$marker"
run "core library changed"
rm -f "$marker"
run "core library back (cached)"
echo
for fn in $(bash scripts/build_image.sh --list); do
  echo "image $fn: $(buildah images --format '{{.Size}}' "$(cat "build/image/$fn.iid")" | head -n 1)"
done
