"""The report models: report.json keeps the layout and numbers the dataclasses wrote, a report is
validated when read, and the published schema is generated from the models."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from papersift.errors import PapersiftError
from papersift.report import (
    EngineAttempt,
    ErrorRecord,
    ExtractionReport,
    MemberReport,
    OcrDetails,
    PageReport,
    PageStatus,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "layers" / "papersift" / "python" / "papersift" / "schema" / "report.schema.json"


def _page(number: int = 1, **changes: Any) -> PageReport:
    values: dict[str, Any] = dict(number=number, status="ocr", engine="tesseract", char_count=12, confidence=0.91,
                                  reason="tesseract read the page", seconds=0.25, signals=["hybrid"],
                                  attempts=[EngineAttempt(engine="pdfium", chars=0, score=0.0, seconds=0.01,
                                                          signals=["no_text"])],
                                  errors=[ErrorRecord(code="engine_failed", reason="boom", engine="pypdf", page=1)],
                                  ocr=OcrDetails(engine="tesseract", model="eng", orientation=90, confidence=0.91,
                                                 words=3, dpi=300.0, renderer="pdfium", notes=["turned"]))
    values.update(changes)
    return PageReport(**values)


def _report(**changes: Any) -> ExtractionReport:
    values: dict[str, Any] = dict(
        doc_id="d" + "0" * 40, source={"bucket": "b", "key": "incoming/a.pdf", "name": "a.pdf", "size": 10},
        detected_type="pdf", mime_type="application/pdf", detected_by="magic", status="needs_review", reason="r",
        page_count=2, pages=[_page(1), _page(2, status="clean", ocr=None, attempts=[], errors=[])],
        members=[MemberReport(path="a.txt", status="clean")], engines={"tesseract": 1, "pdfium": 1}, char_count=24,
        timings={"plan": 0.1, "extract_pages": 0}, cost={"usd": {"total": 0.0}, "usd_all_textract": 0.003},
        settings={"passwords": ["x"], "max_pages": 5}, papersift_version="0.1.0",
        created_at="2026-12-01T09:00:00+00:00")
    values.update(changes)
    return ExtractionReport(**values)


def test_report_json_keeps_the_dataclass_layout_every_field_in_order_none_and_empty_included() -> None:
    data = _report().to_dict()
    assert list(data) == ["doc_id", "source", "detected_type", "mime_type", "detected_by", "status", "reason",
                          "page_count", "engines", "char_count", "timings", "cost", "settings", "papersift_version",
                          "created_at", "schema_version", "pages", "members", "errors", "trusted", "error_code",
                          "fonts_without_map"]
    assert list(data["pages"][0]) == ["number", "status", "engine", "char_count", "confidence", "reason", "seconds",
                                      "signals", "language", "attempts", "errors", "tables", "form_fields",
                                      "ocr_cost_usd", "ocr", "fonts", "font_summary", "rendering_agreement", "pictures",
                                      "pictures_not_listed"]
    assert data["pages"][1]["ocr"] is None and data["pages"][1]["attempts"] == [] and data["errors"] == []
    assert data["pages"][0]["language"] is None
    assert data["members"] == [{"path": "a.txt", "status": "clean", "kind": "archive_member",
                                "reason": "", "detected_type": None, "size": None,
                                "doc_id": None, "page_count": 0, "original_name": None}]
    assert (data["trusted"], data["error_code"]) == (False, "")


def test_a_number_is_written_as_the_code_gave_it_an_int_stays_an_int() -> None:
    """An empty document's extract_pages is sum([]) == 0: report.json has always said 0, not 0.0."""
    text = json.dumps(_report(pages=[_page(confidence=1, seconds=0.0)]).to_dict())
    assert '"timings": {"plan": 0.1, "extract_pages": 0}' in text
    assert '"confidence": 1, "reason": "tesseract read the page", "seconds": 0.0,' in text


def test_a_written_report_reads_back_to_the_same_bytes_and_its_dicts_are_its_own() -> None:
    report = _report()
    text = json.dumps(report.to_dict(), ensure_ascii=False)
    again = ExtractionReport.from_dict(json.loads(text))
    assert json.dumps(again.to_dict(), ensure_ascii=False) == text
    assert again.pages[0].ocr is not None and again.pages[0].ocr.orientation == 90
    assert report.to_dict()["settings"]["passwords"] is not report.settings["passwords"]


@pytest.mark.parametrize(("change", "named"), [
    (lambda d: d["pages"][0].update(status="sideways"), "pages.0.status"),
    (lambda d: d.update(colour="blue"), "colour"),
    (lambda d: d.pop("doc_id"), "doc_id"),
    (lambda d: d["pages"][0]["ocr"].update(orientation=45), "pages.0.ocr.orientation"),
    (lambda d: d["source"].pop("bucket"), "source.bucket"),
    (lambda d: d["cost"].update(usd="free"), "cost.usd"),
    (lambda d: d.update(page_count=-1), "page_count"),
])
def test_a_malformed_report_is_refused_when_read_naming_the_field(change: Any, named: str) -> None:
    data = _report().to_dict()
    change(data)
    with pytest.raises(PapersiftError, match=rf"not a valid ExtractionReport: {named}\b"):
        ExtractionReport.from_dict(data)


def test_a_malformed_page_is_refused_when_read() -> None:
    data = _page().to_dict()
    data["confidence"] = 1.5
    with pytest.raises(PapersiftError, match=r"not a valid PageReport: confidence"):
        PageReport.from_dict(data)


def test_a_report_built_by_mutation_is_validated_as_it_is_built() -> None:
    report = _report()
    report.status = "clean"
    assert report.trusted
    with pytest.raises(ValidationError):
        report.status = "fine"
    page = report.pages[0]
    replaced = page.replace(status=str(PageStatus.LOW_CONFIDENCE), confidence=0.2)
    assert (replaced.status, replaced.confidence, page.status) == ("low_confidence", 0.2, "ocr")
    with pytest.raises(ValidationError):
        page.replace(status="blurry")


def _schema_script() -> Any:
    spec = importlib.util.spec_from_file_location("write_report_schema", ROOT / "scripts" / "write_report_schema.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_committed_schema_is_what_the_models_generate() -> None:
    committed = SCHEMA_FILE.read_text(encoding="utf-8")
    assert committed == _schema_script().generated(), \
        "report.schema.json drifted from the models: run scripts/write_report_schema.py"


def test_the_schema_takes_a_written_report_and_refuses_what_from_dict_refuses() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    data = _report().to_dict()
    validator.validate(json.loads(json.dumps(data)))
    validator.validate(json.loads(json.dumps(_report(cost={}).to_dict())))  # no ledger made
    for key, bad in (("status", "fine"), ("trusted", "yes"), ("colour", "blue")):
        assert not validator.is_valid({**json.loads(json.dumps(data)), key: bad}), key
    page = json.loads(json.dumps(data["pages"][0]))
    assert not validator.is_valid({**data, "pages": [{**page, "status": "sideways"}]})
