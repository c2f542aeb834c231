"""OCR'd pages get structure blocks from Tesseract's layout (issue 19): a paragraph block a
paragraph of the reading, boxed on the page, through `papersift extract`'s path on pictures built
in code; text.txt keeps the reading's lines as they are."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont
from scan_factory import FONT, image_bytes, scanned_pdf
from test_ocr_stage import drop
from textract_replay import ReplayingTextract, input_bytes

from papersift.layout import MARKDOWN_FILE, TEXT_FILE, page_file, results_prefix
from papersift.ocr import tesseract
from papersift.ocr.blocks import paragraph_blocks
from papersift.ocr.reading import TESSERACT, OcrReading
from papersift.ocr.textract import ANALYZE_DOCUMENT, TextractReader, reading_from_response
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.steps.ocr import default_engines
from papersift.storage import LocalDirStore
from papersift.structure import PARAGRAPH, markdown_body

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


# --- Textract's LAYOUT blocks ------------------------------------------------------------------


def _layout_response(layouts: list[tuple[str, list[str]]]) -> dict:
    """An AnalyzeDocument answer with LAYOUT: each layout block over its lines, one a row of 5%."""
    blocks: list[dict] = []
    page_children = []
    row = 0
    for index, (kind, texts) in enumerate(layouts):
        line_ids = []
        for text in texts:
            row += 1
            line_ids.append(f"line-{row}")
            blocks.append({"BlockType": "LINE", "Id": f"line-{row}", "Text": text, "Geometry": {"BoundingBox": {
                "Left": 0.1, "Top": row * 0.05, "Width": 0.5, "Height": 0.04}}})
        page_children.append(f"layout-{index}")
        blocks.append({"BlockType": kind, "Id": f"layout-{index}",
                       "Relationships": [{"Type": "CHILD", "Ids": line_ids}],
                       "Geometry": {"BoundingBox": {"Left": 0.1, "Top": (row - len(texts) + 1) * 0.05, "Width": 0.5,
                                                    "Height": len(texts) * 0.05 - 0.01}}})
    return {"Blocks": [{"BlockType": "PAGE", "Id": "page", "Relationships": [{"Type": "CHILD", "Ids": page_children}]},
                       *blocks]}


def test_textracts_layout_blocks_become_headings_paragraphs_and_set_apart_lines() -> None:
    response = _layout_response([
        ("LAYOUT_HEADER", ["Annual report 2024"]), ("LAYOUT_TITLE", ["The harbour"]),
        ("LAYOUT_SECTION_HEADER", ["Ships"]), ("LAYOUT_TEXT", ["Ships came in every day and were un-", "loaded."]),
        ("LAYOUT_LIST", ["- coal", "- grain"]), ("LAYOUT_PAGE_NUMBER", ["7"]),
    ])
    reading = reading_from_response(response, api=ANALYZE_DOCUMENT)
    assert reading.text == ("Annual report 2024\n\nThe harbour\n\nShips\n\nShips came in every day and were un-\n"
                            "loaded.\n\n- coal\n- grain\n\n7")
    lines = reading.text.split("\n")
    blocks = paragraph_blocks(reading, lines, known=lambda word: word == "unloaded")
    assert [(b.role, b.level, b.text) for b in blocks] == [
        ("header", 0, "Annual report 2024"), ("heading", 1, "The harbour"), ("heading", 2, "Ships"),
        ("paragraph", 0, "Ships came in every day and were unloaded."), ("lines", 0, "- coal\n- grain"),
        ("page_number", 0, "7"),
    ]
    assert blocks[3].bbox == pytest.approx([0.1, 0.2, 0.6, 0.29])
    assert markdown_body(lines, blocks) == ("# The harbour\n\n## Ships\n\nShips came in every day and were unloaded."
                                            "\n\n- coal\n- grain")


def test_a_recorded_analyze_document_answer_gives_a_boxed_block_for_each_of_its_layout_blocks() -> None:
    replay = ReplayingTextract()
    reading = TextractReader(replay.client).read(input_bytes("paystub_tables.png"), tables=True)
    blocks = paragraph_blocks(reading, reading.text.split("\n"), known=lambda word: False)
    assert len(blocks) == len(reading.boxes) == len(reading.roles) >= 7  # 6 LAYOUT_TEXT, 1 LAYOUT_TABLE
    assert {b.role for b in blocks} <= {"paragraph", "lines"} and "paragraph" in {b.role for b in blocks}
    for block in blocks:
        x0, y0, x1, y1 = block.bbox or []
        assert 0.0 <= x0 < x1 <= 1.0 and 0.0 <= y0 < y1 <= 1.0


def test_a_detect_document_text_answer_has_no_layout_and_gives_no_blocks() -> None:
    replay = ReplayingTextract()
    reading = TextractReader(replay.client).read(input_bytes("single-page-1.png"))
    assert reading.boxes == () and paragraph_blocks(reading, reading.text.split("\n")) == []


def _book_page(number: int, body: Sequence[str], width: int = 1300) -> Image.Image:
    """A scanned book's page: its running head, a gap, its prose, a gap, its number."""
    font = ImageFont.truetype(str(FONT), 36)
    line, margin, gap = 58, 80, 140
    height = 2 * margin + line * (len(body) + 2) + 2 * gap
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    draw.text((margin, margin), "THE HARBOUR LOG OF SHIPS", font=font, fill=0)
    y = margin + line + gap
    for text in body:
        draw.text((margin, y), text, font=font, fill=0)
        y += line
    draw.text((width // 2, y + gap), str(number), font=font, fill=0)
    return image


@needs_tesseract
def test_a_scanned_books_running_head_and_page_numbers_are_set_apart_in_their_boxes(tmp_path: Path) -> None:
    bodies = [("Ships come into the harbour every morning and", "the master writes each one into the log."),
              ("The pilot boards them at the outer mark and", "brings them in along the dredged channel."),
              ("Cargo is landed on the quay by the cranes and", "the customs officers count every crate."),
              ("At night the lamps are lit along the breakwater", "and the watchman walks his rounds.")]
    store, settings = LocalDirStore(tmp_path / "store"), Settings()
    data = scanned_pdf([_book_page(number, body) for number, body in enumerate(bodies, start=141)])
    document = drop(store, tmp_path, "log.pdf", data)
    report = process_document(store, document, settings, engines=default_engines(None, page_seconds=60))
    assert [page.status for page in report.pages] == ["ocr"] * 4
    prefix = results_prefix(document.doc_id)
    for number in range(1, 5):
        blocks = json.loads(store.get(prefix + page_file(number)))["blocks"]
        assert [b["role"] for b in blocks] == ["header", PARAGRAPH, "page_number"], blocks
        assert all(b["bbox"] for b in blocks), "the engine's boxes stay"
    markdown = store.get(prefix + MARKDOWN_FILE).decode()
    assert "HARBOUR LOG" not in markdown and "the master writes each one" in markdown
    assert "THE HARBOUR LOG OF SHIPS" in store.get(prefix + TEXT_FILE).decode(), "text.txt keeps every line"


def test_textract_is_asked_for_layout_only_where_the_settings_want_it_and_each_call_is_priced_as_asked() -> None:
    from papersift.ledger import textract_price

    replay = ReplayingTextract()
    reader = TextractReader(replay.client)
    plain, layout = reader.read(input_bytes("single-page-1.png")), reader.read(input_bytes("test.png"), layout=True)
    both = reader.read(input_bytes("test.png"), tables=True, layout=True)
    assert [(c.operation, c.params.get("FeatureTypes")) for c in replay.calls] == [
        ("DetectDocumentText", None), ("AnalyzeDocument", ["LAYOUT"]), ("AnalyzeDocument", ["TABLES", "LAYOUT"])]
    assert (plain.api, layout.api, both.api) == ("DetectDocumentText", "AnalyzeDocumentLayout",
                                                 "AnalyzeDocumentTablesLayout")
    assert plain.boxes == () and layout.boxes and both.boxes and both.tables
    settings = Settings()
    assert [textract_price(r.api or "", settings) for r in (plain, layout, both)] == [0.0015, 0.004, 0.015]


def test_a_picture_textract_reads_with_layout_gets_blocks_with_roles_and_boxes_and_the_ledger_counts_it(
        tmp_path: Path) -> None:
    """Through the local chain (`papersift extract`'s), Textract answered by its recorded response."""
    replay = ReplayingTextract()
    store, settings = LocalDirStore(tmp_path / "store"), Settings(ocr_mode="textract-first", textract_layout=True)
    document = drop(store, tmp_path, "test.png", input_bytes("test.png"))
    report = process_document(store, document, settings,
                              engines=default_engines(replay.client, page_seconds=60, layout=True))
    assert [(c.operation, c.params["FeatureTypes"]) for c in replay.calls] == [("AnalyzeDocument", ["LAYOUT"])]
    assert [(page.status, page.engine) for page in report.pages] == [("ocr", "textract")]
    blocks = json.loads(store.get(results_prefix(document.doc_id) + page_file(1)))["blocks"]
    assert len(blocks) >= 2 and PARAGRAPH in {b["role"] for b in blocks}
    for block in blocks:
        x0, y0, x1, y1 = block["bbox"]
        assert 0.0 <= x0 < x1 <= 1.0 and 0.0 <= y0 < y1 <= 1.0
    assert report.cost["textract_pages"] == {"AnalyzeDocumentLayout": 1}
    assert report.cost["usd"]["textract"] == 0.004 and report.cost["usd_all_textract"] == 0.004
