"""Names made safe: archive members' names sanitized into unique relative POSIX paths (never used
as disk paths), and the one rule for a file name or an object key a caller chose (the API, the CLI)."""

from __future__ import annotations

import contextlib
import hashlib
import re
import unicodedata
from pathlib import PurePosixPath

_MAX_COMPONENT_BYTES = 255
#: what S3 takes as an object key, in UTF-8 bytes
MAX_OBJECT_KEY_BYTES = 1024
#: Unicode categories no name papersift writes or accepts may carry: controls (C0, DEL, C1),
#: format characters (the bidi overrides that make "invoice\u202etxt.exe" read "invoiceexe.txt",
#: zero-width ones), line and paragraph separators (U+2028, U+2029: they break a line of a log or a
#: table), private use (no meaning anyone agreed on) and lone surrogates (not text)
UNSAFE_NAME_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})


def clean_member_name(raw: str) -> tuple[str | None, str]:
    """A safe relative POSIX path for ``raw``, or (None, reason) when it tries to traverse.

    Absolute paths and drive letters are made relative (common in old tars and Windows
    zips); '..' components are refused. Control characters become '_', components are
    capped at 255 UTF-8 bytes keeping the extension, an empty name becomes 'unnamed'.
    """
    notes: list[str] = []
    text = _fix_surrogates(raw).replace("\\", "/")
    text = unicodedata.normalize("NFC", text)
    if re.match(r"^[A-Za-z]:", text):
        text = text[2:]
        notes.append("drive letter removed")
    if text.startswith("/"):
        notes.append("absolute path made relative")
    parts: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            return None, "path traversal ('..'): not extracted"
        cleaned = "".join("_" if (unicodedata.category(c) == "Cc" or c == "\x7f") else c for c in part)
        if cleaned != part:
            notes.append("control characters replaced")
        capped = _cap_component(cleaned)
        if capped != cleaned:
            notes.append("long name shortened")
        parts.append(capped)
    if not parts:
        notes.append("empty name")
        parts = ["unnamed"]
    return "/".join(parts), "; ".join(dict.fromkeys(notes))


def _cap_component(part: str, max_bytes: int = _MAX_COMPONENT_BYTES) -> str:
    if len(part.encode("utf-8")) <= max_bytes:
        return part
    stem, dot, ext = part.rpartition(".")
    if not dot or len(ext.encode()) > 16:
        stem, ext = part, ""
    tag = "~" + hashlib.sha1(part.encode("utf-8")).hexdigest()[:8]
    tail = ("." + ext) if ext else ""
    room = max_bytes - len(tag.encode()) - len(tail.encode())
    short = stem.encode("utf-8")[:room].decode("utf-8", "ignore")
    return short + tag + tail


def dedupe(path: str, used: set[str]) -> str:
    if path not in used:
        return path
    parent, _, leaf = path.rpartition("/")
    stem, dot, ext = leaf.rpartition(".")
    if not dot or not stem:
        stem, dot, ext = leaf, "", ""
    n = 2
    while True:
        candidate = f"{stem} ({n}){dot}{ext}"
        full = f"{parent}/{candidate}" if parent else candidate
        if full not in used:
            return full
        n += 1


def _fix_surrogates(text: str) -> str:
    """Names decoded with surrogateescape: try UTF-8, then cp1252, never fail."""
    if not any("\udc80" <= c <= "\udcff" for c in text):
        return text
    raw = text.encode("utf-8", "surrogateescape")
    for codec in ("utf-8", "cp1252"):
        with contextlib.suppress(UnicodeDecodeError):
            return raw.decode(codec)
    return raw.decode("latin-1")


def visible(raw: str) -> str:
    return "".join(c if c.isprintable() else "_" for c in _fix_surrogates(raw))


#: characters that reorder what a terminal or a page shows (a name "invoice\u202etxt.exe" reads
#: "invoiceexe.txt"): never let them through where a name is shown or used as a path
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def name_text(raw: str) -> str:
    """A name as text that any JSON or UTF-8 consumer takes, and that says exactly what the name is:
    bytes that are not UTF-8 (surrogate escapes from the file system or a tar) become ``\\xNN``;
    everything else (newlines, control characters, right-to-left overrides) is kept as is."""
    if not any("\udc80" <= c <= "\udcff" for c in raw):
        return raw
    return raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def shown_name(raw: str) -> str:
    """A name for one line of a terminal or a table: control, bidi and undecodable characters as
    visible escapes (``\\n``, ``\\u202e``, ``\\xff``), so a name can neither break nor reorder a line."""
    out: list[str] = []
    for c in name_text(raw):
        if c in BIDI_CONTROLS or unicodedata.category(c) in ("Cc", "Cs"):
            out.append(c.encode("unicode_escape").decode("ascii"))
        else:
            out.append(c)
    return "".join(out)


def capped_name(name: str, max_bytes: int = _MAX_COMPONENT_BYTES) -> str:
    """``name`` within ``max_bytes`` of UTF-8 (a file system's or an object key segment's limit),
    extension kept and a hash of the whole name added when it had to be cut, so cut names stay distinct."""
    name = name_text(name)
    if len(name.encode("utf-8")) <= max_bytes:
        return name
    return _cap_component(name, max_bytes)


def unsafe_name_character(c: str) -> bool:
    """True for a character no file name carries (``UNSAFE_NAME_CATEGORIES``): the CLI replaces
    it in the folders it writes, the API refuses a ``file_name`` that holds one."""
    return unicodedata.category(c) in UNSAFE_NAME_CATEGORIES


def file_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one file name taken as it is, or None when it can. The rule the CLI
    applies by sanitizing (``safe_component``) applied by refusing, for a name a caller chose: NFC
    (compare ``unicodedata.normalize("NFC", name)``: a name is normalised before it is checked), no
    separator, never '.' or '..', no unsafe character, at most 255 bytes of UTF-8 (a file system's
    and an S3 key segment's limit). The message names the problem, never more of the name than
    the character at fault."""
    if unicodedata.normalize("NFC", name) != name:
        return "is not in Unicode normalization form NFC"
    if not name:
        return "is empty"
    if "/" in name or "\\" in name:
        return "must be a plain file name, without '/' or '\\'"
    if name in (".", ".."):
        return "must be a file name, not '.' or '..'"
    for position, c in enumerate(name):
        if unsafe_name_character(c):
            return (f"holds U+{ord(c):04X} at character {position}: control, format (such as a bidi override), "
                    "line or paragraph separator and private-use characters are refused")
    size = len(name.encode("utf-8"))
    if size > _MAX_COMPONENT_BYTES:
        return f"is {size} bytes of UTF-8, over the {_MAX_COMPONENT_BYTES} a file name may have"
    return None


def object_key_problem(key: str) -> str | None:
    """Why S3 would refuse ``key``, or None (S3 keys are at most 1,024 bytes of UTF-8)."""
    size = len(key.encode("utf-8", "surrogatepass"))
    if size > MAX_OBJECT_KEY_BYTES:
        return f"makes an object key of {size} bytes, over the {MAX_OBJECT_KEY_BYTES} S3 takes"
    return None


def suffix_of(path: str) -> str:
    suffix = PurePosixPath(path).suffix
    return suffix if re.fullmatch(r"\.[A-Za-z0-9]{1,10}", suffix) else ""
