"""`papersift doctor`: what is installed, what is missing and which Debian package brings it.

Each line is OK or names the apt package to install (the names of scripts/bootstrap.sh).
A *required* check is one the configured settings need (Python, the core packages, Tesseract and
the configured ``ocr_languages`` when the OCR mode runs Tesseract, pyarrow with ``export_parquet``):
a missing one exits 1. The rest (poppler, archivers, .doc tools, node/CDK, buildah) only serve some
inputs or the deployment and are reported without failing.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from papersift.errors import MissingExtraError
from papersift.parquet import PARQUET_EXTRA_HINT, require_pyarrow
from papersift.settings import OCR_OFF, OCR_TEXTRACT_ONLY, Settings

#: core distributions whose versions matter when a result differs between machines
KEY_PACKAGES = ("pypdfium2", "pypdf", "pdfplumber", "pytesseract", "pydantic", "boto3", "moto")
#: (binary, Debian package, what it serves), as scripts/bootstrap.sh installs them
OPTIONAL_TOOLS = (
    ("pdftotext", "poppler-utils", "the last-resort PDF text engine"),
    ("pdftoppm", "poppler-utils", "drawing PDFs pdfium cannot open for OCR"),
    ("7z", "p7zip-full", "7z, cab, iso and most other archives"),
    ("unar", "unar", "rar and lzh archives"),
    ("cabextract", "cabextract", "cab archives"),
    ("arj", "arj", "arj archives"),
    ("lha", "lhasa", "lzh archives"),
    ("zstd", "zstd", "zstd streams"),
    ("antiword", "antiword", "Word 97-2003 .doc"),
    ("catdoc", "catdoc", ".doc when antiword cannot read it"),
    ("buildah", "buildah", "building the Lambda images"),
)
#: below this much free space in the output folder a corpus run may not finish
MIN_FREE_BYTES = 1024**3


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = False

    def line(self) -> str:
        mark = "OK  " if self.ok else ("FAIL" if self.required else "WARN")
        return f"{mark} {self.name}: {self.detail}"


def tesseract_languages() -> set[str] | None:
    """The models the tesseract on PATH can load, or None without a tesseract."""
    binary = shutil.which("tesseract")
    if binary is None:
        return None
    proc = subprocess.run([binary, "--list-langs"], capture_output=True, text=True, timeout=30, check=False)
    return {line.strip() for line in proc.stdout.splitlines()[1:] if line.strip()}


#: the oldest Node.js in support (20 reached its end of life in April 2026); jsii warns below it
MIN_NODE_MAJOR = 22


def node_runtime(root: Path) -> tuple[str, int] | None:
    """The Node.js the CDK CLI and the jsii runtime run on (the project's own, from npm ci, before
    the machine's) and its major version, or None without one."""
    local = root / "node_modules" / ".bin" / "node"
    binary = str(local) if local.exists() else shutil.which("node")
    if binary is None:
        return None
    proc = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, check=False)
    major = proc.stdout.strip().lstrip("v").split(".")[0]
    return binary, int(major) if major.isdigit() else 0


def cdk_cli(root: Path) -> str | None:
    local = root / "node_modules" / ".bin" / "cdk"
    return str(local) if local.exists() else shutil.which("cdk")


def checks(settings: Settings, out: Path, root: Path) -> list[Check]:
    found: list[Check] = []
    py_ok = sys.version_info >= (3, 11)
    found.append(Check("python", py_ok, sys.version.split()[0] if py_ok else
                       f"{sys.version.split()[0]}: papersift needs 3.11+ (apt: python3)", required=True))
    for dist in KEY_PACKAGES:
        try:
            found.append(Check(dist, True, importlib.metadata.version(dist)))
        except importlib.metadata.PackageNotFoundError:
            found.append(Check(dist, False, "not installed: pip install -e '.[dev]'", required=dist != "moto"))
    ocr_local = settings.ocr_mode not in (OCR_OFF, OCR_TEXTRACT_ONLY)
    langs = tesseract_languages()
    if langs is None:
        found.append(Check("tesseract", False, "missing: apt install tesseract-ocr", required=ocr_local))
    else:
        found.append(Check("tesseract", True, f"languages {' '.join(sorted(langs))}"))
        missing = [lang for lang in settings.ocr_languages if lang not in langs]
        pkgs = " ".join(f"tesseract-ocr-{lang.replace('_', '-')}" for lang in missing)
        found.append(Check("ocr_languages", not missing, f"missing {' '.join(missing)}: apt install {pkgs}"
                           if missing else " ".join(settings.ocr_languages), required=ocr_local))
    try:  # the export step (export_parquet) and `papersift export --format parquet`
        require_pyarrow()
        found.append(Check("pyarrow", True, importlib.metadata.version("pyarrow")))
    except MissingExtraError:
        found.append(Check("pyarrow", False, f"not installed (Parquet exports): {PARQUET_EXTRA_HINT}",
                           required=settings.export_parquet))
    for binary, package, purpose in OPTIONAL_TOOLS:
        path = shutil.which(binary)
        found.append(Check(binary, path is not None, path or f"missing ({purpose}): apt install {package}"))
    node = node_runtime(root)
    hint = f"(the CDK CLI): npm ci installs Node {MIN_NODE_MAJOR} into node_modules/.bin"
    if node is None:
        found.append(Check("node", False, f"missing {hint}"))
    else:
        binary, major = node
        found.append(Check("node", major >= MIN_NODE_MAJOR, f"{binary} (Node {major})" if major >= MIN_NODE_MAJOR
                           else f"Node {major} is past its end of life {hint}"))
    cdk = cdk_cli(root)
    found.append(Check("cdk", cdk is not None, cdk or "missing (the CDK deployment): npm ci (node_modules/.bin/cdk)"))
    target = out if out.exists() else out.parent
    free = shutil.disk_usage(target).free
    found.append(Check("disk", free >= MIN_FREE_BYTES, f"{free / 1024**3:.1f} GiB free in {target}"))
    return found


def doctor(settings: Settings, out: Path, stream: TextIO | None = None, root: Path | None = None) -> int:
    """Print one line per check; 1 when something the settings need is missing."""
    stream = stream or sys.stdout
    results = checks(settings, out, root or Path.cwd())
    for check in results:
        print(check.line(), file=stream)
    return 1 if any(c.required and not c.ok for c in results) else 0


def run_doctor(config: Path | None, out: Path | None) -> int:
    settings = Settings.from_toml(config) if config is not None else Settings()
    return doctor(settings, out or Path.cwd())
