"""Memory and time of one long native PDF against its page count (issue 20: ``max_pages`` is
100,000, so a 100,000-page PDF must fit): `papersift extract` and `papersift run` on
bench/common.py's synthetic PDF (~2.5 KB of prose a page) at several lengths, OCR off, one command
at a time.

    .venv/bin/python bench/long_pdf.py                          # 2,500 / 5,000 / 10,000 / 20,000 pages
    .venv/bin/python bench/long_pdf.py --pages 5000,40000 --commands extract

For each command: wall, CPU (the child and every process under it), the peak RSS of the child
itself and of the largest processes under it (sampled from /proc, VmHWM), and whether every page is
in report.json. Then the slope between the smallest and the largest length: KB of peak RSS and ms of
wall and CPU per page, and the time per page at each length (flat if time is linear). The last
line extrapolates each command's largest process to 100,000 pages from that slope.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAPERSIFT = REPO / ".venv" / "bin" / "papersift"
sys.path.insert(0, str(REPO / "bench"))
from common import become_subreaper, run_measured, synthetic_pdf  # noqa: E402


@dataclass
class Row:
    pages: int
    command: str
    exit_code: int
    wall: float
    cpu: float
    main_mb: float
    largest_mb: float
    others: str
    reported: int
    status: str

    @property
    def peak_mb(self) -> float:
        return max(self.main_mb, self.largest_mb)


def measure(pages: int, command: str, timeout: float) -> Row:
    pdf = synthetic_pdf(pages)
    with tempfile.TemporaryDirectory(prefix="papersift-bench-") as tmp:
        out = Path(tmp) / "out"
        argv = [str(PAPERSIFT), command, str(pdf), "--out", str(out), "--quiet", "--ocr", "off"]
        if command == "run":
            argv += ["--timeout", str(timeout)]
        run = run_measured(argv, cwd=REPO, env=dict(os.environ))
        report_path = out / pdf.name / "report.json"
        reported, status = 0, "no report.json"
        if report_path.exists():
            report = json.loads(report_path.read_text())
            reported = sum(1 for p in report.get("pages", []) if p.get("status") not in {"failed", "missing"})
            status = str(report.get("status"))
    others = "; ".join(f"{name[:40]} {mb:.0f}" for mb, name in run.processes[:3])
    return Row(pages, command, run.exit_code, run.wall, run.cpu, run.main_rss_mb, run.largest_mb, others,
               reported, status)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", default="2500,5000,10000,20000")
    parser.add_argument("--commands", default="extract,run")
    parser.add_argument("--timeout", type=float, default=7200.0)
    args = parser.parse_args(argv)
    lengths = [int(n) for n in args.pages.split(",") if n]
    commands = [c for c in args.commands.split(",") if c]
    become_subreaper()
    print("| pages | command | exit | wall s | CPU s | child's peak MB | largest under it MB "
          "| processes under it (VmHWM MB) | pages reported | status |")
    print("|---:|---|---:|---:|---:|---:|---:|---|---:|---|", flush=True)
    rows: list[Row] = []
    for pages in lengths:
        for command in commands:
            r = measure(pages, command, args.timeout)
            rows.append(r)
            print(f"| {r.pages} | papersift {r.command} | {r.exit_code} | {r.wall:.1f} | {r.cpu:.1f} | "
                  f"{r.main_mb:.0f} | {r.largest_mb:.0f} | {r.others} | {r.reported} | {r.status} |", flush=True)
    print("\n| command | pages | KB of peak RSS a page | wall ms a page (slope) | CPU ms a page (slope) "
          "| CPU ms a page at each length | largest process at 100,000 pages (extrapolated) |")
    print("|---|---|---:|---:|---:|---|---:|")
    for command in commands:
        mine = sorted((r for r in rows if r.command == command), key=lambda r: r.pages)
        if len(mine) < 2:
            continue
        a, b = mine[0], mine[-1]
        span = b.pages - a.pages
        kb = (b.peak_mb - a.peak_mb) * 1024 / span
        wall = (b.wall - a.wall) * 1000 / span
        cpu = (b.cpu - a.cpu) * 1000 / span
        each = ", ".join(f"{r.pages}: {r.cpu * 1000 / r.pages:.2f}" for r in mine)
        at_100k = b.peak_mb + kb * (100_000 - b.pages) / 1024
        print(f"| papersift {command} | {a.pages}-{b.pages} | {kb:.2f} | {wall:.2f} | {cpu:.2f} | {each} "
              f"| {at_100k:.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
