"""What the CLI writes: one folder per input (or flat files for the corpus scorer) and a summary.

Both `papersift run` and `papersift extract` produce :class:`FileResult` objects, so the two
commands write the same layout and print the same table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO
from urllib.parse import quote

from papersift.report import TRUSTED_DOCUMENT_STATUSES, ExtractionReport
from papersift.report_page import REPORT_PAGE_NAME, render_report_page

#: document status -> status understood by the corpus scorer (score.py)
SCORE_STATUS = {
    "clean": "ok",
    "partially_recovered": "ok",
    "needs_review": "ok",
    "corrupt_unrecoverable": "ok",
    "empty": "ok",
    "encrypted": "encrypted",
    "unsupported": "error",
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

    @classmethod
    def from_files(cls, name: str, files: dict[str, bytes], seconds: float, status: str = "", reason: str = "",
                   broken: bool = False) -> FileResult:
        """Fill type, pages and engines from report.json when there is one."""
        report: dict[str, Any] = {}
        if "report.json" in files:
            try:
                report = json.loads(files["report.json"])
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
        )

    @property
    def text(self) -> str:
        return self.files.get("text.txt", b"").decode("utf-8", errors="replace")

def unique_names(paths: Sequence[Path]) -> list[str]:
    """Output names by input file name; a repeated name gets a stable -2, -3... by input order."""
    taken: set[str] = set()
    names: list[str] = []
    for path in paths:
        name = path.name or "unnamed"
        candidate, number = name, 1
        while candidate in taken:
            number += 1
            candidate = f"{Path(name).stem}-{number}{Path(name).suffix}"
        taken.add(candidate)
        names.append(candidate)
    return names


def _safe_relative(name: str) -> Path:
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".", "..", "/")]
    return Path(*parts) if parts else Path("member")


def write_folder(result: FileResult, out_dir: Path) -> Path:
    """DIR/<name>/{text.txt,document.md,report.json,...} and members under members/<path>/."""
    target = out_dir / _safe_relative(result.name)
    target.mkdir(parents=True, exist_ok=True)
    for file_name, data in result.files.items():
        (target / file_name).write_bytes(data)
    if result.members and "report.json" in result.files:
        (target / REPORT_PAGE_NAME).write_text(_archive_page(result.files["report.json"]), encoding="utf-8")
    if not result.files:
        status = {"status": result.status, "reason": result.reason}
        (target / "status.json").write_text(json.dumps(status, indent=1) + "\n", encoding="utf-8")
    for member in result.members:
        write_folder(member, target / "members")
    return target


def _archive_page(report_json: bytes) -> str:
    """An archive's report.html with its member links pointing into this folder layout
    (members/<path inside the archive>/report.html) instead of the bucket's results/<doc_id>/."""
    report = ExtractionReport.from_dict(json.loads(report_json))
    hrefs = {m.doc_id: f"members/{quote(_safe_relative(m.path).as_posix())}/{REPORT_PAGE_NAME}"
             for m in report.members if m.doc_id}
    return render_report_page(report, member_hrefs=hrefs)


def write_flat(result: FileResult, out_dir: Path) -> None:
    """DIR/<name>.txt + DIR/<name>.status (+ .report.json): the layout the corpus scorer reads.
    An archive's text.txt already holds its members' text, each under a tag line."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{result.name}.txt").write_text(result.text, encoding="utf-8")
    (out_dir / f"{result.name}.status").write_text(SCORE_STATUS.get(result.status, "error") + "\n", encoding="utf-8")
    if "report.json" in result.files:
        (out_dir / f"{result.name}.report.json").write_bytes(result.files["report.json"])


def print_summary(results: Iterable[FileResult], stream: TextIO, wall_seconds: float) -> None:
    rows = [("file", "type", "pages", "status", "engines", "seconds")]
    results = list(results)
    for r in results:
        engines = ", ".join(f"{k}:{v}" for k, v in sorted(r.engines.items())) or "-"
        status = r.status + (f" (+{len(r.members)} members)" if r.members else "")
        rows.append((r.name, r.detected_type or "-", str(r.pages), status, engines, f"{r.seconds:.1f}"))
    widths = [min(48, max(len(row[i]) for row in rows)) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        cells = [cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "…" for i, cell in enumerate(row)]
        stream.write("  ".join(c.rjust(widths[i]) if i in (2, 5) else c.ljust(widths[i])
                               for i, c in enumerate(cells)).rstrip() + "\n")
        if index == 0:
            stream.write("  ".join("-" * w for w in widths) + "\n")
    trusted = sum(r.status in TRUSTED_DOCUMENT_STATUSES for r in results)
    review = sum(r.status in ("needs_review", "corrupt_unrecoverable") for r in results)
    broken = sum(r.broken for r in results)
    other = len(results) - trusted - review - broken
    stream.write(
        f"{len(results)} file(s), {sum(r.pages for r in results)} page(s): {trusted} trusted, {review} need review, "
        f"{other} not extracted (empty/encrypted/unsupported/failed), {broken} broken; {wall_seconds:.1f}s\n"
    )
    stream.write(cost_line(results) + "\n")


def cost_line(results: Sequence[FileResult]) -> str:
    """Both totals of the cost ledgers: what the run is estimated to cost on AWS, and what sending
    every page to Textract would have cost."""
    usd = sum(float((r.cost.get("usd") or {}).get("total", 0.0)) for r in results)
    all_textract = sum(float(r.cost.get("usd_all_textract", 0.0)) for r in results)
    textract_pages = sum(sum((r.cost.get("textract_pages") or {}).values()) for r in results)
    return (f"estimated cost on AWS: ${usd:.4f} (Textract pages: {textract_pages}); "
            f"every page to Textract: ${all_textract:.4f}")
