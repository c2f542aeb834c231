"""Pictures through `papersift run` (issue 18): the whole local pipeline, the real Tesseract.

The 2,000-frame stack is the case the issue timed at over 600 s: 1,998 blank frames that
Tesseract read one by one (~0.25 s each). Now the OCR plan looks at the frames first and sends
only the two with text to an OCR step; docs/benchmarks.md records how long the command takes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image
from scan_factory import LINES, exif_turned_jpeg, image_bytes, shared_strip_tiff, text_image, transparent_text_png

from papersift_cli.main import main

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tesseract") is None,
                                                   reason="tesseract is not installed")]


def stack_of_2000_frames() -> bytes:
    """A 200-dpi letter-size bilevel TIFF of 2,000 frames: frame 1 and frame 1,000 hold text, the
    1,998 others are blank sheets sharing one G4 strip (~280 KB in all)."""
    def letter(lines: tuple[str, ...]) -> Image.Image:
        page = Image.new("L", (1700, 2200), 255)
        page.paste(text_image(lines), (100, 100))
        return page

    frames = [1] + [0] * 998 + [2] + [0] * 1000
    return shared_strip_tiff([Image.new("L", (1700, 2200), 255), letter(LINES[:2]), letter(LINES[2:])], frames)


def test_a_2000_frame_stack_of_mostly_blank_sheets_is_read_with_both_text_frames(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs, out = tmp_path / "inputs", tmp_path / "out"
    inputs.mkdir()
    (inputs / "stack.tiff").write_bytes(stack_of_2000_frames())
    assert main(["run", str(inputs), "--out", str(out), "--quiet"]) == 0
    report = json.loads((out / "stack.tiff" / "report.json").read_text(encoding="utf-8"))
    assert report["page_count"] == 2000 and len(report["pages"]) == 2000
    read = {p["number"]: p for p in report["pages"] if p["engine"] == "tesseract"}
    assert sorted(read) == [1, 1000]
    assert all(p["status"] == "ocr" for p in read.values())
    blank = [p for p in report["pages"] if "blank_page" in p["signals"]]
    assert len(blank) == 1998 and all(p["engine"] is None and not p["attempts"] for p in blank)
    assert report["status"] == "partially_recovered" and "1998 blank page(s)" in report["reason"]
    text = (out / "stack.tiff" / "text.txt").read_text(encoding="utf-8")
    assert "quick brown fox" in text and "which engine read it" in text


def test_the_pictures_the_probe_found_unread_are_read_through_run(tmp_path: Path,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    """The issue's cases in one run: a transparent PNG, a sideways-stored phone JPEG, an AVIF, a
    1 x 2,000,000 px PNG and UTF-16 text without a BOM; nothing raw on stderr."""
    inputs, out = tmp_path / "inputs", tmp_path / "out"
    inputs.mkdir()
    (inputs / "transparent.png").write_bytes(transparent_text_png())
    (inputs / "portrait.jpg").write_bytes(exif_turned_jpeg())
    (inputs / "scan.avif").write_bytes(image_bytes(text_image().convert("RGB"), "AVIF"))
    strip = Image.new("L", (1, 2_000_000), 255)
    strip.paste(0, (0, 0, 1, 1_000_000))
    (inputs / "strip.png").write_bytes(image_bytes(strip))
    letter = "Привет, мир. Это простой текст.\nВторая строка, тоже.\nТретья строка.\n"
    (inputs / "letter").write_bytes(letter.encode("utf-16-le"))
    assert main(["run", str(inputs), "--out", str(out), "--quiet"]) == 0

    def report(name: str) -> dict[str, object]:
        return json.loads((out / name / "report.json").read_text(encoding="utf-8"))

    for name in ("transparent.png", "portrait.jpg", "scan.avif"):
        assert report(name)["status"] == "partially_recovered", (name, report(name)["reason"])
        assert "quick brown fox" in (out / name / "text.txt").read_text(encoding="utf-8"), name
    strip_report = report("strip.png")
    assert strip_report["status"] == "limit_exceeded" and "1 x 2,000,000 px" in str(strip_report["reason"])
    assert report("letter")["detected_type"] == "txt"
    assert "Вторая строка" in (out / "letter" / "text.txt").read_text(encoding="utf-8")
    assert capfd.readouterr().err == ""
