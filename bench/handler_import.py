"""Cold start of a Lambda handler: import functions/<name>/app.py and validate its first event, in
fresh interpreters, for this checkout and for a git revision side by side (variants interleaved,
median of N). What the step models (pydantic) cost the extract function's init shows here.

    .venv/bin/python bench/handler_import.py [--base REV] [--function extract] [--runs 11]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, checkout

EVENT = {"doc_id": "d1", "bucket": "b", "key": "incoming/a.pdf", "kind": "pdf", "first_page": 1, "last_page": 2,
         "batch_index": 0}
PROBE = """import sys, time
started = time.perf_counter()
sys.path.insert(0, {directory!r})
import app
imported = time.perf_counter()
try:
    try:
        from papersift.steps.contracts import Batch
    except ImportError:  # a revision before the steps package
        from papersift.steps import Batch
    Batch.model_validate({event!r})
except ImportError:  # a revision before the step models
    pass
print(imported - started, time.perf_counter() - started)"""


def measure(root: Path, function: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(root / "layers" / "papersift" / "python"), "AWS_DEFAULT_REGION": "us-east-1",
           "TABLE_NAME": "t", "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:x"}
    code = PROBE.format(directory=str(root / "functions" / function), event=EVENT)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    imported, total = out.stdout.split()
    return float(imported), float(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="04047dd", help="git revision to compare with (default: before the models)")
    parser.add_argument("--function", default="extract")
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} (above 1.5: numbers are not from a quiet machine)")
    with tempfile.TemporaryDirectory() as tmp:
        variants = {args.base: checkout(args.base, Path(tmp)), "this checkout": REPO}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(args.runs):
            for name, root in variants.items():
                times[name].append(measure(root, args.function))
    for name, samples in times.items():
        imported = statistics.median(s[0] for s in samples) * 1000
        total = statistics.median(s[1] for s in samples) * 1000
        print(f"{args.function} handler, {name:14s}: import {imported:6.0f} ms, import + first event {total:6.0f} ms")


if __name__ == "__main__":
    main()
