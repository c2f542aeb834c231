"""The PDF engines behind the recovery ladder, each opened at most once per batch.

pdfium (pypdfium2) is fast and usually right, so it is opened eagerly; pypdf, pdfminer and
poppler's ``pdftotext`` are slower and are only opened when a page needs them, and then read
only that page (their per-document setup, parsing the cross-reference table and the fonts, is
paid once per batch). Each engine decodes fonts differently, which is why a page pdfium
garbles is often readable by another one. A PDF that neither pdfium nor pypdf can open (a
broken page tree) is still read by pdfminer, which finds the pages without the tree, and
pdftotext.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import functools
import io
import itertools
import math
import operator
import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from papersift import pdf_fonts, pdf_tags
from papersift.content import FormField
from papersift.errors import CorruptInputError, EmptyInputError, EncryptedInputError, EngineError
from papersift.pdf_fonts import DictionaryFacts, FontEvidence, FontUse, MathGlyphs, ProgramFacts
from papersift.pdf_forms import FormReader
from papersift.quality import PageLayout, nonspace_count
from papersift.structure import MAX_TITLE_CHARS, OutlineEntry
from papersift.tempfolders import temp_prefix

_T = TypeVar("_T")

#: the ladder, in the order the engines are tried
ENGINE_ORDER = ("pdfium", "pypdf", "pdfminer", "pdftotext")
#: characters sampled over a page for its report's font summary (PdfHandle.font_uses)
FONT_SUMMARY_SAMPLES = 16
#: characters sampled for a page's font evidence where its text objects cost too much to read
#: one by one (pdf_fonts.MAX_OBJECT_TEXT_VISITS)
FONT_EVIDENCE_SAMPLES = 4000

#: a page with this many vector paths and no text may draw its text as outlines
VECTOR_GLYPH_PATHS = 100
#: pages with at least this many non-space characters are not probed for images and paths:
#: quality.assess_text consults the layout only below 200 (near-empty or image-only pages)
PROBE_TEXT_CHARS = 200
#: form XObjects nest; deeper than this is not worth walking for a layout probe
MAX_FORM_DEPTH = 4
PDFTOTEXT_TIMEOUT_SECONDS = 60

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
#: _CONTROL as a byte table, for the fast path on ASCII text
_ASCII_CONTROL = bytes(c for c in range(128) if _CONTROL.match(chr(c)))


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
    # str.replace chains are several times faster than str.translate on long pages
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    if "\x02" in text or "\ufffe" in text:
        text = text.replace("\x02", "").replace("\ufffe", "")
    return "\n".join(map(str.rstrip, text.split("\n"))).strip("\n")


def _has_control(text: str) -> bool:
    if text.isascii():  # a byte-table pass is many times faster than a regex scan
        encoded = text.encode("ascii")
        return len(encoded.translate(None, _ASCII_CONTROL)) != len(encoded)
    return _CONTROL.search(text) is not None


def strip_controls(text: str) -> str:
    """Drop C0 control characters: pdfium emits raw codes for glyphs it cannot map."""
    return _CONTROL.sub("", text) if _has_control(text) else text


def count_unmapped(text: str) -> int:
    controls = len(_CONTROL.findall(text)) if _has_control(text) else 0
    return controls if text.isascii() else controls + text.count("\ufffd")


def _page_text_and_layout(number: int, turn: int, page: Any, textpage: Any) -> tuple[str, LayoutProbe]:
    c = pdfium_c
    # the visible page box, as pypdfium2's get_text_bounded: full Unicode, unlike GetText
    box = c.FS_RECTF()
    if not c.FPDF_GetPageBoundingBox(page, box):
        raise EngineError(f"pdfium could not read the bounding box of page {number}")
    text = _turned_text(textpage, turn, box) if turn else _bounded_text(textpage, box)
    beyond = 0
    count = c.FPDFText_CountChars(textpage)
    media = _media_box(page, box) if not turn and count - len(text) > max(CROP_SLACK_CHARS, count * HIDDEN_SHARE) \
        else None
    # a crop box smaller than the page hides most of the characters it writes: where the box cuts
    # through a line, the page is cropped through its own text, and that text is the page's
    # (pdfium alone reads within the box); a slug line or margin numbers beyond the box (a book's
    # printer's proof) are not, and stay out
    if media is not None and _box_cuts_a_line(textpage, box):
        whole = _bounded_text(textpage, media)
        beyond = nonspace_count(whole) - nonspace_count(text)
        text = whole if beyond > 0 else text
    if len(text) > PROBE_TEXT_CHARS and _has_nonspace(text, PROBE_TEXT_CHARS):
        # the verdict reads the layout only for pages with little text (scans, images of
        # text): a page of prose skips the object walk
        return text, LayoutProbe(layout=PageLayout(), text_objects=None, beyond_page_box=max(beyond, 0))
    probe = probe_layout(page, c.FPDF_GetPageWidthF(page), c.FPDF_GetPageHeightF(page))
    return text, LayoutProbe(layout=probe.layout, text_objects=probe.text_objects, beyond_page_box=max(beyond, 0))


#: pdfium's character count beyond the page box's text that is only its own line breaks
CROP_SLACK_CHARS = 3
#: ... and the share of them that must lie beyond it before the box is asked whether it cuts a line
HIDDEN_SHARE = 0.5


_LINE_BREAK = re.compile(r"[\r\n\f]")


def _line_geometry(page: Any, textpage: Any, raw: str, lines: Sequence[str], turn: int,
                   heights_wanted: bool, bold: list[bool] | None = None) -> tuple[list[float], list[list[float]]]:
    """``PdfHandle.line_geometry``: each line is found among ``raw``'s lines in order (as
    normalise_text leaves them) and a character of it asked of pdfium: from its middle where the
    heights are wanted, else its first. The text within the page box is pdfium's characters in
    their order, some left out (beyond the box) and line breaks put in: a character's index is its
    place in ``raw`` plus a shift that only grows; where the code pdfium has there is not the one
    ``raw`` holds, the shift is looked for further on (two characters must agree), at most
    ``MAX_SHIFT_LOOK`` places (on a page of turned glyphs, whose line breaks are ours, back too);
    a line not found gets 0 and no box. The line's first and last characters are then taken at
    that shift where pdfium holds them there (a line the box cuts into gets no box). A line's box
    is the union of its ends' loose boxes (their advance and the font's height), in the page as
    displayed (``_Frame``). Four to six pdfium calls a line, whatever its length, each through
    ``_bare`` (the line pass is most of what structure costs the extraction). ``bold``: a list
    as long as ``lines``, each line whose sampled character is set in a bold font marked True
    (``_Weights``: two calls more, a font's first line three or four; with the heights only).

    The Python around those calls is most of the pass's time, so it is kept flat: ``raw``'s lines
    split and right-stripped once a page in C (``_raw_lines``), a line looked for where the last
    one ended and else by ``list.index`` over the next ``MAX_LINE_SKIP``, both ends' boxes written
    side by side into one buffer and read with one ``struct`` unpack, and an unturned page's box
    made and rounded inline (``_Frame.displayed`` and ``fractions``, the same floats)."""
    heights = [0.0] * len(lines) if heights_wanted else []
    boxes: list[list[float]] = [[]] * len(lines)  # one empty list for every line without a box, never changed
    count = _COUNT_CHARS(textpage)
    ends = _ENDS()  # the first character's loose box, then the last's: left, top, right, bottom each
    first_ref, last_ref = ctypes.byref(ends), ctypes.byref(ends, _RECT_BYTES)
    get_unicode, loose_box, unpack = _GET_UNICODE, _LOOSE_CHAR_BOX, _UNPACK_ENDS
    frame = _Frame(page)
    x0, y1, across, down = frame.x0, frame.y1, frame.across, frame.down
    displayed = frame.displayed if frame.rotation else None
    bold_at = _Weights(textpage).bold if bold is not None else None
    marks = bold if bold is not None else []
    if "\x02" in raw or "\ufffe" in raw:  # normalise_text drops them: so must the comparison
        raw = raw.replace("\x02", "\x00").replace("\ufffe", "\x00")
    nul = "\x00" in raw
    starts, texts = _raw_lines(raw)
    # each raw line right-stripped, and as normalise_text leaves it: without the NULs of those that hold one
    stripped = kept = list(map(str.rstrip, texts))
    if nul:
        kept = stripped.copy()
        place = raw.find("\x00")
        while place >= 0:
            k = bisect.bisect_right(starts, place) - 1
            kept[k] = stripped[k].replace("\x00", "").rstrip()
            place = raw.find("\x00", starts[k] + len(texts[k]))
    spans_count = len(texts)
    low, high, rounder = -ROUNDING_MARGIN, ROUNDING_MARGIN, _ROUNDER
    at = shift = 0
    for index, line in enumerate(lines):
        if not line:  # a line of spaces is found nowhere either: no raw line is kept with its trailing spaces
            continue
        if at < spans_count and kept[at] == line:
            k = at
        else:
            try:
                k = kept.index(line, at, at + MAX_LINE_SKIP)
            except ValueError:
                continue
        at = k + 1
        start, text = starts[k], texts[k]
        lead = len(text) - len(text.lstrip()) if text[0].isspace() else 0
        first, last = start + lead, start + len(stripped[k]) - 1
        if nul:
            while raw[first] == "\x00":
                first += 1
            while raw[last] == "\x00":
                last -= 1
        if heights_wanted:
            anchor = start + (len(text) + lead) // 2
            character = raw[anchor]
            while character.isspace() or character == "\x00":  # a character follows: the line is rstripped
                anchor += 1
                character = raw[anchor]
            code = ord(character)
        else:
            anchor = first
            code = ord(raw[first])
        if get_unicode(textpage, anchor + shift) != code:
            following = ord(raw[anchor + 1]) if anchor + 1 < len(raw) else None
            moves: Iterable[int] = range(shift + 1, min(shift + MAX_SHIFT_LOOK, count - anchor))
            if turn:
                moves = itertools.chain(moves, range(shift - 1, max(shift - MAX_SHIFT_LOOK, -anchor) - 1, -1))
            else:  # pdfium's text ahead read at once (one call, not one a place), its likely shifts first
                moves = itertools.chain(_likely_shifts(textpage, anchor, shift, raw[anchor:anchor + 2], count),
                                        moves)
            for moved in moves:
                if get_unicode(textpage, anchor + moved) == code and (
                        following is None or get_unicode(textpage, anchor + moved + 1) == following):
                    shift = moved
                    break
            else:
                continue
        if heights_wanted and loose_box(textpage, anchor + shift, first_ref):
            height = ends[1] - ends[3]  # rounded to 0.1 as the box is to 1/10,000, below
            scaled = height * 10.0
            whole = scaled + rounder - rounder
            heights[index] = whole / 10.0 if 0.5 < scaled < MAX_HEIGHT * 10.0 and low < scaled - whole < high \
                else round(height, 1)
            if bold_at is not None and bold_at(anchor + shift):
                marks[index] = True
        if (anchor != first and get_unicode(textpage, first + shift) != ord(raw[first])) \
                or get_unicode(textpage, last + shift) != ord(raw[last]) \
                or not loose_box(textpage, first + shift, first_ref) or not loose_box(textpage, last + shift, last_ref):
            continue
        left, top, right, bottom, end_left, end_top, end_right, end_bottom = unpack(ends)
        if end_left < left:
            left = end_left
        if end_bottom < bottom:
            bottom = end_bottom
        if end_right > right:
            right = end_right
        if end_top > top:
            top = end_top
        if displayed is not None:
            boxes[index] = displayed(left, bottom, right, top)
            continue
        # _Frame.displayed of an unturned page, each fraction rounded as ``fractions`` rounds it: times
        # 10,000 (the same float as the fraction's times 10,000) from 0.5 (a fraction over 0 whose
        # rounding is not 0) to 10,000 (a fraction up to 1), its nearest integer found by adding and
        # taking away ``_ROUNDER`` (as round() finds it) and divided back (the float int / int gives);
        # fractions itself for a box with any other value
        scaled_x0 = (left - x0) * across * 10000.0
        scaled_y0 = (y1 - top) * down * 10000.0
        scaled_x1 = (right - x0) * across * 10000.0
        scaled_y1 = (y1 - bottom) * down * 10000.0
        whole_x0 = scaled_x0 + rounder - rounder
        whole_y0 = scaled_y0 + rounder - rounder
        whole_x1 = scaled_x1 + rounder - rounder
        whole_y1 = scaled_y1 + rounder - rounder
        if 0.5 < scaled_x0 <= 10000.0 and 0.5 < scaled_y0 <= 10000.0 and 0.5 < scaled_x1 <= 10000.0 \
                and 0.5 < scaled_y1 <= 10000.0 \
                and low < scaled_x0 - whole_x0 < high and low < scaled_y0 - whole_y0 < high \
                and low < scaled_x1 - whole_x1 < high and low < scaled_y1 - whole_y1 < high:
            boxes[index] = [whole_x0 / 10000.0, whole_y0 / 10000.0, whole_x1 / 10000.0, whole_y1 / 10000.0]
        else:
            boxes[index] = fractions(((left - x0) * across, (y1 - top) * down, (right - x0) * across,
                                      (y1 - bottom) * down))
    return heights, boxes


def _fonts_in_use(page: Any, textpage: Any, sample: int) -> tuple[dict[str, pdf_fonts.UsedFont], int]:
    """``PdfHandle.font_evidence``'s fonts: every text object's where ``sample`` is 0 and the page
    affords it (pdf_fonts.object_texts_affordable), else over ``sample`` characters (or
    ``FONT_EVIDENCE_SAMPLES`` on a page of too many objects: shares, not counts)."""
    if not sample and pdf_fonts.object_texts_affordable(page, textpage):
        return pdf_fonts.fonts_in_use(page, textpage)
    return pdf_fonts.sampled_fonts_in_use(textpage, sample or FONT_EVIDENCE_SAMPLES)


_bare = pdf_fonts.bare  # a pdfium binding without ctypes' argument conversion
_GET_UNICODE = _bare(pdfium_c.FPDFText_GetUnicode, ctypes.c_uint)
_LOOSE_CHAR_BOX = _bare(pdfium_c.FPDFText_GetLooseCharBox)
_FONT_WEIGHT = _bare(pdfium_c.FPDFText_GetFontWeight)
_FONT_INFO = _bare(pdfium_c.FPDFText_GetFontInfo, ctypes.c_ulong)
_COUNT_CHARS = _bare(pdfium_c.FPDFText_CountChars)


class _Handle(ctypes.c_void_p):
    """A pointer pdfium returns, kept as a ctypes value (a ``c_void_p`` subclass is not made an int) to
    be passed on as it is."""


_TEXT_OBJECT = _bare(pdfium_c.FPDFText_GetTextObject, _Handle)
_TEXT_FONT = _bare(pdfium_c.FPDFTextObj_GetFont, ctypes.c_void_p)
#: the line pass's buffer for a line's ends' loose boxes, two ``FS_RECTF`` side by side, read at once
_ENDS = ctypes.c_float * 8
_RECT_BYTES = ctypes.sizeof(pdfium_c.FS_RECTF)
_UNPACK_ENDS = struct.Struct("8f").unpack_from
_GET_TEXT = _bare(pdfium_c.FPDFText_GetText)
_PAGE_BOX = _bare(pdfium_c.FPDF_GetPageBoundingBox)
_ROTATION = _bare(pdfium_c.FPDFPage_GetRotation)


def _likely_shifts(textpage: Any, place: int, shift: int, wanted: str, count: int) -> Iterator[int]:
    """The shifts past ``shift`` at which pdfium's text (``FPDFText_GetText`` of the next
    ``MAX_SHIFT_LOOK`` characters) reads ``wanted``: where that text holds a character per index,
    as on most pages, the shift is one of them; the caller checks each against the characters."""
    start = place + shift + 1
    size = min(MAX_SHIFT_LOOK, count - start)
    if size <= 0:
        return
    buffer = _AHEAD()
    written = _GET_TEXT(textpage, start, size, buffer)
    yield from _shifts_reading(ctypes.string_at(buffer, 2 * max(written - 1, 0)), wanted, shift)


def _shifts_reading(ahead: bytes, wanted: str, shift: int) -> Iterator[int]:
    """``_likely_shifts`` in ``ahead`` (pdfium's UTF-16 text): its first ``SHIFT_CHUNK`` units
    decoded first, as the shift is most often a few places on, the rest only once the caller asks
    past them: the same shifts in the same order as of the whole text decoded (a chunk does not end
    in a high surrogate, so it decodes as the whole text begins)."""
    units = len(ahead) // 2
    part = min(units, SHIFT_CHUNK)
    while part < units and 0xD8 <= ahead[2 * part - 1] <= 0xDB:
        part += 1
    text = ahead[:2 * part].decode("utf-16-le", errors="replace")
    found, after = text.find(wanted), 0
    while True:
        while found >= 0:
            yield shift + 1 + found
            after = found + 1
            found = text.find(wanted, after)
        if part == units:
            return
        part = units
        text = ahead.decode("utf-16-le", errors="replace")
        found = text.find(wanted, after)


#: ``_shifts_reading``: the UTF-16 units of pdfium's text ahead decoded first
SHIFT_CHUNK = 64


class _Frame:
    """The frame a page's boxes are given in: its visible page box, turned as the page is
    displayed (its /Rotate, clockwise), as fractions from the displayed page's top left."""

    def __init__(self, page: Any) -> None:
        c = pdfium_c
        box = c.FS_RECTF()
        if not _PAGE_BOX(page, ctypes.byref(box)):  # once a page of the line pass: _bare
            box = c.FS_RECTF(0.0, c.FPDF_GetPageHeightF(page), c.FPDF_GetPageWidthF(page), 0.0)
        self.x0, self.y0, self.x1, self.y1 = box.left, box.bottom, box.right, box.top
        self.across, self.down = 1 / max(self.x1 - self.x0, 1e-6), 1 / max(self.y1 - self.y0, 1e-6)
        self.rotation = max(_ROTATION(page), 0) % 4

    def displayed(self, left: float, bottom: float, right: float, top: float) -> list[float]:
        """A box in the page's space (points) as x0, y0, x1, y1 of the page as displayed, rounded
        to 1/10,000 and kept within the page (``fractions``)."""
        x0, y0, x1, y1, across, down = self.x0, self.y0, self.x1, self.y1, self.across, self.down
        if self.rotation == 0:
            box = ((left - x0) * across, (y1 - top) * down, (right - x0) * across, (y1 - bottom) * down)
        elif self.rotation == 1:  # a quarter turn clockwise: the page's bottom edge is shown on the left
            box = ((bottom - y0) * down, (left - x0) * across, (top - y0) * down, (right - x0) * across)
        elif self.rotation == 2:
            box = ((x1 - right) * across, (bottom - y0) * down, (x1 - left) * across, (top - y0) * down)
        else:
            box = ((y1 - top) * down, (x1 - right) * across, (y1 - bottom) * down, (x1 - left) * across)
        return fractions(box)


def fractions(values: Iterable[float]) -> list[float]:
    """Each of ``values`` kept within 0..1 and rounded to 1/10,000: ``round(value, 4)``, in half
    its time (the line pass rounds four a line). Where the value times 10,000 lies within
    ``ROUNDING_MARGIN`` of an integer other than 0, its binary error (under 1e-12) cannot move it
    past a half, so that integer is the one ``round`` takes, and dividing it by 10,000 (int by
    int, correctly rounded) gives ``round``'s float; any other value (a tie, 0 and -0.0) goes
    through ``round``; NaN, as the infinities, is kept within the page (1.0)."""
    out = []
    for value in values:
        if 0.0 <= value <= 1.0:
            scaled = value * 10000.0
            whole = round(scaled)
            out.append(whole / 10000 if whole and -ROUNDING_MARGIN < scaled - whole < ROUNDING_MARGIN
                       else round(value, 4))
        else:
            out.append(0.0 if value < 0.0 else 1.0)
    return out


#: ``fractions``: a value times 10,000 this near an integer is not a half off it
ROUNDING_MARGIN = 0.4999
#: 1.5 x 2^52: a float from 0 to 2^51 plus this is a float whose spacing is 1, so the sum is rounded to
#: the nearest integer (half to even, as round()) and taking this away again leaves that integer, exact
_ROUNDER = 6755399441055744.0
#: a line's height below this is rounded inline (``_line_geometry``): its float times 10 is within
#: 1e-10 of its value, well inside ``ROUNDING_MARGIN``
MAX_HEIGHT = 100000.0


#: a font name that says its weight is bold (``Helvetica-Bold``, ``Arial,BoldItalic``,
#: ``MinionPro-Semibold``, ``Futura-Heavy``, ``Gotham-Black``), and TeX's bold faces (CMBX10)
_BOLD_NAME = re.compile(r"(?i)bold|black|heavy|demi|semibd|^cmbx|^ecbx|^lmroman\d+-bold")
#: a font's weight (pdfium's from its descriptor) at or above this is bold
BOLD_WEIGHT = 600
#: ForceBold in a font descriptor's flags
_FORCE_BOLD = 1 << 18


class _Weights:
    """Whether pdfium's characters on a text page are set in a bold font: its weight
    (``BOLD_WEIGHT``), its descriptor's ForceBold flag or its name (``_BOLD_NAME``, judged once a
    name). The verdict is the font's, so it is kept once a font (the character's text object's:
    two calls, half the cost of asking the weight and the name), but for a font whose name is
    longer than the buffer: pdfium does not write such a name, and what is read in its place is
    what the names asked before left there."""

    def __init__(self, textpage: Any) -> None:
        self.textpage = textpage
        self.name = ctypes.create_string_buffer(128)  # a longer name is not written: the last one stays
        self.size = ctypes.c_ulong(len(self.name))
        self.flags = ctypes.c_int()
        self.flags_ref = ctypes.byref(self.flags)
        self.named_bold: dict[bytes, bool] = {}
        self.fonts: dict[int, bool] = {}
        #: the characters asked since the name buffer last held what asking each of them in turn leaves
        self.asked: list[int] = []

    def bold(self, index: int) -> bool:
        self.asked.append(index)
        font = _TEXT_FONT(_TEXT_OBJECT(self.textpage, index))
        verdict = self.fonts.get(font)
        if verdict is not None:
            return verdict
        verdict, settled = self._judged(index)
        if settled:
            if font is not None:
                self.fonts[font] = verdict
            return verdict
        # the name read is what earlier ones left in the buffer: each character asked since it was last
        # in step is asked again in turn, as when every one was asked of pdfium
        for asked in self.asked:
            verdict, _ = self._judged(asked)
        self.asked.clear()
        return verdict

    def _judged(self, index: int) -> tuple[bool, bool]:
        """The verdict asked of pdfium, and whether it is the font's alone (not read from a buffer
        pdfium left as it was)."""
        if _FONT_WEIGHT(self.textpage, index) >= BOLD_WEIGHT:
            return True, True
        size = _FONT_INFO(self.textpage, index, self.name, self.size, self.flags_ref)
        if size <= 0:  # no font: the flags are not written either
            return False, True
        if self.flags.value & _FORCE_BOLD:
            return True, True
        name = self.name.raw[: min(size, len(self.name)) - 1]
        named = self.named_bold.get(name)
        if named is None:
            named = self.named_bold[name] = _BOLD_NAME.search(name.decode("latin-1")) is not None
        return named, size <= len(self.name)


def _raw_lines(raw: str) -> tuple[list[int], list[str]]:
    """The offsets and texts of ``raw``'s lines as normalise_text splits them: pdfium's CR LF (split
    and the offsets summed in C), else at any line break."""
    texts = raw.split("\r\n")
    bare = "".join(texts)  # raw without its CR LFs (one copy, and "in" scans faster than count)
    if "\r" not in bare and "\n" not in bare and "\f" not in bare:  # no break but CR LF
        starts = list(itertools.accumulate(map(operator.add, map(len, texts), itertools.repeat(2)), initial=0))
        starts.pop()  # the offset past the last line
        return starts, texts
    # the matches of ``[^\r\n\f]*`` (finditer's: each text between two breaks, and an empty one where a
    # text that is not empty ends), without a match object each
    starts, texts, offset = [], [], 0
    for text in _LINE_BREAK.split(raw):
        starts.append(offset)
        texts.append(text)
        if text:
            offset += len(text)
            starts.append(offset)
            texts.append("")
        offset += 1
    return starts, texts


#: places further on a character's index is looked for (the characters beyond the page box before it)
MAX_SHIFT_LOOK = 2000
#: ``_likely_shifts``' buffer, one size for all (a ctypes array type is made once a length)
_AHEAD = ctypes.c_ushort * (MAX_SHIFT_LOOK + 1)
#: raw lines looked through for a final line before it is given up (blank lines between them)
MAX_LINE_SKIP = 8


def _media_box(page: Any, box: Any) -> Any:
    """The page's media box as pdfium's rectangle when it is larger than ``box`` (the visible
    page box) by more than a point on some side, else None."""
    c = pdfium_c
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    if not c.FPDFPage_GetMediaBox(page, left, bottom, right, top):
        return None
    if max(box.left - left.value, box.bottom - bottom.value, right.value - box.right, top.value - box.top) <= 1.0:
        return None
    return c.FS_RECTF(left.value, top.value, right.value, bottom.value)


def _box_cuts_a_line(textpage: Any, box: Any) -> bool:
    """Whether two neighbouring characters of one line lie on either side of the page box (the
    crop box of a page cut out of a larger one): what sits wholly outside it (printer's marks, a
    slug line, margin numbers) is not the page's; a line the box cuts through is. A walk over the
    characters, asked only where the box hides most of them."""
    c = pdfium_c
    x, y = ctypes.c_double(), ctypes.c_double()
    glyph = c.FS_RECTF()
    previous: tuple[float, float, bool] | None = None  # x, y, inside
    for index in range(c.FPDFText_CountChars(textpage)):
        if c.FPDFText_GetUnicode(textpage, index) <= 32 or not c.FPDFText_GetCharOrigin(textpage, index, x, y):
            continue
        # the glyph's height on the page (the font size may be 1 with the text matrix scaling it)
        size = max(glyph.top - glyph.bottom, 1.0) if c.FPDFText_GetLooseCharBox(textpage, index, glyph) else 1.0
        inside = box.left - 1 <= x.value <= box.right + 1 and box.bottom - 1 <= y.value <= box.top + 1
        if previous is not None and previous[2] != inside and abs(previous[1] - y.value) <= 0.3 * size \
                and abs(previous[0] - x.value) <= 2 * size:
            return True
        previous = (x.value, y.value, inside)
    return False


def _has_nonspace(text: str, wanted: int) -> bool:
    """``nonspace_count(text) >= wanted``, deciding on the first lines when they suffice (a page of
    prose does): counting a whole page of non-ASCII prose costs ~25 microseconds, on every page."""
    head = text[: 4 * wanted]
    return nonspace_count(head) >= wanted or (len(head) < len(text) and nonspace_count(text) >= wanted)


#: characters sampled for the direction most of a page's glyphs are turned in
GLYPH_TURN_SAMPLES = 9
#: a glyph this close (degrees) to a quarter turn is turned by it; further off (a diagonal
#: watermark, a skewed scan's layer) it says nothing about the page's reading direction
QUARTER_TURN_TOLERANCE = 5.0
#: the glyphs' "up" in page space, for each quarter turn clockwise
_GLYPH_UP = ((0.0, 1.0), (1.0, 0.0), (0.0, -1.0), (-1.0, 0.0))
#: a baseline this far (in font sizes) across the glyphs' direction from the last one starts a line
NEW_LINE_SHIFT = 0.5


def _glyph_turn(textpage: Any) -> int:
    """Quarter turns (clockwise, 0-3) by which most of the page's glyphs are turned in the page's
    own space (its content, before /Rotate): 0 for upright text, and when no turn has a majority
    of the sampled characters. A handful of characters spread over the page decide: a turned
    side label on an upright page (arXiv's margin stamp) is outvoted."""
    c = pdfium_c
    count = c.FPDFText_CountChars(textpage)
    if count <= 0:
        return 0
    votes = [0, 0, 0, 0]
    step = max(count // GLYPH_TURN_SAMPLES, 1)
    for index in range(step // 2, count, step):
        if c.FPDFText_GetUnicode(textpage, index) <= 32:  # spaces and pdfium's own line breaks
            continue
        angle = c.FPDFText_GetCharAngle(textpage, index)
        if angle < 0:
            continue
        degrees = math.degrees(angle)
        quarter = round(degrees / 90)
        if abs(degrees - 90 * quarter) <= QUARTER_TURN_TOLERANCE:
            votes[quarter % 4] += 1
    turn = max(range(4), key=votes.__getitem__)
    return turn if 2 * votes[turn] > sum(votes) else 0


def _turned_text(textpage: Any, turn: int, box: Any) -> str:
    """The page's text when its glyphs are turned (``turn`` quarter turns clockwise): pdfium's
    characters in its order (the text page was built in the glyphs' upright frame, see
    PdfHandle._load_text_page), with a line break wherever the baseline moves across the glyphs'
    direction by half a font size. pdfium breaks lines of turned glyphs only now and then, which
    runs twenty lines into two and glues the last word of one to the first of the next."""
    c = pdfium_c
    up_x, up_y = _GLYPH_UP[turn % 4]
    x, y = ctypes.c_double(), ctypes.c_double()
    parts: list[str] = []
    level = size = 0.0
    line_open = False  # a glyph was written since the last line break
    for index in range(c.FPDFText_CountChars(textpage)):
        code = c.FPDFText_GetUnicode(textpage, index)
        if code <= 32 or c.FPDFText_IsGenerated(textpage, index):
            parts.append(chr(code))
            if code in (10, 13):
                line_open = False
            continue
        if not c.FPDFText_GetCharOrigin(textpage, index, x, y):
            continue
        if not (box.left - 1 <= x.value <= box.right + 1 and box.bottom - 1 <= y.value <= box.top + 1):
            continue  # outside the visible page box, as the bounded text of an upright page
        here, glyph_size = x.value * up_x + y.value * up_y, c.FPDFText_GetFontSize(textpage, index)
        if line_open and abs(here - level) > NEW_LINE_SHIFT * max(size, glyph_size, 1.0):
            parts.append("\n")
        level, size, line_open = here, glyph_size, True
        parts.append(chr(code))
    return "".join(parts)


def _rows_from_boxes(textpage: Any) -> str:
    """Glyphs grouped into rows by the overlap of their vertical extents, each row read left
    to right; a gap wider than a third of the row's glyph height starts a new token."""
    c = pdfium_c
    box = c.FS_RECTF()
    glyphs: list[tuple[float, float, float, float, str]] = []  # bottom, top, x0, x1, char
    for index in range(c.FPDFText_CountChars(textpage)):
        code = c.FPDFText_GetUnicode(textpage, index)
        # loose boxes span the glyph's advance and the font's height, so '1' and the ',' after
        # it touch; spaces and line breaks are rebuilt from the geometry
        if code <= 32 or not c.FPDFText_GetLooseCharBox(textpage, index, box):
            continue
        glyphs.append((box.bottom, max(box.top, box.bottom + 0.1), box.left, box.right, chr(code)))
    rows: list[tuple[float, float, list[tuple[float, float, float, float, str]]]] = []  # band low, high, glyphs
    for glyph in sorted(glyphs, key=lambda g: -(g[0] + g[1])):
        if rows:
            low, high, members = rows[-1]
            overlap = min(high, glyph[1]) - max(low, glyph[0])
            if overlap > 0.3 * min(high - low, glyph[1] - glyph[0]):
                members.append(glyph)
                rows[-1] = (min(low, glyph[0]), max(high, glyph[1]), members)
                continue
        rows.append((glyph[0], glyph[1], [glyph]))
    lines = []
    for _, _, row in rows:
        row.sort(key=lambda g: g[2])
        space = max(g[1] - g[0] for g in row) / 3
        parts = [row[0][4]]
        for before, glyph in itertools.pairwise(row):
            parts.append((" " if glyph[2] - before[3] > space else "") + glyph[4])
        lines.append("".join(parts))
    return "\n".join(lines)


def _column_ranks(textpage: Any) -> dict[str, list[int]]:
    """Each character's places (ascending) in vertical reading order, from pdfium's character
    boxes: glyphs grouped into columns by the overlap of their horizontal extents, the columns
    read from right to left, each from top to bottom. What an engine's text of a page in vertical
    writing is checked against: whichever order it came in, the page's geometry is the same."""
    c = pdfium_c
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    glyphs: list[tuple[float, float, float, str]] = []  # x0, x1, vertical centre, char
    for index in range(c.FPDFText_CountChars(textpage)):
        code = c.FPDFText_GetUnicode(textpage, index)
        if code <= 32 or not c.FPDFText_GetCharBox(textpage, index, left, right, bottom, top):
            continue
        glyphs.append((left.value, max(right.value, left.value + 0.1), (bottom.value + top.value) / 2, chr(code)))
    columns: list[tuple[float, float, list[tuple[float, float, float, str]]]] = []  # band x0, x1, glyphs
    for glyph in sorted(glyphs, key=lambda g: -(g[0] + g[1])):
        if columns:
            low, high, members = columns[-1]
            if min(high, glyph[1]) - max(low, glyph[0]) > 0.3 * min(high - low, glyph[1] - glyph[0]):
                members.append(glyph)
                columns[-1] = (min(low, glyph[0]), max(high, glyph[1]), members)
                continue
        columns.append((glyph[0], glyph[1], [glyph]))
    ranks: dict[str, list[int]] = {}
    ordered = (glyph for _, _, column in columns for glyph in sorted(column, key=lambda g: -g[2]))
    for rank, glyph in enumerate(ordered):
        ranks.setdefault(glyph[3], []).append(rank)
    return ranks


def _bounded_text(textpage: Any, box: Any) -> str:
    """Text inside the page box in one pdfium pass: asking for the size first costs a second
    pass over every character, so the buffer is sized from the character count instead."""
    c = pdfium_c
    args = (textpage, box.left, box.top, box.right, box.bottom)
    # each character gives at most two UTF-16 units, and pdfium adds at most a CR LF before it;
    # rounded up to a power of two, so ctypes makes a handful of array types, not one a page
    capacity = 1 << (4 * max(c.FPDFText_CountChars(textpage), 0) + 16).bit_length()
    buffer = (ctypes.c_ushort * capacity)()
    written = c.FPDFText_GetBoundedText(*args, buffer, capacity)
    if written >= capacity:  # cannot happen by the bound above; stay correct if pdfium changes
        size = c.FPDFText_GetBoundedText(*args, None, 0)
        capacity = 2 * size + 16
        buffer = (ctypes.c_ushort * capacity)()
        written = c.FPDFText_GetBoundedText(*args, buffer, capacity)
    if written > 0 and buffer[written - 1] == 0:  # the terminating NUL, when the buffer had room
        written -= 1
    if written <= 0:
        return ""
    return ctypes.string_at(buffer, 2 * written).decode("utf-16-le", errors="ignore")


def _load_text_page(page: Any) -> tuple[Any, int]:
    """pdfium's text page of ``page`` built in the frame where its glyphs stand upright, and the
    quarter turns of those glyphs (see _glyph_turn).

    pdfium orders the lines of a text page in the page as displayed (after /Rotate): on a page
    shown turned, lines of upright text become columns, which it reads left to right, so a
    /Rotate 90 page came out last line first; glyphs turned by their text matrix on an upright
    page suffer the same. Reading order lives in the glyphs' frame, whatever the display does: a
    page whose display does not stand its glyphs upright is read again with its /Rotate set to
    the turn that does, then set back (what the page draws, renders and cuts is unchanged). The
    common case, upright glyphs on an unrotated page, costs a few character lookups."""
    c = pdfium_c
    textpage = c.FPDFText_LoadPage(page)
    if not textpage:
        return textpage, 0
    turn = _glyph_turn(textpage)
    upright, rotation = (-turn) % 4, c.FPDFPage_GetRotation(page)
    if upright == rotation or rotation < 0:
        return textpage, turn
    c.FPDFText_ClosePage(textpage)
    c.FPDFPage_SetRotation(page, upright)
    try:
        textpage = c.FPDFText_LoadPage(page)
    finally:
        c.FPDFPage_SetRotation(page, rotation)
    return textpage, turn


@dataclass(frozen=True)
class LayoutProbe:
    layout: PageLayout
    text_objects: int | None  # None: not probed (the page has plenty of text)
    #: non-space characters read from beyond the page box (a crop box cutting through the text)
    beyond_page_box: int = 0
    #: the raw codes of TeX math fonts that pdfium's text held, read as their symbols
    math_glyphs: MathGlyphs | None = None


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


#: what pdfium's open says of a file it parsed whose page tree holds no page
_NO_PAGES = "no pages in the page tree"
#: a page object ("/Type /Page", not /Pages): counted in the raw bytes to catch a page tree that loops
_PAGE_OBJECT = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


def _page_exists(document: pdfium.PdfDocument, index: int) -> bool:
    """Whether the page tree holds page ``index`` (0-based): its size, without loading the page."""
    size = pdfium_c.FS_SIZEF()
    return bool(pdfium_c.FPDF_GetPageSizeByIndexF(document.raw, index, ctypes.byref(size)))


def _page_tree_doubt(document: pdfium.PdfDocument, data: bytes) -> tuple[int | None, str]:
    """(pages the tree really holds, why) when pdfium's page count cannot be believed, else (None, '').

    pdfium takes a page count from the root's /Count. A /Count of 1,000,000 over one real page made
    10,000 batches of pages that never load: the last page is checked, and when it is missing the
    real count is found by bisection (about 20 lookups, no page loaded). A page tree that lists a
    node among its own kids repeats pages: with no object streams to hide them, fewer page objects
    in the bytes than pdfium counts gives it away (the count is None then: pdfium must not read it).
    """
    declared = len(document)
    if declared > 1 and not _page_exists(document, declared - 1):
        if not _page_exists(document, 0):
            return None, f"the page tree declares {declared} pages and holds none pdfium can find"
        low, high = 0, declared - 1  # page low exists, page high does not
        while high - low > 1:
            middle = (low + high) // 2
            if _page_exists(document, middle):
                low = middle
            else:
                high = middle
        return low + 1, f"the page tree declares {declared} pages but holds {low + 1}"
    if declared > 1 and b"/ObjStm" not in data:
        objects = len(_PAGE_OBJECT.findall(data))
        if objects < declared:
            return None, (f"the page tree lists {declared} pages but the file holds {objects} page object(s): "
                          "a page tree that loops")
    return None, ""


class PdfHandle:
    """One opened PDF for a batch of pages: pdfium at once, the other engines lazily."""

    def __init__(self, data: bytes, passwords: tuple[str, ...], without_pdfium: str = "",
                 sound_tree_pages: int = 0) -> None:
        """``without_pdfium``: why pdfium must not read this PDF (it crashed its worker on the page
        read now): the other engines open it, as when pdfium cannot. ``sound_tree_pages``: the
        plan found pdfium's page tree sound with this many pages, so a batch need not probe it
        again (the probe walks the tree to its last page: 80 ms a batch at 15,000 pages, which
        made a long document's batches quadratic in its length)."""
        self.data = data
        self._sound_tree_pages = sound_tree_pages
        #: pdfium opened the PDF and its page tree holds every page it declares
        self.tree_sound = False
        self._without_pdfium = without_pdfium
        self.candidates = password_candidates(passwords)
        self.password = b""
        self.pdfium: pdfium.PdfDocument | None = None
        self.pdfium_error: str | None = None
        #: set when pdfium could not open the PDF and a slower engine did: every page is then a recovery
        self.open_note = ""
        self._pypdf: Any = None
        self._plumber: Any = None
        self._miner: _Pdfminer | None = None
        self._loaded: tuple[int, Any, Any] | None = None  # page number, pdfium page, text page
        self._turn = 0  # ... and the quarter turns of its glyphs (_glyph_turn)
        self._raw: tuple[int, str] | None = None  # page number, pdfium's text of it as read (line_heights)
        self._forms: FormReader | None = None
        self._tag_probe = (0, 0)  # structure trees read in this batch, heading elements they held
        self._font_doubts: dict[Any, str | None] = {}  # font dictionary -> doubt, once per batch
        self._differences_cache: dict[Any, dict[int, str]] = {}  # font dictionary -> its /Differences
        self._program_names: dict[int, dict[int, str]] = {}  # pdfium font handle's address -> its program's encoding
        self._math_fonts: dict[int, bool] = {}  # pdfium font handle's address -> one of TeX's math fonts
        self._program_facts: dict[int, ProgramFacts] = {}  # pdfium font handle's address -> what pdfium says
        self._dictionary_facts: dict[str, DictionaryFacts] = {}  # base font name -> what its dictionary says
        self._dictionaries_read: set[int] = set()  # pages whose font dictionaries were read for the summary
        #: (font handle's address, sampled characters, ... unmapped, dictionary read) -> its FontUse
        self._font_uses: dict[tuple[int, int, int, bool], FontUse] = {}
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        #: pages pdfium really holds, when the page tree's /Count claims more
        self._pdfium_pages: int | None = None
        self._open()

    # -- opening ------------------------------------------------------------------

    def _open(self) -> None:
        if b"%PDF" not in self.data[:4096]:
            raise CorruptInputError("not a PDF: no %PDF header in the first 4 KiB")
        wrong_password = False
        if self._without_pdfium:
            self.pdfium_error = self._without_pdfium
        for candidate in self.candidates if not self._without_pdfium else ():
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
            if len(self.pdfium) > 0:
                if self._sound_tree_pages and self._sound_tree_pages == len(self.pdfium):
                    self.tree_sound = True
                    return
                short, note = _page_tree_doubt(self.pdfium, self.data)
                if not note:
                    self.tree_sound = True
                    return
                if short is not None:
                    # /Count promises pages the tree does not hold: pdfium reads the ones it does
                    self._pdfium_pages, self.open_note = short, note
                    return
                # pages listed more than once (a loop): the others walk the tree with a visited set
                self.pdfium.close()
                self.pdfium, self.pdfium_error = None, note
            else:
                # no pages through the page tree: empty, or a broken /Pages the others may see past
                self.pdfium.close()
                self.pdfium, self.pdfium_error = None, _NO_PAGES
        #: pdfium parsed the file and found no pages (not: failed to parse it)
        pdfium_empty = self.pdfium_error == _NO_PAGES
        if wrong_password and self.pdfium_error is None:
            raise EncryptedInputError("the PDF is encrypted and no supplied password opens it")
        # pdfium could not parse it (or does not support its security handler): try pypdf
        try:
            reader, self.password = _open_pypdf(self.data, self.candidates)
            pages = len(reader.pages)
        except EncryptedInputError:
            raise
        except Exception as exc:
            pypdf_error = "no pages" if isinstance(exc, EmptyInputError) else f"{type(exc).__name__}: {exc}"
            self._open_pdfminer(f"pdfium says {self.pdfium_error}; pypdf says {pypdf_error}",
                                pdfium_empty and isinstance(exc, EmptyInputError))
            return
        if pages == 0:
            self._open_pdfminer(f"pdfium says {self.pdfium_error}; pypdf finds no pages", pdfium_empty)
            return
        self._pypdf = reader
        self.open_note = (f"{self._without_pdfium}: read without pdfium, by pypdf" if self._without_pdfium
                          else f"pdfium cannot open the PDF ({self.pdfium_error}); pypdf reads it")

    def _open_pdfminer(self, others: str, others_found_none: bool) -> None:
        """The last opener: pdfminer finds pages by their /Type when the page tree is broken.

        No pages is ``empty`` only when every opener parsed the file and found none
        (``others_found_none``); where pdfium or pypdf failed to parse it (a file cut short), no
        pages is damage, and each opener's reason is kept."""
        try:
            miner = _Pdfminer(self.data, self.password)
            pages = len(miner.pages())
        except Exception as exc:
            raise CorruptInputError(f"unreadable PDF: {others}; pdfminer says {type(exc).__name__}: {exc}") from exc
        if pages == 0:
            if others_found_none:
                raise EmptyInputError("the PDF has no pages: pdfium, pypdf and pdfminer parsed it and found none")
            raise CorruptInputError(f"unreadable PDF: {others}; pdfminer finds no pages")
        self._miner = miner
        self.open_note = f"pdfium and pypdf cannot open the PDF ({others}); pdfminer found {pages} pages"

    @property
    def page_count(self) -> int:
        if self.pdfium is not None:
            return self._pdfium_pages if self._pdfium_pages is not None else len(self.pdfium)
        if self._pypdf is not None:
            return len(self._pypdf.pages)
        return len(self.miner.pages())

    def outline(self, limit: int) -> list[OutlineEntry]:
        """The document's outline (bookmarks) as pdfium reads it, at most ``limit`` entries; none
        when pdfium could not open the file (an outline is a courtesy, never worth another parser)."""
        if self.pdfium is None:
            return []
        entries: list[OutlineEntry] = []
        try:
            for item in self.pdfium.get_toc():
                if len(entries) >= limit:
                    break
                dest = item.get_dest()
                index = dest.get_index() if dest is not None else None
                entries.append(OutlineEntry(title=(item.get_title() or "")[:MAX_TITLE_CHARS], level=item.level + 1,
                                            page=index + 1 if index is not None else 0))
        except Exception:  # a damaged outline costs the headings, never the document
            return entries
        return entries

    @functools.cached_property
    def has_outline(self) -> bool:
        """The document has an outline (one pdfium call): its headings come from it, so its
        lines' heights (``line_heights``) are not asked."""
        return self.pdfium is not None and bool(pdfium_c.FPDFBookmark_GetFirstChild(self.pdfium.raw, None))

    @functools.cached_property
    def tagged(self) -> bool:
        """The catalog marks the document as tagged (pdf_tags.is_tagged): its pages' structure
        trees are read for their headings (``tag_headings``)."""
        return self.pdfium is not None and pdf_tags.is_tagged(self.pdfium.raw)

    def tag_headings(self, number: int) -> list[OutlineEntry]:
        """The heading elements of page ``number``'s structure tree (pdf_tags.page_headings);
        none when the document is not tagged or its tree is damaged (tags are a courtesy), and
        none once the batch's first ``pdf_tags.PROBE_PAGES`` trees held no heading element: a
        tagged table or form has none, and its trees cost pdfium ~2 ms a page to build."""
        if not self.tagged or (self._tag_probe[1] == 0 and self._tag_probe[0] >= pdf_tags.PROBE_PAGES):
            return []
        try:
            found = self._on_text_page(number, lambda page, textpage: pdf_tags.page_headings(page, textpage, number))
        except Exception:
            found = []
        self._tag_probe = (self._tag_probe[0] + 1, self._tag_probe[1] + len(found))
        return found

    @property
    def encrypted(self) -> bool:
        """The file is encrypted (opened with a password, perhaps the empty one): its bytes cannot
        be handed on as they are to a reader without the password."""
        if self.pdfium is not None:
            return bool(pdfium_c.FPDF_GetSecurityHandlerRevision(self.pdfium.raw) != -1)
        return bool(self._pypdf is not None and self._pypdf.is_encrypted) or bool(self.password)

    @functools.cached_property
    def engines(self) -> tuple[str, ...]:
        engines: tuple[str, ...] = ENGINE_ORDER
        if self.pdfium is None:
            engines = ENGINE_ORDER[1:] if self._pypdf is not None else ENGINE_ORDER[2:]
        if shutil.which("pdftotext") is None:
            engines = tuple(e for e in engines if e != "pdftotext")
        return engines

    def close(self) -> None:
        if self._plumber is not None:
            with contextlib.suppress(Exception):
                self._plumber.close()
        if self.pdfium is not None:
            self._release_page()
            if self._forms is not None:
                self._forms.close()
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
        if engine == "pdfminer":
            return self.miner.layout_text(number), None
        if engine == "pdftotext":
            return self._pdftotext(number), None
        raise EngineError(f"unknown engine {engine}")

    def _on_text_page(self, number: int, read: Callable[[Any, Any], _T]) -> _T:
        """``read(page, textpage)`` on pdfium's page ``number`` (1-based) through the C API: the
        pypdfium2 helper objects (weakref finalizers per page and text page) cost as much as the
        extraction on small pages. The last page read stays loaded until another one is (or the
        handle closes): the ladder may come back for its fonts or its character boxes, and
        loading a page costs more than reading it. A plain call: it runs once per page on the
        hot path."""
        if self._loaded is None or self._loaded[0] != number:
            assert self.pdfium is not None
            self._release_page()
            c = pdfium_c
            page = c.FPDF_LoadPage(self.pdfium.raw, number - 1)
            if not page:
                raise EngineError(f"pdfium could not load page {number}")
            textpage, turn = _load_text_page(page)
            if not textpage:
                c.FPDF_ClosePage(page)
                raise EngineError(f"pdfium could not load the text layer of page {number}")
            self._loaded = (number, page, textpage)
            self._turn = turn
        _, page, textpage = self._loaded
        return read(page, textpage)

    def _release_page(self) -> None:
        if self._loaded is not None:
            _, page, textpage = self._loaded
            self._loaded = None
            pdfium_c.FPDFText_ClosePage(textpage)
            pdfium_c.FPDF_ClosePage(page)

    def _pdfium_text(self, number: int) -> tuple[str, LayoutProbe]:
        text, probe = self._on_text_page(number, lambda page, textpage: _page_text_and_layout(
            number, self._turn, page, textpage))
        self._raw = (number, text)
        if not pdf_fonts.holds_raw_codes(text):
            return text, probe
        # glyph codes pdfium found no Unicode for: those of TeX's math fonts are formulas'
        # delimiters and symbols, read here; the others stay for the verdict to judge
        text, math = self._on_text_page(number, lambda page, textpage: pdf_fonts.read_math_glyphs(
            textpage, text, lambda font, handle, code: self._glyph_name(number, font, handle, code))
            if self._may_draw_math(page, text) else (text, None))
        return text, replace(probe, math_glyphs=math) if math is not None else probe

    def line_geometry(self, number: int, lines: Sequence[str], heights: bool = True, bold: list[bool] | None = None
                      ) -> tuple[list[float], list[list[float]]]:
        """Per line of ``lines`` (the page's final text, as pdfium read it): the height of one
        character sampled from its middle (its loose box's height on the page: the font size with
        the text matrix's scaling; 0 for a blank line or one that cannot be matched to pdfium's
        characters), only when ``heights``; and its box ``[x0, y0, x1, y1]`` as fractions of the
        page as displayed, from its top left (``[]`` where unknown). Both empty when pdfium's
        text is not at hand. ``bold``: see ``_line_geometry``."""
        if self._raw is None or self._raw[0] != number:
            return [], []
        raw, turn = self._raw[1], self._turn
        return self._on_text_page(number, lambda page, textpage: _line_geometry(page, textpage, raw, lines, turn,
                                                                                heights, bold))

    def line_heights(self, number: int, lines: Sequence[str], bold: list[bool] | None = None) -> list[float]:
        """``line_geometry``'s heights alone."""
        return self.line_geometry(number, lines, bold=bold)[0]

    def _may_draw_math(self, page: Any, text: str) -> bool:
        """Whether raw codes in pdfium's ``text`` of ``page`` may be math fonts' glyphs, asking pdfium
        the least: a few raw codes are looked up one by one anyway; many (a broken font's page is
        nothing but) only when one of the page's text objects uses a math font."""
        few = len(pdf_fonts.RAW_CODE.findall(text)) <= pdf_fonts.RAW_CODES_LOOKED_UP
        return few or pdf_fonts.draws_with_math_font(page, self._math_fonts)

    def _glyph_name(self, number: int, font: str, handle: Any, code: int) -> str | None:
        """The name of the glyph ``code`` draws in the font named ``font`` (base font name, subset tag
        stripped) on page ``number``: from its embedded Type 1 program's own encoding (pdfium's, at
        no cost), else from the font dictionary's /Differences (pypdf, opened only for a page where
        a math font drew raw codes that its program does not name); None when neither names it."""
        key = ctypes.cast(handle, ctypes.c_void_p).value or 0
        if key not in self._program_names:
            self._program_names[key] = pdf_fonts.program_glyph_names(handle)
        found = self._program_names[key].get(code)
        return found if found is not None else self._differences(number, font).get(code)

    def _differences(self, number: int, font: str) -> dict[int, str]:
        """Code -> glyph name of the /Differences of the font named ``font`` on page ``number``; empty
        when it has none or pypdf cannot tell. Each font dictionary is read once per batch."""
        try:
            for found in pdf_fonts.font_dictionaries(self.pypdf.pages[number - 1], until_found={font}):
                if pdf_fonts.base_font_name(found) != font:
                    continue
                key = getattr(found, "indirect_reference", None) or id(found)
                if key not in self._differences_cache:
                    self._differences_cache[key] = pdf_fonts.differences_of(found)
                return self._differences_cache[key]
        except Exception:  # damaged resources: the family's encoding decides
            return {}
        return {}

    @property
    def pypdf(self) -> Any:
        if self._pypdf is None:
            self._pypdf, _ = _open_pypdf(self.data, [self.password])
        return self._pypdf

    def _pypdf_text(self, number: int) -> str:
        text: str = self.pypdf.pages[number - 1].extract_text() or ""
        return text

    def form_fields(self, number: int) -> list[FormField]:
        """Filled form fields and annotation texts of page ``number`` (pdf_forms), and on page 1
        an XFA-only form's data; empty when pdfium cannot read the document. A page without
        annotations costs one call."""
        if self.pdfium is None:
            return []
        if self._forms is None:
            self._forms = FormReader(self.pdfium.raw)
        forms = self._forms
        found = self._on_text_page(number, lambda page, textpage: forms.page_fields(page)
                                   if pdfium_c.FPDFPage_GetAnnotCount(page) > 0 else [])
        return [*found, *forms.xfa_fields()] if number == 1 else found

    def font_evidence(self, number: int, dictionaries: bool = True, sample: int = 0) -> FontEvidence | None:
        """What the fonts page ``number`` draws with say about their Unicode mapping; None when
        pdfium cannot read the page. pdfium's own findings (the fonts in use, the characters it
        could not map, the TrueType programs without a cmap) cost well under a millisecond;
        ``dictionaries`` adds what only the font dictionaries say (pypdf: ToUnicode,
        /Differences, CMaps), opening pypdf for the batch. ``sample``: counted over that many
        characters spread over the page (shares, not counts: pdf_fonts.sampled_fonts_in_use)."""
        if self.pdfium is None:
            return None
        used, unmapped = self._on_text_page(number, lambda page, textpage: _fonts_in_use(page, textpage, sample))
        embedded = sum(u.chars for u in used.values() if u.embedded)
        truetype = sum(u.chars for u in used.values() if u.truetype)
        if not used or not dictionaries:
            without_cmap = sum(u.chars for u in used.values() if u.program_without_cmap)
            return FontEvidence(glyphs=sum(u.chars for u in used.values()), unmapped_chars=unmapped,
                                undecodable_glyphs=without_cmap, doubtful_glyphs=without_cmap,
                                unverified_glyphs=without_cmap, embedded_glyphs=embedded, truetype_glyphs=truetype,
                                kinds=(pdf_fonts.TRUETYPE_WITHOUT_CMAP,) if without_cmap else (),
                                fonts=tuple(sorted(n for n, u in used.items() if u.program_without_cmap)),
                                doubts=tuple(sorted((n, pdf_fonts.TRUETYPE_WITHOUT_CMAP) for n, u in used.items()
                                                    if u.program_without_cmap)))
        try:
            page = self.pypdf.pages[number - 1]
            doubts: dict[str, str] = {}
            vertical: set[str] = set()
            seen: set[str] = set()
            mapped: set[str] = set()  # names a dictionary of which carries a ToUnicode map
            for font in pdf_fonts.font_dictionaries(page, until_found=used.keys() - seen):
                name = pdf_fonts.base_font_name(font)
                if name in used and "/ToUnicode" in font:
                    mapped.add(name)
                if name not in used or name in seen:
                    continue
                seen.add(name)
                if pdf_fonts.writes_vertically(font):
                    vertical.add(name)
                key = (getattr(font, "indirect_reference", None) or id(font), used[name].program_without_cmap)
                if key not in self._font_doubts:
                    self._font_doubts[key] = pdf_fonts.font_doubt(font, used[name].program_without_cmap)
                doubt = self._font_doubts[key]
                if doubt is not None:
                    doubts[name] = doubt
        except Exception:  # damaged resources are no evidence either way
            return FontEvidence(glyphs=sum(u.chars for u in used.values()), unmapped_chars=unmapped,
                                embedded_glyphs=embedded, truetype_glyphs=truetype)
        return FontEvidence(
            glyphs=sum(u.chars for u in used.values()),
            unmapped_chars=unmapped,
            vertical_glyphs=sum(used[name].chars for name in vertical),
            doubtful_glyphs=sum(used[name].chars for name in doubts),
            kinds=tuple(sorted(set(doubts.values()))),
            fonts=tuple(sorted(doubts)),
            doubts=tuple(sorted(doubts.items())),
            undecodable_glyphs=sum(used[n].chars for n, kind in doubts.items() if kind in pdf_fonts.UNDECODABLE),
            unverified_glyphs=sum(used[n].chars for n, kind in doubts.items() if kind in pdf_fonts.UNVERIFIED),
            embedded_glyphs=embedded,
            truetype_glyphs=truetype,
            to_unicode_glyphs=sum(used[name].chars for name in mapped),
        )

    def token_fonts(self, number: int, tokens: Sequence[str]) -> dict[str, str]:
        """Token -> the font its first character is drawn with (pdf_fonts.token_fonts)."""
        if self.pdfium is None or not tokens:
            return {}
        return self._on_text_page(number, lambda page, textpage: pdf_fonts.token_fonts(textpage, tokens))

    def font_shares(self, number: int, sample: int) -> dict[str, float]:
        """Base font name -> its share of page ``number``'s characters, estimated from ``sample``
        characters spread over the page (pdf_fonts.sampled_fonts_in_use: the cost does not grow
        with the page)."""
        if self.pdfium is None:
            return {}
        used, _ = self._on_text_page(number, lambda page, textpage: pdf_fonts.sampled_fonts_in_use(textpage, sample))
        total = sum(u.chars for u in used.values())
        return {name: u.chars / total for name, u in used.items()} if total else {}

    def font_texts(self, number: int) -> list[tuple[str, str, bool]]:
        """(font, text, monospaced) of each of page ``number``'s text objects (pdf_fonts.font_texts)."""
        if self.pdfium is None:
            return []
        return self._on_text_page(number, pdf_fonts.font_texts)

    def font_uses(self, number: int) -> list[FontUse]:
        """The fonts page ``number``'s text uses (over FONT_SUMMARY_SAMPLES characters), by name, for
        the page report: pdfium's facts for each (once per batch), and what the font dictionaries
        say where pypdf is open for the batch already (the ladder opened it); reading them for every
        document would cost more than the extraction. Empty when pdfium cannot read the page: the
        summary is a report, never a verdict."""
        if self.pdfium is None:
            return []
        try:
            used = self._on_text_page(number, lambda page, textpage: pdf_fonts.sampled_font_handles(
                page, textpage, FONT_SUMMARY_SAMPLES))
        except EngineError:
            return []
        counts: dict[str, tuple[int, int, int]] = {}  # base font name -> (handle's address, characters, unmapped)
        for key, (handle, chars, unmapped) in used.items():
            if key not in self._program_facts:
                self._program_facts[key] = pdf_fonts.program_facts(handle)
            name = self._program_facts[key].name
            if name in counts:  # two handles of one name (two encodings of a font): counted together
                first, known, known_unmapped = counts[name]
                key, chars, unmapped = first, chars + known, unmapped + known_unmapped
            counts[name] = (key, chars, unmapped)
        if self._pypdf is not None:
            self._read_dictionaries(number, counts.keys())
        uses = []
        for name in sorted(counts):
            key, chars, unmapped = counts[name]
            dictionary = self._dictionary_facts.get(name)
            cached = (key, chars, unmapped, dictionary is not None)
            if cached not in self._font_uses:
                self._font_uses[cached] = FontUse(self._program_facts[key], chars, unmapped, dictionary)
            uses.append(self._font_uses[cached])
        return uses

    def _read_dictionaries(self, number: int, names: Iterable[str]) -> None:
        """Record what the font dictionaries of page ``number`` say, by base font name, when one of
        ``names`` is not known yet; each page is read at most once, each name kept once."""
        missing = {name for name in names if name not in self._dictionary_facts}
        if not missing or number in self._dictionaries_read:
            return
        self._dictionaries_read.add(number)
        try:
            for font in pdf_fonts.font_dictionaries(self.pypdf.pages[number - 1], until_found=missing):
                name = pdf_fonts.base_font_name(font)
                if name not in self._dictionary_facts:
                    self._dictionary_facts[name] = pdf_fonts.dictionary_facts(font)
        except Exception:  # damaged resources: the summary keeps pdfium's facts alone
            return

    @property
    def miner(self) -> _Pdfminer:
        if self._miner is None:
            self._miner = _Pdfminer(self.data, self.password)
        return self._miner

    @property
    def plumber(self) -> Any:
        if self._plumber is None:
            import pdfplumber

            # pdfminer encodes the password as Latin-1, so pass the bytes through it unchanged
            self._plumber = pdfplumber.open(io.BytesIO(self.data), password=self.password.decode("latin-1"),
                                            laparams={"detect_vertical": True})
        return self._plumber

    def pictures(self, number: int) -> PictureProbe | None:
        """The page's pictures as OCR sees them (None when pdfium cannot read the page): see
        :func:`probe_pictures`. Asked only when OCR is on: it walks every object of the page."""
        if self.pdfium is None:
            return None
        return self._on_text_page(number, probe_pictures)

    def unmapped_regions(self, number: int) -> tuple[tuple[float, float, float, float], ...]:
        """Where the page draws glyphs pdfium found no Unicode for, outside math fonts (whose
        codes :func:`pdf_fonts.read_math_glyphs` maps): see :func:`unmapped_glyph_regions`.
        Asked only of a page whose text has such glyphs; none on a page whose glyphs are turned."""
        if self.pdfium is None:
            return ()
        return self._on_text_page(number, lambda page, textpage: () if self._turn else unmapped_glyph_regions(
            page, textpage, self._math_fonts))

    def cut_pages(self, numbers: list[int]) -> dict[int, bytes]:
        """Pages as one-page PDFs of their own, unencrypted, their images as in the original (no
        re-render): what OCR reads, and what Textract is sent. pdfium copies the page's objects,
        so a page costs milliseconds whatever the document's size. Empty when pdfium cannot read
        the document (OCR then draws the page from the whole file)."""
        if self.pdfium is None or not numbers:
            return {}
        self._release_page()
        cuts: dict[int, bytes] = {}
        for number in numbers:
            single = pdfium.PdfDocument.new()
            try:
                single.import_pages(self.pdfium, [number - 1])
                out = io.BytesIO()
                single.save(out)
                cuts[number] = out.getvalue()
            except pdfium.PdfiumError:
                continue  # that page is drawn from the whole file instead
            finally:
                single.close()
        return cuts

    def layout_text(self, number: int) -> str:
        """poppler's text of one page in visual row order (``-layout``)."""
        return self._pdftotext(number, "-layout")

    def column_ranks(self, number: int) -> dict[str, list[int]]:
        """Page ``number``'s characters and their places in vertical reading order (columns right
        to left, each top to bottom); empty when pdfium cannot read the page."""
        if self.pdfium is None:
            return {}
        return self._on_text_page(number, lambda page, textpage: _column_ranks(textpage))

    def row_text(self, number: int) -> str:
        """The page's characters regrouped into visual rows from pdfium's character boxes:
        what ``pdftotext -layout`` gives for a grid, without a process per page. Pages shown
        rotated are left to poppler (their rows run along the unrotated page's columns)."""
        rows = self._on_text_page(
            number, lambda page, textpage: None if pdfium_c.FPDFPage_GetRotation(page) or self._turn
            else _rows_from_boxes(textpage)
        )
        return self.layout_text(number) if rows is None else rows

    def _pdftotext(self, number: int, *options: str) -> str:
        if self._tmpdir is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix=temp_prefix("pdf"))
            with open(os.path.join(self._tmpdir.name, "in.pdf"), "wb") as fh:
                fh.write(self.data)
        path = os.path.join(self._tmpdir.name, "in.pdf")
        args: list[str | bytes] = ["pdftotext", "-q", *options, "-enc", "UTF-8", "-f", str(number), "-l", str(number)]
        if self.password:
            args += ["-upw", self.password]
        args += [path, "-"]
        proc = subprocess.run(args, capture_output=True, timeout=PDFTOTEXT_TIMEOUT_SECONDS, check=False)
        if proc.returncode != 0:
            raise EngineError(f"pdftotext exited with {proc.returncode}: {proc.stderr.decode(errors='replace')[:200]}")
        return proc.stdout.decode("utf-8", errors="replace")


class _Pdfminer:
    """pdfminer.six over one document: the parser, the resource manager (fonts and CMaps are
    decoded once per batch) and the page list are set up once; each page is laid out alone."""

    def __init__(self, data: bytes, password: bytes) -> None:
        from pdfminer.pdfdocument import PDFDocument
        from pdfminer.pdfparser import PDFParser

        from papersift.pdfminer_fonts import ResourceManager

        # pdfminer encodes the password as Latin-1, so pass the bytes through it unchanged
        self.document = PDFDocument(PDFParser(io.BytesIO(data)), password=password.decode("latin-1"))
        #: fonts by object, for the batch; CID fonts' ToUnicode maps read in bulk (pdfminer_fonts)
        self.resources = ResourceManager()
        self._pages: list[Any] | None = None

    def pages(self) -> list[Any]:
        if self._pages is None:
            from pdfminer.pdfpage import PDFPage

            self._pages = list(PDFPage.create_pages(self.document))
        return self._pages

    def layout_text(self, number: int) -> str:
        """The page's text boxes in pdfminer's reading order, vertical writing included:
        pdfplumber's extract_text clusters characters into horizontal lines, which scrambles
        vertical Japanese (the official gazette in the corpus)."""
        from pdfminer.converter import PDFPageAggregator
        from pdfminer.layout import LAParams, LTTextContainer
        from pdfminer.pdfinterp import PDFPageInterpreter

        device = PDFPageAggregator(self.resources, laparams=LAParams(detect_vertical=True))
        PDFPageInterpreter(self.resources, device).process_page(self.pages()[number - 1])
        layout = device.get_result()
        return "\n".join(box.get_text().strip("\n") for box in layout if isinstance(box, LTTextContainer))


#: a picture on a page with a text layer is worth reading with OCR when it is at least this large
#: (square points: 2 square inches, a pasted screenshot or a scanned paragraph; not a logo or an icon)
MIN_PICTURE_AREA = 2 * 72 * 72
#: ... and neither side is shorter than this (points): a rule or a border is no text
MIN_PICTURE_SIDE = 0.4 * 72
#: a picture with more text-layer characters over it than this is a background: its text is native
MAX_CHARS_OVER_PICTURE = 10
#: text render mode 3: glyphs drawn invisibly, which is how OCR tools lay their text over a scan
INVISIBLE_RENDER_MODE = 3


@dataclass(frozen=True)
class PictureProbe:
    """What a page with a text layer draws as pictures, for OCR's decisions."""

    #: pictures that may hold text the layer lacks: large, with (almost) no text-layer characters
    #: over them; boxes as fractions of the page as drawn (x0, y0, x1, y1 from the top left)
    regions: tuple[tuple[float, float, float, float], ...]
    #: share of the page covered by pictures, 0..1
    image_area_ratio: float
    #: share of the page's text objects drawn invisibly (render mode 3): an OCR layer over a scan
    invisible_share: float


def probe_pictures(raw_page: Any, textpage: Any) -> PictureProbe:
    """The page's pictures and how its text is drawn, in one walk over its objects."""
    c = pdfium_c
    box = c.FS_RECTF()
    if not c.FPDF_GetPageBoundingBox(raw_page, box):
        return PictureProbe(regions=(), image_area_ratio=0.0, invisible_share=0.0)
    page_box = (box.left, box.bottom, box.right, box.top)
    width, height = max(box.right - box.left, 1.0), max(box.top - box.bottom, 1.0)
    pictures: list[tuple[float, float, float, float]] = []
    texts = [0, 0]  # text objects, of them invisible
    _collect_pictures(raw_page, False, 0, page_box, pictures, texts)
    area = sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in pictures)
    rotation = c.FPDFPage_GetRotation(raw_page)
    regions = []
    for x0, y0, x1, y1 in pictures:
        if (x1 - x0) * (y1 - y0) < MIN_PICTURE_AREA or min(x1 - x0, y1 - y0) < MIN_PICTURE_SIDE:
            continue
        over = c.FS_RECTF(x0, y1, x1, y0)
        if nonspace_count(_bounded_text(textpage, over)) > MAX_CHARS_OVER_PICTURE:
            continue
        fractions = ((x0 - box.left) / width, (box.top - y1) / height, (x1 - box.left) / width, (box.top - y0) / height)
        regions.append(_rotated_box(fractions, rotation))
    return PictureProbe(regions=tuple(regions), image_area_ratio=min(area / (width * height), 1.0),
                        invisible_share=texts[1] / texts[0] if texts[0] else 0.0)


def _rotated_box(box: tuple[float, float, float, float], quarter_turns: int) -> tuple[float, float, float, float]:
    """A box in page fractions (top-left origin) where it lands on the page as drawn, turned
    ``quarter_turns`` times 90 degrees clockwise (the page's /Rotate)."""
    x0, y0, x1, y1 = box
    for _ in range(quarter_turns % 4):
        x0, y0, x1, y1 = 1 - y1, x0, 1 - y0, x1
    return (round(x0, 4), round(y0, 4), round(x1, 4), round(y1, 4))


#: glyphs without Unicode this close (points) on one line are one region; a region is padded
#: (points) so OCR sees the glyphs whole: less across, where the next word may stand a space away
GLYPH_GAP, GLYPH_PAD, GLYPH_PAD_ACROSS = 12.0, 4.0, 1.0
#: regions kept a page at most (a page of a font with no map at all is the verdict's, not these)
MAX_GLYPH_REGIONS = 8


def unmapped_glyph_regions(raw_page: Any, textpage: Any, math_fonts: dict[int, bool]
                           ) -> tuple[tuple[float, float, float, float], ...]:
    """Boxes (fractions of the page as displayed, x0, y0, x1, y1 from the top left) around the runs
    of glyphs pdfium found no Unicode for, drawn by fonts that are not math fonts: what the text
    layer leaves out, for OCR to read; a glyph alone between spaces is a symbol (a form's checkbox),
    no word, and is left alone. ``math_fonts`` caches, by font handle address, whether a
    font is one of TeX's math fonts."""
    c = pdfium_c
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    runs: list[list[float]] = []  # x0, y0, x1, y1 in page space
    lone: list[bool] = []  # ... the run is one glyph between spaces (a checkbox, a bullet: no word)
    count = c.FPDFText_CountChars(textpage)

    def spaced(index: int) -> bool:
        return not 0 <= index < count or c.FPDFText_GetUnicode(textpage, index) <= 32

    for index in range(count):
        if c.FPDFText_HasUnicodeMapError(textpage, index) != 1:
            continue
        obj = c.FPDFText_GetTextObject(textpage, index)
        if obj and pdf_fonts.draws_math(c.FPDFTextObj_GetFont(obj), math_fonts):
            continue
        if not c.FPDFText_GetCharBox(textpage, index, left, right, bottom, top):
            continue
        glyph = [left.value, bottom.value, right.value, top.value]
        last = runs[-1] if runs else None
        if last is not None and glyph[0] - last[2] <= GLYPH_GAP and min(glyph[3], last[3]) > max(glyph[1], last[1]) - 1:
            last[:] = [min(last[0], glyph[0]), min(last[1], glyph[1]), max(last[2], glyph[2]), max(last[3], glyph[3])]
            lone[-1] = False
        else:
            runs.append(glyph)
            lone.append(spaced(index - 1) and spaced(index + 1))
    frame = _Frame(raw_page)
    regions = []
    for x0, y0, x1, y1 in [run for run, alone in zip(runs, lone, strict=True) if not alone][:MAX_GLYPH_REGIONS]:
        shown = frame.displayed(x0 - GLYPH_PAD_ACROSS, y0 - GLYPH_PAD, x1 + GLYPH_PAD_ACROSS, y1 + GLYPH_PAD)
        regions.append((shown[0], shown[1], shown[2], shown[3]))
    return tuple(regions)


def _collect_pictures(parent: Any, is_form: bool, depth: int, page_box: tuple[float, float, float, float],
                      pictures: list[tuple[float, float, float, float]], texts: list[int]) -> None:
    c = pdfium_c
    count_fn, get_fn = (
        (c.FPDFFormObj_CountObjects, c.FPDFFormObj_GetObject)
        if is_form
        else (c.FPDFPage_CountObjects, c.FPDFPage_GetObject)
    )
    left, bottom, right, top = page_box
    for i in range(count_fn(parent)):
        obj = get_fn(parent, i)
        kind = c.FPDFPageObj_GetType(obj)
        if kind == c.FPDF_PAGEOBJ_TEXT:
            texts[0] += 1
            if c.FPDFTextObj_GetTextRenderMode(obj) == INVISIBLE_RENDER_MODE:
                texts[1] += 1
        elif kind == c.FPDF_PAGEOBJ_IMAGE:
            x0, y0, x1, y1 = (ctypes.c_float() for _ in range(4))
            if c.FPDFPageObj_GetBounds(obj, x0, y0, x1, y1):
                clipped = (max(x0.value, left), max(y0.value, bottom), min(x1.value, right), min(y1.value, top))
                if clipped[2] > clipped[0] and clipped[3] > clipped[1]:
                    pictures.append(clipped)
        elif kind == c.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
            _collect_pictures(obj, True, depth + 1, page_box, pictures, texts)


def probe_layout(raw_page: Any, width: float, height: float) -> LayoutProbe:
    """Count what the page draws without rendering it: images (and their area), paths, text."""
    counts = [0, 0, 0]  # images, paths, text objects
    image_area = _walk_objects(raw_page, False, 0, width, height, counts)
    layout = PageLayout(
        image_count=counts[0],
        image_area_ratio=min(image_area / max(width * height, 1.0), 1.0),
        has_vector_glyphs=counts[1] >= VECTOR_GLYPH_PATHS and counts[2] == 0,
    )
    return LayoutProbe(layout=layout, text_objects=counts[2])


def _walk_objects(parent: Any, is_form: bool, depth: int, width: float, height: float, counts: list[int]) -> float:
    """Tally object types (into ``counts``) and return the page area covered by images."""
    c = pdfium_c
    count_fn, get_fn = (
        (c.FPDFFormObj_CountObjects, c.FPDFFormObj_GetObject)
        if is_form
        else (c.FPDFPage_CountObjects, c.FPDFPage_GetObject)
    )
    get_type = c.FPDFPageObj_GetType
    text_kind, path_kind, image_kind, form_kind = (
        c.FPDF_PAGEOBJ_TEXT,
        c.FPDF_PAGEOBJ_PATH,
        c.FPDF_PAGEOBJ_IMAGE,
        c.FPDF_PAGEOBJ_FORM,
    )
    area = 0.0
    for i in range(count_fn(parent)):
        obj = get_fn(parent, i)
        kind = get_type(obj)
        if kind == text_kind:
            counts[2] += 1
        elif kind == path_kind:
            counts[1] += 1
        elif kind == image_kind:
            counts[0] += 1
            left, bottom, right, top = (ctypes.c_float() for _ in range(4))
            if c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
                w = min(right.value, width) - max(left.value, 0.0)
                h = min(top.value, height) - max(bottom.value, 0.0)
                area += max(w, 0.0) * max(h, 0.0)
        elif kind == form_kind and depth < MAX_FORM_DEPTH:
            area += _walk_objects(obj, True, depth + 1, width, height, counts)
    return area
