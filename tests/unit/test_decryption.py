"""Password-protected Office files: decrypted with the configured passwords, typed again
and extracted like their plain versions; no password -> encrypted, never a crash."""

from __future__ import annotations

import io

import docx
import openpyxl
import pytest
from corpus_cases import CORPUS, corpus_present, manifest_rows, phrase_ok
from msoffcrypto.format.ooxml import OOXMLFile

from papersift.decryption import EXCEL_DEFAULT_PASSWORD, decrypt_office, is_encrypted_office
from papersift.errors import CorruptInputError, EncryptedInputError, UnsupportedFormatError
from papersift.formats import extract_encrypted_office, extract_units
from papersift.settings import Settings
from papersift.sniff import sniff


def _encrypt(plain: bytes, password: str) -> bytes:
    out = io.BytesIO()
    OOXMLFile(io.BytesIO(plain)).encrypt(password, out)
    return out.getvalue()


@pytest.fixture(scope="module")
def plain_docx() -> bytes:
    document = docx.Document()
    document.add_paragraph("Relatório confidencial de vendas")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def secret_docx(plain_docx: bytes) -> bytes:
    return _encrypt(plain_docx, "s3cret, with comma")


def test_encrypted_docx_is_sniffed_as_an_ole_container(secret_docx: bytes) -> None:
    assert sniff(secret_docx, "report.docx").kind == "ole-encrypted"
    assert is_encrypted_office(secret_docx)


def test_the_right_password_among_several_opens_it_and_the_real_extractor_runs(secret_docx: bytes) -> None:
    settings = Settings(passwords=("wrong", "s3cret, with comma"))
    units = extract_units(secret_docx, sniff(secret_docx), settings)
    assert "Relatório confidencial de vendas" in "\n".join(u.text for u in units)
    assert units[0].report.engine is not None and units[0].report.engine.startswith("msoffcrypto+")


def test_without_the_password_it_is_encrypted_and_the_message_keeps_passwords_secret(secret_docx: bytes) -> None:
    with pytest.raises(EncryptedInputError) as caught:
        extract_encrypted_office(secret_docx, Settings(passwords=("hunter2",)))
    assert "hunter2" not in str(caught.value)
    assert "1 supplied" in str(caught.value)
    with pytest.raises(EncryptedInputError):
        decrypt_office(secret_docx, [])


def test_workbook_protected_with_excels_default_password_opens_without_one() -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["Produto", "Qtd"])
    sheet.append(["Maçã", 3])
    buffer = io.BytesIO()
    workbook.save(buffer)
    locked = _encrypt(buffer.getvalue(), EXCEL_DEFAULT_PASSWORD)
    units = extract_units(locked, sniff(locked, "book.xlsx"), Settings())
    assert units[0].records == [{"Produto": "Maçã", "Qtd": 3}]


def test_plain_office_files_pass_through_unchanged(plain_docx: bytes) -> None:
    assert not is_encrypted_office(plain_docx)
    assert decrypt_office(plain_docx, ["x"]) is plain_docx


def test_non_office_input_is_unsupported_not_a_crash() -> None:
    assert not is_encrypted_office(b"just text")
    with pytest.raises(UnsupportedFormatError):
        decrypt_office(b"just text", ["x"])


def test_damaged_encrypted_container_is_corrupt(secret_docx: bytes) -> None:
    damaged = secret_docx[: len(secret_docx) // 3]
    with pytest.raises((CorruptInputError, UnsupportedFormatError)):
        extract_encrypted_office(damaged, Settings(passwords=("s3cret, with comma",)))


@pytest.mark.corpus
@pytest.mark.skipif(not corpus_present(), reason="corpus absent")
@pytest.mark.parametrize(
    "row", manifest_rows(lambda r: "_protected_" in r["out_name"] and r["password"]), ids=lambda r: r["out_name"]
)
def test_corpus_protected_office_files(row: dict[str, str]) -> None:
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    file_type = sniff(data, row["out_name"])
    assert file_type.kind == "ole-encrypted"
    with pytest.raises(EncryptedInputError):
        extract_units(data, file_type, Settings())
    units = extract_units(data, file_type, Settings(passwords=(row["password"],)))
    text = "\n".join(u.text for u in units)
    assert phrase_ok(row["expected"], text), f"{row['expected']!r} not in {text[:300]!r}"
