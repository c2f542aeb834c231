#!/usr/bin/env bash
# The whole test suite: installs what it needs, then lint, types and pytest (parallel on all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
.venv/bin/ruff check .
.venv/bin/mypy
for handler in functions/*/app.py; do
  .venv/bin/mypy --follow-imports=silent "$handler"
done
.venv/bin/pytest -n auto --dist loadfile "$@"
