"""Digest of every result papersift writes, with what varies from run to run taken out: the check
that a refactor changes no behaviour (issue 21: "the corpus, bench-pdfs and e2e outputs
byte-identical before and after").

    .venv/bin/python bench/output_snapshot.py run OUT              # extract corpus + bench-pdfs, OCR off and on
    .venv/bin/python bench/output_snapshot.py run OUT --ocr off    # the text-layer path only
    .venv/bin/python bench/output_snapshot.py digest OUT > a.json  # one line per result file
    .venv/bin/python bench/output_snapshot.py compare a.json b.json

``run`` uses whatever ``papersift`` is first on PATH with the current PYTHONPATH, so a snapshot of
another tree runs against the same venv. Volatile fields (timings, seconds, cost figures derived
from timings, created_at) are dropped from report.json and pages/N.json before hashing; report.html
is left out (it renders those timings). Every other byte counts.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared"
INPUT_SETS = {
    "corpus": SHARED / "corpus" / "files",
    "bench-pdfs": SHARED / "bench-pdfs" / "files",
}
VOLATILE_KEYS = frozenset({"timings", "seconds", "created_at", "lambda_gb_seconds", "usd", "elapsed"})
SKIPPED_FILES = frozenset({"report.html"})


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _stable(item) for key, item in value.items() if key not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_stable(item) for item in value]
    return value


def _file_digest(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".json":
        with contextlib.suppress(ValueError):
            data = json.dumps(_stable(json.loads(data)), sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()


def digest(out: Path) -> dict[str, str]:
    return {
        str(path.relative_to(out)): _file_digest(path)
        for path in sorted(out.rglob("*"))
        if path.is_file() and path.name not in SKIPPED_FILES
    }


def run(out: Path, modes: tuple[str, ...] = ("off", "local-first")) -> None:
    for ocr in modes:
        for name, folder in INPUT_SETS.items():
            if not folder.is_dir():
                print(f"skip {name}: {folder} is absent", file=sys.stderr)
                continue
            target = out / f"{name}-ocr-{ocr}"
            subprocess.run(
                ["papersift", "extract", "--quiet", "--ocr", ocr, "--tables", "--out", str(target), str(folder)],
                check=False,
            )


def compare(before: Path, after: Path) -> int:
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    differing = sorted(key for key in old.keys() & new.keys() if old[key] != new[key])
    for label, keys in (("only before", old.keys() - new.keys()), ("only after", new.keys() - old.keys()),
                        ("differ", differing)):
        for key in sorted(keys):
            print(f"{label}: {key}")
    print(f"{len(old)} files before, {len(new)} after, {len(differing)} differ")
    return 1 if differing or old.keys() != new.keys() else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run")
    run_parser.add_argument("out", type=Path)
    run_parser.add_argument("--ocr", action="append", choices=("off", "local-first"),
                            help="only these OCR modes (repeatable; default: both)")
    commands.add_parser("digest").add_argument("out", type=Path)
    compare_parser = commands.add_parser("compare")
    compare_parser.add_argument("before", type=Path)
    compare_parser.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run(args.out, tuple(args.ocr or ("off", "local-first")))
        return 0
    if args.command == "digest":
        json.dump(digest(args.out), sys.stdout, indent=0, sort_keys=True)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
