"""The CloudWatch metrics the stack's alarms and dashboard read, named once: the handlers emit
them (powertools Metrics, embedded metric format) and ``infra/stacks/operations.py`` graphs and
alarms on the same names.

A finished document's counts and cost are emitted once per top-level document: an archive's
report already sums its members' pages and ledgers, so counting members again would count them
twice. Pure: names and one function from a report to its values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from papersift.report import OCR_ENGINES

#: one per top-level document finished (an archive with its members counts once)
DOCUMENTS = "Documents"
#: the document's pages (an archive's: its members' pages)
PAGES = "Pages"
#: pages whose text came from an OCR engine (Tesseract or Textract)
OCR_PAGES = "OcrPages"
#: Textract requests that reached the service, every API: what Textract bills
TEXTRACT_PAGES = "TextractPages"
#: the cost ledger's estimated total in USD; the dashboard divides it by PAGES
COST_USD = "CostUsd"
#: an OCR invocation ended because Textract refused for load (the workflow retries the page)
TEXTRACT_THROTTLES = "TextractThrottles"


def document_metrics(page_count: int, ledger: Mapping[str, Any]) -> dict[str, float]:
    """A finished top-level document's values, from its page count and its cost ledger
    (``papersift.ledger.cost_ledger``; empty when no ledger was made)."""
    by_engine: Mapping[str, int] = ledger.get("pages_by_engine", {})
    return {
        DOCUMENTS: 1,
        PAGES: page_count,
        OCR_PAGES: sum(by_engine.get(engine, 0) for engine in OCR_ENGINES),
        TEXTRACT_PAGES: sum(ledger.get("textract_pages", {}).values()),
        COST_USD: ledger.get("usd", {}).get("total", 0.0),
    }
