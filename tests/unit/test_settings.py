"""The settings object every entry point builds: how loose values become typed ones, and the exact
message a bad value fails with (the CLI, the CDK synth and a Lambda's init all show it verbatim)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from papersift.errors import SettingsError
from papersift.settings import Settings


def _fails(values: dict[str, Any], source: str = "test") -> str:
    with pytest.raises(SettingsError) as caught:
        Settings.from_mapping(values, source=source)
    return str(caught.value)


@pytest.mark.parametrize(("values", "expected"), [
    ({"page_batch_size": "1_000"}, {"page_batch_size": 1000}),
    ({"PAGE-BATCH-SIZE": " 7 "}, {"page_batch_size": 7}),
    ({"clean_text": "Yes"}, {"clean_text": True}),
    ({"extract_tables": "off"}, {"extract_tables": False}),
    ({"clean_text": 1}, {"clean_text": True}),
    ({"api_throttle_rate": "12"}, {"api_throttle_rate": 12.0}),
    ({"price_lambda_request": 0}, {"price_lambda_request": 0.0}),
    ({"ocr_languages": "eng+por, spa,"}, {"ocr_languages": ("eng", "por", "spa")}),
    ({"ocr_languages": ["deu", "chi_sim"]}, {"ocr_languages": ("deu", "chi_sim")}),
    ({"passwords": " a,b "}, {"passwords": (" a,b ",)}),
    ({"passwords": ["x", 7]}, {"passwords": ("x", "7")}),
    ({"ocr_mode": "off"}, {"ocr_mode": "off"}),
])
def test_loose_values_from_env_toml_and_cli_become_typed(values: dict[str, Any], expected: dict[str, Any]) -> None:
    settings = Settings.from_mapping(values)
    for name, value in expected.items():
        assert getattr(settings, name) == value
        assert type(getattr(settings, name)) is type(value)


@pytest.mark.parametrize(("values", "message"), [
    ({"max_concurrency": "many"},
     "setting max_concurrency in test: cannot use 'many' (invalid literal for int() with base 10: 'many')"),
    ({"max_pages": 2.5}, "setting max_pages in test: cannot use 2.5 (invalid literal for int() with base 10: '2.5')"),
    ({"max_pages": True}, "setting max_pages in test: cannot use True (expected an integer)"),
    ({"clean_text": "maybe"}, "setting clean_text in test: cannot use 'maybe' (expected true or false)"),
    ({"clean_text": "y"}, "setting clean_text in test: cannot use 'y' (expected true or false)"),
    ({"api_throttle_rate": "fast"},
     "setting api_throttle_rate in test: cannot use 'fast' (could not convert string to float: 'fast')"),
    ({"ocr_languages": 5}, "setting ocr_languages in test: cannot use 5 ('int' object is not iterable)"),
])
def test_a_value_of_the_wrong_type_names_the_setting_the_source_and_the_value(
    values: dict[str, Any], message: str
) -> None:
    assert _fails(values) == message


def test_an_unknown_setting_is_named_with_its_source_and_the_known_ones() -> None:
    message = _fails({"pages_per_batch": 5}, source="CDK context 'papersift'")
    assert message.startswith("unknown setting 'pages_per_batch' in CDK context 'papersift'; known: api_auth, ")
    known = message.split("known: ")[1].split(", ")
    assert known == sorted(known) and "page_batch_size" in known and "passwords" in known


@pytest.mark.parametrize(("values", "message"), [
    ({"page_batch_size": 0}, "setting page_batch_size must be positive, got 0"),
    ({"api_throttle_rate": -1.5}, "setting api_throttle_rate must be positive, got -1.5"),
    ({"upload_expiry_days": 0}, "setting upload_expiry_days must be positive, got 0"),
    ({"ocr_reserved_concurrency": -1}, "setting ocr_reserved_concurrency must be 0 (none) or positive, got -1"),
    ({"ocr_reserved_concurrency": 20},
     "setting ocr_reserved_concurrency must be 0 or at least max_running_executions x ocr_max_concurrency = 500 "
     "(the OCR pages the workflow may read at once; fewer would be throttled past its retries); got 20"),
    ({"ocr_mode": "sometimes"},
     "setting ocr_mode must be one of off, local-first, textract-first, local-only, textract-only; got 'sometimes'"),
    ({"ocr_languages": ""}, "setting ocr_languages must be Tesseract codes like eng, por; got ()"),
    ({"ocr_languages": "eng,p-r"}, "setting ocr_languages must be Tesseract codes like eng, por; got ('eng', 'p-r')"),
    ({"api_auth": "open"}, "setting api_auth must be one of iam, api_key; got 'open'"),
    ({"api_inline_max_bytes": 6_000_000},
     "setting api_inline_max_bytes must be at most 4500000 (API Gateway passes Lambda 6 MB, base64 included); "
     "got 6000000"),
    ({"api_download_url_seconds": 604801},
     "setting api_download_url_seconds must be at most 604800 (a SigV4 URL lives 7 days at most)"),
    ({"parallel_files": -2}, "setting parallel_files must be 0 (one per core) or more, got -2"),
    ({"price_state_transition": -0.5}, "setting price_state_transition must not be negative, got -0.5"),
])
def test_an_out_of_range_value_fails_with_a_message_naming_the_setting(values: dict[str, Any], message: str) -> None:
    assert _fails(values) == message


def test_the_edges_of_each_range_are_accepted() -> None:
    settings = Settings.from_mapping({"ocr_reserved_concurrency": 500, "parallel_files": 0,
                                      "api_inline_max_bytes": 4_500_000, "api_upload_url_seconds": 604800,
                                      "price_textract_detect_per_page": 0, "ocr_languages": "chi_sim"})
    assert settings.ocr_reserved_concurrency == 500 and settings.api_upload_url_seconds == 604800


def test_built_directly_or_replaced_the_settings_are_checked_the_same_way() -> None:
    with pytest.raises(SettingsError, match=re.escape("setting max_pages must be positive, got 0")):
        Settings(max_pages=0)
    with pytest.raises(SettingsError, match=re.escape("setting ocr_mode must be one of")):
        Settings().replace(ocr_mode="never")
    assert Settings().replace(max_pages=3).max_pages == 3


def test_settings_are_frozen_and_compare_by_value() -> None:
    settings = Settings()
    with pytest.raises((AttributeError, ValueError)):
        settings.max_pages = 3  # type: ignore[misc]
    assert settings == Settings() and settings.replace(max_pages=3) != settings
    assert hash(settings) == hash(Settings())


def test_the_environment_round_trips_everything_but_the_passwords() -> None:
    settings = Settings(ocr_languages=("deu", "fra"), clean_text=True, max_pages=12, price_lambda_request=1e-07,
                        passwords=("secret",))
    env = settings.to_env()
    assert env["PAPERSIFT_OCR_LANGUAGES"] == "deu,fra"
    assert env["PAPERSIFT_CLEAN_TEXT"] == "true" and env["PAPERSIFT_EXTRACT_TABLES"] == "false"
    assert env["PAPERSIFT_PRICE_LAMBDA_REQUEST"] == "1e-07"
    assert "PAPERSIFT_PASSWORDS" not in env and "secret" not in json.dumps(env)
    assert Settings.from_env({**env, "HOME": "/root"}) == settings.replace(passwords=())


def test_an_unknown_papersift_variable_in_the_environment_fails_init() -> None:
    says = r"^unknown environment variable PAPERSIFT_PAGES \(nearest: PAPERSIFT_MAX_PAGES\)"
    with pytest.raises(SettingsError, match=says):
        Settings.from_env({"PAPERSIFT_PAGES": "5"})


def test_the_build_scripts_papersift_variables_are_not_settings() -> None:
    env = {"PAPERSIFT_SKIP_LAYER_BUILD": "1", "PAPERSIFT_IMAGE_TAG": "t", "PAPERSIFT_MAX_PAGES": "7"}
    assert Settings.from_env(env) == Settings(max_pages=7)


def test_a_report_records_the_settings_but_only_the_number_of_passwords() -> None:
    settings = Settings(passwords=("a", "b"))
    public = settings.public_dict()
    assert public["passwords"] == 2 and public["ocr_languages"] == ["eng", "por", "spa"]
    assert list(public)[:3] == ["page_batch_size", "distributed_map_threshold", "max_concurrency"]
    assert list(public)[-2:] == ["parallel_files", "passwords"]
    assert "'a'" not in repr(settings) and "page_batch_size=100" in repr(settings)


def test_a_toml_file_is_read_from_its_papersift_table_and_the_command_line_wins(tmp_path: Path) -> None:
    path = tmp_path / "papersift.toml"
    path.write_text('[papersift]\npage_batch_size = 20\nocr_languages = ["eng"]\nclean_text = true\n')
    settings = Settings.from_toml(path, {"page_batch_size": 5})
    assert (settings.page_batch_size, settings.ocr_languages, settings.clean_text) == (5, ("eng",), True)
    path.write_text("max_pages = 9\n")
    assert Settings.from_toml(path).max_pages == 9


def test_a_bad_toml_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "papersift.toml"
    with pytest.raises(SettingsError, match=re.escape(f"cannot read settings file {path}: ")):
        Settings.from_toml(path)
    path.write_text("[papersift\n")
    with pytest.raises(SettingsError, match=re.escape(f"cannot read settings file {path}: ")):
        Settings.from_toml(path)
    path.write_text('[papersift]\nmax_pages = "lots"\n')
    with pytest.raises(SettingsError, match=re.escape(f"setting max_pages in {path}: cannot use 'lots'")):
        Settings.from_toml(path)


def test_with_several_bad_values_the_first_in_field_order_is_named() -> None:
    """One message at a time, the same whichever order a file or the environment lists them in."""
    values = {"api_auth": "open", "clean_text": "maybe", "ocr_dpi": 0}
    assert _fails(values) == _fails(dict(reversed(values.items()))) == "setting ocr_dpi must be positive, got 0"
