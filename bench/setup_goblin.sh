#!/usr/bin/env bash
# GoblinTools 0.13.4 breaks on pypdf 7, which papersift uses: give it a venv of its own
# so its pins never mix with ours. Idempotent; prints the venv's python path.
# --ocr: also install its `local-ocr` extra (opencv, scipy, pytesseract; the tesseract binary
# comes from the system) for bench/ocr_throughput.py; the text-layer path is unchanged by it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv-goblin"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
package="goblintools==0.13.4"
check="import goblintools"
if [ "${1:-}" = "--ocr" ]; then
    package="goblintools[local-ocr]==0.13.4"
    check="import goblintools, cv2, pytesseract, scipy.ndimage"
fi
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "$check" 2>/dev/null; then
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$package" "pypdf>=6.15,<7" >"$venv/install.log" 2>&1 || { cat "$venv/install.log" >&2; exit 1; }
fi
echo "$venv/bin/python"
