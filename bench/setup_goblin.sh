#!/usr/bin/env bash
# GoblinTools 0.13.4 breaks on pypdf 7, which papersift uses: give it a venv of its own
# so its pins never mix with ours. Idempotent; prints the venv's python path.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv-goblin"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import goblintools" 2>/dev/null; then
    "$python" -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "goblintools==0.13.4" "pypdf>=6.15,<7" >"$venv/install.log" 2>&1 || { cat "$venv/install.log" >&2; exit 1; }
fi
echo "$venv/bin/python"
