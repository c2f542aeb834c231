"""The 1,000-page mixed run of docs/cost.md: build its inputs, or add up the ledgers of its results.

    .venv/bin/python scripts/cost_run.py make IN_DIR        # 16 inputs, 1,000 pages and units
    .venv/bin/papersift extract --ocr local-only --quiet --out OUT_DIR IN_DIR
    .venv/bin/python scripts/cost_run.py sum OUT_DIR        # the run's ledger (merge_ledgers)

The inputs: 9 native PDFs of 100 pages, a scanned PDF of 40 image-only pages, an archive holding a
50-page PDF and 5 notes, and 5 one-line text files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make(folder: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from archive_factory import zip_bytes
    from pdf_factory import image_only_pdf, numbered_pdf

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(9):
        (folder / f"report-{i}.pdf").write_bytes(
            numbered_pdf(100, f"Report {i}, page {{n}}: the quarterly figures of the water board, in words."))
    (folder / "scanned.pdf").write_bytes(image_only_pdf(40))
    notes = {f"note-{i}.txt": f"note {i} about the tender".encode() for i in range(5)}
    (folder / "bundle.zip").write_bytes(zip_bytes({"annex.pdf": numbered_pdf(50), **notes}))
    for i in range(5):
        (folder / f"memo-{i}.txt").write_text(f"memo {i}: the meeting moved to Thursday.\n")


def total(folder: Path) -> dict[str, object]:
    from papersift.ledger import merge_ledgers

    reports = [json.loads(path.read_text()) for path in sorted(folder.glob("*/report.json"))]
    return {"documents": len(reports), "pages": sum(r["page_count"] for r in reports),
            **merge_ledgers(r["cost"] for r in reports)}


if __name__ == "__main__":
    command, where = sys.argv[1], Path(sys.argv[2])
    if command == "make":
        make(where)
    else:
        print(json.dumps(total(where), indent=1, sort_keys=True))
