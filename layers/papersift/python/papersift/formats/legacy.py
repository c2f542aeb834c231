"""Legacy binary Office files (Word 97-2003 .doc, Excel .xls, PowerPoint .ppt).

.xls is read in process with xlrd 2 (which reads exactly this format and nothing else).
.ppt is read in process from its record stream (olefile). No maintained Python reader
exists for .doc, so it goes through the Debian tools antiword (with catdoc as fallback);
when neither is installed the file is reported unsupported with the tools named.
RC4/CryptoAPI-encrypted files are decrypted first with the configured passwords.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import olefile

from papersift.content import PageContent, Table
from papersift.decryption import decrypt_office, is_encrypted_office
from papersift.errors import CorruptInputError, EncryptedInputError, UnsupportedFormatError
from papersift.formats._units import text_unit
from papersift.formats.text import MAX_TABLE_ROWS, rows_to_records
from papersift.settings import Settings
from papersift.tempfolders import temp_prefix

#: a converter that runs longer than this is stuck on a hostile file
TOOL_TIMEOUT_SECONDS = 120


def _decrypted(data: bytes, settings: Settings) -> tuple[bytes, bool]:
    if not is_encrypted_office(data):
        return data, False
    return decrypt_office(data, settings.passwords), True


# -- .xls -------------------------------------------------------------------------------


def _xls_value(cell: Any, datemode: int) -> Any:
    import xlrd

    kind = cell.ctype
    if kind == xlrd.XL_CELL_NUMBER:
        number = float(cell.value)
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if kind == xlrd.XL_CELL_DATE:
        try:
            moment = xlrd.xldate.xldate_as_datetime(cell.value, datemode)
        except (xlrd.xldate.XLDateError, OverflowError, ValueError):
            return cell.value
        return moment.date().isoformat() if moment.time() == dt.time() else moment.isoformat()
    if kind == xlrd.XL_CELL_BOOLEAN:
        return bool(cell.value)
    if kind == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERROR")
    if kind in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return None
    return str(cell.value)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return " ".join(str(value).split())


def extract_xls(data: bytes, settings: Settings) -> list[PageContent]:
    """One unit per worksheet with its rows as a table and as records, like .xlsx."""
    import xlrd

    started = time.perf_counter()
    data, was_encrypted = _decrypted(data, settings)
    try:
        book = xlrd.open_workbook(file_contents=data, on_demand=True, logfile=io.StringIO())
    except xlrd.biffh.XLRDError as exc:
        if "encrypt" in str(exc).lower():
            raise EncryptedInputError(f"Excel workbook is encrypted: {exc}") from exc
        raise CorruptInputError(f"Excel 97-2003 workbook cannot be read: {exc}") from exc
    except (AssertionError, IndexError, KeyError, ValueError, OSError, EOFError) as exc:
        raise CorruptInputError(f"Excel 97-2003 workbook is damaged: {exc}") from exc
    engine = "msoffcrypto+xlrd" if was_encrypted else "xlrd"
    units: list[PageContent] = []
    try:
        for number, name in enumerate(book.sheet_names(), start=1):
            try:
                sheet = book.sheet_by_name(name)
            except (AssertionError, IndexError, KeyError, ValueError, xlrd.biffh.XLRDError) as exc:
                raise CorruptInputError(f"Excel sheet {name!r} is damaged: {exc}") from exc
            rows = [[_xls_value(cell, book.datemode) for cell in sheet.row(r)] for r in range(sheet.nrows)]
            kept = [_trim(row) for row in rows if any(v not in (None, "") for v in row)]
            # a sheet laid out from column B or C: drop the empty leading columns
            offset = min((next(i for i, v in enumerate(row) if v not in (None, "")) for row in kept), default=0)
            kept = [row[offset:] for row in kept]
            text = "\n".join("\t".join(_text(v) for v in row) for row in kept)
            table_rows = [[_text(v) for v in row] for row in kept[: MAX_TABLE_ROWS + 1]]
            tables = [Table(rows=table_rows, index=0, header_rows=1, title=name)] if table_rows else []
            markdown = "\n\n".join([f"## {name}", *(t.to_markdown() for t in tables)])
            unit = text_unit(
                number,
                text,
                engine,
                started,
                label=name,
                tables=tables,
                records=rows_to_records(kept[: MAX_TABLE_ROWS + 1]),
                markdown=markdown,
            )
            if len(kept) > MAX_TABLE_ROWS + 1:
                unit.report.signals.append("table_truncated")
            units.append(unit)
            book.unload_sheet(name)
            started = time.perf_counter()
    finally:
        book.release_resources()
    if not units:
        raise CorruptInputError("Excel 97-2003 workbook has no worksheets")
    return units


def _trim(row: list[Any]) -> list[Any]:
    while row and row[-1] in (None, ""):
        row = row[:-1]
    return row


# -- .doc and .ppt via Debian tools -----------------------------------------------------


def _run_tool(argv: Sequence[str], data: bytes, suffix: str) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory(prefix=temp_prefix("legacy")) as tmp:
        path = os.path.join(tmp, f"input{suffix}")
        with open(path, "wb") as handle:
            handle.write(data)
        try:
            done = subprocess.run(
                [*argv, path], capture_output=True, timeout=TOOL_TIMEOUT_SECONDS, check=False, cwd=tmp
            )
        except subprocess.TimeoutExpired as exc:
            raise CorruptInputError(f"{argv[0]} did not finish within {TOOL_TIMEOUT_SECONDS} s") from exc
    stdout = done.stdout.decode("utf-8", errors="replace")
    stderr = done.stderr.decode("utf-8", errors="replace").replace(path, "<input>").strip()
    return done.returncode, stdout, stderr


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def extract_doc(data: bytes, settings: Settings) -> list[PageContent]:
    """Word 97-2003 text via antiword, or catdoc when antiword cannot read the file."""
    started = time.perf_counter()
    data, was_encrypted = _decrypted(data, settings)
    prefix = "msoffcrypto+" if was_encrypted else ""
    tools = [
        ("antiword", ["antiword", "-m", "UTF-8.txt", "-w", "0"]),
        ("catdoc", ["catdoc", "-d", "utf-8", "-w"]),
    ]
    available = [(name, argv) for name, argv in tools if shutil.which(name)]
    if not available:
        raise UnsupportedFormatError("legacy .doc needs antiword or catdoc (Debian packages), neither is installed")
    failures: list[str] = []
    for name, argv in available:
        code, stdout, stderr = _run_tool(argv, data, ".doc")
        if code == 0 and stdout.strip():
            return [text_unit(1, _tidy(stdout), prefix + name, started)]
        if "encrypt" in (stderr + stdout).lower():
            raise EncryptedInputError(f"Word document is encrypted ({name}: {stderr or 'encrypted'})")
        if code == 0:
            return [text_unit(1, "", prefix + name, started)]
        failures.append(f"{name}: {stderr.splitlines()[-1] if stderr else f'exit {code}'}")
    raise CorruptInputError("Word 97-2003 document could not be read: " + "; ".join(failures))


def extract_ppt(data: bytes, settings: Settings) -> list[PageContent]:
    """PowerPoint 97-2003: one unit per slide, read in process from the record stream."""
    started = time.perf_counter()
    data, was_encrypted = _decrypted(data, settings)
    engine = ("msoffcrypto+" if was_encrypted else "") + "ppt-records"
    slides = ppt_slide_texts(data)
    units = []
    for number, text in enumerate(slides or [""], start=1):
        units.append(text_unit(number, text, engine, started, label=f"slide {number}" if len(slides) > 1 else ""))
        started = time.perf_counter()
    return units


# PowerPoint binary records ([MS-PPT] 2.3): an 8-byte header (version/instance, type, length);
# version 0xF marks a container whose body is more records.
_PPT_SLIDE = 0x03EE
_PPT_NOTES = 0x03F0
_PPT_MAIN_MASTER = 0x03F8
_PPT_SLIDE_LIST_WITH_TEXT = 0x0FF0
_PPT_SLIDE_PERSIST = 0x03F3
_PPT_TEXT_CHARS = 0x0FA0  # UTF-16LE
_PPT_TEXT_BYTES = 0x0FA8  # 8-bit, cp1252
_PPT_MAX_DEPTH = 32


def ppt_slide_texts(data: bytes) -> list[str]:
    """Text of each slide. PowerPoint keeps placeholder text in the slide list and text-box
    text in each slide's drawing; writers differ in which they use (LibreOffice puts all of
    it in the drawings, where catppt never looks), so both are read and merged per slide."""
    try:
        with olefile.OleFileIO(data) as ole:
            stream = ole.openstream("PowerPoint Document").read()
    except (OSError, ValueError) as exc:
        raise CorruptInputError(f"PowerPoint 97-2003 file could not be read: {exc}") from exc
    listed: list[list[str]] = []  # slide list, presentation order
    drawn: list[list[str]] = []  # slide drawings, stream order

    def walk(start: int, end: int, into: list[list[str]] | None, depth: int) -> None:
        pos = start
        while pos + 8 <= end and depth < _PPT_MAX_DEPTH:
            ver_instance, rec_type, length = struct.unpack_from("<HHI", stream, pos)
            body, stop = pos + 8, min(pos + 8 + length, end)
            if ver_instance & 0xF == 0xF:
                if rec_type == _PPT_SLIDE:
                    drawn.append([])
                    walk(body, stop, drawn, depth + 1)
                elif rec_type == _PPT_SLIDE_LIST_WITH_TEXT:
                    if ver_instance >> 4 == 0:  # instance 0: slides (1: masters, 2: notes)
                        walk(body, stop, listed, depth + 1)
                elif rec_type not in (_PPT_NOTES, _PPT_MAIN_MASTER):
                    walk(body, stop, into, depth + 1)
            elif rec_type == _PPT_SLIDE_PERSIST and into is listed:
                listed.append([])
            elif rec_type in (_PPT_TEXT_CHARS, _PPT_TEXT_BYTES) and into:
                codec = "utf-16-le" if rec_type == _PPT_TEXT_CHARS else "cp1252"
                text = stream[body:stop].decode(codec, errors="replace")
                into[-1].append(text.replace("\r", "\n").replace("\x0b", "\n").strip())
            pos = body + length

    walk(0, len(stream), None, 0)
    slides = []
    for index in range(max(len(listed), len(drawn))):
        parts = (listed[index] if index < len(listed) else []) + (drawn[index] if index < len(drawn) else [])
        slides.append("\n".join(dict.fromkeys(p for p in parts if p)))
    return slides
