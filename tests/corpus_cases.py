"""Manifest rows and the corpus scorer for phrase tests; empty when the corpus is absent,
so parametrized corpus tests collect as skipped."""

from __future__ import annotations

import csv
import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

CORPUS = (Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus").resolve()
#: ten real multi-page native PDFs (../shared/bench-pdfs, see its README)
BENCH_PDFS = (Path(__file__).resolve().parents[1] / ".." / "shared" / "bench-pdfs").resolve()
#: the page truth of bench-pdfs beyond "a clean native page", for its tests and bench/pdf_throughput.py:
#: the htmldoc file's broken layer (Type 1 fonts whose /Differences name glyphs /g18, /g152 ...,
#: no ToUnicode: README) ...
BENCH_BROKEN_PAGES = {"mo__TAMReview.pdf": frozenset(range(2, 23))}
#: ... and pages whose text is only in a picture (looked at: the book's cover, a comic strip)
BENCH_PICTURE_PAGES = {"mo__freeculture.pdf": frozenset({1, 255})}


def corpus_present() -> bool:
    return (CORPUS / "MANIFEST.tsv").is_file()


def manifest_rows(predicate: object = None, manifest: str = "MANIFEST.tsv") -> list[dict[str, str]]:
    """Manifest rows (all columns verbatim) for which ``predicate(row)`` holds; ``manifest``:
    MANIFEST.tsv or MANIFEST-trust.tsv (real broken text layers, README)."""
    if not (CORPUS / manifest).is_file():
        return []
    with (CORPUS / manifest).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [r for r in rows if predicate is None or predicate(r)]  # type: ignore[operator]


@cache
def scorer() -> ModuleType:
    """The corpus's own scorer, so that a phrase counts as found exactly as the corpus counts it;
    where ../shared/corpus is absent, the tests that judge phrases by it skip, saying so."""
    if not (CORPUS / "score.py").is_file():
        pytest.skip(f"{CORPUS / 'score.py'} is absent: phrases are judged by the corpus scorer")
    spec = importlib.util.spec_from_file_location("corpus_score", CORPUS / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def phrase_ok(expected: str, text: str) -> bool:
    return bool(scorer().phrase_ok(expected, text))
