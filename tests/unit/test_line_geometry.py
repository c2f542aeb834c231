"""The line pass the extraction makes for structure (issue 19): pdfium's lines' boxes, heights and
weight, and the benchmark's side without it."""

from __future__ import annotations

import ctypes
import io
import math
import random
import re

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject
from test_structure import BODY

from papersift import pdf_engines
from papersift.formats.pdf import extract_pages
from papersift.pdf_engines import fractions
from papersift.settings import Settings


def test_a_box_is_rounded_as_round_rounds_to_four_places_and_kept_within_the_page() -> None:
    draw = random.Random(19)
    values = [draw.random() for _ in range(200_000)]
    values += [k / 10000 + d for k in range(0, 10001, 7) for d in (0.0, 0.00005, -0.00005, 5e-17)]
    values += [0.03125, 0.5, 0.00005, 0.99995, 1.0, 0.0, -0.0, 1e-300]  # ties, the ends, signed zero
    expected = [round(value, 4) if 0.0 <= value <= 1.0 else (0.0 if value < 0.0 else 1.0) for value in values]
    got = fractions(values)
    assert all(a == b and math.copysign(1, a) == math.copysign(1, b) for a, b in zip(got, expected, strict=True))
    assert fractions([-0.2, 1.3, math.inf, -math.inf, math.nan]) == [0.0, 1.0, 1.0, 0.0, 1.0]


def test_extraction_without_structure_reads_the_same_text_and_asks_no_line_geometry(pdf_factory) -> None:
    data = pdf_factory.styled_pdf([[("A Report on Sizes", 18), ("1 Introduction", 10, "Helvetica-Bold"),
                                    *[(line, 10) for line in BODY]]])
    settings = Settings(ocr_mode="off")
    (full,), (bare,) = extract_pages(data, settings, 1, 1), extract_pages(data, settings, 1, 1, structure=False)
    assert full.text == bare.text and full.text.startswith("A Report on Sizes")
    assert full.line_heights and full.line_boxes and full.bold_lines == [1]
    assert (bare.line_heights, bare.line_boxes, bare.bold_lines, bare.tag_headings) == ([], [], [], [])


def test_the_line_pass_rounds_to_the_nearest_integer_as_round_does() -> None:
    # _line_geometry's inline rounding: adding and taking away _ROUNDER is round() on the page's range,
    # and the float divided by 10,000 is the int's quotient
    draw = random.Random(7)
    values = [draw.uniform(0.5, 10000.0) for _ in range(100_000)] + [k + 0.5 for k in range(0, 10000, 3)]
    for value in values:
        whole = value + pdf_engines._ROUNDER - pdf_engines._ROUNDER
        assert whole == round(value) and whole / 10000.0 == round(value) / 10000


def test_raw_lines_are_the_matches_of_a_line_without_breaks() -> None:
    draw = random.Random(11)
    texts = ["".join(draw.choice("ab \r\n\f") for _ in range(draw.randint(0, 14))) for _ in range(20_000)]
    texts += ["line one\r\nline two \r\n\r\nthree", "", "\r\n", "a\r\r\nb", "a\nb\r\nc"]
    for text in texts:
        expected = [(m.start(), m.group(0)) for m in re.finditer(r"[^\r\n\f]*", text)]
        if "\r" not in text.replace("\r\n", "") and "\n" not in text.replace("\r\n", "") and "\f" not in text:
            expected = []
            offset = 0
            for line in text.split("\r\n"):
                expected.append((offset, line))
                offset += len(line) + 2
        starts, lines = pdf_engines._raw_lines(text)
        assert list(zip(starts, lines, strict=True)) == expected, text


def test_the_likely_shifts_are_those_of_the_whole_text_decoded_in_their_order() -> None:
    draw = random.Random(13)
    units = [0x61, 0x62, 0x20, 0xD83D, 0xDE00, 0xDC00, 0xD800, 0xFFFD, 0x0]  # pairs, lone surrogates
    chunk = pdf_engines.SHIFT_CHUNK
    for _ in range(3000):
        ahead = b"".join(draw.choice(units).to_bytes(2, "little") for _ in range(draw.randint(0, 3 * chunk)))
        whole = ahead.decode("utf-16-le", errors="replace")
        for wanted in ["ab", "a", "\ufffd\ufffd", "\U0001F600a", " \U0001F600", whole[chunk - 1:chunk + 1]]:
            if not wanted:
                continue
            expected = [found for found in range(len(whole)) if whole.startswith(wanted, found)]
            assert list(pdf_engines._shifts_reading(ahead, wanted, 4)) == [4 + 1 + found for found in expected]


def test_bold_is_judged_once_a_font_as_asking_pdfium_each_time_judges_it(pdf_factory) -> None:
    # a font named beyond the name buffer: pdfium leaves the buffer as it was, and what the names asked
    # before left there is read: asking once a font must still read what asking each time would have
    data = pdf_factory.styled_pdf([[("Bold words", 12, "Helvetica-Bold"), ("plain words", 12, "Helvetica"),
                                    ("a long name", 12, "Times-Roman"), ("oblique", 12, "Helvetica-BoldOblique")]])
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    for font in writer.pages[0]["/Resources"]["/Font"].values():
        if font.get_object()["/BaseFont"] == "/Times-Roman":
            font.get_object()[NameObject("/BaseFont")] = NameObject("/Times-Roman" + "X" * 150)
    out = io.BytesIO()
    writer.write(out)
    document = pdfium.PdfDocument(out.getvalue())
    page = document[0]
    text = page.get_textpage()  # kept: the text page is closed with it
    textpage = text.raw
    count = pdfium_c.FPDFText_CountChars(textpage)

    def asked_each_time(order: list[int]) -> list[bool]:
        name, flags, verdicts = ctypes.create_string_buffer(128), ctypes.c_int(), []
        for index in order:
            if pdfium_c.FPDFText_GetFontWeight(textpage, index) >= pdf_engines.BOLD_WEIGHT:
                verdicts.append(True)
                continue
            size = pdfium_c.FPDFText_GetFontInfo(textpage, index, name, len(name), flags)
            verdicts.append(size > 0 and (bool(flags.value & pdf_engines._FORCE_BOLD) or pdf_engines._BOLD_NAME.search(
                name.raw[: min(size, len(name)) - 1].decode("latin-1")) is not None))
        return verdicts

    long_named = [index for index in range(count) if pdfium_c.FPDFText_GetFontInfo(
        textpage, index, None, 0, None) > 128]
    assert long_named, "the renamed font's name does not fit the buffer"
    draw = random.Random(17)
    for _ in range(300):
        order = [draw.randrange(count) for _ in range(12)]
        weights = pdf_engines._Weights(textpage)
        assert [weights.bold(index) for index in order] == asked_each_time(order), order
