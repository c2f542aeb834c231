"""Plain text, CSV/TSV and JSON: decode the bytes right, then shape them.

Most damage to text files happens at decoding: UTF-16 without a BOM read as bytes,
cp1252 read as Latin-2, a misleading charset declaration. ``decode_text`` is the one
place that decides, and other extractors (HTML, RTF fallbacks) reuse it.
"""

from __future__ import annotations

import codecs
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
from papersift.report import PageReport, PageStatus
from papersift.settings import Settings

#: rows kept as records/table/Markdown; the text always keeps every row
MAX_TABLE_ROWS = 10_000
#: bytes handed to the charset detector; it samples anyway, this bounds the worst case
_DETECT_BYTES = 256 * 1024
_DELIMITERS = (",", "\t", ";", "|")

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

#: single-byte Western/Central European code pages the detector cannot tell apart on short
#: text; cp1252 is by far the most common in the wild, so it wins a tie among them
_LATIN_FAMILY = frozenset(
    {"cp1250", "cp1252", "cp1257", "cp1258", "iso8859-1", "iso8859-2", "iso8859-10", "iso8859-13",
     "iso8859-14", "iso8859-15", "iso8859-16", "iso8859-4", "mac-latin2", "mac-iceland", "mac-roman", "hp-roman8"}
)


def _canonical(encoding: str) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        return encoding


def bom_encoding(data: bytes) -> tuple[str, int] | None:
    """(encoding, BOM length) when ``data`` starts with a Unicode byte-order mark."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    return None


def wide_encoding(data: bytes) -> str | None:
    """UTF-16/32 without a BOM, told by where the zero bytes fall (ASCII-heavy text)."""
    sample = data[:4096]
    n = len(sample) - len(sample) % 4
    if n < 8:
        n = len(sample) - len(sample) % 2
        if n < 4:
            return None
    sample = sample[:n]
    if n % 4 == 0:
        lanes = [sample[i::4].count(0) / (n // 4) for i in range(4)]
        if lanes[1] > 0.9 and lanes[2] > 0.9 and lanes[3] > 0.9 and lanes[0] < 0.1:
            return "utf-32-le"
        if lanes[0] > 0.9 and lanes[1] > 0.9 and lanes[2] > 0.9 and lanes[3] < 0.1:
            return "utf-32-be"
    even = sample[0::2].count(0) / (n // 2)
    odd = sample[1::2].count(0) / (n // 2)
    if odd > 0.4 and even < 0.05:
        return "utf-16-le"
    if even > 0.4 and odd < 0.05:
        return "utf-16-be"
    return None


def _cp1252_or_latin1(error: UnicodeError) -> tuple[str, int]:
    """cp1252 leaves five bytes undefined; map them as Latin-1 rather than losing them."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("papersift-latin1", _cp1252_or_latin1)


def guess_encoding(data: bytes) -> str:
    """The encoding of ``data`` without decoding it all (BOM, zero-byte pattern, UTF-8, detector)."""
    bom = bom_encoding(data)
    if bom:
        return bom[0]
    wide = wide_encoding(data)
    if wide:
        return wide
    sample = data[:_DETECT_BYTES]
    if sample.isascii():
        return "ascii" if len(sample) == len(data) else "utf-8"
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        # a multi-byte sequence cut at the end of the sample is still UTF-8
        if len(sample) < len(data) and exc.start >= len(sample) - 3:
            return "utf-8"
    if sum(1 for byte in sample if byte > 0x7F) < 4:
        # a byte or three is too little evidence for a detector (it picks DOS Cyrillic for one
        # euro sign); cp1252, the commonest legacy code page, is the safer reading
        try:
            sample.decode("cp1252")
            return "cp1252"
        except UnicodeDecodeError:
            pass
    import charset_normalizer  # slow to import; only needed for legacy code pages

    matches = charset_normalizer.from_bytes(sample)
    best = matches.best()
    if best is None:
        return "cp1252"
    chosen = _canonical(best.encoding)
    if chosen in _LATIN_FAMILY and chosen != "cp1252":
        for match in matches:
            if (
                _canonical(match.encoding) == "cp1252"
                and match.chaos <= best.chaos + 0.01
                and match.coherence >= best.coherence - 0.1
            ):
                return "cp1252"
    return chosen


def decode_text(data: bytes) -> tuple[str, str]:
    """Bytes -> (text, encoding name). Never raises; undecodable bytes become U+FFFD."""
    encoding = guess_encoding(data)
    bom = bom_encoding(data)
    body = data[bom[1] :] if bom else data
    if encoding == "cp1252":
        return body.decode("cp1252", errors="papersift-latin1"), encoding
    try:
        return body.decode(encoding, errors="replace"), encoding
    except LookupError:
        return body.decode("cp1252", errors="papersift-latin1"), "cp1252"


def detect_delimiter(text: str, max_lines: int = 50) -> tuple[str, int] | None:
    """(delimiter, lines agreeing) when ``text`` reads as a delimited table.

    A delimiter counts when csv parsing with it yields the same number (>= 2) of fields
    on nearly every line; prose has commas too, but not the same count on each line.
    """
    lines = [line for line in text.splitlines()[:max_lines] if line.strip()]
    if not lines:
        return None
    # the last line of a prefix may be cut; judge it only if it is the only one
    sample = "\n".join(lines)
    best: tuple[str, int] | None = None
    for delimiter in _DELIMITERS:
        if delimiter not in sample:
            continue
        try:
            widths = [len(row) for row in csv.reader(io.StringIO(sample), delimiter=delimiter)]
        except csv.Error:
            continue
        if not widths:
            continue
        width, agreeing = Counter(widths).most_common(1)[0]
        if width < 2 or agreeing < max(1, int(0.9 * len(widths))):
            continue
        if best is None or agreeing > best[1]:
            best = (delimiter, agreeing)
    return best


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
