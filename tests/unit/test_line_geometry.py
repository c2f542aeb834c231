"""The line pass the extraction makes for structure (issue 19): pdfium's lines' boxes, heights and
weight, and the benchmark's side without it."""

from __future__ import annotations

import math
import random

from test_structure import BODY

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
