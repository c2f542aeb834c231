"""Wall time and peak memory of one big archive through `papersift run` and `papersift extract`.

Builds a deterministic zip of small txt, PDF and docx members (2,000 by default, several MB;
cached under bench/.cache/) and runs each command on it in a subprocess, reading the child's
peak RSS from ``os.wait4`` (its own resource usage, not the largest of all children so far).

    .venv/bin/python bench/archive_memory.py [--members 2000] [--timeout 3600] [--only run|extract]
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
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PAPERSIFT = REPO / ".venv" / "bin" / "papersift"
#: member statuses that mean "this member was not extracted"
FAILED_MEMBER = frozenset({"failed", "missing", "timeout"})

sys.path.insert(0, str(REPO / "bench"))
from common import build_archive  # noqa: E402


@dataclass
class Run:
    command: str
    exit_code: int
    seconds: float
    peak_rss_mb: float
    members: Counter[str]
    failures: Counter[str]
    archive_status: str
    summary: str


# -- the archive --------------------------------------------------------------------------


def describe_archive(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    kinds = Counter(Path(i.filename).suffix for i in infos)
    unpacked = sum(i.file_size for i in infos)
    return (
        f"{path.name}: {len(infos)} members ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}), "
        f"{path.stat().st_size / 1e6:.1f} MB zipped, {unpacked / 1e6:.1f} MB unpacked"
    )


# -- measuring ----------------------------------------------------------------------------


def measure(command: str, archive: Path, timeout: float) -> Run:
    with tempfile.TemporaryDirectory(prefix="papersift-bench-") as out:
        argv = [str(PAPERSIFT), command, str(archive), "--out", out, "--quiet"]
        if command == "run":
            argv += ["--timeout", str(timeout)]
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=REPO)
        assert proc.stdout is not None
        output = proc.stdout.read()  # the child cannot block on a full pipe while we wait
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        members, failures, archive_status = read_members(Path(out) / archive.name)
    text = output.decode("utf-8", errors="replace").strip()
    return Run(command, proc.returncode, seconds, usage.ru_maxrss / 1024, members, failures, archive_status, text)


def read_members(result_dir: Path) -> tuple[Counter[str], Counter[str], str]:
    """Member statuses, the reasons of failed members, and the archive's status, from the
    archive's report.json (the CLI's folder layout)."""
    report_path = result_dir / "report.json"
    if not report_path.exists():
        status_path = result_dir / "status.json"
        status = json.loads(status_path.read_text())["status"] if status_path.exists() else "no output"
        return Counter(), Counter(), str(status)
    report: dict[str, Any] = json.loads(report_path.read_text())
    members = report.get("members", [])
    statuses = Counter(str(m.get("status")) for m in members)
    failures = Counter(str(m.get("reason"))[:120] for m in members if m.get("status") in FAILED_MEMBER)
    return statuses, failures, str(report.get("status"))


def machine(argv: list[str]) -> list[str]:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    commit = subprocess.run(
        ["git", "-C", str(REPO), "log", "-1", "--format=%h %cs %s"], capture_output=True, text=True, check=False
    ).stdout.strip()
    command = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.executable, REPO), *argv])
    return [
        f"- command: `{command}`",
        f"- machine: {platform.node()}, {model}, nproc {len(os.sched_getaffinity(0))}, "
        f"load average {os.getloadavg()[0]:.2f} at start",
        f"- python {platform.python_version()}, papersift at {commit}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--timeout", type=float, default=3600.0, help="passed to `papersift run --timeout`")
    parser.add_argument("--only", choices=("run", "extract"), default=None)
    args = parser.parse_args(argv)

    archive = build_archive(args.members)
    header = ["# Archive wall time and memory", "", *machine(sys.argv), f"- input: {describe_archive(archive)}"]
    print("\n".join(header))
    commands = [args.only] if args.only else ["extract", "run"]
    print("\n| command | exit | wall s | members processed | member statuses | archive status | peak RSS MB |")
    print("|---|---:|---:|---:|---|---|---:|", flush=True)
    runs: list[Run] = []
    for command in commands:  # each row as soon as it is measured: `run` can take long
        print(f"  papersift {command} ...", file=sys.stderr, flush=True)
        r = measure(command, archive, args.timeout)
        runs.append(r)
        statuses = ", ".join(f"{s} {n}" for s, n in sorted(r.members.items())) or "-"
        processed = sum(n for s, n in r.members.items() if s not in FAILED_MEMBER)
        print(
            f"| papersift {r.command} | {r.exit_code} | {r.seconds:.1f} | {processed} of {args.members} | {statuses} "
            f"| {r.archive_status} | {r.peak_rss_mb:.0f} |",
            flush=True,
        )
    for r in runs:
        processed = sum(n for s, n in r.members.items() if s not in FAILED_MEMBER)
        if r.exit_code != 0 or processed < args.members:
            print(f"\n**`papersift {r.command}` did not process every member ({processed} of {args.members}).**")
            for reason, count in r.failures.most_common(3):
                print(f"- {count} members: {reason}")
            print("\nIts summary:\n```\n" + "\n".join(r.summary.splitlines()[-6:]) + "\n```")
    print(f"\nload average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
