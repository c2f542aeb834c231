"""The files a PDF or an email (.eml, Outlook .msg) holds, read as an archive's members are.

A PDF's embedded files (its ``/EmbeddedFiles`` name tree, which a portfolio's ``/Collection``
lists too, and its FileAttachment annotations) and an email's attachments are reported to the
same sink as a zip's members (``tree.Frame``): the same byte, count, ratio and time budgets,
the same safe names, nested archives expanded the same way. They sit under ``attachments/``.
A Flate stream is inflated chunk by chunk, so a huge compressed attachment meets the ratio and
size limits before it fills memory.
"""

from __future__ import annotations

import io
import itertools
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papersift.archives.limits import CHUNK, Run, Stop
from papersift.archives.members import ArchiveStatus, MemberKind
from papersift.archives.sink import Chunks, MemberSink, Opener
from papersift.errors import InputError, LimitExceededError
from papersift.mail import MailParts, parse_message, parse_outlook

if TYPE_CHECKING:
    from pypdf import PdfReader

#: the folder of a document's attachments among its members: ``attachments/<name>``
ATTACHMENTS_FOLDER = "attachments"

#: the most name-tree nodes walked (a tree of cycles or of millions of empty nodes is no listing)
_MAX_TREE_NODES = 100_000


def read_pdf_attachments(frame: MemberSink, path: Path) -> tuple[ArchiveStatus, str]:
    """Every embedded file of the PDF at ``path``, each once (a name-tree entry and an annotation
    often point at the same stream)."""
    from pypdf import PdfReader  # only a PDF with attachments pays for the import here

    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted and not _decrypt(reader, frame.run.passwords):
            return ArchiveStatus.ENCRYPTED, "the PDF is encrypted and no supplied password opens it"
        remaining = _timed(_pdf_files(reader), frame.run)
        try:
            for name, opener, packed, declared in remaining:
                frame.add_file(name, opener, packed_size=packed, declared_size=declared)
        except Stop as stop:
            frame.skip_rest((name for name, *_ in remaining), str(stop))
            raise
    except Stop:
        raise
    except Exception as exc:  # pypdf raises many kinds on a damaged file
        return ArchiveStatus.CORRUPT, (f"the PDF's attachments could not be listed after {len(frame.members)}: "
                                       f"{type(exc).__name__}: {exc}")
    return ArchiveStatus.OK, ""


def read_email_attachments(frame: MemberSink, path: Path) -> tuple[ArchiveStatus, str]:
    """Every MIME part of the email at ``path`` that is a file (``papersift.mail`` decides which)."""
    return _read_message(frame, path, parse_message)


def read_outlook_attachments(frame: MemberSink, path: Path) -> tuple[ArchiveStatus, str]:
    """Every attachment of the Outlook message at ``path``."""
    return _read_message(frame, path, parse_outlook)


def _read_message(frame: MemberSink, path: Path, parse: Callable[[bytes], MailParts]) -> tuple[ArchiveStatus, str]:
    try:
        parts = parse(path.read_bytes())
    except LimitExceededError as exc:
        return ArchiveStatus.LIMIT_EXCEEDED, f"{exc} (max_archive_depth)"
    except InputError as exc:
        return ArchiveStatus.CORRUPT, str(exc)
    remaining = iter(parts.attachments)
    try:
        for attachment in remaining:
            frame.add_file(attachment.name, _bytes_opener(attachment.payload))
    except Stop as stop:
        frame.skip_rest((attachment.name for attachment in remaining), str(stop))
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


def _bytes_opener(payload: Callable[[], bytes]) -> Opener:
    return lambda: io.BytesIO(payload())


def _timed(items: Iterator[Any], run: Run) -> Iterator[Any]:
    """``items`` until the tree's time runs out (listing names after a stop is bounded too)."""
    for item in items:
        if run.seconds_left() <= 0:
            return
        yield item


def _decrypt(reader: PdfReader, passwords: tuple[str, ...]) -> bool:
    for password in ("", *passwords):
        try:
            if reader.decrypt(password):
                return True
        except Exception:
            continue
    return False


def _pdf_files(reader: PdfReader) -> Iterator[tuple[str, Opener, int, int | None]]:
    """(name, opener, packed bytes, declared size) of each embedded file, name tree first."""
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


def _embedded(key: str, spec: Any, seen: set[Any]) -> Iterator[tuple[str, Opener, int, int | None]]:
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
    raw: bytes = stream._data
    yield name, _stream_opener(stream, raw), len(raw), declared if isinstance(declared, int) else None


def _stream_opener(stream: Any, raw: bytes) -> Opener:
    filters = _resolved(stream.get("/Filter"))
    chain = [] if filters is None else [str(f) for f in (filters if isinstance(filters, list) else [filters])]
    parameters = _resolved(stream.get("/DecodeParms"))
    if not chain:
        return lambda: io.BytesIO(raw)
    if chain in (["/FlateDecode"], ["/Fl"]) and not parameters:
        return lambda: _Inflater(raw)

    def decoded() -> io.BytesIO:
        # other filters and predictors: pypdf decodes them, within its own output caps
        try:
            return io.BytesIO(stream.get_data())
        except Exception as exc:
            raise ValueError(f"the embedded stream cannot be decoded ({'+'.join(chain)}): {exc}") from exc

    return decoded


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
