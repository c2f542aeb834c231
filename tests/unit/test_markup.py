"""HTML and XML: charset decisions (BOM, declarations, misleading labels, UTF-16 without
BOM, quoted-printable mail parts) and the text, Markdown and tables they yield."""

from __future__ import annotations

import codecs

import pytest
from corpus_cases import CORPUS, corpus_present, manifest_rows, phrase_ok

from papersift.errors import CorruptInputError
from papersift.formats import extract_units
from papersift.formats.markup import declared_charset, decode_markup, extract_html, extract_xml
from papersift.settings import Settings
from papersift.sniff import FileType, sniff

PT = "Não há ação sem coração: €15"


def _page(body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}<title>T</title></head><body>{body}</body></html>"


@pytest.mark.parametrize(
    ("data", "codec"),
    [
        (codecs.BOM_UTF8 + _page(f"<p>{PT}</p>").encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF16_LE + _page(f"<p>{PT}</p>").encode("utf-16-le"), "utf-16-le"),
        (_page(f"<p>{PT}</p>").encode("utf-16-le"), "utf-16-le"),
        (_page(f"<p>{PT}</p>").encode("utf-16-be"), "utf-16-be"),
        (_page(f"<p>{PT}</p>", '<meta charset="windows-1252">').encode("cp1252"), "cp1252"),
        (
            _page(f"<p>{PT}</p>", '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">').encode(
                "cp1252"
            ),
            "cp1252",
        ),
        (_page(f"<p>{PT}</p>").encode("utf-8"), "utf-8"),
        # declared Latin-1 but written as UTF-8: the bytes win
        (_page(f"<p>{PT}</p>", '<meta charset="iso-8859-1">').encode("utf-8"), "utf-8"),
    ],
    ids=[
        "bom-utf8",
        "bom-utf16le",
        "utf16le-no-bom",
        "utf16be-no-bom",
        "meta-cp1252",
        "http-equiv-latin1",
        "undeclared-utf8",
        "mislabelled-utf8",
    ],
)
def test_html_charset_is_decided_so_the_text_reads_right(data: bytes, codec: str) -> None:
    text, used = decode_markup(data)
    assert used == codec
    assert PT in text
    assert extract_html(data, Settings())[0].text.strip() == PT


def test_declared_utf8_over_windows_1256_arabic_falls_back_to_detection() -> None:
    arabic = "في قرية من القرى كان هناك رجل حكيم يعرف كل شيء عن الحياة"
    data = _page(f"<p>{arabic}</p>" * 3, '<meta charset="utf-8">').encode("cp1256")
    assert declared_charset(data) == "utf-8"
    unit = extract_html(data, Settings())[0]
    assert arabic in unit.text
    assert "\ufffd" not in unit.text


def test_undeclared_cp1252_page_is_read_as_cp1252() -> None:
    data = "<html><body><p>Der Preis betrug 15,50 €. Schöne Grüße, señor.</p></body></html>".encode("cp1252")
    assert "Der Preis betrug 15,50 €. Schöne Grüße, señor." in extract_html(data, Settings())[0].text


def test_quoted_printable_mail_part_is_decoded_before_parsing() -> None:
    data = (
        b'<HTML><HEAD>\r\n<META http-equiv=3DContent-Type content=3D"text/html; =\r\ncharset=3Dwindows-1252">\r\n'
        b"</HEAD><BODY><DIV><FONT face=3DVerdana size=3D2>Please check your email =\r\nna=20\r\nCompany.</FONT>"
        b"</DIV><DIV>documenta=E7=E3o</DIV></BODY></HTML>"
    )
    text = extract_html(data, Settings())[0].text
    assert "Please check your email na Company." in text
    assert "documentação" in text
    assert "=3D" not in text


def test_html_structure_script_style_head_dropped_blocks_headings_lists_and_tables() -> None:
    body = (
        "<script>var x = 'nope';</script><style>p{}</style><h1>Title</h1><p>First <b>bold</b>\n  para.</p>"
        "<div>Second<br>line</div><ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>"
        "<table><thead><tr><th>Name</th><th>Qty</th></tr></thead>"
        "<tbody><tr><td>Apple</td><td>3</td></tr><tr><td colspan='2'>wide</td></tr></tbody></table>"
        "<table><tr><td>layout only</td></tr></table><pre>  keep\n    indent</pre>"
    )
    unit = extract_html(_page(body, "<meta name='x' content='head text'>").encode(), Settings())[0]
    lines = unit.text.split("\n")
    assert lines[:8] == ["Title", "First bold para.", "Second", "line", "- one", "- two", "  - nested", "Name\tQty"]
    assert "nope" not in unit.text and "p{}" not in unit.text and "T" not in lines
    assert "  keep\n    indent" in unit.text
    assert len(unit.tables) == 1
    table = unit.tables[0]
    assert table.rows == [["Name", "Qty"], ["Apple", "3"], ["wide", ""]]
    assert table.header_rows == 1
    assert unit.markdown is not None
    assert "# Title" in unit.markdown
    assert "| Name | Qty |\n|---|---|\n| Apple | 3 |" in unit.markdown
    assert "- one\n- two\n  - nested" in unit.markdown
    assert "layout only" in unit.text and unit.report.tables == 1


def test_nested_table_rows_stay_in_their_cell() -> None:
    body = "<table><tr><td>outer</td><td><table><tr><td>in1</td><td>in2</td></tr></table></td></tr></table>"
    unit = extract_html(_page(body).encode(), Settings())[0]
    assert unit.tables[0].rows == [["outer", "in1 in2"]]


def test_whitespace_only_html_gives_an_empty_unit_not_a_crash() -> None:
    unit = extract_html(b"   \n ", Settings())[0]
    assert unit.text == "" and unit.report.char_count == 0


def test_xml_text_one_line_per_element_with_mixed_content_kept_together() -> None:
    xml = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<catalog><book id="1"><title>Coração</title>'
        "<desc>A <em>very</em> good book</desc></book><book><title>Second</title></book></catalog>"
    ).encode("latin-1")
    unit = extract_xml(xml, Settings())[0]
    assert unit.text == "Coração\nA very good book\nSecond"
    assert unit.report.engine == "lxml-xml"


def test_xml_entities_are_not_expanded() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
        b'<!ENTITY x SYSTEM "file:///etc/passwd">]><r><t>ok &b; &x;</t></r>'
    )
    text = extract_xml(bomb, Settings())[0].text
    assert "ok" in text
    assert "aaaaaaaaaa" not in text and "root:" not in text


def test_xhtml_served_as_xml_goes_through_the_html_rules() -> None:
    xhtml = b'<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>H</title>'
    xhtml += b"</head><body><h2>Chapter</h2><p>Text</p></body></html>"
    unit = extract_xml(xhtml, Settings())[0]
    assert unit.text == "Chapter\nText"
    assert unit.markdown == "## Chapter\n\nText"


def test_broken_xml_is_recovered_when_possible_and_corrupt_otherwise() -> None:
    assert extract_xml(b"<r><a>kept</a><b>also", Settings())[0].text.startswith("kept")
    with pytest.raises(CorruptInputError, match="not well-formed"):
        extract_xml(b"<<<>>> not xml at all", Settings())


def test_dispatch_by_sniffed_kind() -> None:
    data = _page("<p>dispatched</p>").encode()
    assert extract_units(data, sniff(data, "x.html"), Settings())[0].text == "dispatched"
    assert extract_units(b"<a><b>x</b></a>", FileType("xml", "application/xml", "content"), Settings())[0].text == "x"


@pytest.mark.corpus
@pytest.mark.skipif(not corpus_present(), reason="corpus absent")
@pytest.mark.parametrize("row", manifest_rows(lambda r: r["category"] == "html"), ids=lambda r: r["out_name"])
def test_corpus_html_phrases(row: dict[str, str]) -> None:
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    text = extract_units(data, sniff(data, row["out_name"]), Settings())[0].text
    assert phrase_ok(row["expected"], text), f"{row['expected']!r} not in {text[:300]!r}"
    assert "\ufffd" not in text or "IBM420" in row["out_name"]
