"""Plain text, CSV/TSV and JSON: decode the bytes right, then shape them.

Most damage to text files happens at decoding: UTF-16 without a BOM read as bytes,
cp1252 read as Latin-2, a misleading charset declaration. ``decode_text`` is the one
place that decides, and other extractors (HTML, RTF fallbacks) reuse it; it lives in
``papersift.plaintext`` with the delimiter detection, because ``sniff`` types text by the same
rules and must not import a format extractor.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from collections import Counter
from typing import Any

from papersift.content import PageContent, Table
from papersift.errors import CorruptInputError, NestingTooDeepError
from papersift.formats._units import text_unit
from papersift.plaintext import decode_text, detect_delimiter
from papersift.report import PageReport, PageStatus
from papersift.settings import Settings

#: rows kept as records/table/Markdown; the text always keeps every row
MAX_TABLE_ROWS = 10_000


def _page(text: str, encoding: str, started: float, **extra: Any) -> PageContent:
    signals = ["replacement_chars"] if "\ufffd" in text else []
    report = PageReport(
        number=1,
        status=PageStatus.CLEAN.value,
        engine=f"text:{encoding}",
        char_count=len(text),
        confidence=1.0,
        reason=f"decoded as {encoding}",
        seconds=round(time.perf_counter() - started, 4),
        signals=signals + extra.pop("signals", []),
        tables=len(extra.get("tables", [])),
    )
    return PageContent(number=1, text=text, report=report, **extra)


def extract_plain_text(data: bytes, settings: Settings) -> list[PageContent]:
    """Prose gets the same verdict as any other unit: its language and signals are reported,
    and text that decodes to garbage is not called clean."""
    started = time.perf_counter()
    text, encoding = decode_text(data)
    unit = text_unit(1, text, f"text:{encoding}", started)
    unit.report.reason = f"decoded as {encoding}; {unit.report.reason}"
    if "\ufffd" in text and "replacement_chars" not in unit.report.signals:
        unit.report.signals.append("replacement_chars")
    return [unit]


def _header_keys(header: list[str]) -> list[str]:
    """Unique, non-empty record keys from a header row."""
    keys: list[str] = []
    seen: Counter[str] = Counter()
    for i, cell in enumerate(header, start=1):
        key = " ".join(str(cell).split()) or f"column_{i}"
        seen[key] += 1
        keys.append(key if seen[key] == 1 else f"{key}_{seen[key]}")
    return keys


def rows_to_records(rows: list[list[Any]]) -> list[dict[str, Any]]:
    """One dict per data row keyed by the first row; short rows leave keys out, long rows get column_N."""
    if len(rows) < 2:
        return []
    keys = _header_keys([("" if c is None else str(c)) for c in rows[0]])
    records = []
    for row in rows[1:]:
        if not any(c not in (None, "") for c in row):
            continue
        record: dict[str, Any] = {}
        for i, value in enumerate(row):
            key = keys[i] if i < len(keys) else f"column_{i + 1}"
            record[key] = value
        records.append(record)
    return records


def extract_delimited(data: bytes, settings: Settings) -> list[PageContent]:
    """CSV/TSV: the decoded text as is, plus the rows as a table and as records."""
    started = time.perf_counter()
    text, encoding = decode_text(data)
    found = detect_delimiter(text)
    delimiter = found[0] if found else ("\t" if "\t" in text.split("\n", 1)[0] else ",")
    rows: list[list[str]] = []
    total = 0
    try:
        for row in csv.reader(io.StringIO(text), delimiter=delimiter):
            if not any(cell.strip() for cell in row):
                continue
            total += 1
            if len(rows) <= MAX_TABLE_ROWS:  # header + MAX_TABLE_ROWS data rows
                rows.append(row)
    except csv.Error as exc:
        raise CorruptInputError(f"delimited text does not parse: {exc}") from exc
    signals: list[str] = []
    table = Table(rows=rows, index=0, header_rows=1)
    markdown = table.to_markdown()
    if total > len(rows):
        signals.append("table_truncated")
        markdown += f"\n\n_(table truncated: first {len(rows) - 1} of {total - 1} data rows)_"
    name = "tab" if delimiter == "\t" else repr(delimiter)
    page = _page(text, encoding, started, tables=[table] if rows else [], records=rows_to_records(rows),
                 markdown=markdown, signals=signals)
    page.report.reason += f", {name}-delimited, {total} rows"
    return [page]


def extract_json(data: bytes, settings: Settings) -> list[PageContent]:
    """JSON (or JSON Lines) pretty-printed; a list of objects also becomes records.

    Invalid JSON keeps its raw text: a truncated export is still worth indexing.
    """
    started = time.perf_counter()
    raw, encoding = decode_text(data)
    value: Any
    try:
        value = json.loads(raw)
    except RecursionError:
        raise NestingTooDeepError(
            f"the JSON nests deeper than Python's parser goes (about {sys.getrecursionlimit()} levels of arrays "
            "or objects): not read") from None
    except json.JSONDecodeError as exc:
        try:
            value = [json.loads(line) for line in raw.splitlines() if line.strip()]
        except json.JSONDecodeError:
            page = _page(raw, encoding, started, signals=["invalid_json"])
            page.report.reason += f"; not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}), kept as text"
            return [page]
    text = json.dumps(value, indent=2, ensure_ascii=False)
    records: list[dict[str, Any]] = []
    signals: list[str] = []
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        records = value[:MAX_TABLE_ROWS]
        if len(value) > MAX_TABLE_ROWS:
            signals.append("records_truncated")
    return [_page(text, encoding, started, records=records, signals=signals)]
