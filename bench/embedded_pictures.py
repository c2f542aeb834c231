"""Embedded-picture OCR (issue 18): the pictures papersift finds inside office files, e-books and
web pages, how many it reads and how long each reading takes, how many it sets aside as too small
or as repeats; and what looking for pictures costs the text layer of files that hold none.

Run from the repo root:

    .venv/bin/python bench/embedded_pictures.py [--corpus ../shared/corpus] [--repeat 3] [--calls 100]
                                                [--baseline-src DIR] [--no-ocr-run]

1. OCR run: every office, e-book and HTML file of the corpus (``files/`` by extension: docx, pptx,
   xlsx, xlsm, odt, ods, odp, epub, html), and three built in code (a pasted two-line scan in a
   DOCX; a DOCX of 1 scan, 5,000 distinct 8 x 8 pictures and 4,999 copies of the scan; a slide
   deck with a screenshot), through ``pipeline.process_document`` in this process with
   ``ocr_mode="local-only"`` and Tesseract: per file the pictures listed by status, the OCR
   seconds per picture read (the attempts' own seconds) and the whole file's wall time.
2. Text layer: ``formats.extract_units`` on the same corpus files (OCR is not run: the text
   layer, with the picture search and choice included) in a fresh process per round, CPU time
   (``time.thread_time``: a loaded machine's waits left out), the best of ``--calls`` calls in
   each of ``--repeat`` rounds per file; beside it, the CPU time spent in the picture search
   itself inside the best call (its functions timed in place), which no load can blur. With
   ``--baseline-src DIR`` (a checkout's
   ``layers/papersift/python`` without this issue, e.g. ``git archive main layers | tar -x -C
   /tmp/base`` plus the built lexicon, ``cp -r layers/papersift/python/papersift/data
   /tmp/base/layers/papersift/python/papersift/``: without it the text verdict takes a shorter
   path and the baseline reads faster than it does) the same rounds run against it, alternating,
   and the table gives the change.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OFFICE_SUFFIXES = (".docx", ".pptx", ".xlsx", ".xlsm", ".odt", ".ods", ".odp", ".epub", ".html")
STATUSES = ("read", "no_text", "failed", "skipped_small", "skipped_duplicate", "skipped_limit", "skipped_format")


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in (corpus / "files").iterdir() if p.suffix.lower() in OFFICE_SUFFIXES)


def built_files(folder: Path) -> list[Path]:
    """The inputs built in code (tests/picture_office_factory.py), written into ``folder``."""
    sys.path.insert(0, str(REPO / "tests"))
    from picture_office_factory import many_pictures_docx, pasted_scan_docx, slide_with_picture_pptx

    built = {"built__pasted-scan.docx": pasted_scan_docx(), "built__slide-screenshot.pptx": slide_with_picture_pptx(),
             "built__10000-pictures.docx": many_pictures_docx(tiny=5000, copies=4999)}
    for name, data in built.items():
        (folder / name).write_bytes(data)
    return [folder / name for name in built]


def ocr_run(paths: list[Path]) -> list[dict[str, Any]]:
    from papersift.pipeline import process_document
    from papersift.settings import Settings
    from papersift.steps.contracts import RunInput
    from papersift.steps.ocr import default_engines
    from papersift.storage import LocalDirStore

    settings = Settings(ocr_mode="local-only")
    engines = default_engines(None, page_seconds=settings.ocr_page_seconds)
    rows = []
    for path in paths:
        with tempfile.TemporaryDirectory() as tmp:
            store = LocalDirStore(Path(tmp))
            key = f"incoming/{path.name}"
            store.put(key, path.read_bytes(), "application/octet-stream")
            document = RunInput.for_object("bench", key, version_id=None, etag=None)
            started = time.perf_counter()
            report = process_document(store, document, settings, engines=engines, page_files=False)
            wall = time.perf_counter() - started
        counts: Counter[str] = Counter()
        ocr_seconds = 0.0
        for page in report.pages:
            counts.update(record.status for record in page.pictures)
            counts.update(page.pictures_not_listed)
            ocr_seconds += sum(a.seconds for a in page.attempts if a.engine.startswith(("tesseract", "textract")))
        read = counts["read"] + counts["no_text"]
        rows.append({"file": path.name, "status": report.status, "counts": dict(counts), "wall": wall,
                     "ocr_per_picture": ocr_seconds / read if read else None})
    return rows


#: the picture search and choice this issue adds to the text layer, as (module, attribute): timed
#: inside the same calls, so their share of the text layer's time does not depend on the machine's load
PICTURE_SEARCH = (("papersift.formats._ooxml", "Package.pictures"), ("papersift.formats.markup", "_picture_sources"),
                  ("papersift.formats.markup", "data_uri_pictures"), ("papersift.formats.epub", "data_uri_pictures"),
                  ("papersift.formats.epub", "read_pictures"), ("papersift.formats.opendocument", "_pictures"),
                  ("papersift.formats._pictures", "choose_pictures"))


def _instrument(spent: list[float]) -> None:
    """Add the CPU seconds of every PICTURE_SEARCH call to ``spent[0]`` (missing ones: a baseline)."""
    import importlib

    def timed(function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.thread_time() - started
        return wrapper

    for module_name, attribute in PICTURE_SEARCH:
        try:
            owner: Any = importlib.import_module(module_name)
        except ImportError:
            continue
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is not None and hasattr(owner, name):
            setattr(owner, name, timed(getattr(owner, name)))


def text_layer_times(paths: list[Path], calls: int) -> dict[str, list[float]]:
    """CPU seconds of ``extract_units`` per file in this process (one round: the best of ``calls``
    calls after a warm one), and the CPU seconds of the picture search inside that call."""
    from papersift.errors import PapersiftError
    from papersift.formats import extract_units
    from papersift.settings import Settings
    from papersift.sniff import sniff

    settings = Settings()
    spent = [0.0]
    _instrument(spent)
    times = {}
    for path in paths:
        data = path.read_bytes()
        file_type = sniff(data, path.name)
        best, search = float("inf"), 0.0
        for call in range(calls + 1):  # the first warms imports and the first parse; a refusal is timed too
            spent[0] = 0.0
            started = time.thread_time()
            with contextlib.suppress(PapersiftError):
                extract_units(data, file_type, settings)
            seconds = time.thread_time() - started
            if call and seconds < best:
                best, search = seconds, spent[0]
        times[path.name] = [best, search]
    return times


def rounds(paths: list[Path], repeat: int, calls: int, sources: dict[str, str]
           ) -> dict[str, dict[str, list[float]]]:
    """Best over ``repeat`` fresh processes per file, per source tree, the trees alternating."""
    best: dict[str, dict[str, list[float]]] = {label: {} for label in sources}
    for _ in range(repeat):
        for label, src in sources.items():
            env = {**os.environ, "PYTHONPATH": src, "OMP_THREAD_LIMIT": "1"}
            out = subprocess.run([sys.executable, __file__, "--calls", str(calls), "--text-layer-json",
                                  *map(str, paths)], env=env,
                                 check=True, capture_output=True, text=True).stdout
            for name, measured in json.loads(out).items():
                if measured[0] < best[label].get(name, [float("inf")])[0]:
                    best[label][name] = measured
    return best


def pictures_in(paths: list[Path]) -> list[int]:
    """How many pictures each file's units show (listed in their reports), OCR not run."""
    from papersift.errors import PapersiftError
    from papersift.formats import extract_units
    from papersift.settings import Settings
    from papersift.sniff import sniff

    counts = []
    for path in paths:
        data = path.read_bytes()
        try:
            units = extract_units(data, sniff(data, path.name), Settings())
        except PapersiftError:
            units = []
        counts.append(sum(len(u.report.pictures) + sum(u.report.pictures_not_listed.values()) for u in units))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--baseline-src", type=Path)
    parser.add_argument("--no-ocr-run", action="store_true")
    parser.add_argument("--text-layer-json", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.text_layer_json is not None:
        print(json.dumps(text_layer_times([Path(p) for p in args.text_layer_json], args.calls)))
        return
    files = corpus_files(args.corpus)
    if not args.no_ocr_run:
        with tempfile.TemporaryDirectory() as tmp:
            rows = ocr_run([*files, *built_files(Path(tmp))])
        print("## OCR of embedded pictures (local-only, Tesseract)\n")
        print("| file | status | " + " | ".join(STATUSES) + " | OCR s per picture read | wall s |")
        print("|---|---|" + "---:|" * (len(STATUSES) + 2))
        for row in rows:
            per = f"{row['ocr_per_picture']:.2f}" if row["ocr_per_picture"] is not None else "-"
            counts = " | ".join(str(row["counts"].get(s, 0)) for s in STATUSES)
            print(f"| {row['file']} | {row['status']} | {counts} | {per} | {row['wall']:.2f} |")
    sources = {"this tree": str(REPO / "layers" / "papersift" / "python")}
    if args.baseline_src is not None:
        sources["baseline"] = str(args.baseline_src)
    best = rounds(files, args.repeat, args.calls, sources)
    print(f"\n## Text layer (extract_units), CPU ms, best of {args.repeat} processes x {args.calls} calls\n")
    header = " | ".join(sources)
    print(f"| file | pictures | {header} |" + (" change |" if len(sources) > 1 else "")
          + " picture search ms | its share |")
    print("|---|---:|" + "---:|" * (len(sources) + (len(sources) > 1) + 2))
    for path, held in zip(files, pictures_in(files), strict=True):
        values = [best[label][path.name][0] * 1000 for label in sources]
        search = best["this tree"][path.name][1] * 1000
        change = f" {values[0] / values[1] - 1:+.1%} |" if len(values) > 1 else ""
        print(f"| {path.name} | {held} | " + " | ".join(f"{v:.3f}" for v in values) + " |" + change
              + f" {search:.3f} | {search / values[0]:.1%} |")


if __name__ == "__main__":
    main()
