"""Plain text, CSV/TSV and JSON: right decoding first, then rows and records."""

from __future__ import annotations

import codecs
import json

import pytest
from corpus_cases import CORPUS, manifest_rows, phrase_ok

from papersift.formats import extract_units, text
from papersift.formats.text import decode_text, extract_delimited, extract_json, extract_plain_text
from papersift.settings import Settings
from papersift.sniff import sniff

SETTINGS = Settings()
SAMPLE = "Hamburgers are delicious.\nCafé crème, 3 € — naïve.\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (SAMPLE.encode("utf-16-le"), "utf-16-le"),
        (SAMPLE.encode("utf-16-be"), "utf-16-be"),
        (codecs.BOM_UTF16_LE + SAMPLE.encode("utf-16-le"), "utf-16-le"),
        (codecs.BOM_UTF16_BE + SAMPLE.encode("utf-16-be"), "utf-16-be"),
        (SAMPLE.encode("utf-32-le"), "utf-32-le"),
        (codecs.BOM_UTF32_LE + SAMPLE.encode("utf-32-le"), "utf-32-le"),
        (codecs.BOM_UTF32_BE + SAMPLE.encode("utf-32-be"), "utf-32-be"),
        (codecs.BOM_UTF8 + SAMPLE.encode("utf-8"), "utf-8"),
        (SAMPLE.encode("utf-8"), "utf-8"),
    ],
)
def test_unicode_encodings_with_and_without_bom_decode_exactly(data: bytes, encoding: str) -> None:
    assert decode_text(data) == (SAMPLE, encoding)


def test_cp1252_euro_sign_is_not_read_as_latin2() -> None:
    data = "Der Preis betrug 15,50 €. Schöne Grüße aus Köln, señor.\n".encode("cp1252")
    decoded, encoding = decode_text(data)
    assert encoding == "cp1252"
    assert "15,50 €" in decoded and "Grüße" in decoded


def test_a_single_euro_sign_is_read_as_cp1252() -> None:
    assert decode_text("Der Preis betrug 15,50 €.\n".encode("cp1252")) == ("Der Preis betrug 15,50 €.\n", "cp1252")


@pytest.mark.parametrize(
    ("sample", "encoding"),
    [
        ("Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig.\nŻółw idzie powoli.\n", "cp1250"),
        ("Привет, как дела? Всё хорошо, спасибо.\n", "cp1251"),
    ],
)
def test_other_legacy_code_pages_are_still_detected(sample: str, encoding: str) -> None:
    assert decode_text(sample.encode(encoding)) == (sample, encoding)


def test_latin1_portuguese_keeps_its_tilde() -> None:
    data = "Port ABC contratação de sucesso\nen ABC agent uno well connected\nes hola señor\n".encode("latin-1")
    decoded, _ = decode_text(data)
    assert "contratação" in decoded


def test_ascii_is_reported_as_ascii() -> None:
    assert decode_text(b"wombat") == ("wombat", "ascii")


def test_cp1252_undefined_bytes_survive_as_latin1() -> None:
    decoded, _ = decode_text(b"caf\xe9 \x81 na\xefve " * 3)
    assert "\ufffd" not in decoded and "café" in decoded


def test_plain_text_unit_reports_its_encoding_and_gets_a_verdict() -> None:
    [page] = extract_plain_text(SAMPLE.encode("utf-16-be"), SETTINGS)
    assert page.text == SAMPLE
    report = page.report
    assert (report.status, report.engine) == ("clean", "text:utf-16-be")
    assert report.reason.startswith("decoded as utf-16-be; ")
    assert report.char_count == len(SAMPLE.strip())
    assert report.seconds >= 0


def test_csv_rows_become_a_table_and_records_keyed_by_header() -> None:
    data = b'name,age,city\r\nAna,31,"Lisbon, PT"\r\nBob,42,Porto\r\n\r\n'
    [page] = extract_delimited(data, SETTINGS)
    assert page.text == data.decode()
    assert page.records == [
        {"name": "Ana", "age": "31", "city": "Lisbon, PT"},
        {"name": "Bob", "age": "42", "city": "Porto"},
    ]
    assert page.tables[0].rows[0] == ["name", "age", "city"]
    assert page.markdown is not None
    assert page.markdown.splitlines()[0] == "| name | age | city |"
    assert "| Ana | 31 | Lisbon, PT |" in page.markdown
    assert page.report.tables == 1


def test_tsv_and_semicolon_files_split_on_their_own_delimiter() -> None:
    [tsv] = extract_delimited(b"a\tb\n1\t2,5\n3\t4\n", SETTINGS)
    assert tsv.records == [{"a": "1", "b": "2,5"}, {"a": "3", "b": "4"}]
    [semi] = extract_delimited("k;v\nx;1,5\ny;2\nz;3\n".encode("cp1252"), SETTINGS)
    assert semi.records[0] == {"k": "x", "v": "1,5"}


def test_blank_and_duplicate_headers_get_unique_keys() -> None:
    [page] = extract_delimited(b"id,,id\n1,2,3\n4,5,6\n", SETTINGS)
    assert page.records[0] == {"id": "1", "column_2": "2", "id_2": "3"}


def test_huge_csv_caps_table_and_records_but_keeps_all_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "MAX_TABLE_ROWS", 5)
    data = ("n,square\n" + "".join(f"{i},{i * i}\n" for i in range(50))).encode()
    [page] = extract_delimited(data, SETTINGS)
    assert "49,2401" in page.text
    assert len(page.records) == 5
    assert "table_truncated" in page.report.signals
    assert page.markdown is not None and "first 5 of 50 data rows" in page.markdown


def test_json_list_of_objects_is_pretty_text_and_records() -> None:
    data = json.dumps([{"name": "Ana", "tags": ["x"]}, {"name": "Bob", "tags": []}]).encode()
    [page] = extract_json(data, SETTINGS)
    assert page.records == [{"name": "Ana", "tags": ["x"]}, {"name": "Bob", "tags": []}]
    assert '\n  {\n    "name": "Ana",' in page.text


def test_json_object_has_no_records() -> None:
    [page] = extract_json('{"título": "Olá"}'.encode("utf-16"), SETTINGS)
    assert page.records == []
    assert "Olá" in page.text and page.report.engine == "text:utf-16-le"


def test_json_lines_are_read_line_by_line() -> None:
    [page] = extract_json(b'{"a": 1}\n{"a": 2}\n', SETTINGS)
    assert page.records == [{"a": 1}, {"a": 2}]


def test_invalid_json_keeps_its_raw_text_and_says_why() -> None:
    [page] = extract_json(b'{"truncated": "export", "rows": [1, 2', SETTINGS)
    assert page.text == '{"truncated": "export", "rows": [1, 2'
    assert "invalid_json" in page.report.signals
    assert "not valid JSON" in page.report.reason


def test_dispatch_runs_text_kinds_through_extract_units() -> None:
    data = b"a,b\n1,2\n3,4\n5,6\n"
    units = extract_units(data, sniff(data, "x.csv"), SETTINGS)
    assert units[0].records == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}, {"a": "5", "b": "6"}]


# -- corpus ----------------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="shared corpus not present")
@pytest.mark.parametrize(
    "row",
    manifest_rows(lambda r: r["category"] == "txt" or r["out_name"] == "us__file_we_dont_want_imported"),
    ids=lambda r: r["out_name"],
)
def test_corpus_text_file_yields_its_expected_phrase(row: dict[str, str]) -> None:
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    units = extract_units(data, sniff(data, row["out_name"]), SETTINGS)
    assert phrase_ok(row["expected"], "\n".join(u.text for u in units)), units[0].report.reason


def test_plain_text_that_decodes_to_glyph_garbage_is_not_clean() -> None:
    """A text file full of private-use code points (a font dump saved as text) is not prose."""
    garbage = "".join(chr(0xE000 + (i * 37) % 2000) for i in range(400))
    [page] = extract_plain_text(("Relatório\n" + garbage).encode("utf-8"), SETTINGS)
    assert page.report.status == "corrupt_unrecoverable"
    assert "glyph_garbage" in page.report.signals
