"""Limits as a user meets them through `papersift extract`: a long sound PDF is read whole under the
default `max_pages`, and a page too big for the unit's memory is stopped by that limit and says so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_factory import many_glyphs_pdf
from pdf_factory import numbered_pdf

pytestmark = pytest.mark.slow

PAPERSIFT = Path(sys.executable).with_name("papersift")


def extract(tmp_path: Path, name: str, data: bytes, config: str = "") -> dict[str, object]:
    source = tmp_path / name
    source.write_bytes(data)
    command = [str(PAPERSIFT), "extract", str(source), "--out", str(tmp_path / "out"), "--quiet"]
    if config:
        (tmp_path / "papersift.toml").write_text(f"[papersift]\n{config}\n")
        command += ["--config", str(tmp_path / "papersift.toml")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads((tmp_path / "out" / name / "report.json").read_text())
    return report


def test_a_sound_10000_page_pdf_is_clean_with_every_page_in_the_report(tmp_path: Path) -> None:
    report = extract(tmp_path, "long.pdf", numbered_pdf(10_000))
    pages = report["pages"]
    assert isinstance(pages, list)
    assert (report["status"], report["error_code"], report["page_count"], len(pages)) == ("clean", "", 10_000, 10_000)
    assert {page["status"] for page in pages} == {"clean"}


def test_a_page_past_the_unit_memory_is_limit_exceeded_naming_the_limit_not_damage(tmp_path: Path) -> None:
    report = extract(tmp_path, "glyphs.pdf", many_glyphs_pdf(2_000_000), config="unit_memory_mb = 200")
    assert (report["status"], report["error_code"]) == ("limit_exceeded", "memory_limit")
    (page,) = report["pages"]  # type: ignore[misc]
    assert page["status"] == "failed" and page["signals"] == ["memory_limit"]
    assert "unit_memory_mb" in page["reason"] and "crashed" not in page["reason"]


def test_pages_past_max_pages_are_listed_skipped_limit_and_named(tmp_path: Path) -> None:
    report = extract(tmp_path, "twelve.pdf", numbered_pdf(12), config="max_pages = 5")
    assert (report["status"], report["error_code"], report["page_count"]) == ("limit_exceeded", "max_pages", 12)
    assert [page["status"] for page in report["pages"]] == ["clean"] * 5 + ["skipped_limit"] * 7  # type: ignore[attr-defined]
