"""Anchors for bench/structure.py (issue 19): pymupdf4llm's Markdown of the same bench-pdfs, per PDF
its outline entries that point at a page and how many appear as ``#`` headings (at their outline
level, and at any level), the ``#`` lines it writes, the pages whose Markdown still shows one of the
running header/footer/page-number lines papersift set apart on that page (as a line of its own
anywhere, or among the words of the page's first or last ``EDGE_LINES`` lines: an anchor may join a
header's parts into one line or make it a heading), and its time.

Stdlib and the anchor libraries only (papersift's title matching is loaded from its source file,
which imports the stdlib alone), run in a venv of its own, one file at a time::

    python3 -m venv /tmp/anchors && /tmp/anchors/bin/pip install "pymupdf4llm==1.28.2"
    /work/bin/wtpy python bench/structure.py --pages /tmp/anchors-out      # papersift's pages/N.json
    /tmp/anchors/bin/python bench/structure_anchors.py /tmp/anchors-out [FOLDER]

Modes: ``layout`` (pymupdf4llm's default with pymupdf-layout installed: its layout model, headers
and footers kept), ``layout-nohf`` (the same parse, ``header=False, footer=False``), ``rag`` (the
older font-size path, ``use_layout(False)``) and ``rag-toc`` (that path with ``TocHeaders``: the
headings taken from the outline). OCR off throughout, as papersift's side is ``--ocr off``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pymupdf
import pymupdf4llm
from pymupdf4llm.helpers import document_layout, pymupdf_rag

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT.parent / "shared" / "bench-pdfs" / "files"
SET_APART = frozenset({"header", "footer", "page_number"})


def _structure() -> Any:
    """papersift.structure from its file (stdlib imports only), without the papersift package."""
    path = ROOT / "layers" / "papersift" / "python" / "papersift" / "structure.py"
    spec = importlib.util.spec_from_file_location("papersift_structure", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


structure = _structure()
_key, _reads_as = structure._heading_key, structure._reads_as

#: Markdown the anchors put around a line's words: emphasis, code, a list marker, a heading's #s
_MARKUP = re.compile(r"[*_`]+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")


def _plain(line: str) -> str:
    return _key(_MARKUP.sub("", _LIST_MARK.sub("", line.lstrip("#"))))


def _words(text: str) -> tuple[str, ...]:
    return tuple(_MARKUP.sub(" ", text.replace("#", " ")).casefold().split())


def _running(pages_dir: Path, count: int) -> list[set[tuple[str, ...]]]:
    """Per page, papersift's set-apart lines (its pages/N.json blocks) as words."""
    heads: list[set[tuple[str, ...]]] = []
    for number in range(1, count + 1):
        path = pages_dir / f"{number:05d}.json"
        blocks = json.loads(path.read_text(encoding="utf-8")).get("blocks", []) if path.is_file() else []
        heads.append({_words(b["text"]) for b in blocks if b["role"] in SET_APART and _words(b["text"])})
    return heads


#: an anchor's page shows a running head when it is among the words of its first or last this many
#: non-empty lines (an anchor may join a header's parts into one line, or make it a heading)
EDGE_LINES = 3


def _shows(md: str, running: set[tuple[str, ...]]) -> bool:
    """A running head stands as a line of the page's Markdown anywhere (bench/structure.py's rule),
    or among the words of its edge lines."""
    lines = [line for line in md.splitlines() if line.strip()]
    if any(_words(line) in running for line in lines):
        return True
    edges = [_words(line) for line in lines[:EDGE_LINES] + lines[-EDGE_LINES:]]
    return any(words[i:i + len(head)] == head for head in running for words in edges
               for i in range(len(words) - len(head) + 1))


def _markdown(doc: Any, mode: str) -> tuple[list[str], float]:
    """Per page, the anchor's Markdown, and the seconds it took."""
    started = time.perf_counter()
    if mode.startswith("layout"):
        pymupdf4llm.use_layout(True)
        parsed = document_layout.parse_document(doc, use_ocr=False, write_images=False, embed_images=False)
        keep = mode == "layout"
        chunks = parsed.to_markdown(header=keep, footer=keep, page_chunks=True, write_images=False,
                                    embed_images=False)
    else:
        pymupdf4llm.use_layout(False)
        headers = pymupdf_rag.TocHeaders(doc) if mode == "rag-toc" else None
        chunks = pymupdf_rag.to_markdown(doc, page_chunks=True, hdr_info=headers)
    seconds = time.perf_counter() - started
    pages = [""] * doc.page_count
    for chunk in chunks:
        meta = chunk["metadata"]  # 1-based: "page_number" on the layout path, "page" on the older one
        pages[meta.get("page_number", meta.get("page", 0)) - 1] = chunk["text"]
    return pages, seconds


def measure(path: Path, out: Path, modes: list[str]) -> list[str]:
    doc = pymupdf.open(path)
    outline = [(level, title) for level, title, page in doc.get_toc(simple=True) if page > 0]
    heads = _running(out / path.name / "pages", doc.page_count)
    rows = []
    for mode in modes:
        markdown, seconds = _markdown(doc, mode)
        headings = {(_plain(line), len(line) - len(line.lstrip("#")))
                    for md in markdown for line in md.splitlines() if re.match(r"#{1,6} ", line)}
        at_level = sum(1 for level, title in outline
                       if any(_reads_as(k, _key(title)) and lv == min(level, 6) for k, lv in headings))
        anywhere = sum(1 for _, title in outline if any(_reads_as(k, _key(title)) for k, _ in headings))
        written = sum(1 for md in markdown for line in md.splitlines() if re.match(r"#{1,6} ", line))
        left = sum(1 for md, running in zip(markdown, heads, strict=True)
                   if running and _shows(md, running))
        with_heads = sum(1 for running in heads if running)
        rows.append(f"{path.name[:40]:40} {mode:11} {doc.page_count:5} {len(outline):7} {at_level:5} {anywhere:5} "
                    f"{written:6} {with_heads:7} {left:5} {seconds:8.2f}")
    doc.close()
    return rows


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    folder = Path(sys.argv[2]) if len(sys.argv) > 2 else FOLDER
    modes = ["layout", "layout-nohf", "rag", "rag-toc"]
    print(f"pymupdf4llm {pymupdf4llm.__version__}, PyMuPDF {pymupdf.VersionBind}")
    print(f"{'file':40} {'mode':11} {'pages':>5} {'outline':>7} {'level':>5} {'any':>5} {'#lines':>6} "
          f"{'running':>7} {'left':>5} {'seconds':>8}")
    for path in sorted(folder.glob("*.pdf")):
        for row in measure(path, out, modes):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
