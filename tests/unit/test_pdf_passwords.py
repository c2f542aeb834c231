"""Opening PDFs: passwords (empty, supplied, non-ASCII, spaces), damaged and empty files."""

from __future__ import annotations

import pytest
from pdf_factory import empty_pages_pdf, encrypted_pdf, linearized_pdf, text_pdf, truncated_pdf

from papersift.errors import CorruptInputError, EmptyInputError, EncryptedInputError
from papersift.formats import pdf
from papersift.pdf_engines import password_candidates
from papersift.settings import Settings

PLAIN = text_pdf(["Quarterly results for the northern region", "Second page of the report"])


def _text(data: bytes, settings: Settings) -> str:
    return "\n".join(p.text for p in pdf.extract_pages(data, settings, 1, pdf.page_count(data, settings)))


def test_empty_user_password_opens_without_any_supplied_password() -> None:
    data = encrypted_pdf(PLAIN, user_password="", owner_password="owner")
    assert pdf.page_count(data, Settings()) == 2
    assert "northern region" in _text(data, Settings())


def test_supplied_password_opens_and_the_report_is_clean() -> None:
    data = encrypted_pdf(PLAIN, user_password="s3cret")
    settings = Settings(passwords=("wrong", "s3cret"))
    pages = pdf.extract_pages(data, settings, 1, 2)
    assert [p.report.status for p in pages] == ["clean", "clean"]
    assert "northern region" in pages[0].text


@pytest.mark.parametrize("passwords", [(), ("wrong",), ("S3CRET",)], ids=["none", "wrong", "wrong-case"])
def test_missing_or_wrong_password_is_reported_as_encrypted(passwords: tuple[str, ...]) -> None:
    data = encrypted_pdf(PLAIN, user_password="s3cret")
    with pytest.raises(EncryptedInputError):
        pdf.page_count(data, Settings(passwords=passwords))
    with pytest.raises(EncryptedInputError):
        pdf.extract_pages(data, Settings(passwords=passwords), 1, 1)


def test_non_ascii_password_stored_as_latin1_opens_an_rc4_pdf() -> None:
    # pypdf stores 'garçon' as Latin-1 bytes for RC4, as old Acrobat did; pypdfium2 alone sends UTF-8
    data = encrypted_pdf(PLAIN, user_password="garçon", algorithm="RC4-128")
    assert "northern region" in _text(data, Settings(passwords=("garçon",)))


def test_non_ascii_password_as_utf8_opens_an_aes256_pdf() -> None:
    data = encrypted_pdf(PLAIN, user_password="garçon", algorithm="AES-256")
    assert "northern region" in _text(data, Settings(passwords=("garçon",)))


def test_password_of_four_spaces_is_used_verbatim() -> None:
    data = encrypted_pdf(PLAIN, user_password="    ")
    with pytest.raises(EncryptedInputError):
        pdf.page_count(data, Settings(passwords=("",)))
    assert "northern region" in _text(data, Settings.from_mapping({"passwords": "    "}))


def test_password_candidates_try_empty_first_then_utf8_and_latin1_forms() -> None:
    assert password_candidates(("garçon", "    ", "€uro")) == [
        b"",
        "garçon".encode(),
        "garçon".encode("latin-1"),
        b"    ",
        "€uro".encode(),
    ]


def test_truncated_pdf_is_corrupt_with_a_reason_from_both_parsers() -> None:
    with pytest.raises(CorruptInputError) as caught:
        pdf.page_count(truncated_pdf(PLAIN, keep=300), Settings())
    assert "pdfium" in str(caught.value) and "pypdf" in str(caught.value)


def test_bytes_without_a_pdf_header_are_corrupt() -> None:
    with pytest.raises(CorruptInputError, match="no %PDF header"):
        pdf.page_count(b"this is not a pdf at all" * 10, Settings())


def test_pdf_with_zero_pages_is_empty_input() -> None:
    with pytest.raises(EmptyInputError, match="parsed it and found none"):
        pdf.page_count(empty_pages_pdf(), Settings())


def test_a_linearized_pdf_cut_in_half_is_damaged_not_empty_and_says_what_each_opener_found() -> None:
    whole = linearized_pdf(40)
    assert pdf.page_count(whole, Settings()) == 40
    with pytest.raises(CorruptInputError) as raised:
        pdf.page_count(whole[: len(whole) // 2], Settings())
    reason = str(raised.value)
    assert "pdfium says" in reason and "pypdf says" in reason and "pdfminer finds no pages" in reason
    assert "Invalid object in /Pages" in reason
