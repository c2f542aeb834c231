"""Inputs for the real-path tests, built in code, and an embedded-AWS fixture."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pdf_factory import text_pdf

from papersift.settings import Settings
from papersift.steps.contracts import UnpackResult
from papersift_cli.local_aws import LocalAws


def docx_bytes(paragraphs: list[str]) -> bytes:
    import docx

    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def xlsx_bytes(rows: list[list[object]]) -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


@pytest.fixture
def sample_inputs(tmp_path: Path) -> Path:
    """One small file per common family, each with a phrase to find in its text."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "memo.pdf").write_bytes(text_pdf(["Quarterly memo about lighthouse maintenance.",
                                                 "Second page mentions the harbour budget."]))
    (folder / "letter.docx").write_bytes(docx_bytes(["Dear committee,", "The orchard irrigation plan is attached."]))
    (folder / "ledger.xlsx").write_bytes(xlsx_bytes([["item", "amount"], ["copper wire", 42], ["brass valve", 7]]))
    (folder / "notes.txt").write_text("Field notes: the heron returned to the marsh.\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def local_aws() -> Iterator[LocalAws]:
    """One embedded AWS per test module; tests call reset_documents() to start clean."""
    with LocalAws(Settings(page_batch_size=5)) as aws:
        yield aws


@pytest.fixture
def recorded_unpacks(monkeypatch: pytest.MonkeyPatch) -> list[UnpackResult]:
    """What every unpack step returned during the test (the unpack handler is loaded afresh by
    each LocalAws start, so it binds this spy)."""
    from papersift.steps import unpack

    unpacked: list[UnpackResult] = []
    real_unpack = unpack.unpack_archive

    def recording_unpack(*args: Any, **kwargs: Any) -> UnpackResult:
        result = real_unpack(*args, **kwargs)
        unpacked.append(result)
        return result

    monkeypatch.setattr(unpack, "unpack_archive", recording_unpack)
    return unpacked
