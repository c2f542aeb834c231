"""What the CLI writes: one folder per input (or flat files for the corpus scorer) and a summary.

Both `papersift run` and `papersift extract` produce :class:`FileResult` objects, so the two
commands write the same layout and print the same table.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from papersift.layout import CLEAN_TEXT_FILE, MARKDOWN_FILE, PAGES_FOLDER, REPORT_FILE, REPORT_PAGE_FILE, TEXT_FILE
from papersift.names import capped_name, name_text, shown_name, unsafe_name_character
from papersift.report import TRUSTED_DOCUMENT_STATUSES, DocumentStatus, ExtractionReport
from papersift.report_page import render_report_page
from papersift_cli.leftovers import make_output_folder, output_marker, output_name

#: document status -> status understood by the corpus scorer (score.py)
SCORE_STATUS = {
    "clean": "ok",
    "partially_recovered": "ok",
    "needs_review": "ok",
    "corrupt_unrecoverable": "ok",
    "empty": "ok",
    "encrypted": "encrypted",
    "unsupported": "error",
    "limit_exceeded": "error",
    "failed": "error",
    "timeout": "timeout",
}


@dataclass
class FileResult:
    """One input (or archive member) after extraction, with its result files in memory."""

    name: str
    status: str
    reason: str = ""
    detected_type: str = ""
    pages: int = 0
    seconds: float = 0.0
    engines: dict[str, int] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)  # text.txt, document.md, report.json, ...
    members: list[FileResult] = field(default_factory=list)
    broken: bool = False  # papersift failed to record any status for it
    #: the report's cost ledger (estimated USD, and had every page gone to Textract)
    cost: dict[str, Any] = field(default_factory=dict)
    #: where its results go, relative to the output folder (``OutputLayout``); '' until placed
    folder: str = ""
    doc_id: str = ""
    #: its results could not be written (a full disk...): it stands as failed, saying why
    unwritten: bool = False

    @classmethod
    def from_files(cls, name: str, files: dict[str, bytes], seconds: float, status: str = "", reason: str = "",
                   broken: bool = False) -> FileResult:
        """Fill type, pages and engines from report.json when there is one."""
        report: dict[str, Any] = {}
        if REPORT_FILE in files:
            try:
                report = json.loads(files[REPORT_FILE])
            except ValueError:
                report = {}
        return cls(
            name=name,
            status=status or str(report.get("status") or "missing"),
            reason=reason or str(report.get("reason") or ""),
            detected_type=str(report.get("detected_type") or ""),
            pages=int(report.get("page_count") or 0),
            seconds=seconds,
            engines={str(k): int(v) for k, v in (report.get("engines") or {}).items()},
            files=files,
            broken=broken,
            cost=dict(report.get("cost") or {}),
            doc_id=str(report.get("doc_id") or ""),
        )

    @property
    def text(self) -> str:
        return self.files.get(TEXT_FILE, b"").decode("utf-8", errors="replace")

    def written(self) -> FileResult:
        """The result once its files are on disk: their names kept, their contents (and its
        members') dropped. The summary and --open need no more, and a lane sends no more back: an
        archive of 20,000 members would otherwise cross the pipe with every member's text."""
        return replace(self, files=dict.fromkeys(self.files, b""), members=[m.written() for m in self.members])

def unique_names(paths: Sequence[Path]) -> list[str]:
    """The name of each input as text (bytes that are not UTF-8 as ``\\xNN``, at most 255 bytes): what
    its report and its object key carry. A repeated name gets a stable -2, -3... by input order."""
    taken: set[str] = set()
    names: list[str] = []
    for path in paths:
        name = capped_name(path.name or "unnamed")
        candidate, number = name, 1
        while candidate in taken:
            number += 1
            stem, dot, suffix = name.rpartition(".")
            candidate = f"{stem}-{number}.{suffix}" if dot and stem else f"{name}-{number}"
        taken.add(candidate)
        names.append(candidate)
    return names


#: a document folder's own files beside the results': what a document that left none says, and
#: where its archive members' folders go
STATUS_FILE = "status.json"
MEMBERS_FOLDER = "members"
#: what a document folder holds (the result files under results/<doc_id>/, and the two above): a
#: member path component never takes one of these names
RESULT_NAMES = frozenset({TEXT_FILE, MARKDOWN_FILE, REPORT_FILE, REPORT_PAGE_FILE, STATUS_FILE,
                          CLEAN_TEXT_FILE, PAGES_FOLDER.rstrip("/"), MEMBERS_FOLDER})
#: longest relative folder path kept as it is; deeper member paths are folded into one component
_MAX_PATH_BYTES = 1000
_MAX_COMPONENT_BYTES = 200


def safe_component(name: str) -> str:
    """One folder or file name from any name: NFC, no separators, none of the characters the API
    refuses in a file name (``unsafe_name_character``: controls, bidi and other format characters,
    line separators, private use), never '.' or '..', at most 200 bytes (so a suffix such as
    ".report.json" or " (2)" still fits)."""
    text = "".join("_" if c in "/\\" or unsafe_name_character(c) else c
                   for c in unicodedata.normalize("NFC", name_text(name)))
    text = text.strip() or "unnamed"
    if set(text) == {"."}:
        text = text.replace(".", "_")
    return capped_name(text, _MAX_COMPONENT_BYTES)


class OutputLayout:
    """Unique, safe output locations: one folder per document, whatever its name.

    Inputs are placed by name, archive members by their path inside the archive (under the
    archive's ``members/``). Names that collide once made safe (``08_dup.txt`` and
    ``..\\08_dup.txt``, two members differing in a control character, names differing only in case,
    which some file systems fold) get " (2)", " (3)"... in placement order; a member path component
    named like a result file (``x.txt/report.json``) gets a trailing "_", so a member folder never
    lands on another document's files.
    """

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def place(self, result: FileResult, parent: str = "") -> None:
        """Set ``result.folder`` and its members' (recursively)."""
        if parent:
            parts = [safe_component(p) for p in name_text(result.name).split("/") if p not in ("", ".", "..")]
            parts = [p + "_" if p.casefold() in RESULT_NAMES else p for p in parts] or ["unnamed"]
        else:
            parts = [safe_component(result.name)]
        result.folder = self._unique(parent, parts)
        for member in result.members:
            self.place(member, f"{result.folder}/{MEMBERS_FOLDER}")

    def stem(self, name: str) -> str:
        """A unique flat file stem (``--flat``: DIR/<stem>.txt, .status, .report.json)."""
        return self._unique("", [safe_component(name)])

    def _unique(self, parent: str, parts: list[str]) -> str:
        path = "/".join([parent, *parts] if parent else parts)
        if len(path.encode("utf-8")) > _MAX_PATH_BYTES:
            digest = hashlib.sha1(path.encode("utf-8")).hexdigest()[:10]
            parts = [capped_name(f"{digest}~{parts[-1]}", _MAX_COMPONENT_BYTES)]
            path = "/".join([parent, *parts] if parent else parts)
        head, _, leaf = path.rpartition("/")
        candidate, number = path, 1
        while candidate.casefold() in self._taken:
            number += 1
            stem, dot, suffix = leaf.rpartition(".")
            renamed = f"{stem} ({number}).{suffix}" if dot and stem else f"{leaf} ({number})"
            candidate = f"{head}/{renamed}" if head else renamed
        self._taken.add(candidate.casefold())
        return candidate


def place_results(results: Sequence[FileResult]) -> None:
    """Give every result (and member) its own output folder, in input order."""
    layout = OutputLayout()
    for result in results:
        layout.place(result)


class ResultWriter:
    """Writes each input's results the moment it is done, in the place its name and its position
    among the inputs give it: the top-level folders (or --flat stems) are reserved in input order
    up front, so an input finishing early cannot take a later one's place, and a killed run keeps
    what finished before it.

    A write that fails (a full disk, a quota, a failing device, a permission taken away) costs that
    document, never the run: nothing of it is left half-written (see :func:`write_folder`), and it
    ends ``failed`` saying why, with a ``status.json`` (or ``.status``) when even that fits."""

    def __init__(self, out_dir: Path, names: Sequence[str], flat: bool) -> None:
        self.out_dir, self.flat = out_dir, flat
        self._layout = OutputLayout()
        self._places = [self._layout.stem(name) for name in names]
        self.written: list[FileResult] = []  # in the order they finished: what a stopped run says it kept
        out_dir.mkdir(parents=True, exist_ok=True)

    def write(self, index: int, result: FileResult) -> FileResult:
        """Write ``result`` out; return it, or what stands for it when it could not be written."""
        written = self._write(index, result)
        self.written.append(written)
        return written

    def _write(self, index: int, result: FileResult) -> FileResult:
        result.folder = self._places[index]
        try:
            if self.flat:
                write_flat(result, self.out_dir)
            else:
                for member in result.members:
                    self._layout.place(member, f"{result.folder}/{MEMBERS_FOLDER}")
                write_folder(result, self.out_dir)
            return result
        except OSError as exc:
            reason = write_failure(self.out_dir, exc)
            unwritten = FileResult(name=result.name, status=DocumentStatus.FAILED, reason=reason,
                                   detected_type=result.detected_type, pages=result.pages, seconds=result.seconds,
                                   engines=result.engines, folder=result.folder, doc_id=result.doc_id, unwritten=True)
        with contextlib.suppress(OSError):  # what a full disk may still take: a few bytes saying why
            if self.flat:
                write_flat(unwritten, self.out_dir)
            else:
                write_folder(unwritten, self.out_dir)
        return unwritten


def write_failure(out_dir: Path, exc: OSError) -> str:
    """'cannot write its results to DIR: no space left on device': the folder, the system's reason."""
    return f"cannot write its results to {out_dir}: {system_reason(exc)}"


def system_reason(exc: OSError) -> str:
    """The system's reason as a clause ('No space left on device for ... MB' -> 'no space left on
    device for ... MB'): only its first letter lowered."""
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def write_folder(result: FileResult, out_dir: Path) -> Path:
    """DIR/<folder>/{text.txt,document.md,report.json,...} and members under <folder>/members/<path>/.
    ``result.folder`` comes from ``place_results``; a result not placed is placed on its own.

    Complete or absent: the folder is written as ``.papersift-tmp-<pid>-<random>`` beside its place
    (the same file system) and renamed into it when every file is there, each folder's report.json
    last; a folder there from an earlier run is replaced. A failed write removes what it wrote and
    raises (a run killed meanwhile leaves the temporary folder, which the next run removes)."""
    if not result.folder:
        OutputLayout().place(result)
    target = out_dir / result.folder
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = make_output_folder(target.parent, "tmp")
    try:
        _fill_folder(result, staging, result.folder)
        (staging / output_marker("tmp")).unlink()
        _rename_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _fill_folder(result: FileResult, staging: Path, root: str) -> None:
    """``result``'s files (report.json last) and its members' folders, in ``staging``, which stands
    for ``root`` (the document's place under the output folder)."""
    folder = staging if result.folder == root else staging / result.folder.removeprefix(root + "/")
    folder.mkdir(parents=True, exist_ok=True)
    for file_name in result.files:
        if file_name != REPORT_FILE:  # written last, below
            write_file(folder / file_name, result.files[file_name])
    for member in result.members:
        _fill_folder(member, staging, root)
    if result.members and REPORT_FILE in result.files:
        write_file(folder / REPORT_PAGE_FILE, _archive_page(result).encode("utf-8"))
    if REPORT_FILE in result.files:
        write_file(folder / REPORT_FILE, result.files[REPORT_FILE])
    if not result.files:
        status = {"status": result.status, "reason": result.reason}
        write_file(folder / STATUS_FILE, (json.dumps(status, indent=1) + "\n").encode("utf-8"))


def write_file(path: Path, data: bytes, exclusive: bool = False) -> None:
    """All of ``data`` or an OSError (a short write is retried by the buffered file, then fails);
    ``exclusive``: a new file, never one that is there."""
    with open(path, "xb" if exclusive else "wb") as file:
        file.write(data)


def _rename_into_place(staging: Path, target: Path) -> None:
    """``staging`` becomes ``target``; an earlier run's ``target`` is moved aside first and removed
    after, so the place holds the old folder or the new one, never a mix."""
    try:
        os.rename(staging, target)  # target absent (or an empty folder)
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise
    aside = make_output_folder(target.parent, "tmp")  # marked: a run killed now leaves it to the next
    os.rename(target, aside / "previous")
    os.rename(staging, target)
    shutil.rmtree(aside, ignore_errors=True)


def _archive_page(result: FileResult) -> str:
    """An archive's report.html with its member links pointing into this folder layout
    (members/<path inside the archive>/report.html) instead of the bucket's results/<doc_id>/."""
    report = ExtractionReport.from_dict(json.loads(result.files[REPORT_FILE]))
    prefix = result.folder + "/"
    hrefs = {member.doc_id: quote(member.folder.removeprefix(prefix)) + "/" + REPORT_PAGE_FILE
             for member in result.members if member.doc_id and member.folder.startswith(prefix)}
    return render_report_page(report, member_hrefs=hrefs)


def write_flat(result: FileResult, out_dir: Path) -> None:
    """DIR/<name>.txt + DIR/<name>.status (+ .report.json): the layout the corpus scorer reads.
    An archive's text.txt already holds its members' text, each under a tag line. ``result.folder``
    (``OutputLayout.stem``) is the unique safe stem; unplaced, the name made safe. Each file is
    written to a temporary name and renamed into place, the report last; a failed write removes
    what it wrote and raises."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = result.folder or safe_component(result.name)
    files = [(f"{stem}.txt", result.text.encode("utf-8")),
             (f"{stem}.status", (SCORE_STATUS.get(result.status, "error") + "\n").encode("utf-8"))]
    if REPORT_FILE in result.files:
        files.append((f"{stem}.{REPORT_FILE}", result.files[REPORT_FILE]))
    else:  # an earlier run's report must not stand beside this run's text
        (out_dir / f"{stem}.{REPORT_FILE}").unlink(missing_ok=True)
    placed: list[Path] = []
    try:
        for name, data in files:
            replace_file(out_dir / name, data)
            placed.append(out_dir / name)
    except BaseException:
        for path in placed:  # no .txt from this run beside no .status, nor the reverse
            path.unlink(missing_ok=True)
        raise


def replace_file(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` whole, or what it held before: written to a temporary name in its
    folder (``.papersift-tmp-<pid>-<random>``) and renamed over it."""
    temporary = path.parent / output_name("tmp")
    try:
        write_file(temporary, data, exclusive=True)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def print_summary(results: Iterable[FileResult], stream: TextIO, wall_seconds: float) -> None:
    rows = [("file", "type", "pages", "status", "engines", "seconds")]
    results = list(results)
    for r in results:
        engines = ", ".join(f"{k}:{v}" for k, v in sorted(r.engines.items())) or "-"
        status = r.status + (f" (+{len(r.members)} members)" if r.members else "")
        rows.append((shown_name(r.name), r.detected_type or "-", str(r.pages), status, engines, f"{r.seconds:.1f}"))
    widths = [min(48, max(len(row[i]) for row in rows)) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        cells = [cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "…" for i, cell in enumerate(row)]
        stream.write("  ".join(c.rjust(widths[i]) if i in (2, 5) else c.ljust(widths[i])
                               for i, c in enumerate(cells)).rstrip() + "\n")
        if index == 0:
            stream.write("  ".join("-" * w for w in widths) + "\n")
    trusted = sum(r.status in TRUSTED_DOCUMENT_STATUSES for r in results)
    review = sum(r.status in ("needs_review", "corrupt_unrecoverable") for r in results)
    limited = sum(r.status == DocumentStatus.LIMIT_EXCEEDED for r in results)
    broken = sum(r.broken for r in results)
    other = len(results) - trusted - review - limited - broken
    unwritten = [r for r in results if r.unwritten]
    stream.write(
        f"{len(results)} file(s), {sum(r.pages for r in results)} page(s): {trusted} trusted, {review} need review, "
        f"{limited} over a limit, {other} not extracted (empty/encrypted/unsupported/failed), {broken} broken; "
        f"{wall_seconds:.1f}s\n"
    )
    if unwritten:
        stream.write(f"{len(unwritten)} of them failed as their results could not be written: {unwritten[0].reason}\n")
    stream.write(cost_line(results) + "\n")


def cost_line(results: Sequence[FileResult]) -> str:
    """Both totals of the cost ledgers: what the run is estimated to cost on AWS, and what sending
    every page to Textract would have cost."""
    usd = sum(float((r.cost.get("usd") or {}).get("total", 0.0)) for r in results)
    all_textract = sum(float(r.cost.get("usd_all_textract", 0.0)) for r in results)
    textract_pages = sum(sum((r.cost.get("textract_pages") or {}).values()) for r in results)
    return (f"estimated cost on AWS: ${usd:.4f} (Textract pages: {textract_pages}); "
            f"every page to Textract: ${all_textract:.4f}")
