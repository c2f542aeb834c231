"""OCR'd pages get structure blocks from Tesseract's layout (issue 19): a paragraph block a
paragraph of the reading, boxed on the page, through `papersift extract`'s path on pictures built
in code; text.txt keeps the reading's lines as they are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont
from scan_factory import FONT, image_bytes, scanned_pdf
from test_ocr_stage import drop

from papersift.layout import MARKDOWN_FILE, TEXT_FILE, page_file, results_prefix
from papersift.ocr import tesseract
from papersift.ocr.layout import paragraph_blocks
from papersift.ocr.reading import TESSERACT, OcrReading
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.steps.ocr import default_engines
from papersift.storage import LocalDirStore
from papersift.structure import PARAGRAPH

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")

FIRST = ("Scanned letters come to us every day and their",
         "text is read by the engine that does the recog-",
         "nition of the words on the page.")
SECOND = ("A second paragraph stands apart from the first",
          "one by a wide gap of white paper between them.")


def two_paragraphs(width: int = 1300, gap: int = 120) -> tuple[Image.Image, list[float]]:
    """A page of two paragraphs drawn apart; and the y (fraction) of the gap's middle."""
    font = ImageFont.truetype(str(FONT), 36)
    line, margin = 58, 80
    height = 2 * margin + line * (len(FIRST) + len(SECOND)) + gap
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    y = margin
    for text in FIRST:
        draw.text((margin, y), text, font=font, fill=0)
        y += line
    middle = (y + gap / 2) / height
    y += gap
    for text in SECOND:
        draw.text((margin, y), text, font=font, fill=0)
        y += line
    return image, [margin / width, middle]


@needs_tesseract
@pytest.mark.parametrize("name", ["letter.png", "letter.pdf"])  # a picture; a scanned PDF (structure over pages)
def test_two_paragraphs_drawn_apart_are_two_paragraph_blocks_boxed_on_the_page(tmp_path: Path, name: str) -> None:
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    image, (left, middle) = two_paragraphs()
    data = image_bytes(image) if name.endswith(".png") else scanned_pdf([image])
    document = drop(store, tmp_path, name, data)
    report = process_document(store, document, settings, engines=default_engines(None, page_seconds=60))
    assert report.pages[0].status == "ocr"
    prefix = results_prefix(document.doc_id)
    page = json.loads(store.get(prefix + page_file(1)))
    blocks = page["blocks"]
    assert [b["role"] for b in blocks] == [PARAGRAPH, PARAGRAPH]
    first, second = (b["bbox"] for b in blocks)
    assert first[3] < middle < second[1]  # the gap lies between the boxes
    for x0, y0, x1, y1 in (first, second):
        assert 0.0 <= x0 < x1 <= 1.0 and 0.0 <= y0 < y1 <= 1.0
        assert x0 == pytest.approx(left, abs=0.02)
    assert "recognition of the words" in blocks[0]["text"]  # the line-end hyphen mended
    assert blocks[1]["text"].startswith("A second paragraph") and "\n" not in blocks[1]["text"]
    text = store.get(prefix + TEXT_FILE).decode()
    assert "recog-\nnition" in text  # text.txt keeps the reading's lines
    markdown = store.get(prefix + MARKDOWN_FILE).decode()
    assert markdown == f"{blocks[0]['text']}\n\n{blocks[1]['text']}"


def test_the_tsv_gives_each_paragraph_the_box_around_its_words_as_fractions_of_the_picture() -> None:
    header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [
        "1\t1\t0\t0\t0\t0\t0\t0\t1000\t500\t-1\t",
        "5\t1\t1\t1\t1\t1\t100\t50\t200\t40\t90\tOne", "5\t1\t1\t1\t2\t1\t100\t100\t400\t40\t90\ttwo",
        "5\t1\t2\t1\t1\t1\t500\t300\t100\t50\t90\tThree",
    ]
    read = tesseract._parse_tsv("\n".join([header, *rows]), "eng")
    assert read.text == "One\ntwo\n\nThree"
    assert read.boxes == ((0.1, 0.1, 0.5, 0.28), (0.5, 0.6, 0.6, 0.7))


@pytest.mark.parametrize(("rotate", "expected"), [
    (0, (0.1, 0.2, 0.3, 0.4)),
    (90, (0.2, 0.7, 0.4, 0.9)),  # the picture was turned a quarter clockwise to read it
    (180, (0.7, 0.6, 0.9, 0.8)),
    (270, (0.6, 0.1, 0.8, 0.3)),
])
def test_a_box_on_the_turned_picture_is_put_back_on_the_page(rotate: int, expected: tuple[float, ...]) -> None:
    assert tesseract.on_page((0.1, 0.2, 0.3, 0.4), rotate) == pytest.approx(expected)


def test_a_box_on_the_picture_cut_to_its_print_is_put_back_on_the_whole_page() -> None:
    assert tesseract.on_page((0.0, 0.5, 1.0, 1.0), 0, crop=(0.2, 0.1, 0.6, 0.5)) == pytest.approx((0.2, 0.3, 0.6, 0.5))


def test_boxes_that_do_not_match_the_paragraphs_one_for_one_give_no_blocks() -> None:
    reading = OcrReading(engine=TESSERACT, text="a\n\nb", confidence=0.9, words=2, seconds=0.1,
                         boxes=((0.0, 0.0, 1.0, 0.5),))
    assert paragraph_blocks(reading, ["a", "", "b"], known=lambda word: True) == []
