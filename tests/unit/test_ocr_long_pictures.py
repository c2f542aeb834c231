"""Pictures longer than Tesseract takes (issue 18): Tesseract 5 refuses more than 32,767 px a
side, so a receipt roll or a full-length screenshot is read in tiles cut between lines of print;
a strip too narrow to hold a line in any tile (1 x 2,000,000 px) ends ``limit_exceeded`` naming
its size, and nothing reaches stderr on the way (libjpeg's "Maximum supported image dimension
is 65500 pixels" came from the report page's thumbnail)."""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from scan_factory import image_bytes, text_image
from test_ocr_stage import drop

from papersift.ocr import pictures, tesseract
from papersift.pipeline import process_document
from papersift.report_page import thumbnail_from_image
from papersift.settings import Settings
from papersift.steps.ocr import default_engines
from papersift.storage import LocalDirStore

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")


def test_tiles_are_cut_in_the_gaps_between_lines_and_fit_tesseract() -> None:
    """Lines of print 30 px tall every 100 px down a 70,000 px roll: every cut falls in a gap."""
    roll = Image.new("L", (300, 70_000), 255)
    draw = ImageDraw.Draw(roll)
    for top in range(40, 70_000, 100):
        draw.rectangle((20, top, 280, top + 30), fill=0)
    spans = pictures.tile_spans(roll, tesseract.MAX_SIDE, tesseract.TILE_CUT_SEARCH, across=True)
    assert spans[0][0] == 0 and spans[-1][1] == 70_000 and len(spans) == 3
    assert all(end - start <= tesseract.MAX_SIDE for start, end in spans)
    assert all(a[1] == b[0] for a, b in pairwise(spans))
    for _, end in spans[:-1]:
        assert roll.getpixel((150, end)) == 255 and roll.getpixel((150, end - 1)) == 255


def test_a_picture_within_the_limit_is_one_tile() -> None:
    assert pictures.tile_spans(Image.new("L", (500, 800), 255), tesseract.MAX_SIDE, 2000, across=True) == [(0, 800)]


@needs_tesseract
def test_a_receipt_roll_taller_than_tesseract_takes_is_read_in_tiles() -> None:
    roll = Image.new("L", (700, 36_000), 255)
    lines = {150: "The receipt begins with bread.", 32_500: "Halfway there are apples.",
             35_600: "The total is forty two."}
    for top, words in lines.items():
        roll.paste(text_image([words], font_size=28, width=700, margin=20), (0, top))
    reading = tesseract.read_image(roll, ("eng",))
    for words in lines.values():
        assert words in reading.text
    assert "read in 2 tiles" in reading.notes[0]


@needs_tesseract
def test_a_1_by_2000000_px_png_ends_limit_exceeded_naming_its_size_and_prints_nothing(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    strip = Image.new("L", (1, 2_000_000), 255)
    strip.paste(0, (0, 0, 1, 1_000_000))  # half of it ink: no blank picture
    store = LocalDirStore(tmp_path / "store")
    document = drop(store, tmp_path, "strip.png", image_bytes(strip))
    report = process_document(store, document, Settings(), engines=default_engines(None, page_seconds=60))
    assert report.status == "limit_exceeded"
    assert "1 x 2,000,000 px" in report.reason and report.pages[0].errors[0].code == "limit_exceeded"
    captured = capfd.readouterr()
    assert captured.err == ""


def test_a_thumbnail_of_a_long_strip_fits_its_box() -> None:
    thumbnail = thumbnail_from_image(1, Image.new("L", (3, 1_500_000), 255))
    assert thumbnail.height <= 4 * 280 and thumbnail.data[:2] == b"\xff\xd8"
