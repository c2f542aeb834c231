"""ExtractionReport: what happened to a document and to each of its pages, and why.

Reports are pydantic models because they cross Lambda boundaries via S3 and are read back
(an archive's members, the API, ``papersift extract``): ``from_dict`` validates what it reads,
so a malformed report fails where it is read, naming the field, instead of deep in whoever
uses it. ``schema/report.schema.json`` is the published contract, generated from these models
(``scripts/write_report_schema.py``; a test fails when it drifts); tests validate real reports
against it.

The models are not frozen: a report is assembled by mutation in many places (the pipeline sets
a document's pages, counts, status and cost one by one; the extractors append signals and
extend reasons), so assignment is validated instead (``validate_assignment``). ``to_dict`` writes
every field, None and empty ones included, in declaration order, then ``trusted`` and
``error_code``: the bytes of report.json are those the dataclasses wrote (numbers included: an
int given for a float field stays an int, see ``Number``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Annotated, Any, Literal, NotRequired, Self

import annotated_types
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetPydanticSchema,
    ValidationError,
    WithJsonSchema,
    computed_field,
)
from typing_extensions import TypedDict  # pydantic needs typing_extensions' on Python < 3.12

from papersift.errors import PapersiftError


class PageStatus(StrEnum):
    """How a page ended. truncated: real text cut short by a safety limit or a bomb (signals:
    truncated and the limit's code)."""

    CLEAN = "clean"  # text layer trusted as is
    RECOVERED = "recovered"  # a later engine fixed a suspect text layer
    NEEDS_OCR = "needs_ocr"  # no trustworthy text layer; OCR not run (mode off)
    OCR = "ocr"  # text produced by OCR (the whole page, or its pictures added to a sound text layer)
    LOW_CONFIDENCE = "low_confidence"  # OCR ran but could not read the page with confidence: review it
    CORRUPT_UNRECOVERABLE = "corrupt_unrecoverable"  # suspect and nothing better found
    FAILED = "failed"  # every engine raised
    #: past a limit, not read: beyond max_pages (signal max_pages)
    SKIPPED_LIMIT = "skipped_limit"
    #: real text, cut short by a safety limit or a bomb (or an external entity never resolved):
    #: the signals and the reason say which; never trusted
    TRUNCATED = "truncated"


class DocumentStatus(StrEnum):
    """How a document ended. limit_exceeded: a safety limit or a bomb refused the document or cut
    its text short (error_code says which); failed: a failure of papersift's own."""

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
#: page statuses whose text the verdict trusts (a review count leaves them out)
TRUSTED_PAGE_STATUSES = frozenset({PageStatus.CLEAN, PageStatus.RECOVERED, PageStatus.OCR})

#: the truncated signal every unit cut short carries, whatever cut it
TRUNCATED_SIGNAL = "truncated"

#: error codes of the limits and bombs (``LimitExceededError`` and its subclasses, archive statuses,
#: ``max_pages`` for the pages past it): a page past ``unit_memory_mb`` is ``memory_limit``, one past
#: ``page_seconds`` ``deadline_exceeded``
LIMIT_ERROR_CODES = frozenset({"limit_exceeded", "decompression_bomb", "entity_bomb", "nesting_too_deep",
                               "max_pages", "memory_limit", "deadline_exceeded"})

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


def limit_code_of(signals: Iterable[str]) -> str:
    """The limit a page's signals name ('' when none does)."""
    return next((s for s in signals if s in LIMIT_ERROR_CODES), "")


def status_for_error(code: str) -> DocumentStatus:
    """The one mapping from what went wrong to a document status. The input's own faults say
    which: encrypted, empty, unsupported, corrupt (``corrupt_unrecoverable``), over a limit or a
    bomb (``limit_exceeded``); only the rest, failures of papersift's own, is ``failed``."""
    return _STATUS_OF_ERROR_CODE.get(code, DocumentStatus.FAILED)


#: the published schema's identity (``scripts/write_report_schema.py`` writes it)
SCHEMA_ID = "https://papersift.dev/schema/report.schema.json"


# JSON numbers are kept as the code gave them: an int stays an int (``sum([])`` is 0, written ``0``),
# where pydantic's ``float`` would turn it into ``0.0`` and change report.json's bytes
Number = Annotated[float | int, WithJsonSchema({"type": "number"})]
NonNegativeNumber = Annotated[float | int, annotated_types.Ge(0), WithJsonSchema({"type": "number", "minimum": 0})]
Fraction = Annotated[float | int, annotated_types.Interval(ge=0, le=1),
                     WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1})]
Count = Annotated[int, annotated_types.Ge(0)]


def _member_of(values: Iterable[object]) -> Callable[[Any], Any]:
    """A validator that refuses a value not among ``values``. The status fields are typed ``str``
    (the code passes ``str(PageStatus.X)`` and plain strings) but only take the enum's values."""
    allowed = tuple(values)

    def check(value: Any) -> Any:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(map(str, allowed))}")
        return value

    return check


def _enum_schema(values: Iterable[object], description: str | None = None) -> WithJsonSchema:
    schema: dict[str, Any] = {"enum": list(values)}
    return WithJsonSchema({**schema, "description": " ".join(description.split())} if description else schema)


DocumentStatusValue = Annotated[str, AfterValidator(_member_of(DocumentStatus)),
                                _enum_schema([str(s) for s in DocumentStatus], DocumentStatus.__doc__)]
PageStatusValue = Annotated[str, AfterValidator(_member_of(PageStatus)),
                            _enum_schema([str(s) for s in PageStatus], PageStatus.__doc__)]
OCR_ENGINES = ("tesseract", "textract")
ORIENTATIONS = (0, 90, 180, 270)


class ReportModel(BaseModel):
    """Base of the report's records: unknown fields are refused (a renamed field fails where the
    report is read), assignment is validated (reports are built by mutation, see the module
    docstring), and the validator is built on first use, not at import (cold start)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True,
                              json_schema_serialization_defaults_required=True)

    def replace(self, **changes: Any) -> Self:
        """``dataclasses.replace`` for a record: a new one with ``changes``, validated (pydantic's
        ``model_copy(update=...)`` is not, and would let a plain str into an enum field)."""
        return self.model_validate({**self.__dict__, **changes})

    @classmethod
    def _validated(cls, data: Any) -> Any:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise PapersiftError(f"not a valid {cls.__name__}: {_problems(exc)}") from exc


def _problems(exc: ValidationError) -> str:
    """The first few problems, each with the path of the field at fault (pages.3.status: ...)."""
    shown = [f"{'.'.join(str(part) for part in error['loc']) or '(top)'}: {error['msg']}"
             for error in exc.errors()[:3]]
    more = exc.error_count() - len(shown)
    return "; ".join(shown) + (f" (and {more} more)" if more > 0 else "")


class ErrorRecord(ReportModel):
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


class EngineAttempt(ReportModel):
    """One engine's try on one page: kept so a reader sees the whole ladder."""

    engine: str
    chars: Count
    score: Number
    seconds: NonNegativeNumber
    signals: list[str] = Field(default_factory=list)
    error: str | None = None


class OcrDetails(ReportModel):
    """How OCR read a page (or its pictures): what a reader needs to judge the text, and to reproduce it."""

    engine: Annotated[str, AfterValidator(_member_of(OCR_ENGINES)), _enum_schema(OCR_ENGINES)]
    api: str | None = Field(default=None, description="the Textract operation (DetectDocumentText, AnalyzeDocument)")
    model: str | None = Field(default=None, description="the Tesseract model(s), e.g. eng+por+spa, deu, jpn_vert")
    script: str | None = Field(default=None, description="the script orientation and script detection named")
    orientation: Annotated[int, AfterValidator(_member_of(ORIENTATIONS)), _enum_schema(ORIENTATIONS)] = Field(
        default=0, description="degrees the picture was turned to read it upright")
    skew: Number = Field(default=0.0, description="degrees of skew corrected")
    confidence: Fraction | None = Field(default=None, description="the engine's mean word confidence, 0..1")
    words: Count = 0
    dpi: NonNegativeNumber = Field(default=0.0, description="the resolution the page was drawn at")
    renderer: str = Field(default="", description="pdfium, poppler, pillow")
    regions: Count = Field(default=0,
                           description="pictures of a sound page whose text was added (0: the whole page was read)")
    notes: list[str] = Field(default_factory=list)


#: what became of a picture embedded in a unit (papersift.formats._pictures): read (its text
#: follows the unit's), no_text (read, nothing trusted in it), failed (it could not be decoded or
#: read), queued (OCR is to read it), not_read (OCR is off), skipped_small (too small to hold
#: text), skipped_duplicate (the same bytes as a picture earlier in the document),
#: skipped_limit (beyond max_pictures_per_document), skipped_format (not a picture Pillow decodes:
#: vector drawings such as EMF, WMF, SVG)
PICTURE_STATUSES = ("read", "no_text", "failed", "queued", "not_read", "skipped_small", "skipped_duplicate",
                    "skipped_limit", "skipped_format")


class PictureRecord(ReportModel):
    """One picture embedded in a unit (an office file's media part, an e-book's image, an HTML
    data: URI): what it is and what OCR made of it."""

    name: str = Field(description="the package part (word/media/image1.png) or 'data: URI n' of an HTML page")
    bytes: Count
    width: Count = 0
    height: Count = 0
    status: Annotated[str, AfterValidator(_member_of(PICTURE_STATUSES)), _enum_schema(PICTURE_STATUSES)]
    engine: str | None = None
    confidence: Fraction | None = Field(default=None, description="the engine's mean word confidence, 0..1")
    chars: Count = 0
    reason: str = ""


#: what a font's /Encoding is, as PageFont names it (papersift.pdf_fonts' ENCODING_ kinds)
FONT_ENCODINGS = ("builtin", "standard", "differences", "identity_h", "identity_v", "predefined_cmap",
                  "embedded_cmap")


class PageFont(ReportModel):
    """One font a PDF page's text uses: what the file says about it, so a person can see why the
    page's text was or was not trusted (the verdict's doubts are in PageReport.fonts). pdfium's
    facts are always there; the dictionary's (null when not read) where the document's font
    dictionaries were read for its verdict."""

    name: str = Field(description="base font name, its subset tag (ABCDEF+) stripped")
    subset: bool = Field(default=False, description="an embedded subset (its name carries a subset tag)")
    embedded: bool = False
    type3: bool = Field(default=False, description="a Type 3 font: glyphs drawn by content streams")
    symbolic: bool = Field(default=False, description="the font descriptor's symbolic flag")
    math: bool = Field(default=False, description="one of TeX's math or symbol fonts (cmex, cmsy, msam, ...)")
    sampled_chars: Count = Field(default=0, description="of the page's characters sampled, those in this font")
    unmapped_chars: Count = Field(default=0, description="... of which pdfium found no Unicode for")
    subtype: str | None = Field(default=None, description="Type1, TrueType, Type0, Type3, MMType1, ...")
    encoding: Annotated[str, AfterValidator(_member_of(FONT_ENCODINGS)), _enum_schema(FONT_ENCODINGS)] | None = \
        Field(default=None, description="builtin (the program's own), standard, differences (/Differences), "
                                        "identity_h, identity_v, predefined_cmap, embedded_cmap")
    cmap: str = Field(default="", description="the named encoding or predefined CMap (WinAnsiEncoding, "
                                              "UniJIS-UCS2-H)")
    to_unicode: bool | None = Field(default=None, description="the font carries a ToUnicode map")
    vertical: bool | None = Field(default=None, description="vertical writing mode (a -V CMap)")

    def traits(self) -> list[str]:
        """What sets the font apart, as report.html's page card lists it: 'subset, embedded, math'."""
        flags = [("subset", self.subset), ("embedded", self.embedded), ("Type 3", self.type3),
                 ("symbolic", self.symbolic), ("math", self.math), ("vertical", bool(self.vertical)),
                 ("ToUnicode", bool(self.to_unicode)), ("no ToUnicode", self.to_unicode is False)]
        named = self.cmap or self.encoding or ""
        encoding = [named] if named and (self.encoding != "standard" or self.cmap) else []
        unmapped = [f"{self.unmapped_chars}/{self.sampled_chars} sampled unmapped"] if self.unmapped_chars else []
        return [name for name, present in flags if present] + encoding + unmapped


class PageReport(ReportModel):
    """One page (or unit: a sheet, a slide deck, a whole text file): how it ended, which engine's
    text was kept, and every engine's try."""

    number: int = Field(ge=1)
    status: PageStatusValue
    engine: str | None
    char_count: Count
    confidence: Fraction
    reason: str
    seconds: NonNegativeNumber = 0.0
    signals: list[str] = Field(default_factory=list, description=(
        "what the verdict found, by name: empty, image_only, glyph_garbage, cipher, script_mix, low_letter_ratio, "
        "implausible_script, spacing_damage, mostly_numbers, few_letters, few_dictionary_words, unlisted_language "
        "(sound text whose words vouch for little: the page stays trusted), unmapped_glyphs, unmapped_font, "
        "engines_disagree, "
        "math_symbols (private-use symbols among sound words), math_glyphs (raw glyph codes of TeX math fonts "
        "read as their symbols or dropped: the page keeps its text layer), column_order, rtl_visual_order, "
        "row_order, invisible_text_layer, hybrid, truncated and a limit's code, ..."))
    language: str | None = None
    attempts: list[EngineAttempt] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)
    tables: Count = 0
    form_fields: Count = Field(default=0, description="form field values and annotation texts read from the page's "
                                                      "widgets and annotations, after its text")
    ocr_cost_usd: NonNegativeNumber = 0.0
    ocr: OcrDetails | None = Field(default=None, description="set when OCR read the page (or its pictures)")
    fonts: list[str] = Field(
        default_factory=list, description="the fonts the page draws with whose Unicode mapping is doubtful, each with "
                                          "its doubt ('Vera (builtin_encoding)'), where the fonts were consulted")
    font_summary: list[PageFont] = Field(
        default_factory=list, description="the fonts a PDF page's text uses (over a sample of its characters), "
                                          "each with what the file says about it: embedded, subset, Type 3, "
                                          "symbolic, math, unmapped characters; ToUnicode, encoding and writing mode "
                                          "where the font dictionaries were read")
    rendering_agreement: Fraction | None = Field(
        default=None, description="set when the rendered page judged an uncertain text layer: the share of the "
                                  "layer's characters OCR read the same (signal verified_by_rendering when it "
                                  "agreed and the layer's text was kept, rendering_disagrees when OCR's was taken)")
    pictures: list[PictureRecord] = Field(default_factory=list, description=(
        "the pictures embedded in the unit (office files, e-books, HTML), each with what OCR made of it"))
    pictures_not_listed: Counts = Field(default_factory=dict, description=(
        "pictures of the unit beyond the document's listing bound (10 x max_pictures_per_document), "
        "counted by status instead of listed"))

    @classmethod
    def without_text(cls, number: int, status: PageStatus, reason: str, signals: list[str],
                     errors: list[ErrorRecord] | None = None) -> PageReport:
        """A page no engine read text from (a picture waiting for OCR, a page beyond max_pages, one
        that failed): no engine, no characters, no confidence; the reason says why."""
        return cls(number=number, status=status, engine=None, char_count=0, confidence=0.0, reason=reason,
                   signals=signals, errors=errors or [])

    def to_dict(self) -> dict[str, Any]:
        """Every field, None and empty ones included, in declaration order (the page work files)."""
        return self.model_dump()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageReport:
        """Read a page report, validated: a malformed one raises PapersiftError naming the field."""
        page: PageReport = cls._validated(data)
        return page


class MemberReport(ReportModel):
    """One member (of an archive, or a PDF's or an email's attachment): its path inside what holds
    it and how it ended."""

    path: str
    status: str
    kind: str = Field(default="archive_member",
                      description="what held it: archive_member, pdf_attachment or email_attachment")
    reason: str = ""
    detected_type: str | None = None
    size: int | None = None
    doc_id: str | None = None
    page_count: Count = 0
    original_name: str | None = Field(
        default=None, description="the name as the archive stores it, when path differs (sanitized, renamed "
                                  "duplicate, not UTF-8: bytes that are not UTF-8 as \\xNN escapes)")


class Source(TypedDict):
    """Where the document came from."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]

    bucket: str
    key: str
    name: Annotated[str, Field(description="the file's own name; bytes that are not UTF-8 as \\xNN escapes")]
    size: NotRequired[Count]
    parent_doc_id: NotRequired[str]
    archive_path: NotRequired[Annotated[str, Field(description="relative path of this member inside its archive")]]
    member_kind: NotRequired[Annotated[str, Field(description="what held this member: archive_member, "
                                                              "pdf_attachment or email_attachment")]]


Counts = dict[str, Count]
Amounts = dict[str, NonNegativeNumber]
#: the code builds and reads these as plain dicts; they are validated (and documented) as the TypedDicts
SourceDict = Annotated[dict[str, Any], GetPydanticSchema(lambda _type, handler: handler.generate_schema(Source))]


class CostLedger(TypedDict, total=False):
    """The cost ledger (papersift.ledger): what the document used and what it is estimated to cost,
    beside sending every page to Textract. Empty when no ledger was made."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    pages_by_engine: Counts
    textract_pages: Annotated[Counts, Field(description="pages sent to Textract, by API")]
    lambda_gb_seconds: Annotated[Amounts, Field(description="duration x memory, by function")]
    lambda_invocations: Counts
    state_transitions: Annotated[Count, Field(
        description="Step Functions state transitions (estimated from the workflow's shape)")]
    s3_requests: Annotated[Counts, Field(description="S3 requests the steps made, by billing class: put "
                                                     "(PUT, COPY, POST, LIST) and get (GET, HEAD)")]
    dynamodb_writes: Annotated[Count, Field(description="DynamoDB write request units (estimated per document)")]
    sqs_requests: Annotated[Count, Field(description="SQS requests of the ingest message (estimated)")]
    api_requests: Annotated[Count, Field(description="API Gateway requests (estimated per document)")]
    log_bytes: Annotated[Count, Field(description="CloudWatch Logs bytes ingested (estimated per invocation)")]
    rendering_checks: Annotated[Count, Field(
        description="pages whose uncertain text layer OCR of the rendered page judged (max_rendering_checks)")]
    usd: Annotated[Amounts, Field(description="estimated USD: textract, lambda, step_functions, s3, dynamodb, sqs, "
                                              "api_gateway, logs, total")]
    usd_all_textract: Annotated[NonNegativeNumber, Field(
        description="estimated USD had every page been sent to Textract")]


CostLedgerDict = Annotated[dict[str, Any],
                           GetPydanticSchema(lambda _type, handler: handler.generate_schema(CostLedger))]


#: the report's fields derived from the others (computed, written, dropped when read)
_DERIVED = ("trusted", "error_code", "fonts_without_map")


class ExtractionReport(ReportModel):
    """What happened to one document and to each of its pages, and why."""

    doc_id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,80}$")
    source: SourceDict
    detected_type: str = Field(description="format family decided from the bytes (pdf, docx, zip, ...)")
    mime_type: str
    detected_by: str = Field(description="magic, container, content, extension or empty")
    status: DocumentStatusValue
    reason: str
    page_count: Count
    engines: Counts = Field(default_factory=dict, description="pages produced by each engine")
    char_count: Count = 0
    timings: Amounts = Field(default_factory=dict, description="seconds, by step")
    cost: CostLedgerDict = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict, description="the settings the document was read with")
    papersift_version: str = ""
    created_at: str = Field(default="", json_schema_extra={"format": "date-time"})
    schema_version: Literal[1] = 1
    # the lists come last, as report.json has always had them
    pages: list[PageReport] = Field(default_factory=list)
    members: list[MemberReport] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)

    @computed_field(description="true only for clean and partially_recovered")  # type: ignore[prop-decorator]
    @property
    def trusted(self) -> bool:
        return self.status in TRUSTED_DOCUMENT_STATUSES

    @computed_field(description="why the document is not what it seems, '' when nothing went wrong: an error code "  # type: ignore[prop-decorator]
                                "(corrupt, encrypted, ...) or the limit that cut it short (limit_exceeded, "
                                "decompression_bomb, entity_bomb, nesting_too_deep, external_entity)")
    @property
    def error_code(self) -> str:
        """The machine code of why the document is not what it seems ('' when nothing went wrong):
        the first error's code, else the limit that cut a unit short, left it unread or stopped it
        (``max_pages``, ``memory_limit``, ``deadline_exceeded``...)."""
        if self.errors:
            return self.errors[0].code
        for page in self.pages:
            if page.status in (PageStatus.TRUNCATED, PageStatus.SKIPPED_LIMIT):
                return next((s for s in page.signals if s in TRUNCATION_CODES), "limit_exceeded")
            if page.status == PageStatus.FAILED and (code := limit_code_of(page.signals)):
                return code
        return ""

    @computed_field(description="the doubtful fonts of the pages whose fonts were consulted, each once, with its "  # type: ignore[prop-decorator]
                                "doubt: the fonts that leave text unverified or unreadable")
    @property
    def fonts_without_map(self) -> list[str]:
        return sorted({font for page in self.pages for font in page.fonts})

    def to_dict(self) -> dict[str, Any]:
        """report.json: every field, None and empty ones included, in declaration order (the
        scalars and dicts, then pages, members and errors), then ``trusted``, ``error_code`` and
        ``fonts_without_map``."""
        return self.model_dump()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExtractionReport:
        """Read a report, validated (``trusted``, ``error_code`` and ``fonts_without_map`` are derived,
        and dropped): a malformed one raises PapersiftError naming the field at fault."""
        data = {name: value for name, value in data.items() if name not in _DERIVED} \
            if isinstance(data, dict) else data
        report: ExtractionReport = cls._validated(data)
        return report


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema of report.json, from the models (what ``to_dict`` writes: serialization mode,
    so every field is required and ``trusted``/``error_code`` are in it)."""
    from pydantic.json_schema import GenerateJsonSchema

    class _Generator(GenerateJsonSchema):
        """``json_schema_serialization_defaults_required`` marks every field present (to_dict writes
        them all), but it would also require a TypedDict's optional keys (the ledger may be empty)."""

        def field_is_required(self, field: Any, total: bool) -> bool:
            if field["type"] == "typed-dict-field":
                return bool(field.get("required", total))
            return super().field_is_required(field, total)

    schema = ExtractionReport.model_json_schema(mode="serialization", schema_generator=_Generator)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "papersift ExtractionReport", **{k: v for k, v in schema.items() if k != "title"}}
