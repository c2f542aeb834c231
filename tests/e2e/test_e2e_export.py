"""`papersift export` through the real command, over folders `papersift extract` and `run` wrote:
every page of every document and archive member one record, in both formats, read back."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from archive_factory import zip_bytes
from attachment_factory import email_with_attachments
from pdf_factory import mixed_pdf, text_pdf

from papersift.export import COLUMN_NAMES
from papersift.pipeline import process_document
from papersift.settings import Settings
from papersift.steps.contracts import DocumentRef, document_id
from papersift.storage import LocalDirStore
from papersift_cli.export import READ_BATCH, export_results
from papersift_cli.main import main

pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A two-page memo, a PDF whose second page is a scan (not trusted with OCR off), an archive
    with a member in a folder and a nested archive, and an email with a PDF attached."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "memo.pdf").write_bytes(text_pdf(["Quarterly memo about lighthouse maintenance.",
                                                "Second page mentions the harbour budget."]))
    (folder / "annex.pdf").write_bytes(mixed_pdf())
    inner = zip_bytes({"deep.txt": b"The deepest note speaks of the old mill.\n"})
    (folder / "bundle.zip").write_bytes(zip_bytes({
        "docs/river.txt": b"Alpha notes about the river and its ferries.\n",
        "inner.zip": inner,
    }))
    (folder / "mail.eml").write_bytes(email_with_attachments(
        subject="Proposta", plain="Segue a proposta em anexo.", html="<p>Segue a proposta em anexo.</p>",
        files={"proposal.pdf": (text_pdf(["Proposal for the supply of office chairs."]), "application/pdf")}))
    return folder


def export(results: Path, out: Path, *options: str) -> list[dict[str, Any]]:
    """Run `papersift export` and read its file back as rows, whichever the format."""
    export_format = "parquet" if out.suffix == ".parquet" else "jsonl"
    assert main(["export", str(results), "--format", export_format, "--out", str(out), *options]) == 0
    if export_format == "parquet":
        table = pq.read_table(out)
        assert table.column_names == list(COLUMN_NAMES)
        return list(table.to_pylist())
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert all(list(row) == list(COLUMN_NAMES) for row in rows)
    return rows


def extracted(inputs: Path, out: Path, command: str = "extract", *options: str) -> Path:
    assert main([command, str(inputs), "--out", str(out), "--ocr", "off", "--quiet", *options]) == 0
    return out


def by_place(rows: list[dict[str, Any]]) -> dict[tuple[str, str | None, int], dict[str, Any]]:
    return {(row["source_name"], row["archive_path"], row["page"]): row for row in rows}


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_every_page_of_every_document_and_member_is_one_record(inputs: Path, tmp_path: Path, suffix: str) -> None:
    results = extracted(inputs, tmp_path / "out")
    rows = by_place(export(results, tmp_path / f"pages{suffix}"))
    assert set(rows) == {("memo.pdf", None, 1), ("memo.pdf", None, 2), ("annex.pdf", None, 1), ("annex.pdf", None, 2),
                         ("bundle.zip", "docs/river.txt", 1), ("bundle.zip", "inner.zip/deep.txt", 1),
                         ("mail.eml", None, 1), ("mail.eml", "attachments/proposal.pdf", 1)}
    memo = rows[("memo.pdf", None, 2)]
    assert memo["text"] == "Second page mentions the harbour budget."
    assert (memo["status"], memo["trusted"], memo["engine"], memo["role"], memo["block"]) == \
        ("clean", True, "pdfium", "page", None)
    assert memo["document_status"] == "clean" and memo["headings"] == [] and memo["parent_doc_id"] is None
    report = json.loads((results / "memo.pdf" / "report.json").read_text(encoding="utf-8"))
    assert memo["doc_id"] == report["doc_id"] and memo["confidence"] == report["pages"][1]["confidence"]
    deep = rows[("bundle.zip", "inner.zip/deep.txt", 1)]
    assert "old mill" in deep["text"] and deep["detected_type"] == "txt"
    bundle = json.loads((results / "bundle.zip" / "report.json").read_text(encoding="utf-8"))
    assert deep["parent_doc_id"] == bundle["doc_id"], "a nested archive's members are its top archive's"
    mail, attached = rows[("mail.eml", None, 1)], rows[("mail.eml", "attachments/proposal.pdf", 1)]
    assert "Segue a proposta" in mail["text"] and "office chairs" not in mail["text"], "its attachment's own record"
    assert attached["text"] == "Proposal for the supply of office chairs." and attached["engine"] == "pdfium"
    assert attached["parent_doc_id"] == mail["doc_id"]
    scan = rows[("annex.pdf", None, 2)]
    assert (scan["status"], scan["trusted"], scan["document_status"], scan["document_trusted"]) == \
        ("needs_ocr", False, "needs_review", False)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_trusted_only_keeps_the_trusted_pages_of_a_document_under_review(inputs: Path, tmp_path: Path,
                                                                         suffix: str) -> None:
    results = extracted(inputs, tmp_path / "out")
    rows = by_place(export(results, tmp_path / f"trusted{suffix}", "--trusted-only"))
    assert ("annex.pdf", None, 1) in rows, "the native first page of the document under review"
    assert ("annex.pdf", None, 2) not in rows, "its scanned page, not read with OCR off"
    assert len(rows) == 7 and all(row["trusted"] for row in rows.values())


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_block_records_of_a_pdf_carry_their_box_on_the_page_and_other_records_none(inputs: Path, tmp_path: Path,
                                                                                   suffix: str) -> None:
    """A copy of the bucket's results/ (pages/N.json with their blocks) exported block by block."""
    store = LocalDirStore(tmp_path / "bucket")
    for name in ("memo.pdf", "notes.txt"):
        data = (inputs / name).read_bytes() if name != "notes.txt" else b"Plain notes about the harbour.\n"
        key = f"incoming/{name}"
        store.put(key, data)
        process_document(store, DocumentRef(doc_id=document_id("local", key), bucket="local", key=key,
                                            source_name=name), Settings(ocr_mode="off"))
    rows = export(tmp_path / "bucket" / "results", tmp_path / f"blocks{suffix}", "--unit", "block")
    memo = [row for row in rows if row["source_name"] == "memo.pdf"]
    assert [(row["page"], row["role"]) for row in memo] == [(1, "paragraph"), (2, "paragraph")]
    for row in memo:  # text_pdf's one line, 72 pt in from the left and down from the top of an A4 page
        x0, y0, x1, y1 = row["bbox"]
        assert abs(x0 - 72 / 595) < 0.002 and 0.05 < y0 < y1 < 0.12 and 0.3 < x1 < 0.6
    notes = next(row for row in rows if row["source_name"] == "notes.txt")
    assert notes["bbox"] is None, "a text file has no geometry"


def test_flat_output_exports_its_archive_members_from_the_archive_text(inputs: Path, tmp_path: Path) -> None:
    results = extracted(inputs, tmp_path / "flat", "extract", "--flat")
    rows = by_place(export(results, tmp_path / "flat.parquet"))
    assert ("bundle.zip", "docs/river.txt", 1) in rows and ("memo.pdf", None, 2) in rows
    river = rows[("bundle.zip", "docs/river.txt", 1)]
    assert river["text"] == "Alpha notes about the river and its ferries.\n"
    assert river["status"] is None and river["trusted"] and river["document_status"] == "clean"
    assert rows[("annex.pdf", None, 2)]["status"] == "needs_ocr"
    mail = rows[("mail.eml", None, 1)]
    assert "Segue a proposta" in mail["text"] and "office chairs" not in mail["text"]
    assert rows[("mail.eml", "attachments/proposal.pdf", 1)]["text"] == "Proposal for the supply of office chairs."


@pytest.mark.slow
def test_run_output_exports_the_same_records_as_extract_output(inputs: Path, tmp_path: Path) -> None:
    """The two commands write one layout: an export of either gives the same rows."""
    rows = {}
    for command in ("run", "extract"):
        results = extracted(inputs, tmp_path / command, command)
        rows[command] = sorted((r["source_name"], r["archive_path"] or "", r["page"], r["status"], r["text"])
                               for r in export(results, tmp_path / f"{command}.jsonl"))
    assert rows["run"] == rows["extract"] and len(rows["run"]) == 8


def test_parquet_without_pyarrow_is_a_one_line_usage_error_naming_the_extra(
    inputs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = extracted(inputs, tmp_path / "out")
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ModuleNotFoundError
    out = tmp_path / "pages.parquet"
    assert main(["export", str(results), "--format", "parquet", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "pip install 'papersift[export]'" in error
    assert not out.exists() and not list(tmp_path.glob("pages.parquet*")), "no partial file left"
    assert main(["export", str(results), "--format", "jsonl", "--out", str(tmp_path / "pages.jsonl")]) == 0


def test_a_results_folder_that_is_not_there_or_an_out_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(tmp_path / "nowhere"), "--format", "jsonl", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert main(["export", str(tmp_path), "--format", "jsonl", "--out", str(tmp_path)]) == 2
    assert main(["export", str(tmp_path), "--format", "jsonl", "--out", str(tmp_path / "no" / "x.jsonl")]) == 2
    assert main(["export", str(tmp_path), "--format", "jsonl", "--out", str(tmp_path / "x.jsonl"),
                 "--workers", "0"]) == 2
    assert capsys.readouterr().err.count("papersift: error:") == 4


def test_a_report_cut_short_by_a_killed_run_leaves_its_document_out_with_a_warning(
    inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = extracted(inputs, tmp_path / "out")
    report = results / "memo.pdf" / "report.json"
    report.write_bytes(report.read_bytes()[:100])
    capsys.readouterr()
    rows = by_place(export(results, tmp_path / "pages.jsonl"))
    assert not [place for place in rows if place[0] == "memo.pdf"] and ("annex.pdf", None, 1) in rows
    assert f"could not be read, their documents left out: {report}" in capsys.readouterr().err


def test_the_work_and_half_written_folders_a_killed_run_leaves_are_not_exported(inputs: Path, tmp_path: Path) -> None:
    results = extracted(inputs, tmp_path / "out")
    memo_report = (results / "memo.pdf" / "report.json").read_bytes()
    work = results / ".papersift-work-999999-abcdef12"
    half_written = results / "memo.pdf" / ".papersift-tmp-999999-abcdef12"
    for leftover, document in ((work, work / "results" / "d1"), (half_written, half_written)):
        document.mkdir(parents=True)
        (document / "report.json").write_bytes(memo_report)
        (leftover / f".papersift-{leftover.name.split('-')[1]}-folder").write_text("left by a killed run\n")
    rows = export(results, tmp_path / "pages.jsonl")
    assert sorted(r["page"] for r in rows if r["source_name"] == "memo.pdf") == [1, 2], "the memo once, not thrice"


@pytest.mark.parametrize("export_format", ["jsonl", "parquet"])
def test_documents_read_in_a_process_pool_give_the_serial_rows_in_the_serial_order(
    inputs: Path, tmp_path: Path, export_format: str
) -> None:
    """Extract and --flat output side by side, a member copied where it is found before its
    archive (it waits for it), a report cut short: the pool's file holds the rows one process
    writes, in its order, and leaves out the same report."""
    results = tmp_path / "results"
    extracted(inputs, results / "extract")
    extracted(inputs, results / "flat", "extract", "--flat")
    member = next((results / "extract" / "bundle.zip" / "members").rglob("river.txt"))
    shutil.copytree(member, results / "0-early-member")
    broken = results / "extract" / "memo.pdf" / "report.json"
    broken.write_bytes(broken.read_bytes()[:100])
    files, counts = {}, {}
    for workers in (0, 2):
        out = tmp_path / f"pages-{workers}.{export_format}"
        counts[workers] = export_results(results, out, export_format, workers=workers)
        files[workers] = pq.read_table(out).to_pylist() if export_format == "parquet" else out.read_bytes()
    assert files[2] == files[0] and counts[2] == counts[0]
    if export_format == "jsonl":  # the command's --workers 1: the same file, read in one process
        assert main(["export", str(results), "--format", "jsonl", "--out", str(tmp_path / "one.jsonl"),
                     "--workers", "1"]) == 0
        assert (tmp_path / "one.jsonl").read_bytes() == files[0]
    assert counts[0].unreadable == (broken,) and counts[0].documents > READ_BATCH * 2
    rows = files[0] if export_format == "parquet" else [json.loads(line) for line in files[0].splitlines()]
    assert [r["archive_path"] for r in rows if "river" in r["text"]] == ["docs/river.txt"] * 3
    assert {r["source_name"] for r in rows if "river" in r["text"]} == {"bundle.zip"}, "named by its archive"


def test_a_report_only_the_standard_json_reader_accepts_is_read_as_it_reads_it(inputs: Path, tmp_path: Path) -> None:
    """Python's json writes NaN and escapes a name's undecodable byte as a lone surrogate; a faster
    parser (orjson, where installed) refuses both: the report is still read, to the same values."""
    results = extracted(inputs, tmp_path / "out")
    path = results / "memo.pdf" / "report.json"
    report = json.loads(path.read_bytes())
    report["source"]["name"] = "m\udce9mo.pdf"
    report["pages"][0]["confidence"] = float("nan")
    path.write_text(json.dumps(report), encoding="utf-8")
    rows = [r for r in export(results, tmp_path / "pages.jsonl") if r["source_name"] == "m\udce9mo.pdf"]
    assert [r["page"] for r in rows] == [1, 2]
    assert rows[0]["confidence"] != rows[0]["confidence"], "NaN, as json reads it"
