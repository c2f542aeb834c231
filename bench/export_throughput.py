"""`papersift export` throughput (records/s) to JSONL and Parquet over bench-pdfs' results, and the
peak memory it takes as the results folder grows (it streams: the peak should not grow).

Run from the repo root:

    .venv/bin/python bench/export_throughput.py [--bench-pdfs ../shared/bench-pdfs] [--copies 100] [--repeat 3]

bench-pdfs' PDFs are extracted once (`papersift extract --ocr off`) into a temporary folder;
their results are then linked ``--copies`` times side by side (hard links: the export reads
every copy as a document of its own), so the export runs over tens of thousands of pages, not
618, and the command's start-up does not hide its rate. Each format gets one warm-up, then
``--repeat`` timed runs of the real command; the best run's pages/s is reported (noise only ever
adds time), with the median, the pages per CPU-second of the best run (what a contended machine
hides least), and the command's peak RSS at a quarter of the copies and at all of them (both past one row group).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAPERSIFT = Path(sys.executable).with_name("papersift")
FORMATS = ("jsonl", "parquet")


def papersift(*args: str) -> tuple[float, float, int, str]:
    """Run the command; its wall seconds, its CPU seconds (user + system), its peak RSS (KB) and
    its stdout."""
    started = time.perf_counter()
    process = subprocess.Popen([str(PAPERSIFT), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    out = process.stdout.read() if process.stdout else ""
    err = process.stderr.read() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"papersift {' '.join(args)} failed: {err}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out


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
    args = parser.parse_args()
    files = args.bench_pdfs / "files"
    if not files.is_dir():
        raise SystemExit(f"no bench-pdfs at {args.bench_pdfs}")
    with tempfile.TemporaryDirectory(prefix="export-bench-") as tmp:
        work = Path(tmp)
        seconds, _, _, _ = papersift("extract", str(files), "--out", str(work / "once"), "--ocr", "off", "--quiet")
        print(f"extract of {files} (--ocr off): {seconds:.1f}s")
        small, large = work / "small", work / "large"
        replicate(work / "once", small, max(1, args.copies // 4))
        replicate(work / "once", large, args.copies)
        print(f"{'format':8} {'pages':>8} {'best s':>7} {'pages/s':>9} {'median pages/s':>15} "
              f"{'pages/CPU-s':>12} {'out MB':>7} {'RSS MB (1/4)':>14} {'RSS MB (all)':>13}")
        for export_format in FORMATS:
            out = work / f"pages.{export_format}"
            command = ("export", str(large), "--format", export_format, "--out", str(out))
            papersift(*command)  # warm-up: the page cache, the imports' .pyc
            runs = [papersift(*command) for _ in range(args.repeat)]
            pages = records_in(runs[0][3])
            best = min(seconds for seconds, _, _, _ in runs)
            median = statistics.median(seconds for seconds, _, _, _ in runs)
            cpu = min(cpu for _, cpu, _, _ in runs)
            _, _, small_rss, _ = papersift("export", str(small), "--format", export_format,
                                           "--out", str(work / f"small.{export_format}"))
            large_rss = max(rss for _, _, rss, _ in runs)
            print(f"{export_format:8} {pages:>8} {best:>7.2f} {pages / best:>9,.0f} {pages / median:>15,.0f} "
                  f"{pages / cpu:>12,.0f} {out.stat().st_size / 1e6:>7.1f} {small_rss / 1024:>14.0f} "
                  f"{large_rss / 1024:>13.0f}")
        print(f"load average while measured: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
