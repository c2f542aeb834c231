"""The one error hierarchy of papersift.

Every failure that reaches a report is one of these, so a report can always name
the kind of failure (``error.code``) and a human reason (``str(error)``), and Step
Functions can Catch on the class name.
"""

from __future__ import annotations


class PapersiftError(Exception):
    """Base of every error papersift raises on purpose."""

    code = "error"


class SettingsError(PapersiftError, ValueError):
    """A configuration value is invalid; the message names the setting."""

    code = "bad_setting"


class InstallationError(PapersiftError):
    """papersift itself is incompletely installed (a build step did not run): no input is at fault."""

    code = "installation"


class MissingExtraError(InstallationError):
    """An optional feature asked for without the extra that provides it (Parquet without pyarrow):
    the message names the install command."""


class InputError(PapersiftError):
    """The input itself is bad: the file, not papersift, is at fault."""

    code = "bad_input"


class EmptyInputError(InputError):
    code = "empty"


class UnsupportedFormatError(InputError):
    code = "unsupported"


class CorruptInputError(InputError):
    code = "corrupt"


class EncryptedInputError(InputError):
    """No password (empty or supplied) opens the file."""

    code = "encrypted"


class LimitExceededError(InputError):
    """A safety limit was hit (size, pages, members, ratio, depth): the document ends
    ``limit_exceeded``, never ``failed`` (which is a failure of ours). Subclasses name the bombs."""

    code = "limit_exceeded"


class DecompressionBombError(LimitExceededError):
    """Compressed data that expands beyond the ratio or size limits (zip, gzip, bzip2, a package part)."""

    code = "decompression_bomb"


class EntityBombError(LimitExceededError):
    """XML whose entity declarations expand beyond the limits (billion laughs, quadratic blowup)."""

    code = "entity_bomb"


class NestingTooDeepError(LimitExceededError):
    """Structure nested deeper than papersift reads (JSON arrays, archives in archives)."""

    code = "nesting_too_deep"


class EngineError(PapersiftError):
    """One extraction engine failed on one page; other engines may still succeed."""

    code = "engine_failed"


class ContinueBatchError(PapersiftError):
    """The step's time is nearly up with work left: the workflow's retry runs the rest (a retried
    step resumes after what the first try wrote). Not a failure."""

    code = "batch_continues"


class OcrThrottledError(PapersiftError):
    """The OCR back end refused for load; Step Functions retries with backoff."""

    code = "ocr_throttled"


class OcrRejectedError(EngineError):
    """The OCR service refused this page itself (a document it cannot read, a bad parameter):
    retrying cannot help, the page ends ``failed`` with the service's reason."""

    code = "ocr_rejected"


class OcrUnavailableError(EngineError):
    """An OCR engine cannot be used here (no client or credentials, no binary, no model): the
    routing falls back to the other engine and the report says why."""

    code = "ocr_unavailable"


class RequestError(PapersiftError):
    """An API request that cannot be served as asked. ``http_status`` is the answer's status and
    ``field`` names the request field at fault, when one is."""

    code = "bad_request"
    http_status = 400

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class DocumentNotFoundError(RequestError):
    code = "not_found"
    http_status = 404


class DocumentRunningError(RequestError):
    """The document's run has not finished: deleting it now would race the workflow's writes."""

    code = "document_running"
    http_status = 409


class PayloadTooLargeError(RequestError):
    code = "payload_too_large"
    http_status = 413


class UnsupportedMediaTypeError(RequestError):
    """A request body that is not JSON: the API takes nothing else."""

    code = "unsupported_media_type"
    http_status = 415


class ThrottledError(RequestError):
    """A back end (S3, DynamoDB, Step Functions) refused an API request for load: the API answers
    429 (functions/api ``aws_refused``). API Gateway's own rate limit answers with the same code
    (``api_models.GATEWAY_ERRORS["THROTTLED"]``)."""

    code = "throttled"
    http_status = 429


class DeadlineExceededError(LimitExceededError):
    """One unit of work (a page, an archive member, a document) took longer than its deadline: it
    ends failed with that reason, the rest of the document goes on (papersift.isolation)."""

    code = "deadline_exceeded"


class MemoryLimitError(LimitExceededError):
    """One unit of work needed more memory than a unit may use (Settings.unit_memory_mb)."""

    code = "memory_limit"


class EngineCrashError(EngineError):
    """A C library (pdfium, poppler, Tesseract's) crashed on this input: the worker process it ran
    in died, the unit is recorded failed, and the step goes on."""

    code = "engine_crashed"


def input_error_code(class_name: str) -> str | None:
    """The code of the ``InputError`` a step raised, from its class name (what a Step Functions Catch
    records), or None when it is no input error: a Catch on a bomb says limit_exceeded, not failed."""
    stack: list[type[PapersiftError]] = [InputError]
    while stack:
        cls = stack.pop()
        if cls.__name__ == class_name:
            return cls.code
        stack.extend(cls.__subclasses__())
    return None


# -- AWS error codes that mean "slow down" -------------------------------------------------------
# The services answer load with a handful of codes, shared here; each caller keeps its own set of
# the codes that mean "not now" to it, built from these, and names it for what it does with them:
# the API answers 429 (functions/api/app.py, API_BUSY_CODES), Textract's pages are retried by the
# workflow (papersift.ocr.textract.TEXTRACT_RETRY_CODES), ingest defers a drop
# (papersift.admission, START_DEFERRED_CODES). They differ on purpose: a code one service
# never sends has no place in its caller's set, and some "not now" codes are one service's own
# (Textract's LimitExceededException, Step Functions' ExecutionLimitExceeded).

#: the service's own transient load (Step Functions, Textract, DynamoDB's control plane, ...)
THROTTLING_EXCEPTION = "ThrottlingException"
#: a request-rate quota: DynamoDB's provisioned throughput, Textract's transactions per second
PROVISIONED_THROUGHPUT_EXCEEDED = "ProvisionedThroughputExceededException"
#: every AWS error code that means "slow down" rather than "broken", whichever service sends it
#: (the older query APIs' Throttling and RequestLimitExceeded, S3's SlowDown, Lambda's and API
#: Gateway's TooManyRequestsException): the same request succeeds later
AWS_THROTTLING_CODES = frozenset({THROTTLING_EXCEPTION, "Throttling", "TooManyRequestsException", "SlowDown",
                                  PROVISIONED_THROUGHPUT_EXCEEDED, "RequestLimitExceeded"})
