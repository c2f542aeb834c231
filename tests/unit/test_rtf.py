"""RTF: code pages per font, \\uN with \\ucN, surrogate pairs, skipped destinations."""

from __future__ import annotations

import pytest
from corpus_cases import CORPUS, corpus_present, manifest_rows, phrase_ok

from papersift.errors import CorruptInputError, EmptyInputError
from papersift.formats import extract_units
from papersift.formats.rtf import extract_rtf, rtf_to_text
from papersift.settings import Settings
from papersift.sniff import FileType


def _hex(text: str, codec: str) -> str:
    return "".join(f"\\'{b:02x}" for b in text.encode(codec))


def test_polish_in_ansicpg1250_decodes_hex_escapes_with_the_document_code_page() -> None:
    rtf = (
        "{\\rtf1\\ansi\\ansicpg1250{\\fonttbl{\\f0\\fcharset238 Arial CE;}}\\f0 "
        + _hex("zażółć gęślą jaźń", "cp1250")
        + "\\par}"
    )
    assert rtf_to_text(rtf.encode("ascii")) == "zażółć gęślą jaźń"


def test_shift_jis_font_inside_a_cp1252_document_uses_the_font_charset() -> None:
    rtf = (
        "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fcharset0 Times;}{\\f1\\fcharset128 MS Mincho;}}"
        "\\f0 caf\\'e9 {\\f1 " + _hex("こんにちは", "cp932") + "} fin\\par}"
    )
    assert rtf_to_text(rtf.encode("ascii")) == "café こんにちは fin"


def test_font_table_without_subgroups_still_maps_charsets() -> None:
    rtf = "{\\rtf1\\ansi{\\fonttbl\\f0\\fcharset204 Cyr;\\f1\\fcharset0 Arial;}\\f0 " + _hex("Привет", "cp1251") + "}"
    assert rtf_to_text(rtf.encode("ascii")) == "Привет"


def test_unicode_escapes_skip_their_fallback_and_pair_surrogates() -> None:
    # U+10332 GOTHIC LETTER GIBA as the negative UTF-16 halves Word writes; \uc2 skips two fallback bytes
    rtf = "{\\rtf1\\ansi\\uc1 \\u-10240?\\u-8398?{\\uc2 \\u1078\\'3f\\'3fx}\\u8364 ?}"
    assert rtf_to_text(rtf.encode("ascii")) == "𐌲жx€"


def test_destinations_fields_and_pictures_are_skipped_but_field_results_kept() -> None:
    rtf = (
        "{\\rtf1\\ansi{\\fonttbl{\\f0 Arial;}}{\\colortbl;\\red0\\green0\\blue0;}{\\stylesheet{\\s0 Normal;}}"
        "{\\info{\\title Secret title}{\\author Someone}}{\\*\\generator Msftedit;}"
        '{\\pict\\pngblip 89504e470d0a}Body {\\field{\\*\\fldinst HYPERLINK "http://x"}{\\fldrslt link text}}'
        "\\par Tab\\tab end\\line next \\{braces\\} \\\\ done\\bin3 {}x}"
    )
    text = rtf_to_text(rtf.encode("ascii"))
    assert text == "Body link text\nTab\tend\nnext {braces} \\ done"
    for hidden in ("Secret", "Someone", "Arial", "Normal", "89504e", "HYPERLINK", "Msftedit"):
        assert hidden not in text


def test_table_cells_become_tabs_and_rows_lines() -> None:
    rtf = "{\\rtf1\\ansi\\trowd\\cellx1000\\cellx2000 A\\cell B\\cell\\row C\\cell D\\cell\\row}"
    assert rtf_to_text(rtf.encode("ascii")) == "A\tB\nC\tD"


def test_not_rtf_is_corrupt_and_blank_is_empty() -> None:
    with pytest.raises(CorruptInputError, match="does not start"):
        rtf_to_text(b"hello {\\rtf1}")
    with pytest.raises(EmptyInputError):
        rtf_to_text(b"  \n")


def test_extract_rtf_reports_one_clean_unit_through_the_dispatcher() -> None:
    data = b"{\\rtf1\\ansi Hello world\\par}"
    units = extract_units(data, FileType("rtf", "application/rtf", "magic"), Settings())
    assert [u.text for u in units] == ["Hello world"]
    report = units[0].report
    assert (report.status, report.engine, report.char_count) == ("clean", "papersift-rtf", 11)
    assert extract_rtf(data, Settings())[0].text == "Hello world"


@pytest.mark.corpus
@pytest.mark.skipif(not corpus_present(), reason="corpus absent")
@pytest.mark.parametrize("row", manifest_rows(lambda r: r["category"] == "rtf"), ids=lambda r: r["out_name"])
def test_corpus_rtf_phrases(row: dict[str, str]) -> None:
    text = rtf_to_text((CORPUS / "files" / row["out_name"]).read_bytes())
    assert phrase_ok(row["expected"], text), f"{row['expected']!r} not in {text[:300]!r}"
