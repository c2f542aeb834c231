"""`papersift export` throughput (records/s) to JSONL and Parquet over bench-pdfs' results, and the
peak memory it takes as the results folder grows (it streams: the peak should not grow).

Run from the repo root:

    .venv/bin/python bench/export_throughput.py [--bench-pdfs ../shared/bench-pdfs] [--copies 100] [--repeat 3]
        [--baseline DIR]

bench-pdfs' PDFs are extracted once (`papersift extract --ocr off`) into a temporary folder;
their results are then linked ``--copies`` times side by side (hard links: the export reads
every copy as a document of its own), so the export runs over tens of thousands of pages, not
618, and the command's start-up does not hide its rate. Each format gets one warm-up, then
``--repeat`` timed runs of the real command; the best run's pages/s is reported (noise only ever
adds time), with the median, the pages per CPU-second of the best run (what a contended machine
hides least), and the command's peak RSS at a quarter of the copies and at all of them (both past one row group):
its largest process's, and the peak of its processes' proportional set size summed (the export reads
documents in worker processes; a page they share with the parent counts once).

``--baseline DIR``: another checkout of the code (``git archive <commit> | tar -x -C DIR``) measured
side by side, its runs and this tree's taking turns, so both see the same machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAPERSIFT = Path(sys.executable).with_name("papersift")
FORMATS = ("jsonl", "parquet")


def code_env(tree: Path | None) -> dict[str, str] | None:
    """The environment that runs ``tree``'s code (None: this one's)."""
    if tree is None:
        return None
    paths = [tree / "layers" / "papersift" / "python", tree / "cli", tree]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, paths))}


def tree_pss_kb(root: int) -> int:
    """The proportional set size of ``root`` and its descendants, summed (KB; 0 once gone)."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    family, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    total = 0
    for pid in family:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)
    return total


def papersift(*args: str, env: dict[str, str] | None = None) -> tuple[float, float, int, str, int]:
    """Run the command; its wall seconds, its CPU seconds (user + system, its workers' included),
    its largest process's peak RSS (KB), its stdout, and the peak PSS of all its processes (KB)."""
    started = time.perf_counter()
    process = subprocess.Popen([str(PAPERSIFT), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], tree_pss_kb(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    out = process.stdout.read() if process.stdout else ""
    err = process.stderr.read() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"papersift {' '.join(args)} failed: {err}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out, peak[0]


def replicate(once: Path, target: Path, copies: int) -> None:
    """``copies`` copies of the results folder under ``target``, linked, not copied."""
    for index in range(copies):
        shutil.copytree(once, target / f"copy-{index:04d}", copy_function=os.link)


def records_in(stdout: str) -> int:
    return int(stdout.split(" record(s)", 1)[0].rsplit(None, 1)[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-pdfs", type=Path, default=REPO.parent / "shared" / "bench-pdfs")
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout of the code, measured side by side")
    args = parser.parse_args()
    files = args.bench_pdfs / "files"
    if not files.is_dir():
        raise SystemExit(f"no bench-pdfs at {args.bench_pdfs}")
    with tempfile.TemporaryDirectory(prefix="export-bench-") as tmp:
        work = Path(tmp)
        seconds, *_ = papersift("extract", str(files), "--out", str(work / "once"), "--ocr", "off", "--quiet")
        print(f"extract of {files} (--ocr off): {seconds:.1f}s")
        small, large = work / "small", work / "large"
        replicate(work / "once", small, max(1, args.copies // 4))
        replicate(work / "once", large, args.copies)
        trees: dict[str, Path | None] = {"this tree": None}
        if args.baseline is not None:
            trees = {"baseline": args.baseline, **trees}
        print(f"{'code':10} {'format':8} {'pages':>8} {'best s':>7} {'pages/s':>9} {'median pages/s':>15} "
              f"{'pages/CPU-s':>12} {'out MB':>7} {'RSS MB (1/4)':>13} {'RSS MB (all)':>13} {'PSS MB (all)':>13}")
        for export_format in FORMATS:
            out = work / f"pages.{export_format}"
            command = ("export", str(large), "--format", export_format, "--out", str(out))
            runs: dict[str, list[tuple[float, float, int, str, int]]] = {name: [] for name in trees}
            for tree in trees.values():
                papersift(*command, env=code_env(tree))  # warm-up: the page cache, the imports' .pyc
            for _ in range(args.repeat):  # the trees take turns: both see the same load
                for name, tree in trees.items():
                    runs[name].append(papersift(*command, env=code_env(tree)))
            for name, tree in trees.items():
                pages = records_in(runs[name][0][3])
                best = min(run[0] for run in runs[name])
                median = statistics.median(run[0] for run in runs[name])
                cpu = min(run[1] for run in runs[name])
                small_rss = papersift("export", str(small), "--format", export_format,
                                      "--out", str(work / f"small.{export_format}"), env=code_env(tree))[2]
                large_rss = max(run[2] for run in runs[name])
                large_pss = max(run[4] for run in runs[name])
                print(f"{name:10} {export_format:8} {pages:>8} {best:>7.2f} {pages / best:>9,.0f} "
                      f"{pages / median:>15,.0f} {pages / cpu:>12,.0f} {out.stat().st_size / 1e6:>7.1f} "
                      f"{small_rss / 1024:>13.0f} {large_rss / 1024:>13.0f} {large_pss / 1024:>13.0f}", flush=True)
        print(f"load average while measured: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
