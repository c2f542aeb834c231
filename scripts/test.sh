#!/usr/bin/env bash
# The whole test suite: installs what it needs, then lint, types and pytest (parallel on all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# the project's own Node 22 (npm ci) for the CDK CLI and jsii, before the machine's
export PATH="$PWD/node_modules/.bin:$PATH"
.venv/bin/ruff check .
.venv/bin/mypy
for handler in functions/*/app.py; do
  # a handler with modules of its own (functions/api) is checked with them
  .venv/bin/mypy --follow-imports=silent "$(dirname "$handler")"/*.py
done
.venv/bin/pytest -n auto --dist loadfile "$@"
