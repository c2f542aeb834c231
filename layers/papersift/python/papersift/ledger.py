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
from papersift.storage import CountingStore, ObjectStore

#: the Textract operations, by the name a page's OCR details carry
DETECT_DOCUMENT_TEXT = "DetectDocumentText"
ANALYZE_DOCUMENT = "AnalyzeDocument"  # FeatureTypes TABLES
ANALYZE_DOCUMENT_LAYOUT = "AnalyzeDocumentLayout"  # LAYOUT
ANALYZE_DOCUMENT_TABLES_LAYOUT = "AnalyzeDocumentTablesLayout"  # TABLES and LAYOUT
#: an ingest message is sent by the bucket's notification, received and deleted by the ingest function
SQS_REQUESTS_PER_MESSAGE = 3
#: amounts kept to a nano-dollar: one document's S3 GETs ($0.0000004 each) would vanish at micro-dollars
USD_DIGITS = 9


@dataclass(frozen=True)
class Usage:
    """One step invocation's use of Lambda (what Lambda bills as duration x memory) and the S3
    requests it made, by billing class (``storage.CountingStore``)."""

    function: str
    memory_mb: int
    seconds: float
    s3_puts: int = 0
    s3_gets: int = 0

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

    def usage(self, seconds: float, counted: CountingStore | None = None, puts_to_come: int = 1) -> Usage:
        """``puts_to_come``: the step's writes after this (the record carrying this usage, at least)."""
        if counted is None:
            return Usage(self.function, self.memory_mb, round(seconds, 4))
        return Usage(self.function, self.memory_mb, round(seconds, 4), counted.puts + puts_to_come, counted.gets)


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
    """USD a page read by ``api`` (the operation with the features asked: ``textract_api``)."""
    if api == ANALYZE_DOCUMENT:
        return settings.price_textract_analyze_per_page
    if api == ANALYZE_DOCUMENT_LAYOUT:
        return settings.price_textract_layout_per_page
    if api == ANALYZE_DOCUMENT_TABLES_LAYOUT:
        return settings.price_textract_analyze_per_page + settings.price_textract_layout_with_tables_per_page
    return settings.price_textract_detect_per_page


def textract_api(tables: bool, layout: bool) -> str:
    """The Textract call a page is read with, as the ledger names it: DetectDocumentText unless
    tables or LAYOUT are wanted (``Settings.textract_layout``), which only AnalyzeDocument gives."""
    if tables:
        return ANALYZE_DOCUMENT_TABLES_LAYOUT if layout else ANALYZE_DOCUMENT
    return ANALYZE_DOCUMENT_LAYOUT if layout else DETECT_DOCUMENT_TEXT


def cost_ledger(pages: list[PageReport], usage: Iterable[Usage], transitions: int, settings: Settings,
                tables: bool = False, paged: bool = True, member: bool = False) -> dict[str, Any]:
    """The ledger as the report and the DynamoDB item carry it (numbers rounded for reading).
    ``paged``: the document has pages Textract could read (a PDF, a picture); an Office file's or
    a text file's units are not pages, and add nothing to the all-Textract comparison.
    ``member``: an archive member, which no SQS message, API request or ingest record brought."""
    gb_seconds: dict[str, float] = {}
    invocations: Counter[str] = Counter()
    s3_requests: Counter[str] = Counter()
    for use in usage:
        gb_seconds[use.function] = gb_seconds.get(use.function, 0.0) + use.gb_seconds
        invocations[use.function] += 1
        s3_requests.update(put=use.s3_puts, get=use.s3_gets)
    estimates = shape_estimates(sum(invocations.values()), member, settings)
    s3_usd = s3_requests["put"] * settings.price_s3_put_request + s3_requests["get"] * settings.price_s3_get_request
    dynamodb_usd = estimates["dynamodb_writes"] * settings.price_dynamodb_write
    sqs_usd = estimates["sqs_requests"] * settings.price_sqs_request
    api_usd = estimates["api_requests"] * settings.price_api_request
    logs_usd = estimates["log_bytes"] / 1e9 * settings.price_log_ingestion_gb
    calls = textract_calls(pages)
    textract_usd = sum(count * textract_price(api, settings) for api, count in calls.items())
    lambda_usd = (sum(gb_seconds.values()) * settings.price_lambda_gb_second
                  + sum(invocations.values()) * settings.price_lambda_request)
    workflow_usd = transitions * settings.price_state_transition
    amounts = {"textract": textract_usd, "lambda": lambda_usd, "step_functions": workflow_usd, "s3": s3_usd,
               "dynamodb": dynamodb_usd, "sqs": sqs_usd, "api_gateway": api_usd, "logs": logs_usd}
    every_page = textract_price(textract_api(tables, settings.textract_layout), settings)
    readable = sum(1 for p in pages if p.status != "skipped_limit") if paged else 0
    return {
        "pages_by_engine": dict(Counter(p.engine for p in pages if p.engine)),
        "textract_pages": dict(calls),
        "lambda_gb_seconds": {name: round(value, 3) for name, value in sorted(gb_seconds.items())},
        "lambda_invocations": dict(sorted(invocations.items())),
        "state_transitions": transitions,
        "s3_requests": {"put": s3_requests["put"], "get": s3_requests["get"]},
        **estimates,
        # uncertain text layers judged by OCR of the rendered page (their OCR is in the OCR function's
        # seconds above): capped per document by Settings.max_rendering_checks
        "rendering_checks": sum(1 for p in pages if p.rendering_agreement is not None),
        "usd": {name: round(amount, USD_DIGITS)
                for name, amount in {**amounts, "total": sum(amounts.values())}.items()},
        "usd_all_textract": round(readable * every_page, USD_DIGITS),
    }


def shape_estimates(invocations: int, member: bool, settings: Settings) -> dict[str, int]:
    """What no step can count from inside, estimated from the document's shape as state transitions
    are: a dropped document is one SQS message (sent, received, deleted), the DynamoDB writes and
    API requests per document Settings names (a member writes only its item and has no request),
    and the log bytes of each Lambda invocation."""
    return {"dynamodb_writes": 1 if member else settings.ledger_dynamodb_writes_per_document,
            "sqs_requests": 0 if member else SQS_REQUESTS_PER_MESSAGE,
            "api_requests": 0 if member else settings.ledger_api_requests_per_document,
            "log_bytes": invocations * settings.ledger_log_bytes_per_invocation}


def merge_ledgers(ledgers: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """An archive's ledger: its own plus its members' (counts and amounts summed key by key)."""
    total: dict[str, Any] = {}
    for ledger in ledgers:
        for key, value in ledger.items():
            if isinstance(value, Mapping):
                into = total.setdefault(key, {})
                for name, amount in value.items():
                    into[name] = round(into.get(name, 0) + amount, USD_DIGITS)
            elif isinstance(value, int | float):
                total[key] = round(total.get(key, 0) + value, USD_DIGITS)
    return total


def workflow_transitions(plan: Plan | None, member: bool, ocr_pages: int, export: bool = False) -> int:
    """State transitions of one document through ``infra/workflow.py``, counted from its shape:
    each state entered is one (Step Functions bills Standard workflows by them). An archive
    member's are its own; an archive adds its members' ledgers to its own. Retries are not
    known here and not counted, nor is the export step's recording of its own failure (with
    ``export``, Settings.export_parquet: the Export state after assemble is). A test runs
    documents through the local workflow and holds this equal to the transitions in their
    execution histories."""
    exported = 1 if export else 0  # Export, after assemble or RecordFailure
    if plan is None:
        return 2 + exported  # Plan (failed) -> RecordFailure
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
    return count + 1 + exported  # Assemble (or RecordFailure after a Catch)


def _ocr_stage(pages: int) -> int:
    """PlanOcr, ChooseOcrMap, and when there are pages the Map and a task per page."""
    return 2 + (1 + pages if pages else 0)
