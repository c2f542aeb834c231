#!/usr/bin/env bash
# The whole test suite: installs what it needs, then lint, types and pytest (parallel on all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
.venv/bin/ruff check .
.venv/bin/mypy
for handler in functions/*/app.py; do
  # a handler with modules of its own (functions/api) is checked with them
  .venv/bin/mypy --follow-imports=silent "$(dirname "$handler")"/*.py
done
.venv/bin/pytest -n auto --dist loadfile "$@"
