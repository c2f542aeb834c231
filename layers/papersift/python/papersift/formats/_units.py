"""Building a PageContent for a whole-document unit (a chapter, a sheet, a slide), so
every extractor of structured formats reports its text the same way."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from papersift.content import PageContent, Table
from papersift.quality import assess_text
from papersift.report import TRUNCATED_SIGNAL, PageReport, PageStatus


def text_unit(
    number: int,
    text: str,
    engine: str,
    started: float,
    *,
    label: str = "",
    tables: Sequence[Table] = (),
    records: Sequence[dict[str, Any]] = (),
    markdown: str | None = None,
    truncated: str = "",
    truncated_code: str = "",
) -> PageContent:
    """A unit whose text came from the file's own structure: trusted unless it looks broken, or
    ``truncated`` says why some of its text is not there (then it is never clean, whatever it reads).

    ``started`` is a ``time.perf_counter()`` reading taken before the work on this unit.
    """
    verdict = assess_text(text)
    status = PageStatus.CORRUPT_UNRECOVERABLE if verdict.corrupt else PageStatus.CLEAN
    stripped = text.strip()
    reason = verdict.reason if stripped else "the unit holds no text"
    signals = list(verdict.signals)
    if truncated:
        status = PageStatus.TRUNCATED
        reason = f"{truncated}; {reason}"
        signals += [TRUNCATED_SIGNAL, truncated_code or "limit_exceeded"]
    report = PageReport(
        number=number,
        status=str(status),
        engine=engine,
        char_count=len(stripped),
        confidence=round(verdict.score if verdict.suspect else max(verdict.confidence, verdict.score), 3)
        if stripped
        else 1.0,
        reason=reason,
        seconds=round(time.perf_counter() - started, 4),
        signals=signals,
        language=verdict.language,
        tables=len(tables),
    )
    return PageContent(
        number=number,
        text=text,
        report=report,
        tables=list(tables),
        markdown=markdown,
        records=list(records),
        label=label,
    )
