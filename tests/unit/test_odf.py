"""OpenDocument text, spreadsheet and presentation built in code, plus the corpus files."""

from __future__ import annotations

import io
import zipfile

import pytest
from corpus_cases import CORPUS, corpus_present, manifest_rows, phrase_ok

from papersift.errors import CorruptInputError, EncryptedInputError, LimitExceededError
from papersift.formats import extract_units
from papersift.formats.opendocument import extract_odp, extract_ods, extract_odt
from papersift.settings import Settings
from papersift.sniff import sniff

NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"'
)
MIMES = {
    "text": "application/vnd.oasis.opendocument.text",
    "spreadsheet": "application/vnd.oasis.opendocument.spreadsheet",
    "presentation": "application/vnd.oasis.opendocument.presentation",
}


def odf(part: str, body: str, *, manifest_extra: str = "", content: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), MIMES[part])
        xml = content or (
            f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {NS}>'
            f"<office:body><office:{part}>{body}</office:{part}></office:body></office:document-content>"
        )
        archive.writestr("content.xml", xml, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr(
            "META-INF/manifest.xml",
            '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
            f'<manifest:file-entry manifest:full-path="content.xml">{manifest_extra}</manifest:file-entry>'
            "</manifest:manifest>",
        )
    return buffer.getvalue()


def test_odt_headings_spaces_tabs_breaks_lists_tables_and_footnotes() -> None:
    body = (
        '<text:h text:outline-level="1">Relatório</text:h>'
        '<text:p>Um<text:s/>dois<text:s text:c="3"/>três<text:tab/>quatro<text:line-break/>cinco'
        '<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>'
        "<text:note-body><text:p>Nota de rodapé.</text:p></text:note-body></text:note>.</text:p>"
        '<text:h text:outline-level="2">Lista</text:h>'
        "<text:list><text:list-item><text:p>primeiro</text:p><text:list><text:list-item><text:p>aninhado</text:p>"
        "</text:list-item></text:list></text:list-item><text:list-item><text:p>segundo</text:p></text:list-item>"
        "</text:list>"
        "<table:table table:name='T'><table:table-row><table:table-cell><text:p>Ano</text:p></table:table-cell>"
        "<table:table-cell><text:p>Patos</text:p></table:table-cell></table:table-row>"
        "<table:table-row><table:table-cell><text:p>2024</text:p></table:table-cell>"
        "<table:table-cell><text:p>180</text:p></table:table-cell></table:table-row></table:table>"
        "<text:section><text:p>Na seção<office:annotation><text:p>comentário</text:p></office:annotation></text:p>"
        "</text:section>"
    )
    unit = extract_odt(odf("text", body), Settings())[0]
    assert unit.text.split("\n") == [
        "Relatório",
        "Um dois   três\tquatro",
        "cinco[1].",
        "Lista",
        "- primeiro",
        "  - aninhado",
        "- segundo",
        "Ano\tPatos",
        "2024\t180",
        "Na seção",
        "[1] Nota de rodapé.",
    ]
    assert unit.markdown is not None
    assert unit.markdown.startswith("# Relatório\n\n")
    assert "## Lista\n\n- primeiro\n  - aninhado\n- segundo" in unit.markdown
    assert "| Ano | Patos |\n|---|---|\n| 2024 | 180 |" in unit.markdown
    assert unit.tables[0].rows == [["Ano", "Patos"], ["2024", "180"]]
    assert "comentário" not in unit.text
    assert unit.report.engine == "papersift-odf" and unit.report.status == "clean"


def _cell(text: str, attrs: str = "") -> str:
    return f"<table:table-cell {attrs}><text:p>{text}</text:p></table:table-cell>"


def test_ods_one_unit_per_sheet_with_typed_records_and_repeats_trimmed() -> None:
    sheet1 = (
        "<table:table table:name='Vendas'>"
        # a million formatted empty rows and columns must not be materialised
        "<table:table-row table:number-rows-repeated='2'><table:table-cell table:number-columns-repeated='16384'/>"
        "</table:table-row>"
        f"<table:table-row><table:table-cell/>{_cell('Título do relatório')}</table:table-row>"
        f"<table:table-row><table:table-cell/>{_cell('Produto')}{_cell('Qtd')}{_cell('Ok')}</table:table-row>"
        "<table:table-row><table:table-cell/>"
        + _cell("Maçã")
        + _cell("3", "office:value-type='float' office:value='3'")
        + _cell("VERDADEIRO", "office:value-type='boolean' office:boolean-value='true'")
        + "</table:table-row><table:table-row table:number-rows-repeated='2'><table:table-cell/>"
        + _cell("Pera")
        + _cell("2,5", "office:value-type='float' office:value='2.5'")
        + "</table:table-row>"
        "<table:table-row table:number-rows-repeated='1048570'><table:table-cell/></table:table-row>"
        "</table:table>"
    )
    sheet2 = "<table:table table:name='Vazia'/>"
    units = extract_ods(odf("spreadsheet", sheet1 + sheet2), Settings())
    assert [u.label for u in units] == ["Vendas", "Vazia"]
    assert [u.number for u in units] == [1, 2]
    sales = units[0]
    assert sales.text.split("\n") == [
        "Título do relatório",
        "Produto\tQtd\tOk",
        "Maçã\t3\tVERDADEIRO",
        "Pera\t2,5",
        "Pera\t2,5",
    ]
    assert sales.records == [
        {"Produto": "Maçã", "Qtd": 3, "Ok": True},
        {"Produto": "Pera", "Qtd": 2.5},
        {"Produto": "Pera", "Qtd": 2.5},
    ]
    assert sales.tables[0].title == "Vendas"
    assert sales.markdown is not None and sales.markdown.startswith("## Vendas")
    assert units[1].text == "" and units[1].records == []


def test_odp_one_unit_per_slide_with_notes_and_tables() -> None:
    slides = (
        "<draw:page draw:name='Intro'><draw:frame><draw:text-box><text:p>Welcome slide</text:p></draw:text-box>"
        "</draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>Say hello</text:p></draw:text-box>"
        "</draw:frame></presentation:notes></draw:page>"
        "<draw:page><draw:frame><table:table><table:table-row>"
        f"{_cell('a')}{_cell('b')}</table:table-row></table:table></draw:frame></draw:page>"
    )
    units = extract_odp(odf("presentation", slides), Settings())
    assert [u.label for u in units] == ["Intro", "slide 2"]
    assert units[0].text == "Welcome slide\nNotes\nSay hello"
    assert units[0].markdown == "Welcome slide\n\n### Notes\n\nSay hello"
    assert units[1].tables[0].rows == [["a", "b"]]


def test_password_protected_odf_is_reported_encrypted() -> None:
    data = odf("text", "<text:p>x</text:p>", manifest_extra="<manifest:encryption-data/>")
    with pytest.raises(EncryptedInputError):
        extract_odt(data, Settings())


def test_damaged_packages_fail_with_a_specific_reason() -> None:
    with pytest.raises(CorruptInputError, match="not a readable zip"):
        extract_odt(b"PK\x03\x04 truncated", Settings())
    with pytest.raises(CorruptInputError, match="no office:text"):
        extract_odt(odf("spreadsheet", ""), Settings())
    with pytest.raises(CorruptInputError, match="not well-formed"):
        extract_odt(odf("text", "", content="\x00 not xml"), Settings())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", MIMES["text"])
    with pytest.raises(CorruptInputError, match=r"no content\.xml"):
        extract_odt(buffer.getvalue(), Settings())


def test_content_xml_bomb_hits_the_compression_limit() -> None:
    body = "<text:p>" + "a" * 3_000_000 + "</text:p>"
    with pytest.raises(LimitExceededError, match=r"content\.xml expands"):
        extract_odt(odf("text", body), Settings(max_compression_ratio=50))


def test_sniffed_odf_dispatches_to_its_extractor() -> None:
    data = odf("text", "<text:p>via dispatcher</text:p>")
    assert extract_units(data, sniff(data, "x.odt"), Settings())[0].text == "via dispatcher"


@pytest.mark.corpus
@pytest.mark.skipif(not corpus_present(), reason="corpus absent")
@pytest.mark.parametrize("row", manifest_rows(lambda r: r["category"] == "odt"), ids=lambda r: r["out_name"])
def test_corpus_odf_phrases(row: dict[str, str]) -> None:
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    units = extract_units(data, sniff(data, row["out_name"]), Settings())
    text = "\n".join(u.text for u in units)
    assert phrase_ok(row["expected"], text), f"{row['expected']!r} not in {text[:300]!r}"
    assert all(u.report.status == "clean" for u in units)
