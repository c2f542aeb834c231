"""Screenshot the report.html papersift writes for one file (docs/report-example.png comes from this).

    .venv/bin/python scripts/report_screenshot.py ../shared/corpus/files/ac__Validate_sample.pdf \
        docs/report-example.png

The file goes through `papersift extract`'s steps (the workflow's own plan/extract/assemble, no AWS);
headless Chromium (tests/chromium.py) draws the page at a laptop's width.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from chromium import screenshot  # noqa: E402

from papersift.pipeline import process_document  # noqa: E402
from papersift.settings import Settings  # noqa: E402
from papersift.steps.contracts import DocumentRef, document_id  # noqa: E402
from papersift.storage import LocalDirStore  # noqa: E402


def main(source: Path, out: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="papersift-shot-") as tmp:
        store = LocalDirStore(Path(tmp) / "store")
        key = f"incoming/{source.name}"
        store.upload_file(source, key)
        document = DocumentRef(doc_id=document_id("local", key), bucket="local", key=key, source_name=source.name)
        report = process_document(store, document, Settings())
        page = Path(tmp) / "report.html"
        page.write_bytes(store.get(f"results/{report.doc_id}/report.html"))
        screenshot(page, out.resolve())
        print(f"{source.name}: {report.status}, {report.page_count} pages, report.html {page.stat().st_size} bytes"
              f" -> {out}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
