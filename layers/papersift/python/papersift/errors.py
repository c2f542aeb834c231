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
    """A safety limit from Settings was hit (size, pages, members, ratio, depth)."""

    code = "limit_exceeded"


class EngineError(PapersiftError):
    """One extraction engine failed on one page; other engines may still succeed."""

    code = "engine_failed"


class OcrThrottledError(PapersiftError):
    """The OCR back end refused for load; Step Functions retries with backoff."""

    code = "ocr_throttled"
