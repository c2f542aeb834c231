"""Legacy binary Office: .xls in process with xlrd; .doc and .ppt through antiword/catdoc
and catppt, reported unsupported (naming the tool) when those are missing."""

from __future__ import annotations

import datetime as dt
import io
import os
import stat
from pathlib import Path

import pytest

from papersift.errors import CorruptInputError, UnsupportedFormatError
from papersift.formats import extract_units, legacy
from papersift.formats.legacy import extract_doc, extract_ppt, extract_xls
from papersift.settings import Settings
from papersift.sniff import sniff

xlwt = pytest.importorskip("xlwt")


@pytest.fixture(scope="module")
def workbook() -> bytes:
    book = xlwt.Workbook(encoding="utf-8")
    sheet = book.add_sheet("Dados")
    sheet.write(0, 1, "Nome")
    sheet.write(0, 2, "Valor")
    sheet.write(0, 3, "Data")
    sheet.write(1, 1, "Ação")
    sheet.write(1, 2, 3.0)
    sheet.write(1, 3, dt.date(2024, 5, 1), xlwt.easyxf(num_format_str="YYYY-MM-DD"))
    sheet.write(2, 1, "Pêra")
    sheet.write(2, 2, 2.5)
    sheet.write(2, 3, True)
    book.add_sheet("Vazia")
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_xls_sheets_become_units_with_typed_records(workbook: bytes) -> None:
    units = extract_units(workbook, sniff(workbook, "old.xls"), Settings())
    assert [u.label for u in units] == ["Dados", "Vazia"]
    data = units[0]
    assert data.text == "Nome\tValor\tData\nAção\t3\t2024-05-01\nPêra\t2.5\tTRUE"
    assert data.records == [
        {"Nome": "Ação", "Valor": 3, "Data": "2024-05-01"},
        {"Nome": "Pêra", "Valor": 2.5, "Data": True},
    ]
    assert data.tables[0].rows[0] == ["Nome", "Valor", "Data"]
    assert data.markdown is not None and data.markdown.startswith("## Dados\n\n| Nome | Valor | Data |")
    assert data.report.engine == "xlrd" and data.report.status == "clean"
    assert units[1].text == ""


def test_truncated_xls_is_corrupt(workbook: bytes) -> None:
    with pytest.raises(CorruptInputError):
        extract_xls(workbook[:1500], Settings())


def test_doc_without_its_tools_is_unsupported_and_says_which(
    workbook: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(legacy.shutil, "which", lambda name: None)
    with pytest.raises(UnsupportedFormatError, match="antiword"):
        extract_doc(workbook, Settings())


def _fake_tool(directory: Path, name: str, output: str, code: int = 0) -> None:
    script = directory / name
    # prints the output only when the last argument is a readable file, as the real tools need
    script.write_text(
        f'#!/bin/sh\nfor last; do :; done\n[ -r "$last" ] || exit 9\nprintf "{output}"\nexit {code}\n',
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_doc_text_comes_from_antiword_and_catdoc_is_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_tool(tmp_path, "antiword", "", code=1)
    _fake_tool(tmp_path, "catdoc", "Texto do documento\\r\\n\\r\\nSegunda linha  ")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    unit = extract_doc(b"\xd0\xcf\x11\xe0 fake", Settings())[0]
    assert unit.text == "Texto do documento\n\nSegunda linha"
    assert unit.report.engine == "catdoc"


# Real files written by LibreOffice 7.4 (tests/fixtures/legacy): nothing here can build these
# binary formats in code. LibreOffice keeps all slide text in the slides' drawings, where
# catppt never looks (it printed nothing for them).
LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "legacy"


def test_ppt_slides_come_out_in_order_without_any_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(legacy.shutil, "which", lambda name: None)
    units = extract_ppt((LEGACY / "slides.ppt").read_bytes(), Settings())
    assert [u.label for u in units] == ["slide 1", "slide 2"]
    assert units[0].text.splitlines()[0] == "Opening title" and "Text box5" in units[0].text
    assert units[1].text == "Closing words"
    assert "Click to edit" not in "".join(u.text for u in units), "master placeholders are not slide text"


def test_ppt_that_is_not_a_presentation_is_corrupt(workbook: bytes) -> None:
    with pytest.raises(CorruptInputError, match="PowerPoint"):
        extract_ppt(workbook, Settings())


@pytest.mark.skipif(not (legacy.shutil.which("antiword") or legacy.shutil.which("catdoc")),
                    reason="neither antiword nor catdoc installed")
def test_real_word_97_document_through_the_installed_tools() -> None:
    (unit,) = extract_doc((LEGACY / "edital.doc").read_bytes(), Settings())
    assert unit.text.startswith("Edital de licitação nº 7/2026")
    assert "merenda escolar" in unit.text and unit.report.engine in ("antiword", "catdoc")


@pytest.mark.skipif(legacy.shutil.which("antiword") is None, reason="antiword not installed")
def test_real_antiword_rejects_a_workbook_posing_as_a_doc(workbook: bytes) -> None:
    with pytest.raises(CorruptInputError, match="antiword"):
        extract_doc(workbook, Settings())
