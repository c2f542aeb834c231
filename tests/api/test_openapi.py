"""docs/openapi.json is generated from the routes and models, and says what the API enforces."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from papersift.api_models import LISTED_STATUSES, ListedStatus, OcrMode
from papersift.settings import OCR_MODES
from papersift.steps.contracts import document_id

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "write_openapi.py"


@pytest.fixture(scope="module")
def generated() -> str:
    with pytest.MonkeyPatch.context() as patch:
        spec = importlib.util.spec_from_file_location("write_openapi", SCRIPT)
        assert spec is not None and spec.loader is not None
        script = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(script)
        for name, value in script.PLACEHOLDER_ENV.items():
            patch.setenv(name, value)
        return str(script.generated())


@pytest.fixture(scope="module")
def document(generated: str) -> dict[str, Any]:
    return dict(json.loads(generated))


def test_the_committed_document_is_what_the_code_generates(generated: str) -> None:
    committed = (ROOT / "docs" / "openapi.json").read_text(encoding="utf-8")
    assert committed == generated, "docs/openapi.json drifted from the routes: run scripts/write_openapi.py"


def test_every_operation_requires_sigv4_or_an_api_key_and_documents_the_error_shape(document: dict[str, Any]) -> None:
    assert document["security"] == [{"sigv4": []}, {"api_key": []}]
    schemes = document["components"]["securitySchemes"]
    assert schemes["sigv4"]["x-amazon-apigateway-authtype"] == "awsSigv4"
    operations = [(method, path, op) for path, ops in document["paths"].items() for method, op in ops.items()]
    assert len(operations) == 6
    for method, path, operation in operations:
        assert "422" not in operation["responses"], (method, path)
        for status in ("403", "429", "500"):
            schema = operation["responses"][status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, (method, path, status)
        assert any(s.startswith("2") and operation["responses"][s].get("content") for s in operation["responses"])


def test_passwords_are_write_only_secrets_in_the_schema(document: dict[str, Any]) -> None:
    passwords = document["components"]["schemas"]["SubmitRequest"]["properties"]["passwords"]["items"]
    assert (passwords["format"], passwords["writeOnly"]) == ("password", True)


def test_the_api_literals_agree_with_the_settings_and_statuses_they_mirror() -> None:
    assert set(OcrMode.__args__) == set(OCR_MODES)  # type: ignore[attr-defined]
    assert set(ListedStatus.__args__) == set(LISTED_STATUSES)  # type: ignore[attr-defined]
    import re

    from papersift.api_models import DOC_ID_PATTERN

    assert re.fullmatch(DOC_ID_PATTERN, document_id("bucket", "incoming/a.pdf", "v1", "etag"))
