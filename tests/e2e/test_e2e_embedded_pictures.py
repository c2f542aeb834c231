"""Pictures inside office files, e-books and web pages through the real path: `papersift run`
(the workflow on embedded AWS: extract writes the unit's pictures as its OCR input, the OCR Map
reads them, assemble lays the unit over its text) and `papersift extract`, which must agree."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from picture_office_factory import (
    SCAN_WORDS,
    epub_with_picture,
    html_with_data_uri,
    many_pictures_docx,
    odt_with_picture,
    pasted_scan_docx,
    sheet_with_picture_xlsx,
    slide_with_picture_pptx,
)

from papersift_cli.main import main

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tesseract") is None,
                                                   reason="tesseract is not installed")]

INPUTS = {
    "pasted-scan.docx": pasted_scan_docx,
    "slides.pptx": slide_with_picture_pptx,
    "ledger.xlsx": sheet_with_picture_xlsx,
    "minutes.odt": lambda: odt_with_picture("Minutes of the meeting."),
    "book.epub": epub_with_picture,
    "notice.html": html_with_data_uri,
}


def report_of(out: Path, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / name / "report.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("embedded")
    inputs = folder / "in"
    inputs.mkdir()
    for name, build in INPUTS.items():
        (inputs / name).write_bytes(build())
    out = {command: folder / command for command in ("run", "extract")}
    for command, target in out.items():
        assert main([command, str(inputs), "--out", str(target), "--quiet", "--ocr", "local-only"]) == 0
    return out


@pytest.mark.parametrize("command", ["run", "extract"])
@pytest.mark.parametrize("name", list(INPUTS))
def test_a_picture_of_text_inside_the_file_gives_its_words_after_the_unit_text(
        outputs: dict[str, Path], command: str, name: str) -> None:
    text = (outputs[command] / name / "text.txt").read_text(encoding="utf-8")
    assert all(word in text for word in SCAN_WORDS), text
    report = report_of(outputs[command], name)
    assert report["status"] == "partially_recovered", report["reason"]
    (unit,) = [page for page in report["pages"] if page["pictures"]]
    assert (unit["status"], "hybrid" in unit["signals"]) == ("ocr", True), unit["reason"]
    (picture,) = unit["pictures"]
    assert (picture["status"], picture["engine"], picture["width"], picture["height"]) == ("read", "tesseract",
                                                                                           1100, 234)
    assert picture["confidence"] >= 0.7 and picture["bytes"] > 0


def test_a_word_document_of_only_a_pasted_scan_is_never_empty(outputs: dict[str, Path]) -> None:
    report = report_of(outputs["run"], "pasted-scan.docx")
    (unit,) = report["pages"]
    assert "empty" not in unit["signals"] and unit["engine"] == "ooxml:docx+tesseract"
    assert report["pages"][0]["pictures"][0]["name"] == "word/media/image1.png"


def test_the_slide_text_comes_first_and_only_the_slide_with_a_picture_is_read(outputs: dict[str, Path]) -> None:
    report = report_of(outputs["run"], "slides.pptx")
    first, second = report["pages"]
    assert [p["status"] for p in first["pictures"]] == ["read"]
    assert second["status"] == "clean" and second["pictures"] == []
    text = (outputs["run"] / "slides.pptx" / "text.txt").read_text(encoding="utf-8")
    assert text.index("Quarterly figures") < text.index("Invoice")


def test_with_ocr_off_the_pasted_scan_needs_review_and_its_picture_is_listed_not_read(tmp_path: Path) -> None:
    (tmp_path / "scan.docx").write_bytes(pasted_scan_docx())
    assert main(["run", str(tmp_path / "scan.docx"), "--out", str(tmp_path / "out"), "--quiet", "--ocr", "off"]) == 0
    report = report_of(tmp_path / "out", "scan.docx")
    assert (report["status"], report["pages"][0]["status"]) == ("needs_review", "needs_ocr")
    assert [p["status"] for p in report["pages"][0]["pictures"]] == ["not_read"]


def test_ten_thousand_tiny_and_repeated_pictures_finish_fast_with_one_read(tmp_path: Path) -> None:
    (tmp_path / "many.docx").write_bytes(many_pictures_docx(tiny=5000, copies=4999))
    started = time.perf_counter()
    assert main(["run", str(tmp_path / "many.docx"), "--out", str(tmp_path / "out"), "--quiet",
                 "--ocr", "local-only"]) == 0
    assert time.perf_counter() - started < 120
    (unit,) = report_of(tmp_path / "out", "many.docx")["pages"]
    counted: dict[str, int] = dict(unit["pictures_not_listed"])
    for picture in unit["pictures"]:
        counted[picture["status"]] = counted.get(picture["status"], 0) + 1
    assert counted == {"read": 1, "skipped_small": 5000, "skipped_duplicate": 4999}
    assert [attempt["engine"] for attempt in unit["attempts"]] == ["tesseract"], "one OCR reading, not 10,000"
    text = (tmp_path / "out" / "many.docx" / "text.txt").read_text(encoding="utf-8")
    assert text.startswith("A report with many pictures.") and "Invoice" in text
