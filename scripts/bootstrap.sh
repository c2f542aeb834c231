#!/usr/bin/env bash
# Install everything papersift needs on a fresh Debian (as root) or reuse what is there:
# system tools (Tesseract, poppler, archivers, node), the .venv with the project and its
# dev/CDK extras, and the local aws-cdk CLI. Safe to run again: each step is skipped when done.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  tesseract-ocr tesseract-ocr-eng tesseract-ocr-por tesseract-ocr-spa
  tesseract-ocr-osd tesseract-ocr-deu tesseract-ocr-fra   # OSD (orientation, script); the Latin re-read
  tesseract-ocr-ara tesseract-ocr-jpn tesseract-ocr-jpn-vert tesseract-ocr-chi-sim   # models OSD's script picks
  poppler-utils poppler-data
  p7zip-full unar libarchive-tools cabextract arj lhasa zstd cpio binutils
  gcab lzip ncompress   # test fixtures: archive formats we must read but no Python lib writes
  antiword catdoc
  chromium curl jq   # report.html in a headless browser; the README's curl session against `papersift serve`
)
# binary -> package, to decide whether apt is needed at all
need_apt=0
for bin in tesseract pdftotext 7z unar bsdtar cabextract arj lha zstd cpio ar antiword catdoc gcab lzip compress \
           chromium curl jq; do
  command -v "$bin" >/dev/null 2>&1 || need_apt=1
done
for lang in eng por spa osd deu fra ara jpn jpn_vert chi_sim; do
  [ -e "/usr/share/tesseract-ocr/5/tessdata/$lang.traineddata" ] || need_apt=1
done
python_bin="${PYTHON:-python3}"
"$python_bin" -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt=1
command -v node >/dev/null 2>&1 || need_apt=1

if [ "$need_apt" = 1 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "bootstrap: system packages are missing and this is not root; install: ${APT_PACKAGES[*]} python3-venv nodejs npm" >&2
    exit 1
  fi
  echo "bootstrap: installing system packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  extra=()
  "$python_bin" -c 'import ensurepip, venv' >/dev/null 2>&1 || extra+=(python3-venv python3-pip)
  command -v node >/dev/null 2>&1 || extra+=(nodejs npm)
  apt-get install -y -qq --no-install-recommends "${APT_PACKAGES[@]}" "${extra[@]}" >/dev/null
fi

"$python_bin" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "bootstrap: papersift needs Python 3.11+, found $("$python_bin" --version)" >&2; exit 1; }

if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv" >&2
  "$python_bin" -m venv .venv
fi
stamp=".venv/.papersift-installed"
want="$(cat pyproject.toml layers/requirements.txt functions/image-requirements.txt constraints.txt 2>/dev/null | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing Python packages into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip
  # constraints.txt: the locked set the layer and the image are built from too
  .venv/bin/python -m pip install -q -c constraints.txt -e ".[dev,cdk]"
  echo "$want" > "$stamp"
fi

if [ -f package.json ] && { [ ! -x node_modules/.bin/cdk ] || [ ! -x node_modules/.bin/node ]; }; then
  echo "bootstrap: installing the aws-cdk CLI (npm)" >&2
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi
fi
