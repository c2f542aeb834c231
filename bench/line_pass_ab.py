"""The line pass (``pdf_engines._line_geometry``) of another checkout against this one's, in the
pipeline's flow over bench-pdfs, in one process: each file is extracted with one side's pass and then
the other's (the order turned every round), and the CPU time inside the pass kept, per file the
fastest of ``RUNS`` each side. One process and alternating extractions, so the load on the shared
cores and the page caches' state weigh on both alike, which two processes run in turn do not
promise (issue 19).

    /work/bin/wtpy python bench/line_pass_ab.py /work/main/layers/papersift/python/papersift/pdf_engines.py

The other side is that file loaded as a module of its own: its ``_line_geometry`` with its own
helpers, handed the same pages.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CpuInside

from papersift import pdf_engines
from papersift.formats.pdf import extract_pages, page_count
from papersift.lexicon import lexicon
from papersift.settings import Settings

FOLDER = Path(__file__).resolve().parents[2] / "shared" / "bench-pdfs" / "files"
#: each side is timed this many times a file and the fastest kept
RUNS = 5
_INSIDE = CpuInside()


def _other(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("other_pdf_engines", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    sides = {"other": _INSIDE.wrap(_other(Path(sys.argv[1]))._line_geometry),
             "this": _INSIDE.wrap(pdf_engines._line_geometry)}
    lexicon()
    files = sorted(FOLDER.glob("*.pdf"))
    data = [path.read_bytes() for path in files]
    best = {name: [float("inf")] * len(files) for name in sides}
    for run in range(RUNS):
        order = list(sides) if run % 2 == 0 else list(sides)[::-1]
        for at, pdf in enumerate(data):
            for name in order:
                pdf_engines._line_geometry = sides[name]  # what PdfHandle.line_geometry calls
                _INSIDE.seconds = 0.0
                settings = Settings(ocr_mode="off")
                extract_pages(pdf, settings, 1, page_count(pdf, settings))
                best[name][at] = min(best[name][at], _INSIDE.seconds)
    for name, times in best.items():
        print(f"{name:5} line pass {sum(times) * 1000:6.1f} ms: "
              + ", ".join(f"{path.name[:12]} {t * 1000:.1f}" for path, t in zip(files, times, strict=True)))
    print(f"this / other {sum(best['this']) / sum(best['other']):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
