"""pdfminer's second opinion reads a CID font's ToUnicode map in bulk, once a batch, and the map is
pdfminer's own entry for entry (papersift.pdfminer_fonts)."""

from __future__ import annotations

import io

import pytest
from pdf_factory import wide_to_unicode_pdf
from pdfminer.cmapdb import CMapParser, FileUnicodeMap
from pdfminer.pdfinterp import PDFResourceManager

from papersift.pdf_engines import PdfHandle, _Pdfminer
from papersift.pdfminer_fonts import _ToUnicodeParser


def _cmap(body: bytes) -> bytes:
    return (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /T def "
            b"1 begincodespacerange <0000> <FFFF> endcodespacerange " + body + b" endcmap end end")


#: (CMap body, ranges added in one step)
MAPS = {
    "the BMP in two ranges, as libharu writes it": (b"2 beginbfrange <0000> <D7FF> <0000> <E000> <FFFF> <E000> "
                                                    b"endbfrange", 2),
    "a range across the surrogates": (b"1 beginbfrange <0100> <0200> <D7C0> endbfrange", 0),
    "a range past U+FFFF": (b"1 beginbfrange <0010> <0030> <FFF0> endbfrange", 0),
    "surrogate pairs counted up": (b"1 beginbfrange <0000> <003F> <D83DDE00> endbfrange", 1),
    "surrogate pairs past the low half": (b"1 beginbfrange <0000> <003F> <D83DDFF0> endbfrange", 0),
    "an array of destinations": (b"1 beginbfrange <0041> <0043> [<0061> <0062> <0063>] endbfrange", 0),
    "a no-break space where a space is mapped": (b"1 beginbfchar <00A0> <0020> endbfchar "
                                                 b"1 beginbfrange <0000> <00FF> <0000> endbfrange", 1),
    "later ranges over earlier ones, fast and slow mixed": (
        b"3 beginbfrange <0000> <00FF> <0100> <0010> <0012> [<0041> <0042> <0043>] <0011> <0020> <3000> "
        b"endbfrange", 2),
    "codes of unequal lengths": (b"1 beginbfrange <00> <00FF> <0041> endbfrange", 0),
    "a three-byte destination": (b"1 beginbfrange <0000> <0010> <004100> endbfrange", 0),
    "an incomplete last range": (b"1 beginbfrange <0000> <0010> <0041> <0020> endbfrange", 1),
}


@pytest.mark.parametrize("name", sorted(MAPS))
def test_a_tounicode_map_read_in_bulk_is_pdfminers_entry_for_entry(name: str) -> None:
    body, at_once = MAPS[name]
    data = _cmap(body)
    theirs, ours = FileUnicodeMap(), FileUnicodeMap()
    CMapParser(theirs, io.BytesIO(data)).run()
    parser = _ToUnicodeParser(ours, io.BytesIO(data))
    parser.run()
    assert ours.cid2unichr == theirs.cid2unichr and ours.attrs == theirs.attrs
    assert parser.ranges_at_once == at_once


PAGES = ["Первая страница текста", "第二页的文字", "Third page, plain Latin"]


def test_a_cid_fonts_tounicode_map_is_read_once_for_every_page_of_a_batch() -> None:
    with PdfHandle(wide_to_unicode_pdf(PAGES), ()) as handle:
        texts = [handle.text("pdfminer", number)[0] for number in (1, 2, 3)]
        assert handle.miner.resources.maps_read == 1
    assert [text.replace(" ", "") for text in texts] == [page.replace(" ", "") for page in PAGES]


def test_pdfminer_reads_a_page_the_same_with_its_fonts_map_read_in_bulk() -> None:
    data = wide_to_unicode_pdf(PAGES)
    ours, theirs = _Pdfminer(data, b""), _Pdfminer(data, b"")
    theirs.resources = PDFResourceManager(caching=True)
    assert [ours.layout_text(n) for n in (1, 2, 3)] == [theirs.layout_text(n) for n in (1, 2, 3)]
    assert ours.resources.maps_read == 1
