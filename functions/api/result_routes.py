"""Routes of a document's results: presigned GET URLs of its text, Markdown, report, report.html and export."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path
from route_support import DocId, catalog_of, responses

from papersift.api_models import ResultKind, ResultLink
from papersift.layout import MARKDOWN_FILE, REPORT_FILE, REPORT_PAGE_FILE, TEXT_FILE

router = Router()


@router.get("/documents/<doc_id>/<kind>", summary="A presigned GET URL of one result of the document",
            description=f"text: {TEXT_FILE} (pages separated by form feeds); markdown: {MARKDOWN_FILE} with the "
                        f"tables; report: {REPORT_FILE}, also inline when small; view: {REPORT_PAGE_FILE}, the page "
                        "a person reads (an archive's: a copy whose member links are presigned GETs of each "
                        "member's page, as a relative link from a presigned URL is not); export: "
                        "exports/<doc_id>.parquet, the page records the export step wrote (export_parquet on; "
                        "404 with the reason while it is pending, or when it is off or failed).",
            responses=responses(200, "A presigned GET URL", 400, 404), tags=["results"])
def result(doc_id: DocId, kind: Annotated[ResultKind, Path(description="which result")]) -> ResultLink:
    return catalog_of(router).result_link(doc_id, kind)
