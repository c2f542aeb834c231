"""The files a PDF or an email (.eml, Outlook .msg) holds, read as an archive's members are.

A PDF's embedded files (its ``/EmbeddedFiles`` name tree, which a portfolio's ``/Collection``
lists too, and its FileAttachment annotations) and an email's attachments are reported to the
same sink as a zip's members (``tree.Frame``): the same byte, count, ratio and time budgets,
the same safe names, nested archives expanded the same way. They sit under ``attachments/``.
A Flate stream is inflated chunk by chunk, so a huge compressed attachment meets the ratio and
size limits before it fills memory.
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papersift.archives.limits import CHUNK, Run, Stop
from papersift.archives.members import ArchiveStatus, MemberKind, MemberStatus
from papersift.archives.sink import Chunks, MemberSink, Opener
from papersift.errors import (
    DeadlineExceededError,
    EngineCrashError,
    InputError,
    LimitExceededError,
    MemoryLimitError,
)
from papersift.isolation import Limits, UnitFailure, run_once, run_units
from papersift.mail import MailParts, parse_message, parse_outlook

if TYPE_CHECKING:
    from pypdf import PdfReader

#: the folder of a document's attachments among its members: ``attachments/<name>``
ATTACHMENTS_FOLDER = "attachments"

#: the most name-tree nodes walked (a tree of cycles or of millions of empty nodes is no listing)
_MAX_TREE_NODES = 100_000


def read_pdf_attachments(frame: MemberSink, path: Path) -> tuple[ArchiveStatus, str]:
    """Every embedded file of the PDF at ``path``, each once (a name-tree entry and an annotation
    often point at the same stream). pypdf reads the PDF in workers (``papersift.isolation``): one
    lists the files, the next writes their bytes one by one, so a PDF that hangs pypdf or blows its
    memory ends the listing, or that one file, with the limit's reason instead of holding the step."""
    run = frame.run
    limits = _worker_limits(run)
    try:
        listing = run_once(functools.partial(_list_pdf_files, path, run.passwords), limits)
    except (DeadlineExceededError, MemoryLimitError) as exc:
        return ArchiveStatus.LIMIT_EXCEEDED, f"the PDF's attachments could not be listed: {_limit_reason(exc)}"
    except EngineCrashError as exc:
        return ArchiveStatus.CORRUPT, f"the PDF's attachments could not be listed: {exc}"
    if listing.status is not ArchiveStatus.OK:
        return listing.status, listing.reason
    folder = run.tmp_dir()
    written = run_units(functools.partial(_open_pdf_files, path, run.passwords),
                        functools.partial(_write_pdf_file, folder, run.limits.max_member_bytes),
                        range(len(listing.files)), limits)
    number = -1
    try:
        for number, result in written:
            name, packed, declared = listing.files[number]
            if isinstance(result, UnitFailure):
                frame.record(name, MemberStatus.SKIPPED_LIMIT, f"not read: {_limit_reason(result.error)}", packed)
                continue
            frame.add_file(name, _written_opener(result), packed_size=packed, declared_size=declared)
            Path(result.path).unlink(missing_ok=True)
    except Stop as stop:
        frame.skip_rest((name for name, *_ in listing.files[number + 1:]), str(stop))
        raise
    finally:
        written.close()  # a Stop leaves the worker writing files nobody reads: it ends here
    # a listing that ended at damage: the files before it are kept, the reason says where it ended
    return (ArchiveStatus.CORRUPT if listing.reason else ArchiveStatus.OK), listing.reason


def read_email_attachments(frame: MemberSink, path: Path) -> tuple[ArchiveStatus, str]:
    """Every MIME part of the email at ``path`` that is a file (``papersift.mail`` decides which)."""
    return _read_message(frame, path, parse_message)


def read_outlook_attachments(frame: MemberSink, path: Path) -> tuple[ArchiveStatus, str]:
    """Every attachment of the Outlook message at ``path``."""
    return _read_message(frame, path, parse_outlook)


def _read_message(frame: MemberSink, path: Path, parse: Callable[[bytes], MailParts]) -> tuple[ArchiveStatus, str]:
    """The message parsed in a worker (a huge or hostile one ends with the limit's reason), its
    attachments written there to files this process then reads as members."""
    folder = frame.run.tmp_dir()
    try:
        saved = run_once(functools.partial(_save_attachments, path, parse, folder), _worker_limits(frame.run))
    except (DeadlineExceededError, MemoryLimitError) as exc:
        return ArchiveStatus.LIMIT_EXCEEDED, f"the message's attachments could not be read: {_limit_reason(exc)}"
    except EngineCrashError as exc:
        return ArchiveStatus.CORRUPT, f"the message's attachments could not be read: {exc}"
    except LimitExceededError as exc:
        return ArchiveStatus.LIMIT_EXCEEDED, f"{exc} (max_archive_depth)"
    except InputError as exc:
        return ArchiveStatus.CORRUPT, str(exc)
    remaining = iter(saved)
    try:
        for written in remaining:
            frame.add_file(written.name, _written_opener(written))
            Path(written.path).unlink(missing_ok=True)
    except Stop as stop:
        frame.skip_rest((written.name for written in remaining), str(stop))
        raise
    return ArchiveStatus.OK, ""


#: kind -> the reader of its attachments (tree.Frame dispatches on it)
ATTACHMENT_READERS: dict[str, Callable[[MemberSink, Path], tuple[ArchiveStatus, str]]] = {
    "pdf": read_pdf_attachments,
    "eml": read_email_attachments,
    "msg": read_outlook_attachments,
}
#: kind -> what its attachments are
ATTACHMENT_KINDS: dict[str, MemberKind] = {"pdf": MemberKind.PDF_ATTACHMENT, "eml": MemberKind.EMAIL_ATTACHMENT,
                                           "msg": MemberKind.EMAIL_ATTACHMENT}


# -- what the workers do and send back --------------------------------------------------------


def _worker_limits(run: Run) -> Limits:
    return Limits(run.limits.worker_seconds, run.limits.worker_memory_mb)


def _limit_reason(error: Exception) -> str:
    """A worker's limit, named by its setting (``limit_code`` reads the reason)."""
    setting = "page_seconds" if isinstance(error, DeadlineExceededError) \
        else "unit_memory_mb" if isinstance(error, MemoryLimitError) else ""
    return f"{error} ({setting})" if setting and setting not in str(error) else str(error)


@dataclass(frozen=True)
class _Written:
    """A file's bytes as a worker left them on disk (``inflate``: still Flate-compressed, inflated
    while it is read so the ratio and size limits meet it chunk by chunk), or why it has none."""

    name: str
    path: str
    inflate: bool = False
    error: str = ""


def _written_opener(written: _Written) -> Opener:
    def opened() -> contextlib.AbstractContextManager[Chunks]:
        if written.error:
            raise ValueError(written.error)
        if written.inflate:
            return _Inflater(Path(written.path).read_bytes())
        return open(written.path, "rb")

    return opened


@dataclass(frozen=True)
class _PdfListing:
    status: ArchiveStatus
    reason: str
    #: (name, packed bytes, declared size) of each embedded file, in the order they are written
    files: list[tuple[str, int, int | None]]


def _list_pdf_files(path: Path, passwords: tuple[str, ...]) -> _PdfListing:
    """In a worker: the PDF's embedded files, or why they cannot be listed."""
    files: list[tuple[str, int, int | None]] = []
    try:
        reader = _open_pdf(path, passwords)
        if reader is None:
            return _PdfListing(ArchiveStatus.ENCRYPTED, "the PDF is encrypted and no supplied password opens it", [])
        for name, _stream, packed, declared in _pdf_files(reader):
            files.append((name, packed, declared))
    except MemoryError:  # the worker's budget, not damage
        raise
    except Exception as exc:  # pypdf raises many kinds on a damaged file
        if not files:
            return _PdfListing(ArchiveStatus.CORRUPT, f"the PDF's attachments could not be listed: "
                                                      f"{type(exc).__name__}: {exc}", [])
        # the files listed before the damage are read; the reason says where the listing ended
        return _PdfListing(ArchiveStatus.OK, f"the PDF's attachments could not be listed after {len(files)}: "
                                             f"{type(exc).__name__}: {exc}", files)
    return _PdfListing(ArchiveStatus.OK, "", files)


def _open_pdf_files(path: Path, passwords: tuple[str, ...]) -> list[Any]:
    """A worker's setup: the embedded files' streams, listed as ``_list_pdf_files`` listed them."""
    reader = _open_pdf(path, passwords)
    streams: list[Any] = []
    if reader is None:
        return streams
    try:
        for _name, stream, _packed, _declared in _pdf_files(reader):
            streams.append(stream)
    except MemoryError:
        raise
    except Exception:  # the listing ended at the same damage
        pass
    return streams


def _write_pdf_file(folder: Path, max_bytes: int, streams: list[Any], number: int) -> _Written:
    """In a worker: embedded file ``number``'s bytes into ``folder``: a plain Flate stream as it is
    packed, any other filter decoded by pypdf (cut one byte past ``max_bytes``: the limit sees it)."""
    target = folder / f"pdf-{number:06d}"
    if number >= len(streams):
        return _Written("", str(target), error="the embedded file is no longer found where it was listed")
    stream = streams[number]
    filters = _resolved(stream.get("/Filter"))
    chain = [] if filters is None else [str(f) for f in (filters if isinstance(filters, list) else [filters])]
    raw: bytes = stream._data
    if not chain or (chain in (["/FlateDecode"], ["/Fl"]) and not _resolved(stream.get("/DecodeParms"))):
        target.write_bytes(raw)
        return _Written("", str(target), inflate=bool(chain))
    try:
        target.write_bytes(stream.get_data()[:max_bytes + 1])
    except MemoryError:  # the worker's budget, not damage: the unit ends with the limit's reason
        raise
    except Exception as exc:
        return _Written("", str(target), error=f"the embedded stream cannot be decoded ({'+'.join(chain)}): {exc}")
    return _Written("", str(target))


def _save_attachments(path: Path, parse: Callable[[bytes], MailParts], folder: Path) -> list[_Written]:
    """In a worker: the message's attachments, each written to ``folder`` (the parse and the
    decoding of every part happen here, under the worker's limits)."""
    saved: list[_Written] = []
    for number, attachment in enumerate(parse(path.read_bytes()).attachments):
        target = folder / f"mail-{number:06d}"
        try:
            target.write_bytes(attachment.payload())
        except ValueError as exc:
            saved.append(_Written(attachment.name, str(target), error=str(exc)))
            continue
        saved.append(_Written(attachment.name, str(target)))
    return saved


#: what names a PDF's files in its objects: the ``/EmbeddedFiles`` name tree (and the optional
#: ``/Type /EmbeddedFile`` of their streams) and the FileAttachment annotation
PDF_FILE_MARKERS = (b"/EmbeddedFile", b"/FileAttachment")
#: the inflated bytes of object streams scanned for them, in all (they hold dictionaries only:
#: a PDF's are a small part of it); past it, the parser decides
_OBJECT_STREAMS_SCANNED = 64 * 1024 * 1024
_OBJECT_STREAM = re.compile(rb"/Type\s*/ObjStm\b")
_STREAM_START = re.compile(rb"stream\r?\n")
_FILTER = re.compile(rb"/Filter\s*(\[[^\]]*\]|/[^\s/\[\]<>()]+)")


def object_streams_name_files(data: bytes) -> bool | None:
    """Whether the PDF's object streams name a file (``PDF_FILE_MARKERS``), from their inflated
    bytes: a compact writer keeps the catalog, its name tree and the annotations there. None when
    the bytes cannot tell (an object stream not plainly Flate, damaged, encrypted, or more than is
    scanned): the parser must look. Linear in the file, bounded in memory."""
    if b"/Encrypt" in data:
        return None
    budget = _OBJECT_STREAMS_SCANNED
    for found in _OBJECT_STREAM.finditer(data):
        start = _STREAM_START.search(data, found.end())
        if start is None:
            return None
        header = data[max(data.rfind(b"obj", 0, found.start()), 0):start.start()]
        filters = _FILTER.search(header)
        if filters is None or b"/DecodeParms" in header \
                or re.findall(rb"/(\w+)", filters.group(1)) not in ([b"FlateDecode"], [b"Fl"]):
            return None
        end = data.find(b"endstream", start.end())
        try:
            text = zlib.decompressobj().decompress(data[start.end():end if end >= 0 else len(data)], budget + 1)
        except zlib.error:
            return None
        budget -= len(text)
        if budget < 0:
            return None
        if any(marker in text for marker in PDF_FILE_MARKERS):
            return True
    return False


def declares_files(data: bytes, kind: str, passwords: tuple[str, ...] = ()) -> bool:
    """Whether the parser finds a file in the document (for the plan, when the bytes cannot tell:
    run it in a worker). A PDF's listing stops at its first file; a PDF no password opens may hold
    some (the unpack step says it is encrypted); one pypdf cannot parse holds none it can read."""
    if kind == "pdf":
        try:
            reader = _open_pdf(io.BytesIO(data), passwords)
            return reader is None or next(_pdf_files(reader), None) is not None
        except MemoryError:  # the worker's budget: the plan answers yes, the unpack says why
            raise
        except Exception:  # pypdf raises many kinds on a damaged file; its pages are read by others
            return False
    parse = parse_message if kind == "eml" else parse_outlook
    try:
        return bool(parse(data).attachments)
    except InputError:  # the extract step reports what is wrong with the message
        return False


def _open_pdf(source: Path | io.BytesIO, passwords: tuple[str, ...]) -> PdfReader | None:
    """The PDF's reader, decrypted when it is encrypted (None: no password opens it)."""
    from pypdf import PdfReader  # only a PDF with attachments pays for the import here

    reader = PdfReader(source, strict=False)
    if reader.is_encrypted and not _decrypt(reader, passwords):
        return None
    return reader


def _decrypt(reader: PdfReader, passwords: tuple[str, ...]) -> bool:
    for password in ("", *passwords):
        try:
            if reader.decrypt(password):
                return True
        except Exception:
            continue
    return False


def _pdf_files(reader: PdfReader) -> Iterator[tuple[str, Any, int, int | None]]:
    """(name, stream, packed bytes, declared size) of each embedded file, name tree first."""
    seen: set[Any] = set()
    root: Any = reader.trailer["/Root"].get_object()
    names = _resolved(root.get("/Names"))
    tree = _resolved(names.get("/EmbeddedFiles")) if isinstance(names, dict) else None
    if isinstance(tree, dict):
        for key, spec in _name_tree(tree):
            yield from _embedded(key, spec, seen)
    for page in reader.pages:
        for annotation in _resolved(page.get("/Annots")) or []:
            annotation = _resolved(annotation)
            if isinstance(annotation, dict) and annotation.get("/Subtype") == "/FileAttachment":
                yield from _embedded("", annotation.get("/FS"), seen)


def _resolved(value: Any) -> Any:
    return value.get_object() if hasattr(value, "get_object") else value


def _name_tree(node: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(key, value) pairs of a name tree, walked with a stack and each node once (a tree that
    loops back on itself ends where it repeats)."""
    stack, visited = [node], 0
    seen_nodes: set[int] = set()
    while stack and visited < _MAX_TREE_NODES:
        current = stack.pop()
        if id(current) in seen_nodes:
            continue
        seen_nodes.add(id(current))
        visited += 1
        pairs = _resolved(current.get("/Names")) or []
        for key, value in zip(pairs[::2], pairs[1::2], strict=False):
            yield str(_resolved(key)), value
        kids = [_resolved(kid) for kid in _resolved(current.get("/Kids")) or []]
        stack.extend(kid for kid in reversed(kids) if isinstance(kid, dict))


def _embedded(key: str, spec: Any, seen: set[Any]) -> Iterator[tuple[str, Any, int, int | None]]:
    """The embedded file of a file specification: none for a reference to a file outside the PDF
    (a plain string, or no ``/EF``), which papersift never reads."""
    spec = _resolved(spec)
    if not isinstance(spec, dict):
        return
    files = _resolved(spec.get("/EF"))
    if not isinstance(files, dict):
        return
    reference: Any = next((files.raw_get(k) for k in ("/UF", "/F") if k in files), None) \
        if hasattr(files, "raw_get") else None
    stream = _resolved(reference)
    if stream is None or not hasattr(stream, "get_data"):
        return
    identity = (reference.idnum, reference.generation) if hasattr(reference, "idnum") else id(stream)
    if identity in seen:
        return
    seen.add(identity)
    name = next((str(_resolved(spec[k])) for k in ("/UF", "/F") if spec.get(k)), "") or key or "attachment"
    params = _resolved(stream.get("/Params"))
    declared = _resolved(params.get("/Size")) if isinstance(params, dict) else None
    yield name, stream, len(stream._data), declared if isinstance(declared, int) else None


class _Inflater:
    """A Flate stream inflated on demand, at most ``size`` bytes a read."""

    def __init__(self, raw: bytes) -> None:
        self._inflate = zlib.decompressobj()
        self._raw = raw
        self._pieces = itertools.count()

    def read(self, size: int = CHUNK, /) -> bytes:
        size = size if size > 0 else CHUNK
        try:
            while True:
                if self._inflate.unconsumed_tail:
                    data = self._inflate.decompress(self._inflate.unconsumed_tail, size)
                else:
                    start = next(self._pieces) * CHUNK
                    if start >= len(self._raw) or self._inflate.eof:
                        return b""
                    data = self._inflate.decompress(self._raw[start:start + CHUNK], size)
                if data:
                    return data
        except zlib.error as exc:
            raise ValueError(f"damaged Flate stream: {exc}") from exc

    def __enter__(self) -> Chunks:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
