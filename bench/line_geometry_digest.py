"""Digest of what the extraction hands structure from pdfium, per page of every PDF of the corpus and
bench-pdfs: the page's text, its lines' heights, boxes, bold lines and tagged headings, and the blocks
structure builds from them (with their bbox): the check that a change to the line pass
(``pdf_engines._line_geometry``) changes no output (issue 19).

    /work/bin/wtpy python bench/line_geometry_digest.py > a.txt    # one line per PDF
    diff a.txt b.txt

``--pages FILE.pdf`` prints that file's per-page geometry as JSON instead, to see what moved.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict
from pathlib import Path

from papersift.errors import PapersiftError
from papersift.formats.pdf import extract_pages, page_count_and_outline
from papersift.settings import Settings
from papersift.steps.assemble import mark_structure

SHARED = Path(__file__).resolve().parents[2] / "shared"
FOLDERS = (SHARED / "corpus" / "files", SHARED / "bench-pdfs" / "files")


def geometry(path: Path) -> list[dict[str, object]]:
    data, settings = path.read_bytes(), Settings(ocr_mode="off")
    count, outline, _ = page_count_and_outline(data, settings)
    pages = extract_pages(data, settings, 1, count)
    mark_structure(pages, outline)
    return [{"number": page.number, "text": page.text, "heights": page.line_heights, "boxes": page.line_boxes,
             "bold": page.bold_lines, "tags": [asdict(entry) for entry in page.tag_headings],
             "blocks": [asdict(block) for block in page.blocks]} for page in pages]


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--pages"]:
        print(json.dumps(geometry(Path(args[1])), ensure_ascii=False, indent=1))
        return 0
    for folder in FOLDERS:
        for path in sorted(folder.glob("*.pdf")):
            try:
                digest = hashlib.sha256(json.dumps(geometry(path), ensure_ascii=False).encode()).hexdigest()[:16]
            except PapersiftError as exc:
                digest = f"{type(exc).__name__}"
            print(f"{folder.parent.name}/{path.name} {digest}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
