"""The PDF engines behind the recovery ladder, each opened at most once per batch.

pdfium (pypdfium2) is fast and usually right, so it is opened eagerly; pypdf, pdfplumber
(pdfminer) and poppler's ``pdftotext`` are slower and are only opened when a page needs
them. Each engine decodes fonts differently, which is why a page pdfium garbles is often
readable by another one.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from papersift.errors import CorruptInputError, EmptyInputError, EncryptedInputError, EngineError
from papersift.quality import PageLayout

#: the ladder, in the order the engines are tried
ENGINE_ORDER = ("pdfium", "pypdf", "pdfplumber", "pdftotext")

#: a page with this many vector paths and no text may draw its text as outlines
VECTOR_GLYPH_PATHS = 100
#: form XObjects nest; deeper than this is not worth walking for a layout probe
MAX_FORM_DEPTH = 4
PDFTOTEXT_TIMEOUT_SECONDS = 60

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_SOFT_HYPHEN_MARKS = str.maketrans({"\x02": None, "\ufffe": None, "\f": "\n"})


def password_candidates(passwords: tuple[str, ...]) -> list[bytes]:
    """Byte forms to try: "" first, then each password as UTF-8 and as Latin-1.

    Old (RC4/AES-128) PDFs compare raw bytes, so a password typed as 'garçon' may be
    expected in Latin-1; AES-256 ones expect UTF-8. Passwords are used verbatim.
    """
    out = [b""]
    for password in passwords:
        for encoding in ("utf-8", "latin-1"):
            try:
                candidate = password.encode(encoding)
            except UnicodeEncodeError:
                continue
            if candidate not in out:
                out.append(candidate)
    return out


def normalise_text(text: str) -> str:
    """Unix newlines, no trailing spaces, no form feeds, pdfium's soft-hyphen marks removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_SOFT_HYPHEN_MARKS)
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def strip_controls(text: str) -> str:
    """Drop C0 control characters: pdfium emits raw codes for glyphs it cannot map."""
    return _CONTROL.sub("", text)


def count_unmapped(text: str) -> int:
    return len(_CONTROL.findall(text)) + text.count("\ufffd")


@dataclass(frozen=True)
class LayoutProbe:
    layout: PageLayout
    text_objects: int


def _open_pdfium(data: bytes, password: bytes) -> pdfium.PdfDocument:
    """Open with the password as raw bytes: pypdfium2 itself would force UTF-8."""
    raw = pdfium_c.FPDF_LoadMemDocument64(data, len(data), password + b"\x00")
    if not raw:
        code = pdfium_c.FPDF_GetLastError()
        from pypdfium2.internal import ErrorToStr

        raise pdfium.PdfiumError(f"PDFium: {ErrorToStr.get(code)}", err_code=code)
    return pdfium.PdfDocument(raw)


def _open_pypdf(data: bytes, passwords: list[bytes]) -> tuple[Any, bytes]:
    """pypdf reader and the password that opened it; raises Encrypted/Corrupt/Empty errors."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data), strict=False)
    chosen = b""
    if reader.is_encrypted:
        for candidate in passwords:
            try:
                if reader.decrypt(candidate):
                    chosen = candidate
                    break
            except Exception:  # an unsupported scheme is just another failed try
                continue
        else:
            raise EncryptedInputError("the PDF is encrypted and no supplied password opens it")
    return reader, chosen


class PdfHandle:
    """One opened PDF for a batch of pages: pdfium at once, the other engines lazily."""

    def __init__(self, data: bytes, passwords: tuple[str, ...]) -> None:
        self.data = data
        self.candidates = password_candidates(passwords)
        self.password = b""
        self.pdfium: pdfium.PdfDocument | None = None
        self.pdfium_error: str | None = None
        self._pypdf: Any = None
        self._plumber: Any = None
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        self._open()

    # -- opening ------------------------------------------------------------------

    def _open(self) -> None:
        if b"%PDF" not in self.data[:4096]:
            raise CorruptInputError("not a PDF: no %PDF header in the first 4 KiB")
        wrong_password = False
        for candidate in self.candidates:
            try:
                self.pdfium = _open_pdfium(self.data, candidate)
                self.password = candidate
                break
            except pdfium.PdfiumError as exc:
                if exc.err_code == pdfium_c.FPDF_ERR_PASSWORD:
                    wrong_password = True
                    continue
                self.pdfium_error = str(exc)
                break
        if self.pdfium is not None:
            if len(self.pdfium) == 0:
                raise EmptyInputError("the PDF has no pages")
            return
        if wrong_password and self.pdfium_error is None:
            raise EncryptedInputError("the PDF is encrypted and no supplied password opens it")
        # pdfium could not parse it (or does not support its security handler): try pypdf
        try:
            reader, self.password = _open_pypdf(self.data, self.candidates)
            pages = len(reader.pages)
        except (EncryptedInputError, EmptyInputError):
            raise
        except Exception as exc:
            raise CorruptInputError(
                f"unreadable PDF: pdfium says {self.pdfium_error}; pypdf says {type(exc).__name__}: {exc}"
            ) from exc
        if pages == 0:
            raise EmptyInputError("the PDF has no pages")
        self._pypdf = reader

    @property
    def page_count(self) -> int:
        if self.pdfium is not None:
            return len(self.pdfium)
        return len(self._pypdf.pages)

    @property
    def engines(self) -> tuple[str, ...]:
        engines: tuple[str, ...] = ENGINE_ORDER if self.pdfium is not None else ENGINE_ORDER[1:]
        if shutil.which("pdftotext") is None:
            engines = tuple(e for e in engines if e != "pdftotext")
        return engines

    def close(self) -> None:
        if self._plumber is not None:
            with contextlib.suppress(Exception):
                self._plumber.close()
        if self.pdfium is not None:
            self.pdfium.close()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()

    def __enter__(self) -> PdfHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- engines --------------------------------------------------------------------

    def text(self, engine: str, number: int) -> tuple[str, LayoutProbe | None]:
        """Raw text of page ``number`` (1-based) from one engine, plus pdfium's layout probe."""
        if engine == "pdfium":
            return self._pdfium_text(number)
        if engine == "pypdf":
            return self._pypdf_text(number), None
        if engine == "pdfplumber":
            page = self.plumber.pages[number - 1]
            try:
                return page.extract_text() or "", None
            finally:
                page.close()
        if engine == "pdftotext":
            return self._pdftotext(number), None
        raise EngineError(f"unknown engine {engine}")

    def _pdfium_text(self, number: int) -> tuple[str, LayoutProbe]:
        assert self.pdfium is not None
        page = self.pdfium[number - 1]
        try:
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range()
            finally:
                textpage.close()
            return text, probe_layout(page)
        finally:
            page.close()

    def _pypdf_text(self, number: int) -> str:
        if self._pypdf is None:
            self._pypdf, _ = _open_pypdf(self.data, [self.password])
        text: str = self._pypdf.pages[number - 1].extract_text() or ""
        return text

    @property
    def plumber(self) -> Any:
        if self._plumber is None:
            import pdfplumber

            # pdfminer encodes the password as Latin-1, so pass the bytes through it unchanged
            self._plumber = pdfplumber.open(io.BytesIO(self.data), password=self.password.decode("latin-1"))
        return self._plumber

    def _pdftotext(self, number: int) -> str:
        if self._tmpdir is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix="papersift-pdf-")
            with open(os.path.join(self._tmpdir.name, "in.pdf"), "wb") as fh:
                fh.write(self.data)
        path = os.path.join(self._tmpdir.name, "in.pdf")
        args: list[str | bytes] = ["pdftotext", "-q", "-enc", "UTF-8", "-f", str(number), "-l", str(number)]
        if self.password:
            args += ["-upw", self.password]
        args += [path, "-"]
        proc = subprocess.run(args, capture_output=True, timeout=PDFTOTEXT_TIMEOUT_SECONDS, check=False)
        if proc.returncode != 0:
            raise EngineError(f"pdftotext exited with {proc.returncode}: {proc.stderr.decode(errors='replace')[:200]}")
        return proc.stdout.decode("utf-8", errors="replace")


def probe_layout(page: pdfium.PdfPage) -> LayoutProbe:
    """Count what the page draws without rendering it: images (and their area), paths, text."""
    width, height = page.get_size()
    page_area = max(width * height, 1.0)
    counts = {"image": 0, "path": 0, "text": 0}
    image_area = 0.0
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))

    def walk(count: int, get: Any, depth: int) -> None:
        nonlocal image_area
        for i in range(count):
            obj = get(i)
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind == pdfium_c.FPDF_PAGEOBJ_TEXT:
                counts["text"] += 1
            elif kind == pdfium_c.FPDF_PAGEOBJ_PATH:
                counts["path"] += 1
            elif kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                counts["image"] += 1
                if pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
                    w = min(right.value, width) - max(left.value, 0.0)
                    h = min(top.value, height) - max(bottom.value, 0.0)
                    image_area += max(w, 0.0) * max(h, 0.0)
            elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
                walk(
                    pdfium_c.FPDFFormObj_CountObjects(obj),
                    lambda j, o=obj: pdfium_c.FPDFFormObj_GetObject(o, j),
                    depth + 1,
                )

    raw = page.raw
    walk(pdfium_c.FPDFPage_CountObjects(raw), lambda j: pdfium_c.FPDFPage_GetObject(raw, j), 0)
    layout = PageLayout(
        image_count=counts["image"],
        image_area_ratio=min(image_area / page_area, 1.0),
        has_vector_glyphs=counts["path"] >= VECTOR_GLYPH_PATHS and counts["text"] == 0,
    )
    return LayoutProbe(layout=layout, text_objects=counts["text"])
