"""The bucket layout and the deployment contract, spelled once (docs/architecture.md, "Object
layout in the bucket").

Every place in the bucket, every result file's name and the content type it is stored with, and
every environment variable the stack (and the local runner) sets for a handler to read is named
here and nowhere else: the steps, the API's catalog, the handlers, ``infra/deployment.py`` and the
stack, the local runner and the CLI all import these names. Spelled in a dozen places, the same
string could change in one (a results file renamed, a prefix the stack's IAM grants and the
steps' keys disagree on, an environment variable the stack sets under one name and a handler
reads under another) and every test of that one place would still pass. The tests keep the
literals: they pin this contract from outside.

Pure: constants and tiny path helpers, no I/O. The work files' keys are built on these in
``papersift.workfiles``.
"""

from __future__ import annotations

# -- the bucket's top-level prefixes ---------------------------------------------------------

#: drops: an object created here is a document to process (S3 notification -> queue -> ingest)
INCOMING_PREFIX = "incoming/"
#: uploads through the API: ``incoming/api/<token>/<file name>``, a key unique per submission
API_UPLOAD_PREFIX = f"{INCOMING_PREFIX}api/"
#: what the steps pass each other while a document runs (plans, manifests, page JSON, OCR inputs,
#: usage records); expires
WORK_PREFIX = "work/"
#: what users read: a document's results
RESULTS_PREFIX = "results/"
#: archive members, each a document of its own (never under incoming/: a member is not a drop)
MEMBERS_PREFIX = "members/"
#: each document's page records as Parquet, ``exports/<doc_id>.parquet`` (Settings.export_parquet):
#: the location of an Athena/Glue table (docs/export.md)
EXPORTS_PREFIX = "exports/"
#: what the API serves for ``GET /documents/{id}/view`` of an archive: copies of its report.html
#: whose member links are presigned (relative ones fail from a presigned URL); expires
VIEWS_PREFIX = "views/"
#: the attribute report.html marks each member link with (its value the member's doc_id), so the
#: API rewrites exactly those links and nothing else of the page
MEMBER_LINK_ATTRIBUTE = "data-member-doc"


def work_prefix(doc_id: str) -> str:
    """``work/<doc_id>/``: a document's work files."""
    return f"{WORK_PREFIX}{doc_id}/"


def results_prefix(doc_id: str) -> str:
    """``results/<doc_id>/``: a document's results (the files below)."""
    return f"{RESULTS_PREFIX}{doc_id}/"


def export_key(doc_id: str) -> str:
    """``exports/<doc_id>.parquet``: a document's page records (the export step)."""
    return f"{EXPORTS_PREFIX}{doc_id}.parquet"


def views_prefix(doc_id: str) -> str:
    """``views/<doc_id>/``: the API's copies of a document's report.html with presigned member links."""
    return f"{VIEWS_PREFIX}{doc_id}/"


def members_prefix(doc_id: str) -> str:
    """``members/<archive doc_id>/``: an archive's members, deleted with the archive."""
    return f"{MEMBERS_PREFIX}{doc_id}/"


# -- a document's results, under results/<doc_id>/ --------------------------------------------

#: all pages' text, pages separated by form feeds (an archive's: its members', each under a tag line)
TEXT_FILE = "text.txt"
#: what separates one page's text from the next in text.txt
PAGE_SEPARATOR = "\f"
#: Markdown, with the tables
MARKDOWN_FILE = "document.md"
#: the ExtractionReport as JSON
REPORT_FILE = "report.json"
#: the report as one self-contained page a person reads
REPORT_PAGE_FILE = "report.html"
#: text.txt cleaned for indexing (written only when the clean_text option asks for it)
CLEAN_TEXT_FILE = "text.clean.txt"
#: per-page JSON (text, tables, records, report), one file a page
PAGES_FOLDER = "pages/"


def member_tag(path: str) -> str:
    """The line that precedes each member's text in an archive's text.txt."""
    return f"=== {path} ==="


def page_file(number: int) -> str:
    """``pages/<00001>.json``: one page's JSON, relative to a results or work prefix."""
    return f"{PAGES_FOLDER}{number:05d}.json"


# -- content types the objects are stored with -------------------------------------------------

TEXT_CONTENT_TYPE = "text/plain; charset=utf-8"
MARKDOWN_CONTENT_TYPE = "text/markdown; charset=utf-8"
JSON_CONTENT_TYPE = "application/json"
HTML_CONTENT_TYPE = "text/html; charset=utf-8"
#: an OCR input cut as a one-page PDF
PDF_CONTENT_TYPE = "application/pdf"
#: Apache Parquet (no registered media type; the one Apache's own tools use)
PARQUET_CONTENT_TYPE = "application/vnd.apache.parquet"
#: bytes of no particular type (an OCR input's "draw it from the source" marker)
BINARY_CONTENT_TYPE = "application/octet-stream"

# -- the environment the stack sets and the handlers read ----------------------------------------

#: the documents table (every function: infra.deployment.function_environment)
TABLE_NAME_ENV = "TABLE_NAME"
#: the documents bucket (every function)
BUCKET_NAME_ENV = "BUCKET_NAME"
#: the workflow ingest and the API start and look up executions of
STATE_MACHINE_ARN_ENV = "STATE_MACHINE_ARN"
#: "true" where the OCR function may call Textract (the stack, when the OCR mode may use it); the
#: local runner leaves it unset: moto's Textract reads nothing, so a local run falls back to Tesseract
TEXTRACT_ENABLED_ENV = "TEXTRACT_ENABLED"
#: the value of TEXTRACT_ENABLED_ENV that enables Textract (anything else, or unset, does not)
TEXTRACT_ENABLED = "true"
#: seconds a drop ingest may not start yet waits in the queue (the local runner sets a shorter delay)
ADMISSION_DELAY_ENV = "ADMISSION_DELAY_SECONDS"
#: the deployed admission delay, and ingest's when the variable is unset: plus up to as much jitter
#: (SQS allows 900 s); the original message is deleted, so waiting never counts as a receive
ADMISSION_DELAY_SECONDS = 30
