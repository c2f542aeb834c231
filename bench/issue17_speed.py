"""Issue 17's speed targets, side by side in one run: ``papersift extract --ocr off`` (this tree
and a git revision) against GoblinTools, whole process, by CPU and wall; and what a page that
takes a second opinion (pdfminer, pdftotext) costs beyond its first reading.

    .venv/bin/python bench/issue17_speed.py whole [--base REV] [--rounds 5]
    .venv/bin/python bench/issue17_speed.py second-opinion [--base REV] [--rounds 5]
    .venv/bin/python bench/issue17_speed.py breakdown [--rounds 5]
    .venv/bin/python bench/issue17_speed.py floor [--rounds 9]
    .venv/bin/python bench/issue17_speed.py cold-start [--base REV] [--rounds 11]

``whole``: the issue's five files (a 117-page LaTeX math book, a 14-page LaTeX paper, a 14-page
federal register issue, a one-page textbook excerpt, a one-page court transcript) are not in
../shared, so five stand-ins of the same kinds are read (``STAND_INS``): the book is the corpus's
LaTeX papers (pdfTeX and dvipdfm, Type 1 CMR/CMMI/CMSY/CMEX/MSBM: the fonts of TeX's own maths) joined
page by page with pypdf into one 117-page file (``bench/.cache/latex-book-v2-117p.pdf``), the others are
corpus files as they are. Workloads: the five in one command, each of the five in a command of
its own (summed), and bench-pdfs (618 pages) in one command. Every command runs once a round, in
turn (a burst of load from elsewhere hits them alike); CPU seconds are user + system of the
command and every descendant (a subreaper collects the orphans), from ``RUSAGE_CHILDREN``. Each
revision runs from a ``git archive`` of it with the built word lists copied in, as
``python -m papersift_cli.main`` with its own PYTHONPATH.

``second-opinion``: in process, every page of the trust corpus (MANIFEST-trust.tsv) and the
corpus's native, broken-font and mixed PDFs through ``pdf.extract_pages`` (OCR off); a page takes a
second opinion when its attempts name pdfminer or pdftotext. Its extra cost is the page's seconds
less its first (pdfium) attempt's, on a second reading of the document in the same process (the
first reading pays each engine's import once: shown apart). Each tree (this one, ``--base``'s
checkout) reads in a worker process of its own, the two asked for a reading in turn.

``breakdown``: per stand-in, in one warm process, raw pypdfium2 against papersift's pages and the
structure assemble marks over them. ``floor``: where one command on a one-page PDF spends its CPU.
``cold-start``: the extract Lambda's init + first page, beyond the interpreter, without the
process's teardown (a Lambda's process is not torn down after its init).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CACHE, REPO, become_subreaper, reap_orphans
from common import checkout as checkout_tree

SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "files"
BENCH_PDFS_DIR = SHARED / "bench-pdfs" / "files"
#: the corpus's LaTeX papers, joined page by page (cycled) into the stand-in for the math book
BOOK_SOURCES = ("us__multi-column.pdf", "pl__issue-982-example.pdf", "pd__naacl06-shinyama.pdf",
                "sf__pdflatex-4-pages.pdf", "us__multi-column-2p.pdf")
BOOK_PAGES = 117
#: kind in the issue -> stand-in
STAND_INS = {
    "117-page LaTeX math book": CACHE / "latex-book-v2-117p.pdf",
    "14-page LaTeX paper": CORPUS / "us__multi-column.pdf",  # 13 pages, ACL, CMEX/CMSY
    "14-page federal register issue": BENCH_PDFS_DIR / "js__issue-316-example.pdf",  # 17 pages, journal
    "one-page textbook excerpt": CORPUS / "pj__issue16063.pdf",  # Acrobat, one page
    "one-page court transcript": CORPUS / "pj__bug2013793.pdf",  # Word, one page
}
BENCH_PDFS = BENCH_PDFS_DIR


def latex_book() -> Path:
    target = STAND_INS["117-page LaTeX math book"]
    if target.exists():
        return target
    import pypdf

    writer = pypdf.PdfWriter()
    readers = [pypdf.PdfReader(CORPUS / name) if (CORPUS / name).exists() else
               pypdf.PdfReader(BENCH_PDFS / name) for name in BOOK_SOURCES]
    added = 0
    while added < BOOK_PAGES:
        for reader in readers:
            for index in range(len(reader.pages)):
                if added == BOOK_PAGES:
                    break
                writer.add_page(reader.pages[index])
                added += 1
    writer.add_metadata({"/Producer": "papersift bench (pypdf join of corpus LaTeX papers)"})
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as fh:
        writer.write(fh)
    return target


def checkout(revision: str, into: Path) -> Path:
    return compiled(checkout_tree(revision, into))


def compiled(root: Path) -> Path:
    """``root``'s modules byte-compiled, as an install has them (PYTHONDONTWRITEBYTECODE, set on this
    machine, would leave every run compiling them from source: ~60 ms a process)."""
    parts = [str(root / part) for part in ("layers", "cli", "infra", "functions")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *parts], check=True)
    return root


def papersift_command(root: Path) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(root / p) for p in ("layers/papersift/python", "cli", "."))}
    return [sys.executable, "-m", "papersift_cli.main", "extract", "--quiet", "--ocr", "off", "--out", "{out}"], env


def goblin_python() -> str:
    out = subprocess.run(["bash", str(REPO / "bench" / "setup_goblin.sh")], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def run_once(command: list[str], env: dict[str, str] | None) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([a.replace("{out}", out) for a in command], env=env, check=True, capture_output=True)
        wall = time.perf_counter() - started
        reap_orphans(seconds=10.0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def whole(args: argparse.Namespace) -> None:
    latex_book()
    become_subreaper()
    five = [str(p) for p in STAND_INS.values()]
    bench = sorted(str(p) for p in BENCH_PDFS.glob("*.pdf"))
    workloads = {"five stand-ins, one command": [five], "five stand-ins, one command each": [[p] for p in five],
                 "bench-pdfs (10 files, 618 pages), one command": [bench]}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {f"papersift {args.base}": checkout(args.base, Path(tmp) / "base")} if args.base else {}
        trees["papersift (this tree)"] = compiled(REPO)
        runners: dict[str, tuple[list[str], dict[str, str] | None]] = {
            name: papersift_command(root) for name, root in trees.items()}
        if not args.no_goblin:
            runners["GoblinTools"] = ([goblin_python(), str(REPO / "bench" / "goblin_driver.py"), "--whole-process"],
                                      None)
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.rounds):
            for workload, groups in workloads.items():
                for name, (command, env) in runners.items():
                    wall = cpu = 0.0
                    for group in groups:
                        w, c = run_once([*command, *group], env)
                        wall, cpu = wall + w, cpu + c
                    samples.setdefault((workload, name), []).append((wall, cpu))
    print(f"load average at the end {os.getloadavg()}; {args.rounds} rounds")
    print("\n| workload | command | best wall s | median wall s | best CPU s | median CPU s |")
    print("|---|---|---:|---:|---:|---:|")
    for (workload, name), runs in samples.items():
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        print(f"| {workload} | {name} | {min(walls):.2f} | {statistics.median(walls):.2f} | {min(cpus):.2f} | "
              f"{statistics.median(cpus):.2f} |")
    if not args.no_goblin:
        print()
        for workload in workloads:
            goblin = samples[(workload, "GoblinTools")]
            for name in trees:
                ours = samples[(workload, name)]
                print(f"- {workload}, {name}: {min(g[1] for g in goblin) / min(o[1] for o in ours):.1f}x GoblinTools "
                      f"by CPU, {min(g[0] for g in goblin) / min(o[0] for o in ours):.1f}x by wall (best of each)")


def trust_documents() -> list[tuple[str, bytes]]:
    docs: list[tuple[str, bytes]] = []
    root = SHARED / "corpus"
    for manifest in ("MANIFEST-trust.tsv", "MANIFEST.tsv"):
        with (root / manifest).open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                if row["category"] in ("native_pdf", "broken_font_pdf", "mixed_pdf") and not row["password"]:
                    docs.append((row["out_name"], (root / "files" / row["out_name"]).read_bytes()))
    return docs


#: one reading of the second-opinion pages: (file, page) -> (extra seconds, the engines after pdfium)
Reading = dict[tuple[str, int], tuple[float, str]]


def read_second_opinions() -> Reading:
    """One reading of every trust document through ``pdf.extract_pages`` (OCR off): the pages that
    took a second opinion, each with its cost beyond its first (pdfium) attempt."""
    import logging

    from papersift.formats import pdf
    from papersift.settings import Settings

    logging.disable(logging.CRITICAL)
    settings = Settings(ocr_mode="off")
    found: Reading = {}
    for name, data in trust_documents():
        with contextlib.suppress(Exception):
            count = pdf.page_count(data, settings)
            for page in pdf.extract_pages(data, settings, 1, count):
                attempts = page.report.attempts
                asked = [a.engine for a in attempts[1:] if a.engine in ("pdfminer", "pdftotext")]
                if not asked or attempts[0].engine != "pdfium":
                    continue
                found[(name, page.report.number)] = (
                    page.report.seconds - attempts[0].seconds,
                    " + ".join(f"{a.engine} {1000 * a.seconds:.0f}" for a in attempts[1:]))
    return found


def serve_second_opinions() -> None:
    """The worker of ``second-opinion``: the papersift it imports (its PYTHONPATH's) on the first
    line, then one reading (a JSON line) for each line read from stdin."""
    import json

    import papersift

    print(json.dumps({"papersift": str(Path(papersift.__file__).resolve().parent)}), flush=True)
    for _ in sys.stdin:
        reading = read_second_opinions()
        print(json.dumps([[name, number, extra, engines] for (name, number), (extra, engines) in reading.items()]),
              flush=True)


def second_opinion(args: argparse.Namespace) -> None:
    """Each tree (this one, and ``--base``'s checkout) in a worker process of its own, kept for the
    run; a round asks each worker for a reading in turn, so a burst of load hits both sides alike."""
    import json

    if args.serve:
        serve_second_opinions()
        return
    with tempfile.TemporaryDirectory() as tmp:
        trees = {args.base: checkout(args.base, Path(tmp) / "base")} if args.base else {}
        trees["this tree"] = compiled(REPO)
        workers: dict[str, subprocess.Popen[str]] = {}
        for name, root in trees.items():
            package = root / "layers" / "papersift" / "python"
            env = {**os.environ, "PYTHONPATH": str(package)}
            worker = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "second-opinion", "--serve"],
                                      env=env, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert worker.stdout is not None
            imported = Path(json.loads(worker.stdout.readline())["papersift"])
            if imported != (package / "papersift").resolve():
                raise SystemExit(f"{name}: the worker imported {imported}, not {package / 'papersift'}")
            workers[name] = worker
        first: dict[str, Reading] = {}
        warm: dict[str, dict[tuple[str, int], list[float]]] = {name: {} for name in trees}
        engines: dict[str, dict[tuple[str, int], str]] = {name: {} for name in trees}
        try:
            for round_ in range(args.rounds + 1):
                for name, worker in workers.items():
                    assert worker.stdin is not None and worker.stdout is not None
                    worker.stdin.write("read\n")
                    worker.stdin.flush()
                    reading = {(file, number): (extra, asked)
                               for file, number, extra, asked in json.loads(worker.stdout.readline())}
                    for key, (extra, asked) in reading.items():
                        engines[name][key] = asked
                        if round_:
                            warm[name].setdefault(key, []).append(extra)
                    if not round_:
                        first[name] = reading
        finally:
            for worker in workers.values():
                assert worker.stdin is not None
                worker.stdin.close()
                worker.wait()
    print(f"load average at the end {os.getloadavg()}; best of {args.rounds} warm readings (a first reading, "
          "paying each engine's import, apart); the trees' readings in turn, each tree in a process of its own")
    for name in trees:
        print(f"\n{name}:\n")
        print_second_opinions(first[name], warm[name], engines[name])
    if len(trees) > 1:
        base, ours = list(trees)
        print(f"\n| file | page | {base}: warm best ms | this tree: warm best ms |\n|---|---:|---:|---:|")
        for key in sorted(warm[base].keys() | warm[ours].keys()):
            shown = [f"{1000 * min(warm[side][key]):.1f}" if key in warm[side] else "-" for side in (base, ours)]
            print(f"| {key[0]} | {key[1]} | {shown[0]} | {shown[1]} |")


def print_second_opinions(first: Reading, seconds: dict[tuple[str, int], list[float]],
                          engines: dict[tuple[str, int], str]) -> None:
    print("| file | page | engines after pdfium (ms, last reading) | extra ms, first reading | extra ms, warm best | "
          "warm median |"
          "\n|---|---:|---|---:|---:|---:|")
    for key, runs in sorted(seconds.items()):
        print(f"| {key[0]} | {key[1]} | {engines[key]} | {1000 * first.get(key, (0.0, ''))[0]:.1f} | "
              f"{1000 * min(runs):.1f} | {1000 * statistics.median(runs):.1f} |")
    if seconds:
        best = [min(r) for r in seconds.values()]
        met = sum(b <= 0.020 for b in best)
        print(f"\n- {len(best)} pages took a second opinion; warm extra cost: median "
              f"{1000 * statistics.median(best):.1f} ms, max {1000 * max(best):.1f} ms (target <= 20 ms: "
              f"{'met' if met == len(best) else 'NOT met'}: within it on {met} of {len(best)})")


def breakdown(args: argparse.Namespace) -> None:
    """Per stand-in, in one warm process, CPU seconds (best of ``rounds``): raw pypdfium2 reading
    every page, papersift's pages (verdict, fonts, ladder), and the structure marked over them
    (running heads, headings, paragraphs, hyphen repair: what assemble adds before writing)."""
    import logging

    import pypdfium2 as pdfium

    from papersift.formats import pdf
    from papersift.settings import Settings
    from papersift.steps.assemble import mark_structure

    logging.disable(logging.CRITICAL)
    latex_book()
    settings = Settings(ocr_mode="off")

    def raw(data: bytes) -> None:
        document = pdfium.PdfDocument(data)
        for page in document:
            page.get_textpage().get_text_range()

    def ours(data: bytes) -> list[Any]:
        count = pdf.page_count(data, settings)
        pages: list[Any] = []
        for first in range(1, count + 1, settings.page_batch_size):
            pages += pdf.extract_pages(data, settings, first, min(first + settings.page_batch_size - 1, count))
        return pages

    def cpu(work: Callable[..., object], *args: Any) -> float:
        started = time.process_time()
        work(*args)
        return time.process_time() - started

    print("\n| stand-in | file | pages | raw pypdfium2 ms | papersift pages ms | structure ms | "
          "papersift ms a page | pages on the ladder |\n|---|---|---:|---:|---:|---:|---:|---:|")
    for kind, path in STAND_INS.items():
        data = path.read_bytes()
        ours(data)  # warm: the engines' imports, the word lists
        best = [min(cpu(raw, data) for _ in range(args.rounds)), min(cpu(ours, data) for _ in range(args.rounds))]
        pages = ours(data)
        best.append(min(cpu(mark_structure, pages, []) for _ in range(args.rounds)))
        climbed = sum(len(page.report.attempts) > 1 for page in pages)
        print(f"| {kind} | {path.name} | {len(pages)} | {1000 * best[0]:.0f} | {1000 * best[1]:.0f} | "
              f"{1000 * best[2]:.0f} | {1000 * best[1] / len(pages):.2f} | {climbed} |")


FLOOR_PROBE = """
import resource, sys, time
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime
marks = [("interpreter and site", cpu())]
import papersift_cli.main as cli
marks.append(("the command's imports", cpu()))
from papersift.steps.extract import preload_for_workers
preload_for_workers()
marks.append(("loaded before the workers fork (the PDF reader, word lists, page records)", cpu()))
from papersift.report_page import compiled_template
compiled_template()
marks.append(("report.html's template compiled", cpu()))
cli.main(["extract", "--quiet", "--ocr", "off", "--out", sys.argv[1], sys.argv[2]])
marks.append(("the work in the command (plan, assemble, writing; their imports)", cpu()))
print(repr([(name, own, kids) for name, (own, kids) in marks]))
"""


def floor(args: argparse.Namespace) -> None:
    """Where one ``papersift extract --ocr off`` of a one-page PDF spends its CPU seconds, from
    marks inside the command's process (best of ``rounds`` fresh interpreters, each part its best)."""
    compiled(REPO)
    sample = STAND_INS["one-page court transcript"]
    env = papersift_command(REPO)[1]
    parts: dict[str, list[float]] = {}
    totals: list[float] = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as out:
            shown = subprocess.run([sys.executable, "-c", FLOOR_PROBE, str(Path(out) / "o"), str(sample)], env=env,
                                   capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        marks = ast.literal_eval(shown)
        before = 0.0
        for name, own, _kids in marks:
            parts.setdefault(name, []).append(own - before)
            before = own
        parts.setdefault("the workers (forked: plan, extract)", []).append(marks[-1][2])
        totals.append(marks[-1][1] + marks[-1][2])
    print(f"\n{sample.name}, best of {args.rounds}; load average {os.getloadavg()[0]:.1f}\n")
    print("| part | CPU ms (best) | median |\n|---|---:|---:|")
    for name, values in parts.items():
        print(f"| {name} | {1000 * min(values):.0f} | {1000 * statistics.median(values):.0f} |")
    print(f"| whole command | {1000 * min(totals):.0f} | {1000 * statistics.median(totals):.0f} |")


#: the extract Lambda's init and a first page (bench/pdf_throughput.py's COLD_START_LAMBDA), ended by
#: os._exit: a Lambda's process is never torn down after its init, and freeing the ~95,000 objects
#: of botocore, pydantic and the core at exit costs 60-90 ms that the round tables counted as init
COLD_START = """
import os, sys
task_root = os.path.join(os.getcwd(), "functions", "extract")
sys.path.insert(0, task_root)
os.environ.update(AWS_DEFAULT_REGION="us-east-1", LAMBDA_TASK_ROOT=task_root, AWS_LAMBDA_FUNCTION_NAME="extract",
                  PYDANTIC_DISABLE_PLUGINS="__all__", AWS_LAMBDA_FUNCTION_MEMORY_SIZE="1024")
import app
from papersift.formats import pdf
from papersift.settings import Settings
pdf.extract_pages(open(sys.argv[1], "rb").read(), Settings(ocr_mode="off"), 1, 1)
sys.stdout.flush()
os._exit(0)
"""


def cold_start(args: argparse.Namespace) -> None:
    """The extract Lambda's init + first page beyond the interpreter's own start (``python -c`` of
    ``os._exit(0)``), wall and CPU, this tree and ``--base`` interleaved."""
    sample = BENCH_PDFS / "mo__freeculture.pdf"  # bench/pdf_throughput.py's sample: bench-pdfs' first file
    with tempfile.TemporaryDirectory() as tmp:
        trees = {args.base: checkout(args.base, Path(tmp) / "base")} if args.base else {}
        trees["this tree"] = compiled(REPO)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in [*trees, "interpreter"]}
        for _ in range(args.rounds):
            for name, root in trees.items():
                env = {**os.environ, "PYTHONPATH": str(root / "layers" / "papersift" / "python")}
                runs[name].append(timed([sys.executable, "-c", COLD_START, str(sample)], env, root))
            runs["interpreter"].append(timed([sys.executable, "-c", "import os; os._exit(0)"], None, REPO))
    alone = runs.pop("interpreter")
    wall0, cpu0 = min(r[0] for r in alone), min(r[1] for r in alone)
    print(f"\nload average {os.getloadavg()[0]:.1f}; interpreter alone: wall {wall0:.3f} s, CPU {cpu0:.3f} s; "
          f"best and median of {args.rounds}\n")
    print("| tree | wall s beyond the interpreter (best / median) | CPU s beyond it (best / median) |\n|---|---:|---:|")
    for name, samples in runs.items():
        walls, cpus = [r[0] - wall0 for r in samples], [r[1] - cpu0 for r in samples]
        print(f"| {name} | {min(walls):.3f} / {statistics.median(walls):.3f} | {min(cpus):.3f} / "
              f"{statistics.median(cpus):.3f} |")


def timed(command: list[str], env: dict[str, str] | None, cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    whole_parser = commands.add_parser("whole")
    whole_parser.add_argument("--base", default="", help="a git revision to run beside this tree")
    whole_parser.add_argument("--rounds", type=int, default=5)
    whole_parser.add_argument("--no-goblin", action="store_true")
    opinion = commands.add_parser("second-opinion")
    opinion.add_argument("--base", default="", help="a git revision to run beside this tree")
    opinion.add_argument("--rounds", type=int, default=5)
    opinion.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    commands.add_parser("breakdown").add_argument("--rounds", type=int, default=5)
    commands.add_parser("floor").add_argument("--rounds", type=int, default=9)
    cold = commands.add_parser("cold-start")
    cold.add_argument("--base", default="", help="a git revision to run beside this tree")
    cold.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    {"whole": whole, "second-opinion": second_opinion, "breakdown": breakdown, "floor": floor,
     "cold-start": cold_start}[args.command](args)


if __name__ == "__main__":
    main()
