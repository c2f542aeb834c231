"""One typed settings object for every entry point.

The CDK stack reads it from context, Lambdas from environment variables (PAPERSIFT_*),
the CLI from flags and an optional TOML file. All of them go through
``Settings.from_mapping`` so a bad value fails the same way everywhere: fast, with a
message naming the setting.

A frozen pydantic model: each field's type says how a loose value (a string from the
environment or the command line, a TOML scalar) becomes a typed one and which values it may
take, beside the field rather than in a list of names kept in step elsewhere. The conversions and
the messages are our own, not pydantic's: the CLI, a synth and a Lambda's init print them, and a
person reads them. With several bad values the first one in field order is named (then the
checks across fields).

pydantic-settings is not used: it would read ``os.environ`` by itself (the core reads no
environment: the handlers pass theirs in), parse lists from the environment as JSON (to_env writes
``eng,por``), ignore unknown PAPERSIFT_* variables and missing TOML files instead of failing, and
cannot say which source a bad value came from; its import alone (asyncio, dotenv) adds 80-130 ms
to a Lambda's cold start.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError, ValidationInfo, model_validator

from papersift.errors import SettingsError

#: OCR modes (what each does: papersift.ocr.routing)
OCR_OFF, OCR_LOCAL_FIRST, OCR_TEXTRACT_FIRST, OCR_LOCAL_ONLY, OCR_TEXTRACT_ONLY = (
    "off", "local-first", "textract-first", "local-only", "textract-only")
OCR_MODES = (OCR_OFF, OCR_LOCAL_FIRST, OCR_TEXTRACT_FIRST, OCR_LOCAL_ONLY, OCR_TEXTRACT_ONLY)
#: how the API authenticates callers: IAM (SigV4) or an API key with a usage plan
API_AUTH_MODES = ("iam", "api_key")
#: Step Functions' log levels, most to least
WORKFLOW_LOG_LEVELS = ("ALL", "ERROR", "FATAL", "OFF")
#: API Gateway hands Lambda at most 6 MB; a base64 body is 4/3 of the file plus the event around it
API_INLINE_LIMIT_BYTES = 4_500_000
#: a SigV4 presigned URL lives 7 days at most
SIGV4_MAX_SECONDS = 7 * 24 * 3600
ENV_PREFIX = "PAPERSIFT_"
#: PAPERSIFT_* variables that are not settings: the build scripts' and the tests' own
#: (scripts/build_layers.py, scripts/build_image.sh, tests/browser)
TOOL_ENV_NAMES = frozenset({"PAPERSIFT_SKIP_LAYER_BUILD", "PAPERSIFT_BASE_IMAGE", "PAPERSIFT_IMAGE_TAG",
                            "PAPERSIFT_ALLOW_NO_BROWSER"})
#: where a value came from, in messages, when the settings are built in code (not from_mapping)
IN_CODE = "settings"


# -- conversions: loose value -> typed value ----------------------------------------------------


def _to_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _to_int(raw: Any) -> int:
    if isinstance(raw, bool):
        raise ValueError("expected an integer")
    return int(str(raw).replace("_", ""))


def _to_words(raw: Any) -> tuple[str, ...]:
    """A list, or one string split at commas or plus signs (``eng+por``, Tesseract's own form)."""
    if isinstance(raw, str):
        return tuple(part.strip() for part in raw.replace("+", ",").split(",") if part.strip())
    return tuple(str(part) for part in raw)


def _to_passwords(raw: Any) -> tuple[str, ...]:
    """Verbatim: a password may be four spaces or contain commas, so one string is one password."""
    return (raw,) if isinstance(raw, str) else tuple(str(part) for part in raw)


#: a check on a converted value: what must hold, and the problem when it does not (formatted with
#: the setting's ``name`` and ``value``)
Check = tuple[Callable[[Any], bool], str]


def _setting(convert: Callable[[Any], Any], *checks: Check) -> PlainValidator:
    """One validator per field: the loose value converted, then checked, each failing with a
    SettingsError worded for a person (pydantic's own conversions would accept ``y`` for true, 2.0
    for an integer, and word their errors for a programmer)."""

    def validate(raw: Any, info: ValidationInfo) -> Any:
        try:
            value = convert(raw)
        except (TypeError, ValueError) as exc:
            source = (info.context or {}).get("source", IN_CODE)
            raise SettingsError(f"setting {info.field_name} in {source}: cannot use {raw!r} ({exc})") from exc
        for holds, problem in checks:
            if not holds(value):
                raise SettingsError(problem.format(name=info.field_name, value=value))
        return value

    return PlainValidator(validate)


def _one_of(choices: Iterable[str]) -> Check:
    allowed = tuple(choices)
    return (lambda value: value in allowed, f"setting {{name}} must be one of {', '.join(allowed)}; got {{value!r}}")


def _tesseract_codes(languages: tuple[str, ...]) -> bool:
    return bool(languages) and all(lang.isalnum() or "_" in lang for lang in languages)


# -- the types of the settings ---------------------------------------------------------------------

_POSITIVE: Check = (lambda value: value > 0, "setting {name} must be positive, got {value!r}")
_NOT_NEGATIVE: Check = (lambda value: value >= 0, "setting {name} must not be negative, got {value!r}")
_AT_MOST_SIGV4: Check = (lambda value: value <= SIGV4_MAX_SECONDS,
                         f"setting {{name}} must be at most {SIGV4_MAX_SECONDS} (a SigV4 URL lives 7 days at most)")
_AT_MOST_INLINE: Check = (lambda value: value <= API_INLINE_LIMIT_BYTES,
                          f"setting {{name}} must be at most {API_INLINE_LIMIT_BYTES} (API Gateway passes Lambda "
                          "6 MB, base64 included); got {value}")

PositiveInt = Annotated[int, _setting(_to_int, _POSITIVE)]
NonNegativeInt = Annotated[int, _setting(_to_int, _NOT_NEGATIVE)]
PositiveFloat = Annotated[float, _setting(float, _POSITIVE)]
Price = Annotated[float, _setting(float, _NOT_NEGATIVE)]
Bool = Annotated[bool, _setting(_to_bool)]
OcrMode = Annotated[str, _setting(str, _one_of(OCR_MODES))]
#: the libraries text.clean.txt may fold accents with (papersift.cleaning)
TRANSLITERATORS = ("unidecode", "anyascii")
Transliterator = Annotated[str, _setting(str, _one_of(TRANSLITERATORS))]
ApiAuth = Annotated[str, _setting(str, _one_of(API_AUTH_MODES))]
#: an image reference pinned by its content: what the registry serves under it can never change
_PINNED_IMAGE: Check = (lambda value: not value or re.fullmatch(r"[^@\s]+@sha256:[0-9a-f]{64}", value) is not None,
                        "setting {name} must be an image pinned by digest (name@sha256:<64 hex digits>), got {value!r}")
BaseImage = Annotated[str, _setting(str, _PINNED_IMAGE)]
WorkflowLogLevel = Annotated[str, _setting(lambda raw: str(raw).upper(), _one_of(WORKFLOW_LOG_LEVELS))]
Languages = Annotated[tuple[str, ...], _setting(
    _to_words, (_tesseract_codes, "setting {name} must be Tesseract codes like eng, por; got {value!r}"))]
Passwords = Annotated[tuple[str, ...], _setting(_to_passwords)]
#: 0 means no reservation; across fields it must also hold every OCR page at once (Settings below)
ReservedConcurrency = Annotated[int, _setting(
    _to_int, (lambda value: value >= 0, "setting {name} must be 0 (none) or positive, got {value!r}"))]
ParallelFiles = Annotated[int, _setting(
    _to_int, (lambda value: value >= 0, "setting {name} must be 0 (one per core) or more, got {value}"))]
RenderingChecks = Annotated[int, _setting(
    _to_int, (lambda value: value >= 0, "setting {name} must be 0 (no checks) or more, got {value}"))]
UrlSeconds = Annotated[int, _setting(_to_int, _POSITIVE, _AT_MOST_SIGV4)]
InlineBytes = Annotated[int, _setting(_to_int, _POSITIVE, _AT_MOST_INLINE)]


class Settings(BaseModel):
    """Knobs of the pipeline. Defaults suit a Lambda with 2-3 GB of memory."""

    #: pages per extract-Lambda invocation. A native page costs ~1.5 ms, so 100 pages are a
    #: fraction of a second; smaller batches buy parallelism only for slow (suspect) pages and
    #: cost a document open, an invocation and state transitions each
    page_batch_size: PositiveInt = 100
    #: batches above which the workflow switches the inline Map to a Distributed Map
    distributed_map_threshold: PositiveInt = 40
    #: concurrent page batches per document
    max_concurrency: PositiveInt = 10
    #: workflow executions (documents) running at once: ingest starts no more, counting RUNNING
    #: executions with ListExecutions; the other drops wait in the queue. Each running document may
    #: hold max_concurrency extract or ocr_max_concurrency OCR Lambdas at a time, so this times the
    #: larger of the two is the most the workflow asks of the account's Lambda concurrency (1,000 by
    #: default, 100 of it kept unreserved): 50 x 10 leaves room for the rest
    max_running_executions: PositiveInt = 50
    #: largest input accepted, in bytes
    max_file_bytes: PositiveInt = 512 * 1024 * 1024
    #: pages beyond this are not extracted: the report lists them ``skipped_limit`` and the document
    #: ends ``limit_exceeded`` (error_code ``max_pages``). What the design carries, measured: page
    #: batches and the OCR map go through S3 manifests, but assemble's report holds ~23 KB a page
    #: (`papersift run` ~35: the embedded S3 too), so 20,000 pages keep every process under 1 GiB
    #: (run 949 MB, extract 513 MB; bench/long_pdf.py, docs/benchmarks.md section 8)
    max_pages: PositiveInt = 20_000
    #: seconds one page's text layer may take (and one whole-document file, and drawing a page for
    #: OCR): past it the page ends failed with that reason and the rest goes on. A native page takes
    #: milliseconds, a hard one seconds; well below the extract Lambda's timeout
    page_seconds: PositiveInt = 60
    #: memory one page (or one whole-document file) may add to its worker process, in MB: past it
    #: the page ends failed and the step survives. Sized to the extract Lambda's 3008 MB
    unit_memory_mb: PositiveInt = 2048
    #: OCR routing for pages without a trustworthy text layer and for pictures (papersift.ocr.routing):
    #: local-first (Tesseract; Textract only for pages Tesseract cannot read with confidence),
    #: textract-first (Tesseract when Textract fails, is throttled past its retries or is unavailable),
    #: local-only (no page leaves the account's Lambdas), textract-only (no Tesseract), off
    ocr_mode: OcrMode = OCR_LOCAL_FIRST
    #: Tesseract language codes for Latin-script pages (other scripts pick their model from the page)
    ocr_languages: Languages = ("eng", "por", "spa")
    #: render resolution for OCR
    ocr_dpi: PositiveInt = 300
    #: largest page picture drawn for OCR, in pixels: a larger page is drawn at a lower resolution
    #: (40 MP: a letter page at 660 dpi; 40 MB as 8-bit grey, ~10x that inside Tesseract)
    ocr_max_pixels: PositiveInt = 40_000_000
    #: OCR pages of one document read at a time. Textract's synchronous APIs default to a few
    #: requests per second per account: size this so (running documents x this) stays within the quota
    ocr_max_concurrency: PositiveInt = 10
    #: reserved concurrency of the OCR function: capacity no other function can take, and a ceiling
    #: (0: none, OCR shares the account's pool). When set it must hold every page the workflow can
    #: read at once, max_running_executions x ocr_max_concurrency: below that Lambda would throttle
    #: pages past the workflow's retries and fail them
    ocr_reserved_concurrency: ReservedConcurrency = 0
    #: seconds one OCR engine may spend on one page before the page is given up with that reason
    ocr_page_seconds: PositiveInt = 120
    #: pages of one document whose text layer stays uncertain (fonts no map ties to Unicode, a script
    #: implausible for its characters, engines that disagree) checked against the rendered page by
    #: OCR; past it such pages stay untrusted (needs_ocr), as they are with ocr_mode off. Sound pages
    #: whose regions of glyphs without Unicode OCR reads (routing.GLYPHS) count against it too
    max_rendering_checks: RenderingChecks = 20
    #: render resolution of those checks: enough for OCR to confirm body text at a quarter of
    #: ocr_dpi's pixels; a page whose check disagrees with its text layer is read again at ocr_dpi
    rendering_check_dpi: PositiveInt = 150
    #: pictures embedded in an office file, e-book or HTML page that OCR reads per document (after
    #: the ones too small to hold text and the repeats of the same bytes are set aside); the pictures
    #: beyond it are listed in the report as skipped_limit, not read
    max_pictures_per_document: PositiveInt = 50
    #: detect tables with pdfplumber and append them as Markdown
    extract_tables: Bool = False
    #: also write a cleaned text file (accent folding, stopwords, noise)
    clean_text: Bool = False
    #: on AWS (and in `papersift run`), a last step after assemble writes each document's page
    #: records as exports/<doc_id>.parquet, the schema of `papersift export --unit page`, for an
    #: Athena/Glue table over the bucket (docs/export.md). The workflow has the step only when this
    #: is on; its failure is recorded on the document's item and never fails the document
    export_parquet: Bool = False
    #: what folds its accents: unidecode (GPL-2.0+) or anyascii (ISC), for a deployment that
    #: must ship no GPL library. They agree on every accented letter of the European languages
    #: and differ on rare letters and typographic punctuation (README, Licences)
    clean_text_transliterator: Transliterator = "unidecode"
    #: archive limits
    max_archive_depth: PositiveInt = 5
    max_archive_members: PositiveInt = 10_000
    max_archive_total_bytes: PositiveInt = 4 * 1024 * 1024 * 1024
    max_compression_ratio: PositiveInt = 200
    #: ask Textract for its LAYOUT (AnalyzeDocument FeatureTypes LAYOUT, beside TABLES when tables
    #: are wanted): an OCR'd page's headings, paragraphs, lists, running heads and page numbers with
    #: their boxes (pages/N.json blocks, document.md). Off by default: alone it costs
    #: price_textract_layout_per_page, 2.7 times DetectDocumentText's, for structure a page's text
    #: does not need (Tesseract's pages get their paragraphs anyway)
    textract_layout: Bool = False
    #: USD per page, used for the cost ledger in reports (aws.amazon.com/textract/pricing, us-east-1,
    #: the first million pages a month: DetectDocumentText $1.50, AnalyzeDocument Tables $15 and
    #: Layout $4 per 1,000 pages; Layout beside Tables is priced in Tables' own: no more per page)
    price_textract_detect_per_page: Price = 0.0015
    price_textract_analyze_per_page: Price = 0.015
    price_textract_layout_per_page: Price = 0.004
    price_textract_layout_with_tables_per_page: Price = 0.0
    #: arm64 (Graviton), the stack's architecture; x86_64 is 0.0000166667
    price_lambda_gb_second: Price = 0.0000133334
    price_lambda_request: Price = 0.0000002
    #: Step Functions Standard workflows: USD per state transition ($0.025 per 1,000)
    price_state_transition: Price = 0.000025
    #: S3 Standard: PUT/COPY/POST/LIST requests ($0.005 per 1,000) and GET/HEAD ($0.0004 per 1,000)
    price_s3_put_request: Price = 0.000005
    price_s3_get_request: Price = 0.0000004
    #: DynamoDB on-demand: USD per write request unit ($0.625 per million); an item up to 1 KB is one
    price_dynamodb_write: Price = 0.000000625
    #: SQS standard queue: USD per request ($0.40 per million)
    price_sqs_request: Price = 0.0000004
    #: API Gateway REST API: USD per request ($3.50 per million)
    price_api_request: Price = 0.0000035
    #: CloudWatch Logs: USD per GB ingested (standard class)
    price_log_ingestion_gb: Price = 0.50
    #: the ledger's estimates of what it cannot count from inside a step (docs/cost.md): DynamoDB
    #: writes per document (ingest's idempotency record written and completed, assemble's item;
    #: an archive member writes only its item), API requests per document sent through the API
    #: (POST /documents, a status GET, a result GET; 0 for a deployment fed by bucket drops), and
    #: the log bytes one Lambda invocation ingests (START/END/REPORT lines and the steps' JSON lines)
    ledger_dynamodb_writes_per_document: NonNegativeInt = 3
    ledger_api_requests_per_document: NonNegativeInt = 3
    ledger_log_bytes_per_invocation: NonNegativeInt = 1500
    #: API: IAM (SigV4) on every method, or an API key (usage plan, quota) on every method
    api_auth: ApiAuth = "iam"
    #: API: stage throttling, steady requests per second and burst (also the usage plan's)
    api_throttle_rate: PositiveFloat = 50.0
    api_throttle_burst: PositiveInt = 100
    #: API: requests per day per API key (usage plan quota; api_key mode only)
    api_quota_per_day: PositiveInt = 100_000
    #: API: lifetime of the presigned upload URL and of result download URLs, in seconds
    api_upload_url_seconds: UrlSeconds = 900
    api_download_url_seconds: UrlSeconds = 900
    #: API: largest file accepted inline by POST /documents:extract (decoded bytes)
    api_inline_max_bytes: InlineBytes = 4_000_000
    #: API: a report.json up to this size is returned inline by GET /documents/{id}/report
    api_inline_report_bytes: PositiveInt = 256 * 1024
    #: days after which API uploads and archive members expire (lifecycle rule): their S3 metadata
    #: may carry passwords, and processing them takes minutes; results stay
    upload_expiry_days: PositiveInt = 1
    #: the workflow's execution log (CloudWatch Logs): failed executions and states by default;
    #: ALL logs every state's events (several per OCR page and per page batch), to follow one run
    #: the base of the container image (functions/Dockerfile's BASE_IMAGE), pinned by digest, e.g.
    #: public.ecr.aws/docker/library/debian:bookworm-slim@sha256:<digest> (docker buildx
    #: imagetools inspect prints it). Empty: the Dockerfile's tag, which moves with every rebuild
    #: upstream (synth warns)
    container_base_image: BaseImage = ""
    workflow_log_level: WorkflowLogLevel = "ERROR"
    #: also log each state's input and output: document names, keys and settings, never page text
    workflow_log_execution_data: Bool = False
    #: `papersift extract`: inputs read at once (0: one per core); each writes its results as it finishes
    parallel_files: ParallelFiles = 0
    #: passwords tried (after the empty one) on encrypted PDFs, Office files and archives
    passwords: Passwords = Field(default=(), repr=False)

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="after")
    def _ocr_reservation_holds_every_page_at_once(self) -> Settings:
        ocr_pages_at_once = self.max_running_executions * self.ocr_max_concurrency
        if 0 < self.ocr_reserved_concurrency < ocr_pages_at_once:
            raise SettingsError(
                f"setting ocr_reserved_concurrency must be 0 or at least max_running_executions x "
                f"ocr_max_concurrency = {ocr_pages_at_once} (the OCR pages the workflow may read at once; "
                f"fewer would be throttled past its retries); got {self.ocr_reserved_concurrency}")
        return self

    if not TYPE_CHECKING:  # type checkers keep the signature pydantic derives from the fields

        def __init__(self, /, **values: Any) -> None:
            """Settings built in code are checked like any others and fail with a SettingsError too."""
            _validate_into(self, values, IN_CODE)

    # -- construction -------------------------------------------------------------

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], source: str = IN_CODE) -> Settings:
        """Build from loosely typed values (strings from env/CLI, TOML scalars)."""
        kwargs: dict[str, Any] = {}
        for key, raw in values.items():
            name = key.replace("-", "_").lower()
            if name not in cls.model_fields:
                raise SettingsError(_unknown(key, source))
            kwargs[name] = raw
        settings = cls.__new__(cls)
        _validate_into(settings, kwargs, source)
        return settings

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Read PAPERSIFT_* variables; the caller passes the environment in."""
        check_env_names(environ)
        values = {k[len(ENV_PREFIX) :]: v for k, v in environ.items()
                  if k.startswith(ENV_PREFIX) and k not in TOOL_ENV_NAMES}
        return cls.from_mapping(values, source="environment")

    @classmethod
    def from_toml(cls, path: Path, overrides: Mapping[str, Any] | None = None) -> Settings:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"cannot read settings file {path}: {exc}") from exc
        section = data.get("papersift", data)
        merged = {**section, **(overrides or {})}
        return cls.from_mapping(merged, source=str(path))

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes``, checked like new settings (pydantic's model_copy checks nothing)."""
        return type(self)(**{**dict(self), **changes})

    def to_env(self) -> dict[str, str]:
        """The environment variables a Lambda needs to rebuild these settings (no passwords)."""
        env: dict[str, str] = {}
        for name in type(self).model_fields:
            if name == "passwords":
                continue
            value = getattr(self, name)
            if isinstance(value, tuple):
                env[ENV_PREFIX + name.upper()] = ",".join(value)
            elif isinstance(value, bool):
                env[ENV_PREFIX + name.upper()] = "true" if value else "false"
            else:
                env[ENV_PREFIX + name.upper()] = str(value)
        return env

    def public_dict(self) -> dict[str, Any]:
        """Settings as recorded in a report: everything but secrets."""
        out = self.model_dump()
        out["passwords"] = len(self.passwords)
        out["ocr_languages"] = list(self.ocr_languages)
        return out


def _validate_into(settings: Settings, values: Mapping[str, Any], source: str) -> None:
    """Check ``values`` into a new instance, the source in hand for the messages: what BaseModel's
    __init__ does (model_validate would call our __init__, which has no source to give)."""
    try:
        settings.__pydantic_validator__.validate_python(values, self_instance=settings, context={"source": source})
    except ValidationError as exc:
        raise _settings_error(exc, source) from _cause(exc)


def check_env_names(environ: Mapping[str, str]) -> None:
    """Raise a SettingsError naming the first PAPERSIFT_* variable in ``environ`` that is neither a
    setting nor a tool's (a typo: PAPERSIFT_OCR_MODEE), and the known name nearest to it."""
    known = sorted({ENV_PREFIX + name.upper() for name in Settings.model_fields} | TOOL_ENV_NAMES)
    for name in sorted(environ):
        if name.startswith(ENV_PREFIX) and name not in known:
            nearest = difflib.get_close_matches(name, known, n=1)
            hint = f" (nearest: {nearest[0]})" if nearest else ""
            raise SettingsError(f"unknown environment variable {name}{hint}: unset it or correct its name")


def _unknown(key: str, source: str) -> str:
    return f"unknown setting {key!r} in {source}; known: {', '.join(sorted(Settings.model_fields))}"


def _first_error(exc: ValidationError) -> Any:
    return exc.errors(include_url=False)[0]


def _cause(exc: ValidationError) -> BaseException | None:
    """What the first problem was raised from (int()'s ValueError, say; pydantic's error for its own),
    so a traceback shows that and not the ValidationError around it."""
    cause = _first_error(exc).get("ctx", {}).get("error")
    return cause.__cause__ if isinstance(cause, SettingsError) else exc


def _settings_error(exc: ValidationError, source: str) -> SettingsError:
    """The first problem, as the validators above worded it; pydantic's own errors (an unknown
    keyword in code) reworded the same way. Which problem is first: the fields in declaration order,
    then the checks across fields."""
    error = _first_error(exc)
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, SettingsError):
        return cause
    name = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return SettingsError(_unknown(name, source))
    return SettingsError(f"setting {name} in {source}: {error['msg']}")
