"""Plain-text bytes: their encoding, and whether they read as a delimited table.

Shared by the detector and the extractors: ``sniff`` tells text from CSV/TSV/JSON with the same
BOM, zero-byte and delimiter rules ``formats.text`` then decodes and splits with, so a file is
typed and read alike. A leaf module (standard library only; the charset detector is imported
when a legacy code page needs it), so ``sniff`` stays the bottom of the graph.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections import Counter
from collections.abc import Iterator

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


#: characters whitespace_pieces cuts a long text into, about
_COLLAPSE_PIECE = 1024 * 1024
#: where whitespace_pieces cuts: whitespace str.split() splits on, but not the thin space a number
#: token may hold (1\u2009000: quality's _NUMBER_TOKEN) nor any other that joins a token
_SPACE = re.compile("[\t\n\x0b\x0c\r \u3000]")


def whitespace_pieces(text: str, size: int | None = None) -> Iterator[str]:
    """``text`` in consecutive pieces of about ``size`` characters, each cut just before a
    whitespace character (which belongs to no piece), so no word or run of letters is split: a
    scan of each piece finds what a scan of the whole text finds, in a piece's worth of memory.
    A text of at most ``size`` characters (by default about a megabyte) is the one piece, uncopied."""
    size = size or _COLLAPSE_PIECE
    if len(text) <= size:
        yield text
        return
    start = 0
    while start < len(text):
        cut = _SPACE.search(text, min(start + size, len(text)))
        end = cut.start() if cut else len(text)
        yield text[start:end]
        start = end + 1


def collapse_whitespace(text: str) -> str:
    """``" ".join(text.split())`` read in pieces of about a megabyte cut at whitespace: the words
    of a 100 MB line are never all separate strings at once (17 million of them took 1.2 GB),
    and the result is the same string."""
    if len(text) <= _COLLAPSE_PIECE:
        return " ".join(text.split())
    return " ".join(filter(None, (" ".join(piece.split()) for piece in whitespace_pieces(text))))


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
    return _one_script_utf16(sample)


#: share of a UTF-16 sample's high bytes that its few commonest values must cover ...
_SCRIPT_LANE_SHARE = 0.95
#: ... counting this many values: a script's block and U+00xx (spaces, digits, punctuation)
_SCRIPT_LANE_VALUES = 3
#: decoded text may hold at most this share of control characters (binary decodes to many)
_WIDE_CONTROL_SHARE = 0.01
#: the share of a sample's bytes below 0x20 (whitespace aside) from which it cannot be 8-bit text
_EIGHT_BIT_CONTROL_SHARE = 0.2
_TEXT_CONTROLS = frozenset(b"\t\n\r\f")


def _one_script_utf16(sample: bytes) -> str | None:
    """UTF-16 of a non-Latin alphabet (Cyrillic, Greek, Hebrew, Arabic, Thai...) without a BOM:
    few zero bytes, but every high byte one of a few values (the script's block, and 0x00 for
    spaces and punctuation), the low bytes spread, and the decoded text free of control
    characters but holding spaces or line breaks. An 8-bit text has no control bytes (a tab-
    separated table's lanes can be as narrow); 16-bit binary decodes to control characters."""
    units = len(sample) // 2
    if units < 8:
        return None
    # read as 8-bit text it would be full of control bytes (the script's block): no 8-bit text is
    if sum(1 for byte in sample if byte < 0x20 and byte not in _TEXT_CONTROLS) < _EIGHT_BIT_CONTROL_SHARE * len(sample):
        return None
    for encoding, high in (("utf-16-le", sample[1::2]), ("utf-16-be", sample[0::2])):
        low = sample[0::2] if encoding == "utf-16-le" else sample[1::2]
        if not (_concentrated(high) and not _concentrated(low)):
            continue
        text = sample.decode(encoding, errors="replace")
        controls = sum(1 for ch in text if (ord(ch) < 0x20 and ch not in "\t\n\r\f") or ch == "\ufffd")
        spaces = sum(1 for ch in text if ch.isspace())
        if controls <= _WIDE_CONTROL_SHARE * len(text) and spaces and any(ch.isalpha() for ch in text):
            return encoding
    return None


def _concentrated(lane: bytes) -> bool:
    common = Counter(lane).most_common(_SCRIPT_LANE_VALUES)
    return sum(count for _, count in common) >= _SCRIPT_LANE_SHARE * len(lane)


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
