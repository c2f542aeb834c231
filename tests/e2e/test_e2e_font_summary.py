"""`papersift extract` on a real LaTeX paper of the corpus (MANIFEST-trust.tsv: a sound layer with
TeX's math fonts): report.json's pages carry the fonts each page's text uses (issue 17)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PAPERSIFT = Path(sys.executable).with_name("papersift")
#: a 13-page ACL paper set in Nimbus Roman with CMR/CMMI/CMSY/CMEX (README of the corpus)
MATH_PAPER = "us__multi-column.pdf"


def test_extract_reports_each_pages_fonts_with_the_math_fonts_of_a_real_latex_paper(
        corpus_dir: Path, tmp_path: Path) -> None:
    source = corpus_dir / "files" / MATH_PAPER
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    done = subprocess.run([str(PAPERSIFT), "extract", str(source), "--out", str(tmp_path), "--quiet", "--ocr", "off"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / MATH_PAPER / "report.json").read_text(encoding="utf-8"))
    pages = report["pages"]
    assert all(page["font_summary"] for page in pages if page["char_count"])
    fonts = {font["name"]: font for page in pages for font in page["font_summary"]}
    assert fonts["NimbusRomNo9L-Regu"]["math"] is False
    math = {name for name, font in fonts.items() if font["math"]}
    assert {"CMMI10", "CMSY10"} <= math
    assert all(font["embedded"] and not font["type3"] for font in fonts.values())
    # the summary reports, it does not judge: the paper's pages stay trusted
    assert report["trusted"]
