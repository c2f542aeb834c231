"""What the per-page font summary (PageReport.font_summary, issue 17) costs: papersift's real PDF
path in process (count, then batches of page_batch_size, OCR off, as the workflow runs) over
../shared/bench-pdfs, with the
summary on and off (PdfHandle.font_uses answering nothing), rounds alternating, CPU time, best and
median of ``--repeat`` rounds after one warm-up of each; and, robust to other processes' noise, the
CPU time spent inside the summary itself (formats.pdf._font_summary, timed around each call) in the
rounds with it on, against those rounds' whole time.

    .venv/bin/python bench/font_summary_cost.py [--repeat 5] [--bench-pdfs DIR]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO

from papersift.content import PageContent
from papersift.formats import pdf
from papersift.pdf_engines import PdfHandle
from papersift.settings import Settings

SETTINGS = Settings(ocr_mode="off")


def read_bench_pdfs(directory: Path) -> list[bytes]:
    """The real native PDFs of ../shared/bench-pdfs, as MANIFEST.tsv lists them."""
    with (directory / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [(directory / "files" / row["file"]).read_bytes() for row in rows]


def papersift_pages(data: bytes) -> list[PageContent]:
    """Every page, the way the workflow runs: count, then batches of page_batch_size."""
    count = pdf.page_count(data, SETTINGS)
    out: list[PageContent] = []
    for first in range(1, count + 1, SETTINGS.page_batch_size):
        out += pdf.extract_pages(data, SETTINGS, first, min(first + SETTINGS.page_batch_size - 1, count))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--bench-pdfs", type=Path, default=REPO.parent / "shared" / "bench-pdfs")
    args = parser.parse_args(argv)
    docs = read_bench_pdfs(args.bench_pdfs)
    pages = sum(pdf.page_count(data, SETTINGS) for data in docs)
    on = PdfHandle.font_uses

    def off(self: PdfHandle, number: int) -> list:  # type: ignore[type-arg]
        return []

    inside = [0.0]
    summary_of = pdf._font_summary

    def timed(*args: object) -> object:
        started = time.process_time()
        try:
            return summary_of(*args)  # type: ignore[arg-type]
        finally:
            inside[0] += time.process_time() - started

    pdf._font_summary = timed  # type: ignore[assignment]

    def run(summary: bool) -> float:
        PdfHandle.font_uses = on if summary else off  # type: ignore[method-assign]
        started = time.process_time()
        fonts = sum(len(page.report.font_summary) for doc in docs for page in papersift_pages(doc))
        assert (fonts > 0) == summary
        return time.process_time() - started

    run(True), run(False)  # warm-up
    inside[0] = 0.0
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeat):
        for summary in (False, True):
            times[summary].append(run(summary))
    best_off, best_on = min(times[False]), min(times[True])
    med_off, med_on = statistics.median(times[False]), statistics.median(times[True])
    print(f"bench-pdfs: {len(docs)} files, {pages} pages, {args.repeat} rounds, CPU s")
    print("| summary | best CPU s | median CPU s |")
    print("|---|---:|---:|")
    print(f"| off | {best_off:.3f} | {med_off:.3f} |")
    print(f"| on | {best_on:.3f} | {med_on:.3f} |")
    own = inside[0] / args.repeat
    print(f"inside the summary, with it on: {own:.4f} s a round ({own / med_on:.1%} of the median round, "
          f"{own / pages * 1e6:.0f} us a page)")
    print(f"extra: best {best_on - best_off:+.3f} s ({(best_on / best_off - 1):+.1%}), "
          f"median {med_on - med_off:+.3f} s ({(med_on / med_off - 1):+.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
