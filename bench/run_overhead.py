"""`papersift run` (the AWS pipeline on an embedded moto) against `papersift extract` (the core
steps in one process), side by side on the same inputs: wall time, CPU time and peak RSS, and
whether every file, page or member is reported in the output (issue 11, "Scale").

    .venv/bin/python bench/run_overhead.py                # the corpus (OCR on and off), the 2,000-member zip
    .venv/bin/python bench/run_overhead.py --big          # + the 10,000-page PDF and the 20,000-member zip
    .venv/bin/python bench/run_overhead.py --only zip-2000 --commands run --tree /tmp/snapshot

Inputs (the big ones built once, cached under bench/.cache/, the same bytes on every machine):

- ``corpus``: ../shared/corpus/files (79 files), ``--flat`` (score.py's layout), OCR as configured
  (local-first: Tesseract reads the scanned pages); ``corpus-ocr-off``: the same with ``--ocr off``,
  which separates the pipeline's overhead from OCR;
- ``zip-2000``: bench/archive_memory.py's archive (2,000 txt/PDF/docx members; built by bench/common.py);
- ``pdf-10000`` (``--big``): bench/pdf_throughput.py's synthetic PDF (bench/common.py), 10,000 pages of ~2.5 KB
  of prose; run with ``max_pages = 10000`` (the default stops at 5,000) so every page is read;
- ``zip-20000`` (``--big``): the same generator as zip-2000 with 20,000 members; run with
  ``max_archive_members = 20000`` (the default lists the members past 10,000 as skipped_limit).

Each command runs in a child process. Wall is the child's; CPU is user + system of the child and
every process under it: the child's own ``os.wait4`` usage counts its reaped descendants (forked
workers, tesseract), and this process makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``) so
descendants the child leaves behind (the fork server `papersift run` starts for its workers, with
every worker it forked) are reaped here and counted too. Peak RSS is the child's own ``ru_maxrss``
from ``os.wait4`` (its largest resident set, or that of a reaped descendant if larger); the
largest RSS of the descendants reaped here is shown beside it. The load average (1 min) at the
start and end of each command is shown: the machine is shared, so compare CPU seconds first.

``--tree DIR`` runs a source snapshot instead of the checkout (``git archive COMMIT | tar -x -C DIR``):
its packages go first on PYTHONPATH, so a before/after pair runs the same inputs on the same venv.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / ".cache"
CORPUS = REPO.parent / "shared" / "corpus" / "files"
PYTHON = REPO / ".venv" / "bin" / "python"
PAPERSIFT = REPO / ".venv" / "bin" / "papersift"
#: statuses that mean "this page or member was not extracted"
NOT_EXTRACTED = frozenset({"failed", "missing", "timeout"})

sys.path.insert(0, str(REPO / "bench"))
from common import become_subreaper, build_archive, run_measured, synthetic_pdf  # noqa: E402


@dataclass(frozen=True)
class Case:
    name: str
    unit: str  # "files", "pages" or "members"
    expected: int
    args: tuple[str, ...] = ()
    settings: str = ""  # TOML text for --config
    group: str = "default"  # "default", "big" (--big) or "extra" (only by --only)

    def inputs(self) -> list[str]:
        if self.name.startswith("corpus"):
            return [str(CORPUS)]
        if self.name.startswith("zip-"):
            return [str(build_archive(int(self.name.removeprefix("zip-"))))]
        if self.name.startswith("pdf-"):
            return [str(synthetic_pdf(int(self.name.removeprefix("pdf-"))))]
        raise ValueError(self.name)


CASES = (
    Case("corpus", "files", 79, ("--flat",)),
    Case("corpus-ocr-off", "files", 79, ("--flat", "--ocr", "off")),
    Case("zip-2000", "members", 2000),
    Case("pdf-10000", "pages", 10000, settings="max_pages = 10000\n", group="big"),
    Case("zip-20000", "members", 20000, settings="max_archive_members = 20000\n", group="big"),
    # quick iterations while profiling
    Case("zip-200", "members", 200, group="extra"),
    Case("pdf-1000", "pages", 1000, group="extra"),
)


@dataclass
class Measured:
    case: Case
    command: str
    exit_code: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    peak_rss_mb: float = 0.0
    descendants_rss_mb: float = 0.0
    load_start: float = 0.0
    load_end: float = 0.0
    reported: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    note: str = ""


# -- running a command -----------------------------------------------------------------------


def command_line(tree: Path | None) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    if tree is None:
        return [str(PAPERSIFT)], env
    # the snapshot's packages before the checkout's editable install; functions/ as papersift_functions
    shim = tree / ".bench-path"
    shim.mkdir(exist_ok=True)
    link = shim / "papersift_functions"
    if not link.exists():
        link.symlink_to(tree / "functions")
    data = tree / "layers" / "papersift" / "python" / "papersift" / "data"
    if not data.exists():  # the compiled word lists are built, not committed
        data.symlink_to(REPO / "layers" / "papersift" / "python" / "papersift" / "data")
    entry = tree / ".bench-papersift"  # a file, as the installed script is: fork-server workers import it
    entry.write_text("import sys\nfrom papersift_cli.main import main\nif __name__ == '__main__':\n"
                     "    sys.exit(main())\n")
    paths = [tree / "layers" / "papersift" / "python", tree / "cli", tree, shim]
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
    return [str(PYTHON), str(entry)], env


def measure(case: Case, command: str, timeout: float, tree: Path | None) -> Measured:
    result = Measured(case, command)
    with tempfile.TemporaryDirectory(prefix="papersift-bench-") as tmp:
        out = Path(tmp) / "out"
        argv, env = command_line(tree)
        argv += [command, *case.inputs(), "--out", str(out), "--quiet", *case.args]
        if case.settings:
            config = Path(tmp) / "settings.toml"
            config.write_text(case.settings)
            argv += ["--config", str(config)]
        if command == "run":
            argv += ["--timeout", str(timeout)]
        result.load_start = os.getloadavg()[0]
        run = run_measured(argv, cwd=REPO, env=env)
        output = run.output
        result.load_end = os.getloadavg()[0]
        result.exit_code, result.wall, result.cpu = run.exit_code, run.wall, run.cpu
        result.peak_rss_mb, result.descendants_rss_mb = run.peak_rss_mb, run.orphans_rss_mb
        result.reported, result.statuses = count_reported(case, out, Path(case.inputs()[0]).name)
    if result.exit_code != 0 or result.reported < case.expected:
        tail = output.decode("utf-8", errors="replace").strip().splitlines()[-4:]
        result.note = " / ".join(line.strip() for line in tail)[:300]
    return result


# -- what the output reports -------------------------------------------------------------------


def count_reported(case: Case, out: Path, name: str) -> tuple[int, Counter[str]]:
    """Files, pages or members the output reports as extracted (not failed/missing/timeout), and
    the statuses they have."""
    if case.unit == "files":
        statuses = Counter(p.read_text().strip() for p in out.glob("*.status"))
        return sum(n for s, n in statuses.items() if s != "timeout"), statuses
    report_path = out / name / "report.json"
    if not report_path.exists():
        return 0, Counter({"no report.json": 1})
    report = json.loads(report_path.read_text())
    entries = report.get("members" if case.unit == "members" else "pages", [])
    statuses = Counter(str(e.get("status")) for e in entries)
    return sum(n for s, n in statuses.items() if s not in NOT_EXTRACTED), statuses


# -- the table ---------------------------------------------------------------------------------


def machine(argv: list[str], tree: Path | None) -> list[str]:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    source = tree or REPO
    commit = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %cs %s"], capture_output=True,
                            text=True, check=False).stdout.strip()
    command = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.executable, REPO), "bench/run_overhead.py", *argv])
    return [
        f"- command: `{command}`",
        f"- machine: {platform.node()}, {model}, nproc {len(os.sched_getaffinity(0))}",
        f"- python {platform.python_version()}; source: {source}"
        + ("" if tree else f" (checkout at {commit}, plus any uncommitted changes)"),
    ]


def row(m: Measured) -> str:
    statuses = ", ".join(f"{s} {n}" for s, n in sorted(m.statuses.items())) or "-"
    return (f"| {m.case.name} | papersift {m.command} | {m.exit_code} | {m.wall:.1f} | {m.cpu:.1f} | "
            f"{m.peak_rss_mb:.0f} | {m.descendants_rss_mb:.0f} | {m.reported} of {m.case.expected} {m.case.unit} "
            f"| {statuses} | {m.load_start:.1f} / {m.load_end:.1f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", action="store_true", help="also the 10,000-page PDF and the 20,000-member zip")
    parser.add_argument("--only", default="", help="comma-separated case names: " + ", ".join(c.name for c in CASES))
    parser.add_argument("--commands", default="extract,run", help="extract,run (in that order by default)")
    parser.add_argument("--timeout", type=float, default=7200.0, help="passed to `papersift run --timeout`")
    parser.add_argument("--tree", type=Path, default=None, help="a source snapshot to run instead of the checkout")
    args = parser.parse_args(argv)

    wanted = {n for n in args.only.split(",") if n}
    if wanted:
        cases = [c for c in CASES if c.name in wanted]
    else:
        cases = [c for c in CASES if c.group == "default" or (args.big and c.group == "big")]
    commands = [c for c in args.commands.split(",") if c]
    subreaper = become_subreaper()
    print("# papersift run against papersift extract\n")
    print("\n".join(machine(sys.argv[1:], args.tree.resolve() if args.tree else None)))
    if not subreaper:
        print("- (not a subreaper here: CPU leaves out descendants the child did not reap)")
    print("\n| input | command | exit | wall s | CPU s | peak RSS MB | descendants' peak MB | reported "
          "| statuses | load 1 min start / end |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|---|", flush=True)
    measured: list[Measured] = []
    for case in cases:
        for command in commands:  # each row as soon as it is measured: some take long
            print(f"  {case.name}: papersift {command} ...", file=sys.stderr, flush=True)
            m = measure(case, command, args.timeout, args.tree.resolve() if args.tree else None)
            measured.append(m)
            print(row(m), flush=True)
    print("\n| input | run / extract wall | run / extract CPU |")
    print("|---|---:|---:|")
    for case in cases:
        pair = {m.command: m for m in measured if m.case is case}
        if "run" in pair and "extract" in pair and pair["extract"].wall and pair["extract"].cpu:
            print(f"| {case.name} | {pair['run'].wall / pair['extract'].wall:.2f} "
                  f"| {pair['run'].cpu / pair['extract'].cpu:.2f} |")
    notes = [m for m in measured if m.note]
    for m in notes:
        print(f"\n- {m.case.name}, papersift {m.command}: exit {m.exit_code}, {m.reported} of {m.case.expected} "
              f"{m.case.unit} reported; its last lines: `{m.note}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
