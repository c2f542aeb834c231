"""One typed settings object for every entry point.

The CDK stack reads it from context, Lambdas from environment variables (PAPERSIFT_*),
the CLI from flags and an optional TOML file. All of them go through
``Settings.from_mapping`` so a bad value fails the same way everywhere: fast, with a
message naming the setting.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from papersift.errors import SettingsError

#: OCR modes (what each does: papersift.ocr.routing)
OCR_OFF, OCR_LOCAL_FIRST, OCR_TEXTRACT_FIRST, OCR_LOCAL_ONLY, OCR_TEXTRACT_ONLY = (
    "off", "local-first", "textract-first", "local-only", "textract-only")
OCR_MODES = (OCR_OFF, OCR_LOCAL_FIRST, OCR_TEXTRACT_FIRST, OCR_LOCAL_ONLY, OCR_TEXTRACT_ONLY)
#: how the API authenticates callers: IAM (SigV4) or an API key with a usage plan
API_AUTH_MODES = ("iam", "api_key")
#: API Gateway hands Lambda at most 6 MB; a base64 body is 4/3 of the file plus the event around it
API_INLINE_LIMIT_BYTES = 4_500_000
ENV_PREFIX = "PAPERSIFT_"


@dataclass(frozen=True)
class Settings:
    """Knobs of the pipeline. Defaults suit a Lambda with 2-3 GB of memory."""

    #: pages per extract-Lambda invocation. A native page costs ~1.5 ms, so 100 pages are a
    #: fraction of a second; smaller batches buy parallelism only for slow (suspect) pages and
    #: cost a document open, an invocation and state transitions each
    page_batch_size: int = 100
    #: batches above which the workflow switches the inline Map to a Distributed Map
    distributed_map_threshold: int = 40
    #: concurrent page batches per document
    max_concurrency: int = 10
    #: workflow executions (documents) running at once: ingest starts no more, counting RUNNING
    #: executions with ListExecutions; the other drops wait in the queue. Each running document may
    #: hold max_concurrency extract or ocr_max_concurrency OCR Lambdas at a time, so this times the
    #: larger of the two is the most the workflow asks of the account's Lambda concurrency (1,000 by
    #: default, 100 of it kept unreserved): 50 x 10 leaves room for the rest
    max_running_executions: int = 50
    #: largest input accepted, in bytes
    max_file_bytes: int = 512 * 1024 * 1024
    #: pages beyond this are not extracted; the report says so
    max_pages: int = 5000
    #: seconds one page's text layer may take (and one whole-document file, and drawing a page for
    #: OCR): past it the page ends failed with that reason and the rest goes on. A native page takes
    #: milliseconds, a hard one seconds; well below the extract Lambda's timeout
    page_seconds: int = 60
    #: memory one page (or one whole-document file) may add to its worker process, in MB: past it
    #: the page ends failed and the step survives. Sized to the extract Lambda's 3008 MB
    unit_memory_mb: int = 2048
    #: OCR routing for pages without a trustworthy text layer and for pictures (papersift.ocr.routing):
    #: local-first (Tesseract; Textract only for pages Tesseract cannot read with confidence),
    #: textract-first (Tesseract when Textract fails, is throttled past its retries or is unavailable),
    #: local-only (no page leaves the account's Lambdas), textract-only (no Tesseract), off
    ocr_mode: str = OCR_LOCAL_FIRST
    #: Tesseract language codes for Latin-script pages (other scripts pick their model from the page)
    ocr_languages: tuple[str, ...] = ("eng", "por", "spa")
    #: render resolution for OCR
    ocr_dpi: int = 300
    #: largest page picture drawn for OCR, in pixels: a larger page is drawn at a lower resolution
    #: (40 MP: a letter page at 660 dpi; 40 MB as 8-bit grey, ~10x that inside Tesseract)
    ocr_max_pixels: int = 40_000_000
    #: OCR pages of one document read at a time. Textract's synchronous APIs default to a few
    #: requests per second per account: size this so (running documents x this) stays within the quota
    ocr_max_concurrency: int = 10
    #: reserved concurrency of the OCR function: capacity no other function can take, and a ceiling
    #: (0: none, OCR shares the account's pool). When set it must hold every page the workflow can
    #: read at once, max_running_executions x ocr_max_concurrency: below that Lambda would throttle
    #: pages past the workflow's retries and fail them
    ocr_reserved_concurrency: int = 0
    #: seconds one OCR engine may spend on one page before the page is given up with that reason
    ocr_page_seconds: int = 120
    #: detect tables with pdfplumber and append them as Markdown
    extract_tables: bool = False
    #: also write a cleaned text file (accent folding, stopwords, noise)
    clean_text: bool = False
    #: archive limits
    max_archive_depth: int = 5
    max_archive_members: int = 10_000
    max_archive_total_bytes: int = 4 * 1024 * 1024 * 1024
    max_compression_ratio: int = 200
    #: USD per page, used for the cost ledger in reports
    price_textract_detect_per_page: float = 0.0015
    price_textract_analyze_per_page: float = 0.015
    price_lambda_gb_second: float = 0.0000166667
    price_lambda_request: float = 0.0000002
    #: Step Functions Standard workflows: USD per state transition ($0.025 per 1,000)
    price_state_transition: float = 0.000025
    #: API: IAM (SigV4) on every method, or an API key (usage plan, quota) on every method
    api_auth: str = "iam"
    #: API: stage throttling, steady requests per second and burst (also the usage plan's)
    api_throttle_rate: float = 50.0
    api_throttle_burst: int = 100
    #: API: requests per day per API key (usage plan quota; api_key mode only)
    api_quota_per_day: int = 100_000
    #: API: lifetime of the presigned upload URL and of result download URLs, in seconds
    api_upload_url_seconds: int = 900
    api_download_url_seconds: int = 900
    #: API: largest file accepted inline by POST /documents:extract (decoded bytes)
    api_inline_max_bytes: int = 4_000_000
    #: API: a report.json up to this size is returned inline by GET /documents/{id}/report
    api_inline_report_bytes: int = 256 * 1024
    #: days after which API uploads and archive members expire (lifecycle rule): their S3 metadata
    #: may carry passwords, and processing them takes minutes; results stay
    upload_expiry_days: int = 1
    #: `papersift extract`: inputs read at once (0: one per core); each writes its results as it finishes
    parallel_files: int = 0
    #: passwords tried (after the empty one) on encrypted PDFs, Office files and archives
    passwords: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        positive = (
            "page_batch_size",
            "distributed_map_threshold",
            "max_concurrency",
            "max_running_executions",
            "max_file_bytes",
            "max_pages",
            "page_seconds",
            "unit_memory_mb",
            "ocr_dpi",
            "ocr_max_pixels",
            "ocr_max_concurrency",
            "ocr_page_seconds",
            "max_archive_depth",
            "max_archive_members",
            "max_archive_total_bytes",
            "max_compression_ratio",
            "api_throttle_rate",
            "api_throttle_burst",
            "api_quota_per_day",
            "api_upload_url_seconds",
            "api_download_url_seconds",
            "api_inline_max_bytes",
            "api_inline_report_bytes",
            "upload_expiry_days",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise SettingsError(f"setting {name} must be positive, got {getattr(self, name)!r}")
        if self.ocr_reserved_concurrency < 0:
            raise SettingsError(f"setting ocr_reserved_concurrency must be 0 (none) or positive, "
                                f"got {self.ocr_reserved_concurrency!r}")
        ocr_pages_at_once = self.max_running_executions * self.ocr_max_concurrency
        if 0 < self.ocr_reserved_concurrency < ocr_pages_at_once:
            raise SettingsError(
                f"setting ocr_reserved_concurrency must be 0 or at least max_running_executions x "
                f"ocr_max_concurrency = {ocr_pages_at_once} (the OCR pages the workflow may read at once; "
                f"fewer would be throttled past its retries); got {self.ocr_reserved_concurrency}")
        if self.ocr_mode not in OCR_MODES:
            raise SettingsError(f"setting ocr_mode must be one of {', '.join(OCR_MODES)}; got {self.ocr_mode!r}")
        if not self.ocr_languages or not all(lang.isalnum() or "_" in lang for lang in self.ocr_languages):
            raise SettingsError(
                f"setting ocr_languages must be Tesseract codes like eng, por; got {self.ocr_languages!r}")
        if self.api_auth not in API_AUTH_MODES:
            raise SettingsError(f"setting api_auth must be one of {', '.join(API_AUTH_MODES)}; got {self.api_auth!r}")
        if self.api_inline_max_bytes > API_INLINE_LIMIT_BYTES:
            raise SettingsError(f"setting api_inline_max_bytes must be at most {API_INLINE_LIMIT_BYTES} (API Gateway "
                                f"passes Lambda 6 MB, base64 included); got {self.api_inline_max_bytes}")
        for name in ("api_upload_url_seconds", "api_download_url_seconds"):
            if getattr(self, name) > 7 * 24 * 3600:
                raise SettingsError(f"setting {name} must be at most 604800 (a SigV4 URL lives 7 days at most)")
        if self.parallel_files < 0:
            raise SettingsError(f"setting parallel_files must be 0 (one per core) or more, got {self.parallel_files}")
        for name in ("price_textract_detect_per_page", "price_textract_analyze_per_page", "price_lambda_gb_second",
                     "price_lambda_request", "price_state_transition"):
            if getattr(self, name) < 0:
                raise SettingsError(f"setting {name} must not be negative, got {getattr(self, name)!r}")

    # -- construction -------------------------------------------------------------

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], source: str = "settings") -> Settings:
        """Build from loosely typed values (strings from env/CLI, TOML scalars)."""
        known = {f.name: f for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, raw in values.items():
            name = key.replace("-", "_").lower()
            if name not in known:
                raise SettingsError(f"unknown setting {key!r} in {source}; known: {', '.join(sorted(known))}")
            kwargs[name] = _coerce(name, known[name], raw, source)
        return cls(**kwargs)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Settings:
        """Read PAPERSIFT_* variables; the caller passes the environment in."""
        values = {k[len(ENV_PREFIX) :]: v for k, v in environ.items() if k.startswith(ENV_PREFIX)}
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
        return dataclasses.replace(self, **changes)

    def to_env(self) -> dict[str, str]:
        """The environment variables a Lambda needs to rebuild these settings (no passwords)."""
        env: dict[str, str] = {}
        for f in fields(self):
            if f.name == "passwords":
                continue
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                env[ENV_PREFIX + f.name.upper()] = ",".join(value)
            elif isinstance(value, bool):
                env[ENV_PREFIX + f.name.upper()] = "true" if value else "false"
            else:
                env[ENV_PREFIX + f.name.upper()] = str(value)
        return env

    def public_dict(self) -> dict[str, Any]:
        """Settings as recorded in a report: everything but secrets."""
        out = dataclasses.asdict(self)
        out["passwords"] = len(self.passwords)
        out["ocr_languages"] = list(self.ocr_languages)
        return out


def _coerce(name: str, spec: dataclasses.Field[Any], raw: Any, source: str) -> Any:
    factory: Any = spec.default_factory
    default: Any = spec.default if spec.default is not dataclasses.MISSING else factory()
    try:
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true or false")
        if isinstance(default, int):
            if isinstance(raw, bool):
                raise ValueError("expected an integer")
            return int(str(raw).replace("_", ""))
        if isinstance(default, float):
            return float(raw)
        if name == "passwords":
            # verbatim: a password may be four spaces or contain commas
            return (raw,) if isinstance(raw, str) else tuple(str(part) for part in raw)
        if isinstance(default, tuple):
            if isinstance(raw, str):
                return tuple(part.strip() for part in raw.replace("+", ",").split(",") if part.strip())
            return tuple(str(part) for part in raw)
        return str(raw)
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"setting {name} in {source}: cannot use {raw!r} ({exc})") from exc
