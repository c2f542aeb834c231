"""pdfminer's reading of a CID font's ToUnicode map, the same map at a fraction of its cost.

pdfminer expands every ``bfrange`` of a ToUnicode CMap one code at a time in Python (a bytes
pack, a UTF-16 decode and a method call per code): a font whose map spans the whole Basic
Multilingual Plane in two ranges (libharu writes such maps) holds 129,024 codes, and reading it
cost pdfminer ~0.1 s, more than the page it was read for. :class:`ResourceManager` builds the
same map, entry for entry (:class:`_ToUnicodeParser`): a range whose codes are consecutive
characters is added in one step, every other range as pdfminer adds it. Imported only with
pdfminer (a page the ladder asks pdfminer about).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from pdfminer import settings
from pdfminer.cmapdb import CMapParser, FileUnicodeMap
from pdfminer.pdffont import PDFCIDFont, PDFFont
from pdfminer.pdfinterp import PDFResourceManager
from pdfminer.pdftypes import PDFStream
from pdfminer.psparser import PSKeyword, literal_name
from pdfminer.utils import choplist, nunpack

#: UTF-16's surrogates: a code among them decodes to nothing alone ("ignore") or pairs up
_SURROGATES = range(0xD800, 0xE000)
_HIGH_SURROGATES = range(0xD800, 0xDC00)
_LOW_SURROGATES = range(0xDC00, 0xE000)
_NBSP = "\u00a0"


def _consecutive_characters(code: bytes, count: int) -> int | None:
    """The first character of a bfrange's destination when its ``count`` codes decode (as pdfminer
    decodes them: the last 4 bytes counted up, as UTF-16BE, errors ignored) to ``count`` consecutive
    single characters: a 2-byte BMP code whose range crosses no surrogate and no 0xFFFF, or a
    surrogate pair whose low half stays among the low surrogates. None for every other range."""
    if len(code) == 2:
        first = nunpack(code)
        last = first + count - 1
        if last > 0xFFFF or (first < _SURROGATES.stop and last >= _SURROGATES.start):
            return None
        return first
    if len(code) == 4:
        value = nunpack(code)
        high, low = value >> 16, value & 0xFFFF
        if high in _HIGH_SURROGATES and low in _LOW_SURROGATES and low + count - 1 < _LOW_SURROGATES.stop:
            return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        return None
    return None


class _ToUnicodeParser(CMapParser):
    """pdfminer's CMapParser, its ``endbfrange`` adding a range of consecutive characters to the
    map in one dictionary update; each other range (an array of destinations, a longer code, one
    that crosses a surrogate) is handed to pdfminer's own code, in the order the CMap lists them."""

    def __init__(self, cmap: FileUnicodeMap, fp: Any) -> None:
        super().__init__(cmap, fp)
        self.map = cmap
        #: ranges added in one step (for the tests: the fast path is taken)
        self.ranges_at_once = 0

    def do_keyword(self, pos: int, token: PSKeyword) -> None:
        if token is not self.KEYWORD_ENDBFRANGE or not self._in_cmap:
            super().do_keyword(pos, token)
            return
        entries = self.popall()
        pending: list[Any] = []
        for triple in choplist(3, entries):
            start_entry, end_entry, code_entry = triple
            start_byte, end_byte, code = start_entry[1], end_entry[1], code_entry[1]
            first = None
            if isinstance(start_byte, bytes) and isinstance(end_byte, bytes) and len(start_byte) == len(end_byte) \
                    and isinstance(code, bytes):
                start, end = nunpack(start_byte), nunpack(end_byte)
                if end >= start:
                    first = _consecutive_characters(code, end - start + 1)
            if first is None:
                pending.extend(triple)
                continue
            self._pdfminers(pos, pending)
            self._add_range(start, end, first)
        self._pdfminers(pos, pending)

    def _pdfminers(self, pos: int, pending: list[Any]) -> None:
        """pdfminer's own ``endbfrange`` over the ranges in ``pending`` (emptied)."""
        if pending:
            self.push(*pending)
            pending.clear()
            super().do_keyword(pos, self.KEYWORD_ENDBFRANGE)

    def _add_range(self, start: int, end: int, first: int) -> None:
        """Codes ``start``..``end`` -> characters from ``first`` on, as FileUnicodeMap.add_cid2unichr
        adds them one by one: a no-break space does not replace a space the map holds already."""
        known = self.map.cid2unichr
        added = dict(zip(range(start, end + 1), map(chr, range(first, first + end - start + 1)), strict=True))
        space_at = start + 0xA0 - first
        if start <= space_at <= end and known.get(space_at) == " ":
            del added[space_at]
        known.update(added)
        self.ranges_at_once += 1


def read_to_unicode(data: bytes) -> FileUnicodeMap:
    """A ToUnicode CMap's bytes as pdfminer's map of it."""
    unicode_map = FileUnicodeMap()
    _ToUnicodeParser(unicode_map, io.BytesIO(data)).run()
    return unicode_map


class ResourceManager(PDFResourceManager):
    """pdfminer's resource manager (fonts cached by object, for the batch), its CID fonts' ToUnicode
    maps read by :func:`read_to_unicode`. The font is pdfminer's own, built from its dictionary with
    the map's stream emptied, the map read apart put in its place; a map whose stream cannot be
    read, or that the fast reading fails on, is left to pdfminer (which raises as it would)."""

    def __init__(self) -> None:
        super().__init__(caching=True)
        #: ToUnicode maps read (for the tests: a font is built once a batch)
        self.maps_read = 0

    def get_font(self, objid: object, spec: Mapping[str, object]) -> PDFFont:
        if (objid and objid in self._cached_fonts) or settings.STRICT or "Subtype" not in spec \
                or literal_name(spec["Subtype"]) not in ("CIDFontType0", "CIDFontType2"):
            return super().get_font(objid, spec)
        stream = spec.get("ToUnicode")  # as pdfminer: a stream in the dictionary, not a reference to one
        if not isinstance(stream, PDFStream):
            return super().get_font(objid, spec)
        try:
            unicode_map = read_to_unicode(stream.get_data())
        except Exception:
            return super().get_font(objid, spec)
        self.maps_read += 1
        font = PDFCIDFont(self, {**spec, "ToUnicode": PDFStream({}, b"")})
        font.unicode_map = unicode_map
        if objid and self.caching:
            self._cached_fonts[objid] = font
        return font
