"""Structure of bench-pdfs' document.md (issue 19): per PDF, its outline titles and how many became
headings at their level, the running-head lines set apart, the pages whose body still shows one, the
body lines and the paragraphs and list items they were joined into (a PDF without outline: the
headings its font sizes gave, listed on stderr to be read), and what structure costs against
extracting the pages without it: the pdfium reads the extraction makes only for it (its lines'
heights, boxes and weight, tagged headings: "geo ms", the extraction with them less the extraction
without, ``extract_pages(structure=False)``; "in ms": the CPU time inside those reads,
``PdfHandle.line_geometry`` and ``tag_headings``, steadier on shared cores than a difference of two
extractions) and the structure pass (blocks + Markdown: "str ms"; "toc ms" the plan's opening with
the outline read), their sum as a share of the extraction without them. Each side the fastest of
``RUNS`` in CPU time, the two sides run in turn; the word lists are mapped before the first file,
as a warm Lambda has them.

    /work/bin/wtpy python bench/structure.py [FOLDER] [--pages DIR]

``--pages DIR`` also writes each page as the pipeline keeps it (``DIR/<file>/pages/00001.json``, with
its ``blocks``), which ``papersift extract`` does not write: bench/structure_anchors.py reads the
running heads set apart there.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CpuInside

from papersift.content import PageContent
from papersift.formats.pdf import extract_pages, page_count, page_count_and_outline
from papersift.layout import page_file
from papersift.lexicon import lexicon
from papersift.pdf_engines import PdfHandle
from papersift.settings import Settings
from papersift.steps.assemble import mark_structure
from papersift.structure import HEADING, LIST_ITEM, PARAGRAPH, SET_APART, _heading_key, _prose, _reads_as

FOLDER = Path(__file__).resolve().parents[2] / "shared" / "bench-pdfs" / "files"


#: each side is timed this many times and the fastest kept (the machine is shared)
RUNS = 9
#: the process's CPU time, not the wall clock: on shared cores the wall clock also counts the
#: time other processes held the core, which moved one side's best of five by ±30% between runs
_clock = time.process_time


#: CPU time spent inside the extraction's reads for structure (the line pass and the tags), per run
_INSIDE = CpuInside()
PdfHandle.line_geometry = _INSIDE.wrap(PdfHandle.line_geometry)  # type: ignore[method-assign]
PdfHandle.tag_headings = _INSIDE.wrap(PdfHandle.tag_headings)  # type: ignore[method-assign]


def _extraction(data: bytes, settings: Settings, structure: bool) -> tuple[float, list[PageContent]]:
    _INSIDE.seconds = 0.0
    started = _clock()
    count = page_count(data, settings)
    pages = extract_pages(data, settings, 1, count, structure=structure)
    if not structure:
        "\n\n".join(page.to_markdown() for page in pages)  # document.md as it is with structure off
    return _clock() - started, pages


def measure(path: Path, pages_out: Path | None = None, totals: list[float] | None = None) -> str:
    data, settings = path.read_bytes(), Settings(ocr_mode="off")
    extraction = with_geometry = inside = math.inf
    for _ in range(RUNS):  # the two sides in turn, so the machine's load weighs on both alike
        seconds, _ = _extraction(data, settings, structure=False)
        extraction = min(extraction, seconds)
        seconds, pages = _extraction(data, settings, structure=True)
        with_geometry, inside = min(with_geometry, seconds), min(inside, _INSIDE.seconds)
    count = len(pages)
    started = _clock()
    _, outline, _ = page_count_and_outline(data, settings)
    opening = _clock() - started  # the plan opens the PDF anyway: the outline's upper bound
    structure = math.inf
    for _ in range(RUNS):
        started = _clock()
        mark_structure(pages, outline)
        markdown = [page.to_markdown() for page in pages]
        structure = min(structure, _clock() - started)
    if pages_out is not None:
        for page in pages:
            target = pages_out / path.name / page_file(page.number)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(page.to_dict(), ensure_ascii=False), encoding="utf-8")
    headings = {(_heading_key(line.lstrip("#")), len(line) - len(line.lstrip("#")))
                for md in markdown for line in md.splitlines() if line.startswith("#")}
    pointing = [e for e in outline if e.page and not _prose(e.title)]  # a paragraph the outline lists is no title
    found = sum(1 for e in pointing if any(_reads_as(k, _heading_key(e.title)) and lv == min(e.level, 6)
                                           for k, lv in headings))
    apart = [b for page in pages for b in page.blocks if b.role in SET_APART]
    left = sum(1 for page, md in zip(pages, markdown, strict=True)
               if any(b.text in md.splitlines() for b in page.blocks if b.role in SET_APART))
    heading_blocks = sum(1 for page in pages for b in page.blocks if b.role == HEADING)
    paragraphs = sum(1 for page in pages for b in page.blocks if b.role == PARAGRAPH)
    items = sum(1 for page in pages for b in page.blocks if b.role == LIST_ITEM)
    lines = sum(1 for page in pages for line in page.body_lines() if line.strip())
    geometry = with_geometry - extraction  # pdfium asked for the lines' heights, boxes, weight and tags
    share = (geometry + structure) / extraction * 100
    if totals is not None:
        for at, value in enumerate((extraction, geometry, structure, inside)):
            totals[at] += value
    if not outline:  # headings from font sizes: listed for reading (a false heading is worse than a missed one)
        for page in pages:
            for b in page.blocks:
                if b.role == HEADING:
                    print(f"    font heading p{page.number} {'#' * b.level} {b.text[:100]}", file=sys.stderr)
    return (f"{path.name[:44]:44} {count:5} {len(pointing):7} {found:5} {heading_blocks:8} {len(apart):7} "
            f"{lines:6} {paragraphs:6} {items:5} "
            f"{left:4} {extraction:8.3f} {geometry * 1000:7.1f} {inside * 1000:7.1f} {structure * 1000:7.1f} "
            f"{opening * 1000:7.1f} {share:6.2f}%")


def main() -> int:
    args = sys.argv[1:]
    pages_out = None
    if "--pages" in args:
        at = args.index("--pages")
        pages_out = Path(args[at + 1])
        del args[at:at + 2]
    folder = Path(args[0]) if args else FOLDER
    lexicon()
    if not folder.is_dir():
        print(f"{folder} is absent", file=sys.stderr)
        return 1
    print(f"{'file':44} {'pages':>5} {'outline':>7} {'found':>5} {'headings':>8} {'running':>7} "
          f"{'lines':>6} {'paras':>6} {'items':>5} "
          f"{'left':>4} {'extr s':>8} {'geo ms':>7} {'in ms':>7} {'str ms':>7} {'toc ms':>7} {'share':>7}")
    totals = [0.0, 0.0, 0.0, 0.0]
    for path in sorted(folder.glob("*.pdf")):
        print(measure(path, pages_out, totals), flush=True)
    extraction, geometry, structure, inside = totals
    print(f"{'total':44} extraction {extraction:.3f} s, geometry {geometry * 1000:.1f} ms "
          f"({geometry / extraction * 100:.2f}%; inside {inside * 1000:.1f} ms), structure {structure * 1000:.1f} ms "
          f"({structure / extraction * 100:.2f}%): {(geometry + structure) / extraction * 100:.2f}% of extraction "
          f"({(inside + structure) / extraction * 100:.2f}% with the time inside)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
