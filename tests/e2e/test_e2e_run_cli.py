"""`papersift run` and `papersift extract` end to end, in-process: real handlers, real workflow on moto."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pdf_factory import encrypted_pdf, numbered_pdf, text_pdf

from papersift_cli.main import main
from papersift_cli.output import unique_names

PHRASES = {
    "memo.pdf": "harbour budget",
    "letter.docx": "orchard irrigation plan",
    "ledger.xlsx": "copper wire",
    "notes.txt": "heron returned to the marsh",
}


def test_run_extracts_pdf_docx_xlsx_and_txt_into_one_folder_each(
    sample_inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["run", str(sample_inputs), "--out", str(out)]) == 0
    summary = capsys.readouterr().out
    for name, phrase in PHRASES.items():
        folder = out / name
        assert {"text.txt", "document.md", "report.json"} <= {p.name for p in folder.iterdir()}, name
        assert phrase in (folder / "text.txt").read_text(encoding="utf-8"), name
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        assert report["status"] == "clean", (name, report["reason"])
        assert name in summary
    assert "4 file(s)" in summary and "0 broken" in summary
    memo = json.loads((out / "memo.pdf" / "report.json").read_text(encoding="utf-8"))
    assert memo["page_count"] == 2
    # both totals of the cost ledgers: the memo's 2 pages at $0.0015 had they gone to Textract (the
    # DOCX, XLSX and text files have no pages Textract could read)
    assert "(Textract pages: 0); every page to Textract: $0.0030" in summary


def test_bad_inputs_each_get_a_status_and_reason_and_the_run_still_succeeds(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "good.txt").write_text("A perfectly ordinary sentence about tides.\n", encoding="utf-8")
    (inputs / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage without xref")
    (inputs / "empty.txt").write_bytes(b"")
    (inputs / "mystery.bin").write_bytes(bytes(range(256)) * 8)
    out = tmp_path / "out"
    assert main(["run", str(inputs), "--out", str(out), "--quiet"]) == 0
    statuses = {}
    for name in ("good.txt", "broken.pdf", "empty.txt", "mystery.bin"):
        report = json.loads((out / name / "report.json").read_text(encoding="utf-8"))
        statuses[name] = report["status"]
        assert report["reason"], name
    assert statuses["good.txt"] == "clean"
    assert statuses["empty.txt"] == "empty"
    assert statuses["broken.pdf"] in ("failed", "corrupt_unrecoverable")
    assert statuses["mystery.bin"] == "unsupported"


def test_two_hundred_page_pdf_through_the_distributed_map_keeps_every_page(tmp_path: Path) -> None:
    source = tmp_path / "long.pdf"
    source.write_bytes(numbered_pdf(200, "Marker line for page {n} of the long report."))
    config = tmp_path / "papersift.toml"
    config.write_text("[papersift]\ndistributed_map_threshold = 3\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(source), "--out", str(out), "--config", str(config), "--batch-size", "20",
                 "--quiet"]) == 0
    text = (out / "long.pdf" / "text.txt").read_text(encoding="utf-8")
    pages = text.split("\f")
    assert len(pages) == 200
    for number, page in enumerate(pages, start=1):
        assert f"Marker line for page {number} of" in page
    report = json.loads((out / "long.pdf" / "report.json").read_text(encoding="utf-8"))
    assert report["page_count"] == 200 and len(report["pages"]) == 200
    assert [p["number"] for p in report["pages"]] == list(range(1, 201))


def test_extract_writes_the_same_layout_as_run(sample_inputs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["extract", str(sample_inputs), "--out", str(out), "--quiet"]) == 0
    for name, phrase in PHRASES.items():
        assert {"text.txt", "document.md", "report.json"} <= {p.name for p in (out / name).iterdir()}
        assert phrase in (out / name / "text.txt").read_text(encoding="utf-8")


def test_flat_layout_writes_text_and_scorer_status_per_input(sample_inputs: Path, tmp_path: Path) -> None:
    locked = encrypted_pdf(text_pdf(["Secret minutes of the allotment society."]), user_password="s3cret")
    (sample_inputs / "locked.pdf").write_bytes(locked)
    out = tmp_path / "flat"
    assert main(["extract", str(sample_inputs), "--out", str(out), "--flat", "--quiet"]) == 0
    assert "heron" in (out / "notes.txt.txt").read_text(encoding="utf-8")
    assert (out / "notes.txt.status").read_text().strip() == "ok"
    assert (out / "locked.pdf.status").read_text().strip() == "encrypted"


def test_a_password_from_the_command_line_opens_an_encrypted_pdf_in_the_pipeline(tmp_path: Path) -> None:
    source = tmp_path / "locked.pdf"
    source.write_bytes(encrypted_pdf(text_pdf(["Secret minutes of the allotment society."]), user_password="s3cret"))
    out = tmp_path / "out"
    assert main(["run", str(source), "--out", str(out), "--password", "wrong", "--password", "s3cret",
                 "--quiet"]) == 0
    assert "allotment society" in (out / "locked.pdf" / "text.txt").read_text(encoding="utf-8")


def test_a_bad_setting_fails_fast_with_its_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    assert main(["run", str(tmp_path / "a.txt"), "--out", str(tmp_path / "o"), "--batch-size", "0"]) == 2
    assert "page_batch_size" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_missing_input_path_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["extract", str(tmp_path / "nope.pdf"), "--out", str(tmp_path / "o")]) == 2


def test_inputs_with_the_same_name_get_stable_distinct_output_folders() -> None:
    names = unique_names([Path("a/report.pdf"), Path("b/report.pdf"), Path("c/report.pdf"), Path("d/x.txt")])
    assert names == ["report.pdf", "report-2.pdf", "report-3.pdf", "x.txt"]


def test_clean_option_writes_cleaned_text_beside_the_untouched_original(tmp_path: Path) -> None:
    source = tmp_path / "ata.txt"
    source.write_text("A sessão pública de licitação começou às 10h.\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(source), "--out", str(out), "--clean", "--quiet"]) == 0
    assert (out / "ata.txt" / "text.txt").read_text(encoding="utf-8").startswith("A sessão pública de licitação")
    cleaned = (out / "ata.txt" / "text.clean.txt").read_text(encoding="utf-8")
    assert "sessao publica" in cleaned and "licitacao" in cleaned
