#!/usr/bin/env bash
# The main job: the whole pipeline on an embedded AWS (moto) over generated sample documents
# (a PDF, a scanned-looking page, DOCX, XLSX, TXT, a zip of them, and some bad inputs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/python scripts/make_samples.py build/samples
.venv/bin/papersift run build/samples --out out/demo "$@"
