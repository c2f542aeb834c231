"""ExtractionReport: what happened to a document and to each of its pages, and why.

Reports are plain dataclasses that round-trip through JSON (``to_dict``/``from_dict``)
because they cross Lambda boundaries via S3. ``schema/report.schema.json`` is the
published contract; tests validate real reports against it.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class PageStatus(StrEnum):
    CLEAN = "clean"  # text layer trusted as is
    RECOVERED = "recovered"  # a later engine fixed a suspect text layer
    NEEDS_OCR = "needs_ocr"  # no trustworthy text layer; OCR not run (mode off)
    OCR = "ocr"  # text produced by OCR (the whole page, or its pictures added to a sound text layer)
    LOW_CONFIDENCE = "low_confidence"  # OCR ran but could not read the page with confidence: review it
    CORRUPT_UNRECOVERABLE = "corrupt_unrecoverable"  # suspect and nothing better found
    FAILED = "failed"  # every engine raised
    SKIPPED = "skipped"  # beyond max_pages
    #: real text, cut short by a safety limit or a bomb (or an external entity never resolved):
    #: the signals and the reason say which; never trusted
    TRUNCATED = "truncated"


class DocumentStatus(StrEnum):
    CLEAN = "clean"
    PARTIALLY_RECOVERED = "partially_recovered"
    NEEDS_REVIEW = "needs_review"  # some pages need OCR or are low-confidence
    CORRUPT_UNRECOVERABLE = "corrupt_unrecoverable"
    ENCRYPTED = "encrypted"
    UNSUPPORTED = "unsupported"
    EMPTY = "empty"
    #: a safety limit or a bomb refused the document or cut its text short (``error_code`` says
    #: which: limit_exceeded, decompression_bomb, entity_bomb, nesting_too_deep); whatever text
    #: there is, is real but incomplete
    LIMIT_EXCEEDED = "limit_exceeded"
    #: a failure of papersift's own (a crash, a step that gave up): the input may be fine
    FAILED = "failed"


#: document statuses whose text can be used without human review
TRUSTED_DOCUMENT_STATUSES = frozenset({DocumentStatus.CLEAN, DocumentStatus.PARTIALLY_RECOVERED})

#: the truncated signal every unit cut short carries, whatever cut it
TRUNCATED_SIGNAL = "truncated"

#: error codes of the limits and bombs (``LimitExceededError`` and its subclasses, archive statuses)
LIMIT_ERROR_CODES = frozenset({"limit_exceeded", "decompression_bomb", "entity_bomb", "nesting_too_deep"})

#: what may cut a unit short: the limits and bombs, and an external entity papersift never resolves
TRUNCATION_CODES = LIMIT_ERROR_CODES | {"external_entity"}

#: error codes (``PapersiftError.code``, archive statuses) that are a document status of their own
_STATUS_OF_ERROR_CODE = {
    "encrypted": DocumentStatus.ENCRYPTED,
    "empty": DocumentStatus.EMPTY,
    "unsupported": DocumentStatus.UNSUPPORTED,
    "corrupt": DocumentStatus.CORRUPT_UNRECOVERABLE,
    "bad_input": DocumentStatus.CORRUPT_UNRECOVERABLE,
    **{code: DocumentStatus.LIMIT_EXCEEDED for code in LIMIT_ERROR_CODES},
}


def status_for_error(code: str) -> DocumentStatus:
    """The one mapping from what went wrong to a document status. The input's own faults say
    which: encrypted, empty, unsupported, corrupt (``corrupt_unrecoverable``), over a limit or a
    bomb (``limit_exceeded``); only the rest, failures of papersift's own, is ``failed``."""
    return _STATUS_OF_ERROR_CODE.get(code, DocumentStatus.FAILED)


@dataclass
class ErrorRecord:
    """A failure with a machine code, a human reason and where it happened."""

    code: str
    reason: str
    engine: str | None = None
    page: int | None = None

    @classmethod
    def from_exception(cls, exc: BaseException, engine: str | None = None, page: int | None = None) -> ErrorRecord:
        code = getattr(exc, "code", None) or type(exc).__name__
        reason = str(exc) or type(exc).__name__
        return cls(code=str(code), reason=reason, engine=engine, page=page)


@dataclass
class EngineAttempt:
    """One engine's try on one page: kept so a reader sees the whole ladder."""

    engine: str
    chars: int
    score: float
    seconds: float
    signals: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class OcrDetails:
    """How OCR read a page: what a reader needs to judge the text, and to reproduce it."""

    engine: str  # tesseract, textract
    api: str | None = None  # the Textract operation (DetectDocumentText, AnalyzeDocument)
    model: str | None = None  # the Tesseract model(s): eng+por+spa, deu, jpn_vert ...
    script: str | None = None  # the script orientation and script detection named
    orientation: int = 0  # degrees the picture was turned to read it upright
    skew: float = 0.0  # degrees of skew corrected
    confidence: float | None = None  # the engine's mean word confidence, 0..1
    words: int = 0
    dpi: float = 0.0  # the resolution the page was drawn at
    renderer: str = ""  # pdfium, poppler, pillow
    regions: int = 0  # pictures of a sound page whose text was added (0: the whole page was read)
    notes: list[str] = field(default_factory=list)


@dataclass
class PageReport:
    number: int
    status: str
    engine: str | None
    char_count: int
    confidence: float
    reason: str
    seconds: float = 0.0
    signals: list[str] = field(default_factory=list)
    language: str | None = None
    attempts: list[EngineAttempt] = field(default_factory=list)
    errors: list[ErrorRecord] = field(default_factory=list)
    tables: int = 0
    ocr_cost_usd: float = 0.0
    #: set when OCR read the page (or its pictures)
    ocr: OcrDetails | None = None

    def to_dict(self) -> dict[str, Any]:
        """``asdict(self)``, built flat: every field is a plain value or a list of flat records, and
        asdict's generic recursion cost ~2 ms a page (1.4 s of a 352-page ``papersift extract``)."""
        out = dict(vars(self))
        out["signals"] = list(self.signals)
        out["attempts"] = [dict(vars(a), signals=list(a.signals)) for a in self.attempts]
        out["errors"] = [dict(vars(e)) for e in self.errors]
        out["ocr"] = None if self.ocr is None else dict(vars(self.ocr), notes=list(self.ocr.notes))
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageReport:
        data = dict(data)
        data["attempts"] = [EngineAttempt(**a) for a in data.get("attempts", [])]
        data["errors"] = [ErrorRecord(**e) for e in data.get("errors", [])]
        data["ocr"] = OcrDetails(**data["ocr"]) if data.get("ocr") else None
        return cls(**data)


@dataclass
class MemberReport:
    """One archive member: its path inside the archive and how it ended."""

    path: str
    status: str
    reason: str = ""
    detected_type: str | None = None
    size: int | None = None
    doc_id: str | None = None
    page_count: int = 0
    #: the name as the archive stores it, when ``path`` differs (sanitized, renamed duplicate, not UTF-8)
    original_name: str | None = None


@dataclass
class ExtractionReport:
    doc_id: str
    source: dict[str, Any]
    detected_type: str
    mime_type: str
    detected_by: str
    status: str
    reason: str
    page_count: int
    pages: list[PageReport] = field(default_factory=list)
    members: list[MemberReport] = field(default_factory=list)
    engines: dict[str, int] = field(default_factory=dict)
    char_count: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    errors: list[ErrorRecord] = field(default_factory=list)
    cost: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    papersift_version: str = ""
    created_at: str = ""
    schema_version: int = 1

    @property
    def trusted(self) -> bool:
        return self.status in TRUSTED_DOCUMENT_STATUSES

    @property
    def error_code(self) -> str:
        """The machine code of why the document is not what it seems ('' when nothing went wrong):
        the first error's code, else the limit that cut a unit short."""
        if self.errors:
            return self.errors[0].code
        for page in self.pages:
            if page.status == PageStatus.TRUNCATED:
                return next((s for s in page.signals if s in TRUNCATION_CODES), "limit_exceeded")
        return ""

    def to_dict(self) -> dict[str, Any]:
        out = {name: copy.deepcopy(value) for name, value in vars(self).items()
               if name not in ("pages", "members", "errors")}
        out["pages"] = [page.to_dict() for page in self.pages]
        out["members"] = [asdict(member) for member in self.members]
        out["errors"] = [asdict(error) for error in self.errors]
        out["trusted"] = self.trusted
        out["error_code"] = self.error_code
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExtractionReport:
        data = dict(data)
        data.pop("trusted", None)
        data.pop("error_code", None)
        data["pages"] = [PageReport.from_dict(p) for p in data.get("pages", [])]
        data["members"] = [MemberReport(**m) for m in data.get("members", [])]
        data["errors"] = [ErrorRecord(**e) for e in data.get("errors", [])]
        return cls(**data)
