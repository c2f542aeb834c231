"""What `--flat` output says about each input, for comparing `papersift run` with `papersift extract`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FlatResult:
    """One input's outcome, timings aside: what a user of either command would compare."""

    score_status: str
    status: str
    reason: str
    page_count: int
    text: str
    members: tuple[tuple[str, str, int], ...]  # (path inside the archive, status, pages)


def read_flat(out: Path) -> dict[str, FlatResult]:
    results: dict[str, FlatResult] = {}
    for status_file in sorted(out.glob("*.status")):
        name = status_file.name.removesuffix(".status")
        report_file = out / f"{name}.report.json"
        report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.exists() else {}
        results[name] = FlatResult(
            score_status=status_file.read_text().strip(),
            status=str(report.get("status", "")),
            reason=str(report.get("reason", "")),
            page_count=int(report.get("page_count", 0)),
            text=(out / f"{name}.txt").read_text(encoding="utf-8"),
            members=tuple(sorted((m["path"], m["status"], m["page_count"]) for m in report.get("members", []))),
        )
    return results


def differences(run: dict[str, FlatResult], extract: dict[str, FlatResult]) -> list[str]:
    """One line per input whose outcome differs between the two commands, naming the fields."""
    lines = []
    for name in sorted(run.keys() | extract.keys()):
        a, b = run.get(name), extract.get(name)
        if a is None or b is None:
            lines.append(f"{name}: only in {'extract' if a is None else 'run'}")
        elif a != b:
            fields = [f for f in FlatResult.__dataclass_fields__ if getattr(a, f) != getattr(b, f)]
            shown = {f: (getattr(a, f), getattr(b, f)) for f in fields if f != "text"}
            lines.append(f"{name}: {', '.join(fields)} differ (run, extract): {shown}")
    return lines
