#!/usr/bin/env bash
# Write constraints.txt: the one locked dependency set from which the dev venv
# (scripts/bootstrap.sh), the dependency layer (scripts/build_layers.py) and the container
# image (functions/Dockerfile) are all installed. Resolved for Linux and the oldest Python we
# support (3.11), one version per package: the same pins then hold for Lambda's python3.12 on
# x86_64 and arm64 and for the dev venv (a universal resolution would split packages by Python
# version, and pip evaluates such markers against the Python it runs on, not the layer's). Rerun after changing a dependency in pyproject.toml;
# tests/unit/test_dependency_lock.py fails while the file is stale.
# --check: compare a fresh resolution with the file instead of writing it (needs PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
uv="${UV:-.venv/bin/uv}"
out=constraints.txt
[ "${1:-}" = --check ] && out="$(mktemp)"
# --upgrade-package none and the existing file as the starting point: a rerun keeps every pin
# that still satisfies pyproject.toml and moves only what must move.
[ "$out" != constraints.txt ] && cp constraints.txt "$out"
"$uv" pip compile pyproject.toml --all-extras --python-platform linux --python-version 3.11 \
  --no-emit-package papersift --quiet --output-file "$out" \
  --custom-compile-command "scripts/lock_dependencies.sh"
if [ "$out" != constraints.txt ]; then
  if ! diff -u <(grep -v '^ *#' constraints.txt) <(grep -v '^ *#' "$out"); then
    echo "constraints.txt is stale: run scripts/lock_dependencies.sh" >&2
    rm -f "$out"; exit 1
  fi
  rm -f "$out"
fi
