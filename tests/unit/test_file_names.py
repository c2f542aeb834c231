"""One rule for the characters and length of a file name: the API refuses what the CLI replaces."""

from __future__ import annotations

import unicodedata

import pytest

from papersift.api_models import SubmitRequest
from papersift.catalog import Catalog
from papersift.errors import RequestError
from papersift.names import MAX_OBJECT_KEY_BYTES, file_name_problem, object_key_problem
from papersift.settings import Settings
from papersift_cli.output import safe_component

UNSAFE = ["\x00", "\x1f", "\x7f", "\x85", "\x9f", "\u00ad", "\u061c", "\u200b", "\u200d", "\u202e", "\u2066",
          "\u2028", "\u2029", "\ufeff", "\ue000", "\U000f0000", "\ud800"]


@pytest.mark.parametrize("character", UNSAFE)
def test_an_unsafe_character_is_refused_by_the_api_and_replaced_by_the_cli(character: str) -> None:
    problem = file_name_problem(f"a{character}b.pdf")
    assert problem and f"U+{ord(character):04X}" in problem
    assert safe_component(f"a{character}b.pdf") == "a_b.pdf"


@pytest.mark.parametrize("name", ["report.pdf", "R\u00e9sum\u00e9 final (2).docx", "\u6587\u4ef6.txt",
                                  "\u0645\u0644\u0641.pdf", "\U0001f4c4" * 63, "a" * 255, "...pdf", "a b"])
def test_a_plain_name_in_nfc_up_to_255_bytes_is_taken_as_it_is(name: str) -> None:
    assert file_name_problem(name) is None
    assert SubmitRequest(file_name=name).file_name == name


def test_names_are_taken_in_nfc_and_measured_after() -> None:
    decomposed = "Re\u0301sume\u0301.pdf"
    assert file_name_problem(decomposed) == "is not in Unicode normalization form NFC"
    assert SubmitRequest(file_name=decomposed).file_name == unicodedata.normalize("NFC", decomposed)
    assert safe_component(decomposed) == "R\u00e9sum\u00e9.pdf"


@pytest.mark.parametrize(("name", "problem"), [
    ("\U0001f4c4" * 64, "256 bytes of UTF-8"), ("a/b", "'/'"), ("a\\b", "'/'"), (".", "'.'"), ("..", "'..'"),
    ("", "empty"),
])
def test_a_name_that_is_not_one_file_name_says_why(name: str, problem: str) -> None:
    assert problem in (file_name_problem(name) or "")


def test_a_key_past_s3_s_1024_bytes_is_refused_naming_the_file_name() -> None:
    assert object_key_problem("k" * MAX_OBJECT_KEY_BYTES) is None
    assert "1025 bytes" in (object_key_problem("\u00e9" * 512 + "k") or "")
    catalog = Catalog(s3=None, table=None, sfn=None, bucket="b", state_machine_arn="arn", settings=Settings())
    # past the model's own 255-byte rule (model_construct skips it): the key check still holds
    with pytest.raises(RequestError) as refused:
        catalog.submit(SubmitRequest.model_construct(file_name="\U0001f4c4" * 250))
    assert refused.value.field == "file_name" and "over the 1024 S3 takes" in str(refused.value)
