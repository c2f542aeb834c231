"""PDF text-layer throughput (pages/s) of papersift against raw engines and GoblinTools, whole
process and in process, the cold start, the cost of a suspect page, and how well papersift's
page verdicts match the truth of the corpus and bench-pdfs, beside GoblinTools' verdicts.

Run from the repo root (re-runnable; the 500-page PDF and the GoblinTools venv are cached
under bench/):

    .venv/bin/python bench/pdf_throughput.py [--repeat 3] [--no-goblin] [--corpus DIR] [--bench-pdfs DIR]

Each engine gets one warm-up pass over a workload, then ``--repeat`` timed passes; pages/s uses
the best pass (noise from other processes only ever adds time) and the median is shown too.
papersift runs its real path: ``pdf.page_count`` then ``pdf.extract_pages`` in batches of
``page_batch_size`` (100), one document open per batch as in the extract Lambda, with
``ocr_mode="off"`` and every page's verdict.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import logging
import os
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "layers" / "papersift" / "python"))
sys.path.insert(0, str(REPO / "tests"))  # corpus_cases: the page truth of bench-pdfs, shared with its tests
sys.path.insert(0, str(REPO / "bench"))  # common: the inputs and the subreaper the bench scripts share

import pypdf  # noqa: E402
import pypdfium2 as pdfium  # noqa: E402
import pypdfium2.raw as pdfium_c  # noqa: E402
from common import become_subreaper, reap_orphans, synthetic_pdf  # noqa: E402
from corpus_cases import BENCH_BROKEN_PAGES, BENCH_PICTURE_PAGES  # noqa: E402

from papersift.content import PageContent  # noqa: E402
from papersift.errors import PapersiftError  # noqa: E402
from papersift.formats import pdf  # noqa: E402
from papersift.report import PageStatus  # noqa: E402
from papersift.settings import Settings  # noqa: E402

BENCH = REPO / "bench"
PDF_CATEGORIES = ("native_pdf", "broken_font_pdf", "mixed_pdf", "scanned_pdf", "encrypted_pdf")
POSITIVE = ("broken_font_pdf", "scanned_pdf")
NEGATIVE = ("native_pdf",)
#: statuses that say "do not trust this text layer as is"
FLAGGED = frozenset(s.value for s in PageStatus) - {PageStatus.CLEAN.value}
#: on a native page these are false alarms; "recovered" only costs ladder time
FALSE_ALARM = frozenset({PageStatus.NEEDS_OCR.value, PageStatus.CORRUPT_UNRECOVERABLE.value, PageStatus.FAILED.value})


@dataclass
class Doc:
    name: str
    path: Path
    category: str
    password: str  # verbatim from MANIFEST.tsv; "" means none
    expected: str
    data: bytes = field(repr=False, default=b"")
    pages: int = 0  # as pdfium counts them with the password; 0 when it cannot open


@dataclass
class Workload:
    name: str
    docs: list[Doc]

    @property
    def pages(self) -> int:
        return sum(d.pages for d in self.docs)


@dataclass
class Timing:
    engine: str
    times: list[float]
    failures: int
    note: str = ""


# -- workloads ----------------------------------------------------------------------------


def read_corpus(corpus: Path) -> list[Doc]:
    """PDF rows of MANIFEST.tsv; fields are never stripped (a password may be four spaces)."""
    docs: list[Doc] = []
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if row["category"] not in PDF_CATEGORIES:
                continue
            path = corpus / "files" / row["out_name"]
            doc = Doc(row["out_name"], path, row["category"], row["password"], row["expected"], path.read_bytes())
            doc.pages = pdfium_pages(doc)
            docs.append(doc)
    return docs


def read_bench_pdfs(directory: Path) -> list[Doc]:
    """The real native PDFs of ../shared/bench-pdfs (MANIFEST.tsv: file, pages, expected)."""
    docs: list[Doc] = []
    with (directory / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            path = directory / "files" / row["file"]
            doc = Doc(row["file"], path, "bench", "", row["expected"], path.read_bytes())
            doc.pages = pdfium_pages(doc)
            docs.append(doc)
    return docs


def bench_truth(doc: Doc, number: int) -> str:
    """'positive' (the layer needs OCR: broken, or the text is in a picture) or 'negative'."""
    broken = number in BENCH_BROKEN_PAGES.get(doc.name, ())
    return "positive" if broken or number in BENCH_PICTURE_PAGES.get(doc.name, ()) else "negative"


def synthetic_doc(pages: int) -> Doc:
    path = synthetic_pdf(pages)
    doc = Doc(path.name, path, "synthetic", "", "", path.read_bytes())
    doc.pages = pdfium_pages(doc)
    return doc


# -- engines ------------------------------------------------------------------------------


def open_pdfium(doc: Doc) -> pdfium.PdfDocument:
    """Open with the password as UTF-8, then as raw Latin-1 bytes (old RC4/AES-128 files)."""
    try:
        return pdfium.PdfDocument(doc.data, password=doc.password or None)
    except pdfium.PdfiumError:
        if not doc.password:
            raise
        raw_password = doc.password.encode("latin-1", errors="replace") + b"\x00"
        raw = pdfium_c.FPDF_LoadMemDocument64(doc.data, len(doc.data), raw_password)
        if not raw:
            raise
        return pdfium.PdfDocument(raw)


def pdfium_pages(doc: Doc) -> int:
    try:
        document = open_pdfium(doc)
    except pdfium.PdfiumError:
        return 0
    try:
        return len(document)
    finally:
        document.close()


def run_pypdfium2(doc: Doc) -> int:
    document = open_pdfium(doc)
    chars = 0
    try:
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            chars += len(textpage.get_text_range())
            textpage.close()
            page.close()
    finally:
        document.close()
    return chars


def run_pypdf(doc: Doc) -> int:
    reader = pypdf.PdfReader(io.BytesIO(doc.data))
    if reader.is_encrypted:
        ok = reader.decrypt(doc.password)
        if not ok and doc.password:
            ok = reader.decrypt(doc.password.encode("latin-1", errors="replace"))
        if not ok:
            raise ValueError("pypdf: wrong password")
    return sum(len(page.extract_text() or "") for page in reader.pages)


def run_pdftotext(doc: Doc) -> int:
    args: list[str | bytes] = ["pdftotext", "-q", "-enc", "UTF-8"]
    if doc.password:
        args += ["-upw", doc.password]
    result = subprocess.run([*args, str(doc.path), "-"], capture_output=True, check=False)
    if result.returncode != 0 and doc.password:
        latin = doc.password.encode("latin-1", errors="replace")
        result = subprocess.run(
            ["pdftotext", "-q", "-enc", "UTF-8", "-upw", latin, str(doc.path), "-"], capture_output=True, check=False
        )
    if result.returncode != 0:
        raise RuntimeError(f"pdftotext exit {result.returncode}")
    return len(result.stdout)


def papersift_settings(doc: Doc) -> Settings:
    return Settings(ocr_mode="off", passwords=(doc.password,) if doc.password else ())


def papersift_pages(doc: Doc) -> list[PageContent]:
    """Every page, the way the workflow runs: count, then batches of page_batch_size."""
    settings = papersift_settings(doc)
    count = pdf.page_count(doc.data, settings)
    out: list[PageContent] = []
    for first in range(1, count + 1, settings.page_batch_size):
        out += pdf.extract_pages(doc.data, settings, first, min(first + settings.page_batch_size - 1, count))
    return out


def run_papersift(doc: Doc) -> int:
    return sum(len(page.text) for page in papersift_pages(doc))


ENGINES: dict[str, Callable[[Doc], int]] = {
    "papersift": run_papersift,
    "pypdfium2 (raw)": run_pypdfium2,
    "pypdf": run_pypdf,
    "pdftotext (CLI)": run_pdftotext,
}


def time_engines(engines: dict[str, Callable[[Doc], int]], workload: Workload, repeat: int) -> list[Timing]:
    """One warm-up pass each, then ``repeat`` rounds that run every engine once in turn, so a
    burst of load from other processes hits all engines alike rather than one."""

    def one_pass(fn: Callable[[Doc], int]) -> tuple[float, int]:
        failures = 0
        started = time.perf_counter()
        for doc in workload.docs:
            try:
                fn(doc)
            except (Exception, PapersiftError):
                failures += 1
        return time.perf_counter() - started, failures

    timings = {name: Timing(name, [], 0) for name in engines}
    for fn in engines.values():
        one_pass(fn)  # warm-up: imports, pdfium init, page cache
    for _ in range(repeat):
        for name, fn in engines.items():
            seconds, timings[name].failures = one_pass(fn)
            timings[name].times.append(seconds)
    return list(timings.values())


def slowest_docs(workload: Workload, limit: int = 8) -> list[str]:
    """Where papersift's time goes on a mixed workload: per document, best of 3, against raw
    pdfium, with the engines the ladder used (a climb costs more than the verdict)."""
    rows = []
    for doc in workload.docs:
        best: dict[str, float] = {}
        for name, fn in (("papersift", run_papersift), ("pdfium", run_pypdfium2)):
            for _ in range(3):
                started = time.perf_counter()
                with contextlib.suppress(Exception):
                    fn(doc)
                best[name] = min(best.get(name, float("inf")), time.perf_counter() - started)
        engines: Counter[str] = Counter()
        try:
            settings = papersift_settings(doc)
            for page in pdf.extract_pages(doc.data, settings, 1, pdf.page_count(doc.data, settings)):
                engines.update(a.engine for a in page.report.attempts)
        except PapersiftError:
            pass
        rows.append((best["papersift"] - best["pdfium"], doc, best, engines))
    rows.sort(key=lambda row: row[0], reverse=True)
    lines = [
        "",
        f"Slowest documents for papersift on {workload.name} (best of 3 each):",
        "",
        "| file | pages | papersift ms | raw pdfium ms | engine attempts |",
        "|---|---:|---:|---:|---|",
    ]
    for _, doc, best, engines in rows[:limit]:
        attempts = ", ".join(f"{e} {n}" for e, n in engines.most_common()) or "-"
        lines.append(
            f"| {doc.name} | {doc.pages} | {best['papersift'] * 1000:.1f} | {best['pdfium'] * 1000:.1f} | {attempts} |"
        )
    return lines


def time_goblin(workload: Workload, repeat: int) -> Timing:
    python = goblin_python()
    request = json.dumps({"paths": [str(d.path) for d in workload.docs], "repeat": repeat})
    result = subprocess.run(
        [python, str(BENCH / "goblin_driver.py")], input=request, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"goblin driver failed: {result.stderr[-2000:]}")
    answer = json.loads(result.stdout)
    note = "no password support: encrypted PDFs read without one" if any(d.password for d in workload.docs) else ""
    GOBLIN_PAGES.update(answer["pages"])
    return Timing(f"GoblinTools {answer['version']} (OCR off)", answer["times"], answer["failures"], note)


#: path -> GoblinTools' page statuses (its ExtractionReport), filled as its timings run
GOBLIN_PAGES: dict[str, list[str]] = {}


def goblin_python() -> str:
    setup = BENCH / "setup_goblin.sh"
    return subprocess.run(["bash", str(setup)], capture_output=True, text=True, check=True).stdout.strip()


# -- detection quality --------------------------------------------------------------------

_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).translate(_FOLD).casefold()).strip()


def phrase_found(expected: str, text: str) -> bool:
    """The corpus scorer's rule: normalised substring; phrases without spaces ignore whitespace."""
    if not expected or expected.startswith("<"):
        return False
    e, t = _norm(expected), _norm(text)
    return e in t.replace(" ", "") if " " not in e else e in t


@dataclass
class PageTruth:
    doc: Doc
    number: int
    truth: str  # positive (needs OCR: broken layer, scan, picture of text), negative (clean), other
    status: str  # papersift's page status
    goblin: str | None  # GoblinTools' page status, where it ran


def page_truths(corpus: list[Doc], bench: list[Doc], pages: dict[str, list[PageContent]]) -> list[PageTruth]:
    rows = []
    for doc in corpus + bench:
        goblin = GOBLIN_PAGES.get(str(doc.path), [])
        for page in pages.get(doc.name, []):
            if doc.category == "bench":
                truth = bench_truth(doc, page.number)
            else:
                truth = "positive" if doc.category in POSITIVE else "negative" if doc.category in NEGATIVE else "other"
            theirs = goblin[page.number - 1] if page.number <= len(goblin) else None
            rows.append(PageTruth(doc, page.number, truth, str(page.report.status), theirs))
    return rows


def detection(corpus: list[Doc], bench: list[Doc]) -> list[str]:
    pages: dict[str, list[PageContent]] = {}
    errors: dict[str, str] = {}
    for doc in corpus + bench:
        try:
            pages[doc.name] = papersift_pages(doc)
        except PapersiftError as exc:
            errors[doc.name] = type(exc).__name__
    lines = ["", "## Detection quality (page status vs truth, ocr_mode=off; GoblinTools' own page report beside)", ""]
    lines += ["| file | truth | pages | papersift statuses | GoblinTools statuses | phrase found (papersift) |",
              "|---|---|---:|---|---|---|"]
    rows = page_truths(corpus, bench, pages)
    for doc in corpus + bench:
        mine = [r for r in rows if r.doc is doc]
        ours = ", ".join(f"{s} {n}" for s, n in sorted(Counter(r.status for r in mine).items())) or errors.get(doc.name)
        theirs = ", ".join(f"{s} {n}" for s, n in sorted(Counter(r.goblin or "-" for r in mine).items()))
        truth = ", ".join(f"{t} {n}" for t, n in sorted(Counter(r.truth for r in mine).items())) or doc.category
        found = phrase_found(doc.expected, "\n".join(p.text for p in pages.get(doc.name, [])))
        lines.append(f"| {doc.name} | {doc.category}: {truth} | {len(mine)} | {ours} | {theirs} | "
                     f"{'yes' if found else 'no'} |")

    def scores(status_of: Callable[[PageTruth], str | None], false_alarm: frozenset[str]) -> list[str]:
        judged = [r for r in rows if status_of(r) is not None and r.truth != "other"]
        tp = sum(r.truth == "positive" and status_of(r) != "clean" for r in judged)
        positives = sum(r.truth == "positive" for r in judged)
        fp = sum(r.truth == "negative" and status_of(r) in false_alarm for r in judged)
        negatives = sum(r.truth == "negative" for r in judged)
        precision = tp / (tp + fp) if tp + fp else float("nan")
        recall = tp / positives if positives else float("nan")
        return [f"{positives}", f"{negatives}", f"{tp}", f"{fp}", f"{precision:.3f}", f"{recall:.3f}"]

    ours = scores(lambda r: r.status, FALSE_ALARM)
    theirs = scores(lambda r: r.goblin, frozenset({"corrupt_unrecoverable"}))
    lines += [
        "",
        "Positive pages: corpus broken_font_pdf + scanned_pdf, bench-pdfs' htmldoc pages 2-22 and its two picture "
        "pages; negative: corpus native_pdf and every other bench-pdfs page. Flagged = any status but clean; a false "
        "alarm = needs_ocr / corrupt_unrecoverable / failed on a negative page (GoblinTools: corrupt_unrecoverable).",
        "",
        "| engine | positive pages | negative pages | flagged positives (TP) | false alarms (FP) | precision "
        "| recall |",
        "|---|---:|---:|---:|---:|---:|---:|",
        "| papersift | " + " | ".join(ours) + " |",
        "| GoblinTools | " + " | ".join(theirs) + " |" if GOBLIN_PAGES else "| GoblinTools | not run |",
    ]
    native = [r for r in rows if r.truth == "negative"]
    false_alarms = [r for r in native if r.status in FALSE_ALARM]
    broken = [r for r in rows if r.doc.name in BENCH_BROKEN_PAGES and r.truth == "positive"]
    lines += [
        "",
        f"- clean pages of bench-pdfs and corpus native_pdf flagged needs_ocr/corrupt_unrecoverable/failed: "
        f"{len(false_alarms)} of {len(native)} (target 0: {'met' if not false_alarms else 'NOT met'})"
        + "".join(f"; {r.doc.name} p{r.number} {r.status}" for r in false_alarms[:10]),
        f"- broken htmldoc pages flagged: {sum(r.status != 'clean' for r in broken)} of {len(broken)}, "
        f"of them 'recovered': {sum(r.status == 'recovered' for r in broken)} "
        f"(target all flagged, none recovered: "
        f"{'met' if broken and all(r.status not in ('clean', 'recovered') for r in broken) else 'NOT met'})",
    ]
    mixed = Counter(r.status for r in rows if r.doc.category == "mixed_pdf")
    encrypted = Counter(r.status for r in rows if r.doc.category == "encrypted_pdf")
    lines += [
        "- mixed_pdf (page truth unclear, not in P/R): " + ", ".join(f"{s} {n}" for s, n in sorted(mixed.items())),
        "- encrypted_pdf (with MANIFEST passwords): " + ", ".join(f"{s} {n}" for s, n in sorted(encrypted.items())),
    ]
    return lines


def suspect_page_cost(workload: Workload) -> list[str]:
    """What a page costs once the ladder does more than pdfium's one pass, against a clean page."""
    climbed: list[float] = []
    clean: list[float] = []
    for doc in workload.docs:
        with contextlib.suppress(PapersiftError):
            for page in papersift_pages(doc):
                (climbed if len(page.report.attempts) > 1 or page.report.status != "clean" else clean).append(
                    page.report.seconds)
    if not climbed:
        return [f"- {workload.name}: no suspect page"]
    return [f"- {workload.name}: {len(climbed)} suspect pages, {1000 * statistics.mean(climbed):.1f} ms a page "
            f"(max {1000 * max(climbed):.1f}); clean pages {1000 * statistics.mean(clean or [0.0]):.2f} ms a page"]


def whole_process(workload: Workload, repeat: int, goblin: bool) -> list[str]:
    """The same files through ``papersift extract`` as a command and through GoblinTools'
    extract_from_file in a fresh interpreter: start, imports and extraction, as a user runs them."""
    paths = [str(d.path) for d in workload.docs]
    commands = {"papersift extract": [str(REPO / ".venv" / "bin" / "papersift"), "extract", *paths, "--out", "{out}",
                                      "--quiet", "--ocr", "off"]}
    if goblin:
        commands["GoblinTools extract_from_file"] = [goblin_python(), str(BENCH / "goblin_driver.py"),
                                                     "--whole-process", *paths]
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    # `papersift extract` with several inputs reads them side by side: its workers are children of
    # a fork server that outlives the command; reparented here and reaped, their CPU counts too
    become_subreaper()
    for _ in range(repeat):
        for name, command in commands.items():
            with tempfile.TemporaryDirectory() as out:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run([a.replace("{out}", out) for a in command], check=True, capture_output=True)
                times[name].append(time.perf_counter() - started)
                reap_orphans(seconds=10.0)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    lines = ["", f"## Whole process on {workload.name}: {len(paths)} PDFs, {workload.pages} pages "
             f"(one process per run, best of {repeat}; CPU s = user + system, less sensitive to load)", "",
             "| command | best s | median s | CPU s (best) |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {min(t):.2f} | {statistics.median(t):.2f} | {min(cpu[name]):.2f} |"
              for name, t in times.items()]
    if goblin:
        ratio = min(times["GoblinTools extract_from_file"]) / min(times["papersift extract"])
        cpu_ratio = min(cpu["GoblinTools extract_from_file"]) / min(cpu["papersift extract"])
        lines += ["", f"- papersift extract vs GoblinTools, whole process: {ratio:.1f}x faster by wall time, "
                  f"{cpu_ratio:.1f}x by CPU time (target >= 15x: {'met' if ratio >= 15 else 'NOT met'})"]
    return lines


#: ended by os._exit: a cold start is over when the first page is read, and tearing the process down
#: (freeing botocore's, pydantic's and the core's objects: 60-90 ms in the Lambda probe) is not part of it
COLD_START_CORE = """
import os, sys, time
from papersift.formats import pdf
from papersift.settings import Settings
pdf.extract_pages(open(sys.argv[1], "rb").read(), Settings(ocr_mode="off"), 1, 1)
sys.stdout.flush()
os._exit(0)
"""
#: the extract handler's init (powertools, boto3, the step models, the core) in the environment the
#: Lambda runtime sets: with LAMBDA_TASK_ROOT the X-Ray SDK takes its Lambda path (no centralized
#: sampler, which made two X-Ray clients at import: ~0.13 s this bench counted before) and the
#: powertools Tracer is on (it patches botocore & co, as it does on AWS)
COLD_START_LAMBDA = """
import os, sys
task_root = os.path.join(os.getcwd(), "functions", "extract")
sys.path.insert(0, task_root)
os.environ.update(AWS_DEFAULT_REGION="us-east-1", LAMBDA_TASK_ROOT=task_root, AWS_LAMBDA_FUNCTION_NAME="extract",
                  PYDANTIC_DISABLE_PLUGINS="__all__",  # as the stack sets it (infra.deployment)
                  AWS_LAMBDA_FUNCTION_MEMORY_SIZE="1024")
import app
""" + COLD_START_CORE


def cold_start(sample: Path, repeat: int) -> list[str]:
    """Fresh interpreters: nothing, the core judging a first page, and the extract Lambda's
    init (its module import) followed by the same first page; best of ``repeat`` each."""
    python = str(REPO / ".venv" / "bin" / "python")
    runs = {"interpreter alone (python -c pass)": ["-c", "pass"],
            "import the core + judge a first page": ["-c", COLD_START_CORE, str(sample)],
            "extract Lambda init + judge a first page": ["-c", COLD_START_LAMBDA, str(sample)]}
    best: dict[str, float] = {}
    for _ in range(repeat):
        for name, args in runs.items():
            started = time.perf_counter()
            subprocess.run([python, *args], check=True, capture_output=True, cwd=REPO)
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - started)
    base = best["interpreter alone (python -c pass)"]
    lines = ["", f"## Cold start (fresh interpreter, first page of {sample.name}, best of {repeat})", "",
             "| run | best s | beyond the interpreter's start s |", "|---|---:|---:|"]
    lines += [f"| {name} | {t:.3f} | {t - base:.3f} |" for name, t in best.items()]
    for name in list(runs)[1:]:
        beyond = best[name] - base
        lines.append(f"- {name}: {beyond:.3f} s beyond the interpreter (target <= 0.3 s: "
                     f"{'met' if beyond <= 0.3 else 'NOT met'})")
    return lines


# -- report -------------------------------------------------------------------------------


def machine() -> list[str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    pdftotext = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True, check=False).stderr.split("\n")[0]
    commit = subprocess.run(
        ["git", "-C", str(REPO), "log", "-1", "--format=%h %cs %s"], capture_output=True, text=True, check=False
    ).stdout.strip()
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("pypdfium2", "pypdf", "pdfplumber", "reportlab"))
    return [
        f"- command: `{' '.join(shlex.quote(a) for a in [os.path.relpath(sys.executable, REPO), *sys.argv])}`",
        f"- machine: {platform.node()}, {model}, nproc {affinity}, load average {os.getloadavg()[0]:.2f} at start",
        f"- python {platform.python_version()}, {versions}, {pdftotext}",
        f"- papersift at {commit}",
    ]


def table(workload: Workload, timings: list[Timing], repeat: int) -> list[str]:
    lines = [
        "",
        f"## {workload.name}: {len(workload.docs)} PDFs, {workload.pages} pages (best of {repeat} after a warm-up)",
        "",
        "| engine | best s | median s | pages/s (best) | pages/s (median) | failed/empty docs | note |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for t in timings:
        best, median = min(t.times), statistics.median(t.times)
        lines.append(
            f"| {t.engine} | {best:.3f} | {median:.3f} | {workload.pages / best:,.0f} | {workload.pages / median:,.0f} "
            f"| {t.failures} | {t.note} |"
        )
    by_name = {t.engine.split(" ")[0]: min(t.times) for t in timings}
    ours = by_name.get("papersift")
    if ours:
        lines.append("")
        if "GoblinTools" in by_name:
            ratio = by_name["GoblinTools"] / ours
            verdict = "met" if ratio >= 15 else "NOT met"
            lines.append(f"- papersift vs GoblinTools: {ratio:.1f}x faster (target >= 15x: {verdict})")
        if "pypdfium2" in by_name:
            ratio = by_name["pypdfium2"] / ours
            verdict = "met" if ratio >= 0.67 else "NOT met"
            lines.append(f"- papersift vs raw pypdfium2: {ratio:.2f} of its speed (target >= 0.67: {verdict})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--bench-pdfs", type=Path, default=REPO.parent / "shared" / "bench-pdfs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pages", type=int, default=500, help="pages of the generated native PDF")
    parser.add_argument("--no-goblin", action="store_true", help="skip GoblinTools (no venv needed)")
    parser.add_argument("--no-detection", action="store_true")
    args = parser.parse_args(argv)
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its repair chatter on damaged xrefs
    logging.getLogger("pdfminer").setLevel(logging.ERROR)

    out = ["# PDF throughput", "", *machine()]
    print("\n".join(out), flush=True)
    workloads = []
    corpus_docs: list[Doc] = []
    bench_docs: list[Doc] = []
    if (args.bench_pdfs / "MANIFEST.tsv").exists():
        bench_docs = read_bench_pdfs(args.bench_pdfs)
        workloads.append(Workload("bench-pdfs (real native PDFs)", bench_docs))
    else:
        print(f"\n(bench-pdfs not found at {args.bench_pdfs}: skipping that workload)")
    if (args.corpus / "MANIFEST.tsv").exists():
        corpus_docs = read_corpus(args.corpus)
        workloads.append(Workload("corpus PDFs (" + ", ".join(PDF_CATEGORIES) + ")", corpus_docs))
        # the speed targets are about the native-page path: native PDFs on their own
        workloads.append(Workload("corpus native_pdf only", [d for d in corpus_docs if d.category == "native_pdf"]))
    else:
        print(f"\n(corpus not found at {args.corpus}: skipping the corpus workload)")
    workloads.append(Workload(f"generated native PDF, {args.pages} pages", [synthetic_doc(args.pages)]))

    sample = bench_docs[0].path if bench_docs else workloads[-1].docs[0].path
    print("\n".join(cold_start(sample, max(args.repeat, 3))), flush=True)
    if bench_docs:
        print("\n".join(whole_process(workloads[0], args.repeat, not args.no_goblin)), flush=True)

    for workload in workloads:
        print(f"  timing {', '.join(ENGINES)} on {workload.name} ...", file=sys.stderr, flush=True)
        timings = time_engines(ENGINES, workload, args.repeat)
        if not args.no_goblin:
            print(f"  timing GoblinTools on {workload.name} ...", file=sys.stderr, flush=True)
            try:
                timings.append(time_goblin(workload, args.repeat))
            except (RuntimeError, subprocess.CalledProcessError, ValueError) as exc:
                print(f"  GoblinTools unavailable: {exc}", file=sys.stderr)
        lines = table(workload, timings, args.repeat)
        if len(workload.docs) > 1:
            lines += slowest_docs(workload)
        print("\n".join(lines), flush=True)

    print("\n## Suspect pages (the ladder did more than one pdfium pass, or the page is not clean)\n")
    print("\n".join(line for w in workloads[:2] for line in suspect_page_cost(w)), flush=True)
    if not args.no_detection and (corpus_docs or bench_docs):
        print("\n".join(detection(corpus_docs, bench_docs)), flush=True)
        synthetic = workloads[-1].docs[0]
        statuses = Counter(str(p.report.status) for p in papersift_pages(synthetic))
        print(f"\ngenerated PDF page statuses: {dict(statuses)}")
    print(f"\nload average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
