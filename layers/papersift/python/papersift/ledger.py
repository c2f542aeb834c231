"""The cost ledger of one document: what it used (pages by engine, Textract pages by API, Lambda
GB-seconds by function, Step Functions state transitions) and what that is estimated to cost,
beside what sending every page to Textract would have cost.

Each step records its own usage (duration x memory) under ``work/<doc_id>/usage/``; an OCR page
carries its own in the page's work file, so assemble reads no extra object per OCR page. Prices
come from Settings. State transitions are counted from the workflow's shape (the states a
document of this plan passes through); the local runner counts the execution history too, and a
test holds the two equal.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from papersift.layout import JSON_CONTENT_TYPE, work_prefix
from papersift.report import PageReport
from papersift.settings import Settings
from papersift.steps.contracts import Plan, Route, routes_at
from papersift.storage import ObjectStore

#: the Textract operations, by the name a page's OCR details carry
DETECT_DOCUMENT_TEXT = "DetectDocumentText"
ANALYZE_DOCUMENT = "AnalyzeDocument"


@dataclass(frozen=True)
class Usage:
    """One step invocation's use of Lambda: what Lambda bills as duration x memory."""

    function: str
    memory_mb: int
    seconds: float

    @property
    def gb_seconds(self) -> float:
        return self.seconds * self.memory_mb / 1024

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Invocation:
    """The Lambda function a step runs in (its handler knows it from the context), so the step can
    record its usage; ``papersift extract`` passes the deployed sizes to estimate the same."""

    function: str
    memory_mb: int

    def usage(self, seconds: float) -> Usage:
        return Usage(self.function, self.memory_mb, round(seconds, 4))


def usage_prefix(doc_id: str) -> str:
    """Where the steps' usage records are (``usage_key``), for assemble to list."""
    return f"{work_prefix(doc_id)}usage/"


def usage_key(doc_id: str, function: str, unit: str | int) -> str:
    return f"{usage_prefix(doc_id)}{function}-{unit}.json"


def record_usage(store: ObjectStore, doc_id: str, usage: Usage, unit: str | int = 0) -> None:
    store.put(usage_key(doc_id, usage.function, unit), json.dumps(usage.to_dict()).encode("utf-8"),
              JSON_CONTENT_TYPE)


def load_usage(store: ObjectStore, doc_id: str) -> list[Usage]:
    return [Usage(**json.loads(store.get(key))) for key in store.list_keys(usage_prefix(doc_id))
            if key.endswith(".json")]


def textract_calls(pages: Iterable[PageReport]) -> Counter[str]:
    """Textract requests by API: every attempt that reached the service, kept or not."""
    calls: Counter[str] = Counter()
    for page in pages:
        for attempt in page.attempts:
            engine, _, api = attempt.engine.partition(":")
            if engine == "textract" and api and attempt.error is None:
                calls[api] += 1
    return calls


def textract_price(api: str, settings: Settings) -> float:
    return settings.price_textract_analyze_per_page if api == ANALYZE_DOCUMENT \
        else settings.price_textract_detect_per_page


def cost_ledger(pages: list[PageReport], usage: Iterable[Usage], transitions: int, settings: Settings,
                tables: bool = False, paged: bool = True) -> dict[str, Any]:
    """The ledger as the report and the DynamoDB item carry it (numbers rounded for reading).
    ``paged``: the document has pages Textract could read (a PDF, a picture); an Office file's or
    a text file's units are not pages, and add nothing to the all-Textract comparison."""
    gb_seconds: dict[str, float] = {}
    invocations: Counter[str] = Counter()
    for use in usage:
        gb_seconds[use.function] = gb_seconds.get(use.function, 0.0) + use.gb_seconds
        invocations[use.function] += 1
    calls = textract_calls(pages)
    textract_usd = sum(count * textract_price(api, settings) for api, count in calls.items())
    lambda_usd = (sum(gb_seconds.values()) * settings.price_lambda_gb_second
                  + sum(invocations.values()) * settings.price_lambda_request)
    workflow_usd = transitions * settings.price_state_transition
    every_page = textract_price(ANALYZE_DOCUMENT if tables else DETECT_DOCUMENT_TEXT, settings)
    readable = sum(1 for p in pages if p.status != "skipped_limit") if paged else 0
    return {
        "pages_by_engine": dict(Counter(p.engine for p in pages if p.engine)),
        "textract_pages": dict(calls),
        "lambda_gb_seconds": {name: round(value, 3) for name, value in sorted(gb_seconds.items())},
        "lambda_invocations": dict(sorted(invocations.items())),
        "state_transitions": transitions,
        # uncertain text layers judged by OCR of the rendered page (their OCR is in the OCR function's
        # seconds above): capped per document by Settings.max_rendering_checks
        "rendering_checks": sum(1 for p in pages if p.rendering_agreement is not None),
        "usd": {"textract": round(textract_usd, 6), "lambda": round(lambda_usd, 6),
                "step_functions": round(workflow_usd, 6),
                "total": round(textract_usd + lambda_usd + workflow_usd, 6)},
        "usd_all_textract": round(readable * every_page, 6),
    }


def merge_ledgers(ledgers: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """An archive's ledger: its own plus its members' (counts and amounts summed key by key)."""
    total: dict[str, Any] = {}
    for ledger in ledgers:
        for key, value in ledger.items():
            if isinstance(value, Mapping):
                into = total.setdefault(key, {})
                for name, amount in value.items():
                    into[name] = round(into.get(name, 0) + amount, 6)
            elif isinstance(value, int | float):
                total[key] = round(total.get(key, 0) + value, 6)
    return total


def workflow_transitions(plan: Plan | None, member: bool, ocr_pages: int) -> int:
    """State transitions of one document through ``infra/workflow.py``, counted from its shape:
    each state entered is one (Step Functions bills Standard workflows by them). An archive
    member's are its own; an archive adds its members' ledgers to its own. Retries are not
    known here and not counted. A test runs documents through the local workflow and holds this
    equal to the transitions in their execution histories."""
    if plan is None:
        return 2  # Plan (failed) -> RecordFailure
    count = 2  # Plan, RouteByPlanStatus
    level = 1 if member else 0
    route = plan.route(level)
    # AfterOcr, the Choice after the OCR Map, exists where members are unpacked
    after_ocr = 1 if Route.UNPACK in routes_at(level).values() else 0
    if route is Route.EXTRACT:
        count += 1 + plan.batch_count + 1  # the Map, a task per batch, OcrNeeded
        if ocr_pages:
            count += _ocr_stage(ocr_pages) + after_ocr
    elif route is Route.OCR:
        count += _ocr_stage(ocr_pages) + (after_ocr if ocr_pages else 0)
    if route is Route.UNPACK or plan.unpacks_after(level):
        count += 1 + (0 if member else 1) + 1  # Unpack, ChooseMemberMapKind, the member Map
    return count + 1  # Assemble (or RecordFailure after a Catch)


def _ocr_stage(pages: int) -> int:
    """PlanOcr, ChooseOcrMap, and when there are pages the Map and a task per page."""
    return 2 + (1 + pages if pages else 0)
