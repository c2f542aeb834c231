"""The contracts between the workflow's steps: one pydantic model per step input and output.

Every JSON value that crosses a step boundary is one of these: the handlers parse their event
into the step's request model (powertools' parser) and return the result model dumped to JSON;
the step functions (``papersift.steps.<step>``) take and return the models; ``infra/workflow.py``
takes the fields it passes between states from them (a JSONPath naming a field that is not here
fails the build); the tests' fake steps build them. The work files the steps share through S3
(plan.json, the Distributed Map manifests, members.json) and the per-upload options in S3 metadata
are models here too, so a step never digs in an unvalidated dict.

States carry pointers and counts, never page text (Step Functions' 256 KiB limit).

Adding a step (the OCR step, say): write its request and result models here, subclassing
``StepModel`` (and ``DocumentRef`` when the step works on one document), and its function in
``papersift/steps/<step>.py``; parse the event with ``event_parser(model=...)`` in
``functions/<step>/app.py`` and return ``model_dump(mode="json")``; refer to fields in
``infra/workflow.py`` through ``field_path``; add a sample event under ``events/`` to the table in
``tests/handlers/test_step_events.py``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from papersift.errors import SettingsError
from papersift.layout import API_UPLOAD_PREFIX
from papersift.report import DocumentStatus
from papersift.settings import Settings

ItemT = TypeVar("ItemT", bound=BaseModel)

#: S3 user metadata key holding an upload's own options (base64 JSON: metadata is ASCII)
OPTIONS_METADATA_KEY = "papersift-options"


class StepModel(BaseModel):
    """Base of every contract: unknown fields are refused (a renamed field fails loudly at the
    boundary instead of arriving as a silent default), values are immutable, and the validator
    is built on first use rather than at import (cold start: see docs/benchmarks.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# -- identity ---------------------------------------------------------------------------


def document_id(bucket: str, key: str, version_id: str | None = None, etag: str | None = None) -> str:
    """Stable id of one object version: duplicate notifications map to the same id (and so to
    the same Step Functions execution name, at most 80 characters). An API upload is identified
    by its key alone: the API hands out the id before the object (and so its version) exists."""
    if key.startswith(API_UPLOAD_PREFIX):
        version_id = etag = None
    identity = "\0".join([bucket, key, version_id or "", (etag or "").strip('"')])
    return "d" + hashlib.sha256(identity.encode("utf-8")).hexdigest()[:40]


def source_name_of(path: str) -> str:
    """A document's own name: the last segment of its key, or of its path inside an archive."""
    return path.rsplit("/", 1)[-1]


class DocumentRef(StepModel):
    """Where one document is and what it is called: what every step needs to find it.

    A top-level document has ``parent_doc_id``/``archive_path``/``member_kind`` null; a member (of
    an archive, or a PDF's or an email's attachment) has all three.
    Every field is always present in the JSON (null when unset), so the workflow passes the same
    fields for a dropped file and for a member.
    """

    doc_id: str = Field(min_length=1, max_length=80)
    bucket: str
    key: str = Field(min_length=1)
    source_name: str
    parent_doc_id: str | None = None
    archive_path: str | None = None
    #: archives.MemberKind: archive_member, pdf_attachment, email_attachment
    member_kind: str | None = None

    @property
    def ref(self) -> DocumentRef:
        """Just the document's fields, whatever model carries them."""
        return DocumentRef.model_validate({name: getattr(self, name) for name in DocumentRef.model_fields})


class RunInput(DocumentRef):
    """The execution input written by ingest (one run per object version), and so the plan
    step's request; a member item (a ``DocumentRef``) is a valid one too."""

    version_id: str | None = None
    etag: str | None = None

    @classmethod
    def for_object(cls, bucket: str, key: str, version_id: str | None = None, etag: str | None = None) -> RunInput:
        return cls(doc_id=document_id(bucket, key, version_id, etag), bucket=bucket, key=key,
                   source_name=source_name_of(key), version_id=version_id, etag=etag)


# -- per-upload options (S3 metadata) ----------------------------------------------------


class DocumentOptions(StepModel):
    """Options a caller may set on one upload; everything else is deployment-wide (Settings).

    They ride on the object as S3 user metadata, never in the workflow state, so passwords stay
    out of Step Functions' execution history.
    """

    passwords: tuple[str, ...] = Field(default=(), repr=False)
    extract_tables: bool | None = None
    ocr_mode: str | None = None
    clean_text: bool | None = None
    ocr_languages: tuple[str, ...] | None = None

    @field_validator("ocr_languages", mode="before")
    @classmethod
    def _split_languages(cls, value: Any) -> Any:
        return value.replace("+", ",").split(",") if isinstance(value, str) else value

    def encode(self) -> str:
        """base64 of the JSON object (S3 metadata is ASCII; passwords may not be)."""
        text = self.model_dump_json(exclude_defaults=True)
        return base64.b64encode(text.encode("utf-8")).decode("ascii")

    def metadata(self) -> dict[str, str]:
        """The S3 user metadata carrying these options (none when there are none)."""
        return {OPTIONS_METADATA_KEY: self.encode()} if self != DocumentOptions() else {}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> DocumentOptions:
        """Decode an upload's options; keys this version does not know are ignored."""
        raw = metadata.get(OPTIONS_METADATA_KEY)
        if not raw:
            return cls()
        try:
            decoded = json.loads(base64.b64decode(raw, validate=True).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SettingsError(f"metadata {OPTIONS_METADATA_KEY} is not base64 JSON: {exc}") from exc
        if not isinstance(decoded, dict):
            raise SettingsError(f"metadata {OPTIONS_METADATA_KEY} must hold a JSON object")
        try:
            return cls.model_validate({k: v for k, v in decoded.items() if k in cls.model_fields})
        except ValidationError as exc:
            raise SettingsError(f"metadata {OPTIONS_METADATA_KEY}: {_first_problem(exc)}") from exc

    def apply(self, settings: Settings) -> Settings:
        """The deployment's settings with these options applied (passwords are added)."""
        chosen = self.model_dump(exclude_defaults=True, exclude={"passwords"})
        merged = settings
        if chosen:
            values = {**settings.public_dict(), **chosen}
            values.pop("passwords")
            merged = Settings.from_mapping(values, source="document options").replace(passwords=settings.passwords)
        if self.passwords:
            merged = merged.replace(passwords=(*settings.passwords, *self.passwords))
        return merged


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"


# -- plan --------------------------------------------------------------------------------


class Route(StrEnum):
    """Where a document goes after its plan; the workflow's Choice states are built from
    ``PLAN_ROUTES`` and `papersift extract` calls ``Plan.route``, so both decide alike."""

    EXTRACT = "extract"  # page batches through the extract step
    UNPACK = "unpack"  # an archive: unpack, then each member as a document
    OCR = "ocr"  # a picture (PNG, JPEG, TIFF frames ...): straight to OCR, no text layer to read
    ASSEMBLE = "assemble"  # a final status already (encrypted, empty, unsupported, failed)


READY, ARCHIVE, PICTURE = "ready", "archive", "picture"
#: plan status -> route; any other status is final and goes straight to assemble
PLAN_ROUTES: Mapping[str, Route] = {READY: Route.EXTRACT, ARCHIVE: Route.UNPACK, PICTURE: Route.OCR}
PLAN_STATUSES = frozenset({READY, ARCHIVE, PICTURE, *(str(s) for s in DocumentStatus)})
#: archive levels the workflow unpacks: a dropped archive (level 0), and an archive member whose
#: plan still says archive (level 1: one the unpack step left as a file). The unpack step expands
#: nested archives itself, so a member of a member is an archive only when unpack could not tell.
UNPACK_LEVELS = 2


def routes_at(level: int) -> Mapping[str, Route]:
    """The plan routes of a document ``level`` archive levels down (0: a dropped file)."""
    return {status: route for status, route in PLAN_ROUTES.items() if route is not Route.UNPACK
            or level < UNPACK_LEVELS}


class Batch(StepModel):
    """One extract invocation: a range of pages of one document."""

    doc_id: str
    bucket: str
    key: str
    kind: str
    first_page: int = Field(ge=1)
    #: 0 for whole-document formats (units are counted while extracting)
    last_page: int = Field(ge=0)
    batch_index: int = Field(ge=0)
    #: a PDF whose page tree the plan found sound, with this many pages: the batch does not walk
    #: the tree again (0: check it)
    sound_tree_pages: int = Field(default=0, ge=0)

    @property
    def paged(self) -> bool:
        return self.last_page > 0


class Plan(DocumentRef):
    """The plan step's result (``$.plan``): the sniffed type and the page batches, or a final
    status with its reason. Also written whole to work/<doc_id>/plan.json."""

    kind: str = "unknown"
    mime: str = "application/octet-stream"
    detected_by: str = ""
    size: int = 0
    status: str = READY
    reason: str = ""
    error_code: str = ""
    page_count: int = 0
    batch_count: int = 0
    #: empty in the state when ``use_distributed_map``: the batches are then in the manifest
    batches: list[Batch] = Field(default_factory=list)
    use_distributed_map: bool = False
    manifest_key: str
    #: Settings.max_concurrency, read by the Maps (MaxConcurrencyPath)
    max_concurrency: int = Field(ge=1)
    #: the upload's clean_text option, so assemble never reads the source again
    clean_text: bool = False
    #: the upload's extract_tables option: OCR asks Textract for tables, the cost ledger prices them
    extract_tables: bool = False
    #: the document holds files (a PDF's embedded files, an email's attachments): after its own
    #: text, they are unpacked and processed as members, like an archive's (``Plan.unpacks_after``)
    holds_files: bool = False
    #: the plan kept the PDF's outline in work/<doc_id>/outline.json: assemble's headings
    has_outline: bool = False
    seconds: float = 0.0

    @field_validator("status")
    @classmethod
    def _known_status(cls, value: str) -> str:
        if value not in PLAN_STATUSES:
            raise ValueError(f"plan status must be one of {', '.join(sorted(PLAN_STATUSES))}")
        return value

    def route(self, level: int = 0) -> Route:
        """Where the document goes next, ``level`` archive levels down (see ``routes_at``)."""
        return routes_at(level).get(self.status, Route.ASSEMBLE)

    def unpacks_after(self, level: int = 0) -> bool:
        """After its own text, the document's files are unpacked as members (only where members
        are unpacked at all: above ``UNPACK_LEVELS``)."""
        return self.holds_files and self.route(level) is Route.EXTRACT and level < UNPACK_LEVELS



# -- extract -----------------------------------------------------------------------------


class ExtractResult(StepModel):
    """What one batch did; page JSONs are in S3 under work/<doc_id>/pages/."""

    batch_index: int
    pages: int
    chars: int
    #: pages of the batch queued for OCR (their inputs are under work/<doc_id>/ocr/inputs/)
    ocr_pages: int = 0
    #: ocr_pages > 0: the batch Map reduces its batches' to one boolean, and the Choice after it
    #: (like `papersift extract`) goes to the OCR stage on it
    needs_ocr: bool = False
    #: every page was already written by an earlier try
    skipped: bool = False
    #: error code when the file itself is at fault (the reason is in work/<doc_id>/errors/)
    error: str | None = None


# -- OCR ---------------------------------------------------------------------------------


class OcrPlanRequest(DocumentRef):
    """After the text layer (or straight from the plan, for a picture): which pages need OCR."""

    plan: Plan


class OcrItem(StepModel):
    """One page for the OCR step: the picture or one-page PDF to read is ``input_key``; the
    document's own options (mode, languages) are read from the source ``key``'s metadata."""

    doc_id: str
    bucket: str
    key: str
    kind: str
    page: int = Field(ge=1)
    input_key: str


class MapPlan(StepModel):
    """What a Map state reads: its items inline, or past the Distributed Map threshold from an S3
    manifest (``manifest_key``, the ItemReader), the items then left out of the state."""

    use_distributed_map: bool
    manifest_key: str
    #: the Map's MaxConcurrencyPath
    max_concurrency: int = Field(ge=1)


class OcrPlan(MapPlan):
    """The OCR plan step's result (``$.ocr``): the pages to read (manifest
    work/<doc_id>/ocr/items.json; max_concurrency is Settings.ocr_max_concurrency)."""

    page_count: int
    items: list[OcrItem] = Field(default_factory=list)


class OcrRequest(OcrItem):
    """An OCR Map iteration's input: the item, plus what a Catch added when the first try failed:
    ``throttled`` (Textract refused for load past the retry budget: read the page without it) or
    ``error`` (the step itself failed: record the page as failed with the reason)."""

    throttled: StepError | None = None
    error: StepError | None = None


class OcrResult(StepModel):
    """What the OCR step did with one page; the page JSON is under work/<doc_id>/ocr/pages/."""

    page: int
    status: str
    engine: str | None
    chars: int
    #: the page was already read by an earlier try
    skipped: bool = False


# -- unpack ------------------------------------------------------------------------------


class UnpackRequest(DocumentRef):
    plan: Plan


class MemberEntry(StepModel):
    """One archive member as unpack left it; ``doc_id`` set when it was uploaded as a document."""

    path: str
    status: str
    reason: str = ""
    size: int = 0
    original_name: str | None = None
    depth: int = 0
    #: archives.MemberKind: what held it (an archive, a PDF, an email)
    kind: str = "archive_member"
    doc_id: str | None = None


class ArchiveListing(StepModel):
    """work/<doc_id>/members.json: every member of an archive with its unpack status."""

    status: str
    reason: str = ""
    #: members known to exist but not listed one by one (beyond max_archive_members)
    unlisted: int = 0
    members: list[MemberEntry] = Field(default_factory=list)


class UnpackResult(MapPlan):
    """The unpack step's result (``$.unpack``): the members to process as documents. An archive
    member's own unpack result always lists its items inline (its member Map is inline)."""

    status: str
    reason: str = ""
    unlisted: int = 0
    member_count: int
    item_count: int
    items: list[DocumentRef] = Field(default_factory=list)


# -- assemble ----------------------------------------------------------------------------


class StepError(StepModel):
    """A Catch's error output (``$.error``): the error name and its cause, as Step Functions
    writes them (a Lambda error's cause is a JSON string with errorMessage)."""

    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    error: str = Field(alias="Error")
    cause: str = Field(default="", alias="Cause")

    @classmethod
    def from_exception(cls, exc: BaseException) -> StepError:
        """The payload a Catch would record for ``exc`` (the error is the class name)."""
        return cls.model_validate({"Error": type(exc).__name__, "Cause": str(exc)})

    @property
    def reason(self) -> str:
        cause = self.cause
        try:
            parsed = json.loads(cause)
            if isinstance(parsed, dict):
                cause = str(parsed.get("errorMessage") or parsed.get("errorType") or cause)
        except json.JSONDecodeError:
            pass
        return f"{self.error}: {cause}".strip(": ")


class AssembleRequest(DocumentRef):
    """After the pages (or members) are done: with ``plan``; as a Catch target: with ``error``
    and usually no plan (assemble then reads plan.json when the plan step wrote one)."""

    plan: Plan | None = None
    error: StepError | None = None


class AssembleResult(StepModel):
    doc_id: str
    status: str
    page_count: int
    results_prefix: str


# -- export ------------------------------------------------------------------------------


#: what became of a document's export: pending (assembled, the step is next), written
#: (exports/<doc_id>.parquet holds its page records), failed (the reason on the document's item; its
#: results stand)
EXPORT_PENDING, EXPORT_WRITTEN, EXPORT_FAILED = "pending", "written", "failed"


class ExportRequest(DocumentRef):
    """After assemble (the workflow has the step only with Settings.export_parquet): the document
    whose results become ``exports/<doc_id>.parquet``; as its own Catch target, with ``error``: the
    export failed, and the step records why instead of exporting."""

    error: StepError | None = None


class ExportResult(StepModel):
    """The export step's result (``$.export`` of the execution's output); also recorded on the
    document's item (``export_status``, ``export_key`` or ``export_reason``)."""

    doc_id: str
    status: str
    #: the Parquet object, when written
    key: str | None = None
    rows: int = 0
    reason: str = ""


def manifest_json(items: Sequence[BaseModel]) -> bytes:
    """A Distributed Map's item source (work/<doc_id>/batches.json, member-items.json): a JSON array."""
    return ("[" + ",".join(item.model_dump_json() for item in items) + "]").encode("utf-8")


def read_manifest(data: bytes, model: type[ItemT]) -> list[ItemT]:
    return [model.model_validate(item) for item in json.loads(data)]


def required_fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, info in model.model_fields.items() if info.is_required())


def field_path(root: str, model: type[BaseModel], name: str) -> str:
    """``root.name`` for a JSONPath into a state, refusing a name the model does not have, so the
    workflow cannot read a field no step writes."""
    if name not in model.model_fields:
        raise KeyError(f"{model.__name__} has no field {name!r} (workflow path {root}.{name})")
    return f"{root}.{name}"
