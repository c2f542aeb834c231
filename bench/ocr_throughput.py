"""OCR throughput and accuracy of papersift against GoblinTools' own OCR path and OCRmyPDF, side by
side on the same scanned pages (issue 7), where papersift's OCR time goes, and on the whole corpus
the pages papersift sends to OCR and what its cost ledgers estimate against all-Textract.

Run from the repo root (re-runnable; the GoblinTools and OCRmyPDF venvs are cached under bench/):

    .venv/bin/python bench/ocr_throughput.py [--repeat 2] [--no-goblin] [--no-ocrmypdf] [--no-corpus-run]
                                             [--no-mixed] [--only FILE...] [--experiments-only]

Needs, besides .venv: the tesseract binary with the eng, por, spa and osd models (as papersift's
tests do); Ghostscript for OCRmyPDF (``apt-get install -y ghostscript`` as root; the bench skips
OCRmyPDF and says why when ``gs`` is missing); network access to PyPI the first time, to build
``bench/.venv-goblin`` with ``goblintools[local-ocr]==0.13.4`` (``bench/setup_goblin.sh --ocr``)
and ``bench/.cache/venv-ocrmypdf`` (``pip install ocrmypdf``).

Workload: every page of the corpus categories scanned_pdf and image (PDF pages as pdfium counts
them, TIFF frames), each file read whole by every engine; then the mixed_pdf files whole, apart
(their scanned pages are identified as pages an image covers >= 70% of; papersift reads only what
needs OCR there, the others what they choose, so per-page times are not comparable: their table
says how many pages each OCR'd). Engines, all one process per file unless said:

- ``papersift extract FILE --out TMP --quiet --ocr local-only`` (a whole process: interpreter,
  imports, the pipeline; eng+por+spa, the default), and the same in this process:
  ``process_document(store, document, Settings(ocr_mode="local-only"), engines=default_engines(
  None, ...))`` with the default languages and with ``ocr_languages=("eng",)``;
- GoblinTools 0.13.4 with its ``local-ocr`` extra (``bench/goblin_driver.py --ocr --lang eng``):
  ``TextExtractor(ocr_handler=True, ocr_images=True)`` with ``OCRConfig(tesseract_lang="eng")``
  (its own default is ``por``), ``extract_from_file``; its ``file_path_pwd:"..."`` header line
  is stripped before scoring;
- OCRmyPDF (its latest from PyPI in a throwaway venv): ``ocrmypdf --sidecar OUT.txt --force-ocr
  -l eng --output-type pdf --optimize 0 IN /dev/null`` (the output PDF is discarded; plain PDF
  output and no optimisation, so no time goes into PDF/A conversion or image optimisation nobody
  reads), pictures given as they are with ``--image-dpi 300`` (OCRmyPDF's img2pdf path; every TIFF
  frame a page); and a second row with ``--rotate-pages --deskew``, OCRmyPDF's equivalents of
  papersift's OSD turn and deskew.

Every child gets ``OMP_THREAD_LIMIT=1`` (as the OCR Lambda image sets it): tesseract's OpenMP
threads otherwise spin on a 2-core machine shared with others, for everyone alike. GoblinTools
OCRs a PDF's pages in a pool of ``cpu_count()`` workers and OCRmyPDF with ``--jobs`` = cores:
wall time favours them on a multi-page file; CPU seconds (user + system of this process's
children, or of this process and its children in process) compare the work done.

Timing: ``--repeat`` rounds; in each, every file goes through every engine in turn (a burst of
load from elsewhere hits all engines alike); per file the best wall and the best CPU time over
the rounds. Accuracy: the MANIFEST ``expected`` phrase per file (``score.py``'s ``phrase_ok``) and,
where the corpus has ground truth (``gt_file``), ``score.py``'s ``similarity`` (normalised
Levenshtein, rapidfuzz).

Where papersift's time goes: the in-process runs are instrumented (wrappers around
``pytesseract.image_to_osd`` / ``image_to_data``, the worker that draws the page, and
``tesseract.read_image``): wall and CPU by step (drawing the page, OSD, the first recognition,
the Latin re-read, other model reads, papersift's own picture work), and what a tesseract call
costs with an empty picture for each model set (loading the models). Then, on the scanned pages
below 300 ppi (the RVL-CDIP forms), ``read_image`` with and without OSD and with each model set,
and tesseract alone at 300 dpi, 200 dpi and the image's own resolution (``--experiments-only``
runs just these two, in a few minutes).

Whole corpus: ``papersift extract CORPUS/files --out TMP --quiet --flat`` (default mode
local-first, all 79 files), then from each ``.report.json``: pages read by OCR against all pages,
and the cost ledgers (``cost.usd.total`` against ``cost.usd_all_textract``) summed over PDF and
picture files and scaled to 1,000 pages, beside Textract-first pricing of the OCR'd pages.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import importlib.util
import json
import logging
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "layers" / "papersift" / "python"))
sys.path.insert(0, str(REPO))  # infra.deployment: the deployed functions' memory, as the CLI prices it

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # before any tesseract runs, here or in a child

import pypdfium2 as pdfium  # noqa: E402
import pypdfium2.raw as pdfium_c  # noqa: E402
from PIL import Image  # noqa: E402

BENCH = REPO / "bench"
CACHE = BENCH / ".cache"
OCRMYPDF_VENV = CACHE / "venv-ocrmypdf"
OCR_CATEGORIES = ("scanned_pdf", "image")
MIXED = "mixed_pdf"
#: a page is "scanned" when one image covers at least this share of it
SCANNED_COVER = 0.7
#: Textract DetectDocumentText, USD a page (Settings.price_textract_detect_per_page)
TEXTRACT_PER_PAGE = 0.0015
PICTURE_TYPES = ("png", "jpeg", "tiff", "gif", "bmp", "webp")


@dataclass
class Doc:
    name: str
    path: Path
    category: str
    expected: str
    gt: Path | None
    pages: int
    scanned: int  # pages an image covers (mixed_pdf); = pages for scanned_pdf and images

    @property
    def picture(self) -> bool:
        return self.path.suffix.lower() != ".pdf"


@dataclass
class Run:
    """One engine on one file, over the rounds."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    text: str = ""
    ocr_pages: int | None = None  # pages the engine OCR'd, when it says
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Engine:
    name: str
    run: Callable[[Doc], Run]  # one pass on one file; returns wall, cpu (one value each), text
    note: str = ""
    results: dict[str, Run] = field(default_factory=dict)

    def record(self, doc: Doc) -> None:
        try:
            one = self.run(doc)
        except Exception as exc:
            one = Run(wall=[float("nan")], cpu=[float("nan")], error=f"{type(exc).__name__}: {exc}"[:200])
        kept = self.results.setdefault(doc.name, Run())
        kept.wall += one.wall
        kept.cpu += one.cpu
        kept.text, kept.ocr_pages, kept.error, kept.extra = one.text, one.ocr_pages, one.error, one.extra


# -- workload -----------------------------------------------------------------------------


def load_score(corpus: Path) -> Any:
    spec = importlib.util.spec_from_file_location("corpus_score", corpus / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_docs(corpus: Path, categories: tuple[str, ...]) -> list[Doc]:
    """Rows of MANIFEST.tsv (csv, tab, QUOTE_NONE: fields as they are) in these categories."""
    docs: list[Doc] = []
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if row["category"] not in categories:
                continue
            path = corpus / "files" / row["out_name"]
            gt = corpus / row["gt_file"] if row["gt_file"] else None
            if path.suffix.lower() == ".pdf":
                pages, scanned = pdf_pages(path)
            else:
                with Image.open(path) as image:
                    pages = scanned = getattr(image, "n_frames", 1)
            if row["category"] == "scanned_pdf":
                scanned = pages
            docs.append(Doc(row["out_name"], path, row["category"], row["expected"], gt, pages, scanned))
    return docs


def pdf_pages(path: Path) -> tuple[int, int]:
    """(pages, pages one image covers at least SCANNED_COVER of)."""
    document = pdfium.PdfDocument(str(path))
    try:
        scanned = 0
        for index in range(len(document)):
            page = document[index]
            width, height = page.get_size()
            area = max(width * height, 1.0)
            for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3):
                left, bottom, right, top = obj.get_bounds()
                if (right - left) * (top - bottom) >= SCANNED_COVER * area:
                    scanned += 1
                    break
        return len(document), scanned
    finally:
        document.close()


# -- measuring ------------------------------------------------------------------------------


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def all_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu()


def run_child(command: list[str], **kwargs: Any) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    before, started = children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False, **kwargs)
    return time.perf_counter() - started, children_cpu() - before, done


# -- engines --------------------------------------------------------------------------------


def papersift_cli(doc: Doc) -> Run:
    with tempfile.TemporaryDirectory(prefix="ocr-bench-") as out:
        wall, cpu, done = run_child([str(REPO / ".venv" / "bin" / "papersift"), "extract", str(doc.path), "--out", out,
                                     "--quiet", "--ocr", "local-only"])
        folder = Path(out) / doc.name
        text = (folder / "text.txt").read_text(encoding="utf-8") if (folder / "text.txt").exists() else ""
        report = json.loads((folder / "report.json").read_text()) if (folder / "report.json").exists() else {}
    run = Run([wall], [cpu], text, ocr_pages=sum(1 for p in report.get("pages", []) if p.get("ocr")))
    if done.returncode not in (0,) and not text:
        run.error = f"exit {done.returncode}: {done.stderr.decode(errors='replace')[-160:]}"
    return run


class Profile:
    """Where papersift's OCR time goes, in this process: wall and CPU by step (see the docstring)."""

    def __init__(self) -> None:
        self.steps: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])  # calls, wall, cpu
        self.calls: list[tuple[str, str]] | None = None
        self.configured: tuple[str, ...] = ()
        self.pages = 0
        self.notes: Counter[str] = Counter()

    def add(self, step: str, wall: float, cpu: float) -> None:
        entry = self.steps[step]
        entry[0] += 1
        entry[1] += wall
        entry[2] += cpu

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        import pytesseract

        from papersift.ocr import tesseract
        from papersift.steps import ocr as stage

        originals = (pytesseract.image_to_osd, pytesseract.image_to_data, stage.run_once, tesseract.read_image)
        profile = self

        def timed_child(step: Callable[..., str], call: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(call)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                before, started = children_cpu(), time.perf_counter()
                try:
                    return call(*args, **kwargs)
                finally:
                    profile.add(step(*args, **kwargs), time.perf_counter() - started, children_cpu() - before)
            return wrapper

        def osd_step(*_args: Any, config: str = "", **_kwargs: Any) -> str:
            if "min_characters_to_try=30" in config:
                return "tesseract OSD, middle band"
            if "min_characters_to_try" in config:
                return "tesseract OSD, second try (few characters)"
            return "tesseract OSD, whole picture"

        def data_step(*_args: Any, lang: str = "", **_kwargs: Any) -> str:
            calls = profile.calls if profile.calls is not None else []
            calls.append(("data", lang))
            configured = "+".join(profile.configured)
            reads = sum(1 for kind, _ in calls if kind == "data")
            if reads == 1:
                return f"tesseract recognition, first read ({'configured ' + lang if lang == configured else lang})"
            if "+" not in lang and lang not in profile.configured:
                return f"tesseract recognition, Latin re-read / script model ({lang})"
            return f"tesseract recognition, compared read ({lang})"

        def read_image(image: Any, languages: Any, **kwargs: Any) -> Any:
            profile.calls, profile.configured = [], tuple(languages)
            before_children, before_all, started = children_cpu(), all_cpu(), time.perf_counter()
            try:
                reading = originals[3](image, languages, **kwargs)
            finally:
                wall = time.perf_counter() - started
                own = (all_cpu() - before_all) - (children_cpu() - before_children)
                profile.add("papersift picture work in read_image (grey, ink box, profiles, deskew, scaling, "
                            "files), outside tesseract", wall, own)
                profile.calls = None
            profile.pages += 1
            for note in reading.notes:
                profile.notes[_note_kind(note)] += 1
            return reading

        pytesseract.image_to_osd = timed_child(osd_step, originals[0])
        pytesseract.image_to_data = timed_child(data_step, originals[1])
        stage.run_once = timed_child(lambda *a, **k: "drawing the page (forked worker: pdfium/poppler render, "
                                     "picture frames)", originals[2])
        tesseract.read_image = read_image
        try:
            yield
        finally:
            pytesseract.image_to_osd, pytesseract.image_to_data, stage.run_once, tesseract.read_image = originals

    def table(self, title: str) -> list[str]:
        """Steps with their share; read_image's wall includes its tesseract calls: subtract them."""
        tesseract_wall = sum(v[1] for k, v in self.steps.items() if k.startswith("tesseract"))
        rows = []
        for step, (calls, wall, cpu) in self.steps.items():
            if step.startswith("papersift picture work"):
                wall = max(wall - tesseract_wall, 0.0)
            rows.append((step, calls, wall, cpu))
        rows.sort(key=lambda r: -r[3])
        pages = max(self.pages, 1)
        rounds = max(1, self.rounds)
        if self.total[1]:
            rest = (self.total[0] - sum(r[2] for r in rows), self.total[1] - sum(r[3] for r in rows))
            rows.append(("the rest of the pipeline (plan, text layer, OCR stage bookkeeping, assemble, report)",
                         self.runs, max(rest[0], 0.0), max(rest[1], 0.0)))
        total_cpu = sum(r[3] for r in rows) or 1.0
        lines = ["", f"#### {title}: {self.pages // rounds} pictures read by Tesseract a round, in process "
                 f"(a round's mean over {rounds}; {self.total[1] / rounds:.1f} s CPU, {self.total[0] / rounds:.1f} s "
                 "wall a round in all)", "",
                 "| step | calls | wall s | CPU s | CPU s a page | share of CPU |", "|---|---:|---:|---:|---:|---:|"]
        for step, calls, wall, cpu in rows:
            lines.append(f"| {step} | {calls / rounds:.0f} | {wall / rounds:.2f} | {cpu / rounds:.2f} | "
                         f"{cpu / pages:.2f} | {cpu / total_cpu:.0%} |")
        if self.notes:
            lines += ["", "Decisions noted in the readings (pages, per round): " + "; ".join(
                f"{kind} {count / rounds:.0f}" for kind, count in self.notes.most_common())]
        return lines

    rounds = 1
    runs = 0
    total = (0.0, 0.0)


def _note_kind(note: str) -> str:
    for prefix, kind in (("the text reads as", "Latin re-read considered"), ("read with", "several models compared"),
                         ("OSD names the", "script named by OSD"), ("lines of print", "rescaled"),
                         ("orientation not detected", "orientation not detected"),
                         ("OSD proposes", "weak turn refused"),
                         ("unevenly lit", "Sauvola thresholds"), ("light text", "inverted"),
                         ("no words found", "no words")):
        if note.startswith(prefix):
            if kind == "Latin re-read considered" and "re-read with" in note:
                return "Latin re-read made"
            return kind
    return note[:40]


class InProcess:
    """papersift's pipeline in this process, as ``papersift extract`` runs it (extract_locally)."""

    def __init__(self, languages: tuple[str, ...] | None, profile: Profile) -> None:
        from papersift.settings import Settings
        from papersift.steps.ocr import default_engines

        overrides: dict[str, Any] = {"ocr_mode": "local-only"}
        if languages:
            overrides["ocr_languages"] = languages
        self.settings = Settings(**overrides)
        self.page_seconds = self.settings.ocr_page_seconds
        self.default_engines = default_engines
        self.profile = profile
        try:
            from infra.deployment import memory_by_function

            self.memory: dict[str, int] | None = memory_by_function()
        except ImportError:
            self.memory = None

    def __call__(self, doc: Doc) -> Run:
        from papersift.layout import results_prefix
        from papersift.pipeline import process_document
        from papersift.steps.contracts import DocumentRef, document_id
        from papersift.storage import LocalDirStore

        with tempfile.TemporaryDirectory(prefix="ocr-bench-") as tmp, self.profile.installed():
            store = LocalDirStore(Path(tmp))
            key = f"incoming/{doc.name}"
            document = DocumentRef(doc_id=document_id("local", key), bucket="local", key=key, source_name=doc.name)
            store.upload_file(doc.path, key)
            before, started = all_cpu(), time.perf_counter()
            engines = self.default_engines(None, page_seconds=self.page_seconds)
            report = process_document(store, document, self.settings, engines=engines, memory=self.memory)
            wall, cpu = time.perf_counter() - started, all_cpu() - before
            self.profile.total = (self.profile.total[0] + wall, self.profile.total[1] + cpu)
            self.profile.runs += 1
            text_key = results_prefix(report.doc_id) + "text.txt"
            text = store.get(text_key).decode("utf-8") if store.exists(text_key) else ""
        return Run([wall], [cpu], text, ocr_pages=sum(1 for p in report.pages if p.ocr is not None))


def goblin_python() -> str:
    done = subprocess.run(["bash", str(BENCH / "setup_goblin.sh"), "--ocr"], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench/setup_goblin.sh --ocr failed: {done.stderr[-300:]}")
    return done.stdout.strip().splitlines()[-1]


def goblin_engine(python: str) -> Callable[[Doc], Run]:
    def run(doc: Doc) -> Run:
        wall, cpu, done = run_child([python, str(BENCH / "goblin_driver.py"), "--ocr", "--lang", "eng", str(doc.path)])
        if done.returncode != 0:
            return Run([wall], [cpu], error=f"exit {done.returncode}: {done.stderr.decode(errors='replace')[-160:]}")
        result = json.loads(done.stdout)["files"][str(doc.path)]
        text = result["text"]
        first, _, rest = text.partition("\n")
        if first.startswith("file_path_pwd:"):  # GoblinTools' header line: metadata, not OCR
            text = rest
        used = sum(1 for page in result["pages"] if page.endswith(":ocr"))
        return Run([wall], [cpu], text, ocr_pages=used, error=result["error"] or "",
                   extra={"in_process_seconds": result["seconds"], "in_process_cpu": result["cpu_seconds"]})
    return run


def ocrmypdf_bin() -> str:
    if not shutil.which("gs"):
        raise RuntimeError("Ghostscript (gs) is not installed: apt-get install -y ghostscript")
    binary = OCRMYPDF_VENV / "bin" / "ocrmypdf"
    if not binary.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(OCRMYPDF_VENV)], check=True, capture_output=True)
        with (OCRMYPDF_VENV / "install.log").open("wb") as log:
            subprocess.run([str(OCRMYPDF_VENV / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                            "ocrmypdf"], check=True, stdout=log, stderr=subprocess.STDOUT)
    return str(binary)


def ocrmypdf_engine(binary: str, extra: tuple[str, ...]) -> Callable[[Doc], Run]:
    def run(doc: Doc) -> Run:
        with tempfile.TemporaryDirectory(prefix="ocr-bench-") as out:
            sidecar = Path(out) / "out.txt"
            command = [binary, "--sidecar", str(sidecar), "--force-ocr", "-l", "eng", "--output-type", "pdf",
                       "--optimize", "0", *extra]
            if doc.picture:
                command += ["--image-dpi", "300"]
            wall, cpu, done = run_child([*command, str(doc.path), "/dev/null"])
            text = sidecar.read_text(encoding="utf-8", errors="replace") if sidecar.exists() else ""
        run = Run([wall], [cpu], text.replace("\f", "\n"), ocr_pages=doc.pages)
        if done.returncode != 0:
            last = (done.stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
            run.error = f"exit {done.returncode}: {last[:160]}"
            run.ocr_pages = None
        return run
    return run


# -- reports --------------------------------------------------------------------------------


@dataclass
class Scores:
    pages: int
    wall: float
    cpu: float
    phrases: int
    files: int
    similarity: dict[str, float]
    failed: int
    ocr_pages: int | None


def score(engine: Engine, docs: list[Doc], scorer: Any) -> Scores:
    wall = cpu = 0.0
    phrases = failed = 0
    ocr_pages: int | None = 0
    similarity: dict[str, float] = {}
    for doc in docs:
        run = engine.results[doc.name]
        wall += min(run.wall)
        cpu += min(run.cpu)
        phrases += bool(scorer.phrase_ok(doc.expected, run.text))
        failed += bool(run.error) or not run.text.strip()
        if doc.gt is not None:
            similarity[doc.name] = scorer.similarity(str(doc.gt), run.text)
        ocr_pages = None if ocr_pages is None or run.ocr_pages is None else ocr_pages + run.ocr_pages
    return Scores(sum(d.pages for d in docs), wall, cpu, phrases, len(docs), similarity, failed, ocr_pages)


def engine_table(engine: Engine, docs: list[Doc], scorer: Any, repeat: int) -> list[str]:
    lines = ["", f"#### {engine.name}" + (f" ({engine.note})" if engine.note else ""), "",
             "| file | category | pages | OCR'd | best wall s | s/page | best CPU s | CPU s/page | phrase | "
             "GT similarity | note |", "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for doc in docs:
        run = engine.results[doc.name]
        wall, cpu = min(run.wall), min(run.cpu)
        sim = f"{scorer.similarity(str(doc.gt), run.text):.4f}" if doc.gt is not None else ""
        note = run.error or ("" if run.text.strip() else "no text")
        if "in_process_seconds" in run.extra:
            note = (note + "; " if note else "") + f"in its interpreter: {run.extra['in_process_seconds']:.2f} s, " \
                                                  f"CPU {run.extra['in_process_cpu']:.2f} s"
        lines.append(f"| {doc.name} | {doc.category} | {doc.pages} | {'' if run.ocr_pages is None else run.ocr_pages} "
                     f"| {wall:.2f} | {wall / doc.pages:.2f} | {cpu:.2f} | {cpu / doc.pages:.2f} "
                     f"| {'yes' if scorer.phrase_ok(doc.expected, run.text) else 'no'} | {sim} | {note} |")
    s = score(engine, docs, scorer)
    lines.append(f"| **all** | | {s.pages} | {'' if s.ocr_pages is None else s.ocr_pages} | {s.wall:.2f} | "
                 f"{s.wall / s.pages:.2f} | {s.cpu:.2f} | {s.cpu / s.pages:.2f} | {s.phrases}/{s.files} | | |")
    return lines


def summary(engines: list[Engine], docs: list[Doc], scorer: Any, title: str) -> tuple[list[str], dict[str, Scores]]:
    scores = {e.name: score(e, docs, scorer) for e in engines}
    gts = [d.name for d in docs if d.gt is not None]
    head = "".join(f" GT similarity {name.split('__', 1)[-1]} |" for name in gts)
    lines = ["", f"### Summary: {title}", "",
             f"| engine | pages | OCR'd | wall s/page | CPU s/page | phrases found |{head} files failed/empty |",
             "|---|---:|---:|---:|---:|---:|" + "---:|" * len(gts) + "---:|"]
    for name, s in scores.items():
        sims = "".join(f" {s.similarity[g]:.4f} |" if s.similarity.get(g) is not None else " - |" for g in gts)
        lines.append(f"| {name} | {s.pages} | {'' if s.ocr_pages is None else s.ocr_pages} | {s.wall / s.pages:.2f} | "
                     f"{s.cpu / s.pages:.2f} | {s.phrases}/{s.files} |{sims} {s.failed} |")
    return lines, scores


def verdicts(scores: dict[str, Scores], ours: list[str], theirs: list[str]) -> list[str]:
    lines = ["", "Targets (issue 7: faster per page than both, accuracy at least theirs):"]
    for mine in ours:
        if mine not in scores:
            continue
        m = scores[mine]
        for other in theirs:
            if other not in scores:
                continue
            o = scores[other]
            wall_x, cpu_x = (o.wall / o.pages) / (m.wall / m.pages), (o.cpu / o.pages) / (m.cpu / m.pages)
            sims_ok = all((m.similarity.get(k) or 0.0) >= (v or 0.0) for k, v in o.similarity.items())
            accuracy = m.phrases >= o.phrases and sims_ok
            lines.append(f"- {mine} vs {other}: {cpu_x:.2f}x by CPU s/page, {wall_x:.2f}x by wall s/page (faster per "
                         f"page by CPU: {'met' if cpu_x > 1 else 'NOT met'}; "
                         f"by wall: {'met' if wall_x > 1 else 'NOT met'}); "
                         f"phrases {m.phrases} vs {o.phrases}; GT similarity "
                         + ", ".join(f"{m.similarity.get(k) or 0:.4f} vs {v or 0:.4f}" for k, v in o.similarity.items())
                         + f" (accuracy at least theirs: {'met' if accuracy else 'NOT met'})")
    return lines


def image_ppi(path: Path) -> dict[int, float]:
    """Each page's resolution as its largest image has it (pixels per inch of the page), for pages
    an image covers at least SCANNED_COVER of."""
    document = pdfium.PdfDocument(str(path))
    found: dict[int, float] = {}
    try:
        for index in range(len(document)):
            page = document[index]
            width, height = page.get_size()
            for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3):
                left, bottom, right, top = obj.get_bounds()
                if (right - left) * (top - bottom) >= SCANNED_COVER * width * height:
                    px_width, _ = obj.get_px_size()
                    found[index + 1] = px_width / ((right - left) / 72)
                    break
    finally:
        document.close()
    return found


def render_experiment(docs: list[Doc], scorer: Any, repeat: int) -> list[str]:
    """Scanned pages whose image is well below ocr_dpi (300): the noisy 100-ppi RVL-CDIP forms,
    where papersift loses most to the others. Each page drawn, then read by papersift's
    ``tesseract.read_image`` (with and without OSD, both model sets) and by tesseract alone
    (``image_to_string``, ``--oem 1 --psm 3``: no OSD, no deskew, no rescaling), at 300 dpi
    (papersift's ocr_dpi), 200 (GoblinTools') and the image's own resolution (OCRmyPDF's)."""
    import pytesseract

    from papersift.ocr import tesseract
    from papersift.rendering import render_page
    from papersift.settings import Settings

    settings = Settings()
    lines = ["", "#### Scanned pages below 300 ppi: what papersift's steps, the model set and the drawing "
             f"resolution cost (best of {repeat})", "",
             "| file | pages | image ppi | reader | models | dpi | pixels a page (M) | CPU s a page | wall s a page | "
             "phrase |", "|---|---:|---:|---|---|---:|---:|---:|---:|---|"]
    for doc in docs:
        if doc.picture:
            continue
        low = {n: ppi for n, ppi in image_ppi(doc.path).items() if ppi < 0.8 * settings.ocr_dpi}
        if not low:
            continue
        data = doc.path.read_bytes()
        native = round(statistics.median(low.values()))
        default = "+".join(settings.ocr_languages)

        def papersift_read(osd: bool) -> Callable[[Image.Image, str], str]:
            def read(image: Image.Image, model_set: str) -> str:
                return tesseract.read_image(image, model_set.split("+"), detect_orientation=osd).text
            return read

        def tesseract_alone(picture: Image.Image, models: str) -> str:
            return str(pytesseract.image_to_string(picture, lang=models, config="--oem 1 --psm 3"))

        readers = {"papersift read_image (OSD, deskew, rescale)": papersift_read(True),
                   "papersift read_image, OSD off": papersift_read(False), "tesseract alone": tesseract_alone}
        configs = [("papersift read_image (OSD, deskew, rescale)", default, settings.ocr_dpi),
                   ("papersift read_image (OSD, deskew, rescale)", default, native),
                   ("papersift read_image (OSD, deskew, rescale)", "eng", settings.ocr_dpi),
                   ("papersift read_image, OSD off", "eng", settings.ocr_dpi),
                   ("papersift read_image, OSD off", default, settings.ocr_dpi),
                   ("tesseract alone", default, settings.ocr_dpi), ("tesseract alone", "eng", settings.ocr_dpi),
                   ("tesseract alone", "eng", 200), ("tesseract alone", "eng", native)]
        for reader, models, dpi in configs:
            best_cpu = best_wall = float("inf")
            texts: list[str] = []
            pixels = 0
            for _ in range(repeat):
                texts, pixels = [], 0
                before, started = all_cpu(), time.perf_counter()
                for number in sorted(low):
                    picture = render_page(data, number, dpi=dpi, max_pixels=settings.ocr_max_pixels).image
                    pixels += picture.width * picture.height
                    texts.append(readers[reader](picture, models))
                best_cpu = min(best_cpu, all_cpu() - before)
                best_wall = min(best_wall, time.perf_counter() - started)
            n = len(low)
            lines.append(f"| {doc.name} | {n} | {native} | {reader} | {models} | {dpi} | {pixels / n / 1e6:.1f} | "
                         f"{best_cpu / n:.2f} | {best_wall / n:.2f} | "
                         f"{'yes' if scorer.phrase_ok(doc.expected, chr(10).join(texts)) else 'no'} |")
    return lines


def model_load_costs(repeat: int) -> list[str]:
    """What one tesseract call costs on a tiny blank picture, per model set: process start and
    loading the models, paid by every call (OSD, each read, each re-read)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "blank.pgm"
        Image.new("L", (200, 60), 255).save(path, format="PPM")
        runs = {"eng": ["-l", "eng", "--psm", "3"], "eng+por+spa": ["-l", "eng+por+spa", "--psm", "3"],
                "por": ["-l", "por", "--psm", "3"], "osd (--psm 0)": ["--psm", "0"]}
        best: dict[str, tuple[float, float]] = {}
        for _ in range(max(repeat, 3)):
            for name, args in runs.items():
                wall, cpu, _done = run_child(["tesseract", str(path), "-", *args])
                old = best.get(name, (float("inf"), float("inf")))
                best[name] = (min(old[0], wall), min(old[1], cpu))
    lines = ["", "#### Fixed cost of one tesseract call (a blank 200x60 picture: process start + loading the models; "
             f"best of {max(repeat, 3)})", "", "| models | wall s | CPU s |", "|---|---:|---:|"]
    lines += [f"| {name} | {wall:.3f} | {cpu:.3f} |" for name, (wall, cpu) in best.items()]
    return lines


def corpus_run(corpus: Path) -> list[str]:
    """All 79 files through `papersift extract --flat`, default mode (local-first)."""
    with tempfile.TemporaryDirectory(prefix="ocr-bench-corpus-") as out:
        wall, cpu, done = run_child([str(REPO / ".venv" / "bin" / "papersift"), "extract", str(corpus / "files"),
                                     "--out", out, "--quiet", "--flat"])
        reports = {p.name.removesuffix(".report.json"): json.loads(p.read_text())
                   for p in Path(out).glob("*.report.json")}
        files = len(list(Path(out).glob("*.status")))
    pages_all = ocr_all = 0
    paged: dict[str, list[float]] = {"pages": [0], "ocr": [0], "usd": [0.0], "all_textract": [0.0]}
    rows: list[str] = []
    for name, report in sorted(reports.items()):
        pages = report.get("pages") or []
        ocr = [p for p in pages if p.get("ocr")]
        pages_all += len(pages)
        ocr_all += len(ocr)
        kind = report.get("detected_type") or ""
        if kind == "pdf" or kind in PICTURE_TYPES:
            cost = report.get("cost") or {}
            paged["pages"][0] += len(pages)
            paged["ocr"][0] += len(ocr)
            paged["usd"][0] += float((cost.get("usd") or {}).get("total", 0.0))
            paged["all_textract"][0] += float(cost.get("usd_all_textract", 0.0))
            if ocr:
                statuses = Counter(p["status"] for p in pages)
                rows.append(f"| {name} | {kind} | {len(pages)} | {len(ocr)} | "
                            + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
                            + f" | {(cost.get('usd') or {}).get('total', 0):.4f} "
                            f"| {cost.get('usd_all_textract', 0):.4f} |")
    n, o = paged["pages"][0], paged["ocr"][0]
    paged_files = sum(1 for r in reports.values() if (r.get("detected_type") or "") in ("pdf", *PICTURE_TYPES))
    usd, all_textract = paged["usd"][0], paged["all_textract"][0]
    scale = 1000 / max(n, 1)
    lines = ["", f"### Whole corpus: `papersift extract CORPUS/files --out TMP --quiet --flat` (local-first; "
             f"{files} files, exit {done.returncode}, {wall:.0f} s wall, {cpu:.0f} s CPU)", "",
             f"- pages in all reports: {pages_all}, read by OCR: {ocr_all} ({ocr_all / max(pages_all, 1):.0%})",
             f"- PDF and picture files ({paged_files}"
             f" files): {n} pages, {o} read by OCR ({o / max(n, 1):.0%})", "",
             "| files with OCR'd pages | type | pages | OCR'd | page statuses | ledger USD | all-Textract USD |",
             "|---|---|---:|---:|---|---:|---:|", *rows, "",
             "| estimate per 1,000 pages of this mix (PDF and picture files) | USD |", "|---|---:|",
             f"| papersift, local-first (cost ledgers: Tesseract in the OCR Lambda, Lambda GB-s, Step Functions) | "
             f"{usd * scale:.2f} |",
             f"| every page to Textract DetectDocumentText (ledgers' usd_all_textract) | {all_textract * scale:.2f} |",
             f"| Textract-first pricing of the pages papersift OCR'd ({o} x ${TEXTRACT_PER_PAGE * 1000:.2f}/1,000) | "
             f"{o * TEXTRACT_PER_PAGE * scale:.2f} |"]
    return lines


def machine(started_load: tuple[float, float, float]) -> list[str]:
    model = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    tesseract = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=False)
    tess = (tesseract.stdout or tesseract.stderr).splitlines()[0] if (tesseract.stdout or tesseract.stderr) else "?"
    gs = subprocess.run(["gs", "--version"], capture_output=True, text=True, check=False).stdout.strip() \
        if shutil.which("gs") else "missing"
    commit = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %cs %s"], capture_output=True,
                            text=True, check=False).stdout.strip()
    status = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "layers", "cli"],
                            capture_output=True, text=True, check=False).stdout
    dirty = [line[3:] for line in status.splitlines()]
    if dirty:  # the run measures the working tree, others' uncommitted edits included
        commit += f" (uncommitted changes in {', '.join(dirty)})"
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("pypdfium2", "pytesseract", "pillow", "rapidfuzz"))
    return [
        f"- command: `{' '.join(shlex.quote(a) for a in [os.path.relpath(sys.executable, REPO), *sys.argv])}`",
        f"- machine: {platform.node()}, {model}, nproc {affinity}, load average "
        f"{started_load[0]:.2f} / {started_load[1]:.2f} / {started_load[2]:.2f} (1/5/15 min) at start",
        f"- python {platform.python_version()}, {versions}, {tess}, Ghostscript {gs}, "
        f"OMP_THREAD_LIMIT={os.environ.get('OMP_THREAD_LIMIT')}",
        f"- papersift at {commit}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-goblin", action="store_true", help="skip GoblinTools (no venv needed)")
    parser.add_argument("--no-ocrmypdf", action="store_true", help="skip OCRmyPDF (no venv, no Ghostscript needed)")
    parser.add_argument("--no-mixed", action="store_true", help="skip the mixed_pdf files")
    parser.add_argument("--no-corpus-run", action="store_true", help="skip the whole-corpus run (pages, cost)")
    parser.add_argument("--only", nargs="*", default=None, help="only these corpus files (out_name)")
    parser.add_argument("--experiments-only", action="store_true",
                        help="only the tesseract call costs and the below-300-ppi experiment (no engines, "
                             "no corpus run)")
    args = parser.parse_args(argv)
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    load_start = os.getloadavg()
    print("\n".join(["# OCR throughput and accuracy (issue 7)", "", *machine(load_start)]), flush=True)
    if not (args.corpus / "MANIFEST.tsv").exists():
        print(f"\n(corpus not found at {args.corpus}: nothing to measure)")
        return 0
    if not shutil.which("tesseract"):
        print("\n(the tesseract binary is not installed: nothing to measure)")
        return 0
    scorer = load_score(args.corpus)
    docs = read_docs(args.corpus, OCR_CATEGORIES)
    mixed = [] if args.no_mixed else read_docs(args.corpus, (MIXED,))
    if args.only is not None:
        docs = [d for d in docs if d.name in args.only]
        mixed = [d for d in mixed if d.name in args.only]
    if args.experiments_only:
        print("\n".join([*model_load_costs(args.repeat), *render_experiment(docs, scorer, args.repeat)]))
        end = os.getloadavg()
        print(f"\nload average {end[0]:.2f} / {end[1]:.2f} / {end[2]:.2f} (1/5/15 min) at end")
        return 0
    profiles = {"default": Profile(), "eng": Profile()}
    engines = [
        Engine("papersift extract (whole process)", papersift_cli, "eng+por+spa, one `papersift extract` per file"),
        Engine("papersift in process", InProcess(None, profiles["default"]), "eng+por+spa (the default)"),
        Engine("papersift in process, eng", InProcess(("eng",), profiles["eng"]), "ocr_languages=(\"eng\",)"),
    ]
    theirs: list[str] = []
    if not args.no_goblin:
        try:
            python = goblin_python()
            engines.append(Engine("GoblinTools 0.13.4 OCR", goblin_engine(python),
                                  "local-ocr extra, tesseract_lang=eng, one interpreter per file"))
            theirs.append(engines[-1].name)
        except RuntimeError as exc:
            print(f"\n(GoblinTools unavailable: {exc})")
    if not args.no_ocrmypdf:
        try:
            binary = ocrmypdf_bin()
            version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout.strip()
            engines.append(Engine(f"OCRmyPDF {version}", ocrmypdf_engine(binary, ()), "--force-ocr -l eng"))
            engines.append(Engine(f"OCRmyPDF {version}, --rotate-pages --deskew",
                                  ocrmypdf_engine(binary, ("--rotate-pages", "--deskew")), "--force-ocr -l eng"))
            theirs += [engines[-2].name, engines[-1].name]
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"\n(OCRmyPDF unavailable: {exc})")
    pages = sum(d.pages for d in docs)
    print(f"\nWorkload: {len(docs)} files of {', '.join(OCR_CATEGORIES)}, {pages} pages (PDF pages, TIFF frames); "
          f"mixed_pdf apart: {len(mixed)} files, {sum(d.pages for d in mixed)} pages of which "
          f"{sum(d.scanned for d in mixed)} scanned (an image covers >= {SCANNED_COVER:.0%} of the page: "
          + ", ".join(f"{d.name} {d.scanned}/{d.pages}" for d in mixed) + ")", flush=True)
    for round_number in range(1, args.repeat + 1):
        for doc in [*docs, *mixed]:
            for engine in engines:
                print(f"  round {round_number}/{args.repeat}: {engine.name} on {doc.name} ...", file=sys.stderr,
                      flush=True)
                engine.record(doc)
    for profile in profiles.values():
        profile.rounds = args.repeat
    ours = [e.name for e in engines[:3]]
    lines, scores = summary(engines, docs, scorer, f"scanned_pdf + image, {len(docs)} files, {pages} pages, "
                                                    f"best of {args.repeat}")
    lines += verdicts(scores, ours, theirs)
    print("\n".join(lines), flush=True)
    if mixed:
        mixed_lines, _ = summary(engines, mixed, scorer, f"mixed_pdf whole files, {len(mixed)} files "
                                                         f"(per-page times not comparable: see OCR'd)")
        print("\n".join(mixed_lines), flush=True)
    print("\n### Per engine (best of the rounds per file)")
    for engine in engines:
        print("\n".join(engine_table(engine, [*docs, *mixed], scorer, args.repeat)), flush=True)
    print("\n### Where papersift's OCR time goes")
    for name, profile in profiles.items():
        print("\n".join(profile.table("eng+por+spa (default)" if name == "default" else "eng only")), flush=True)
    print("\n".join(model_load_costs(args.repeat)), flush=True)
    print("\n".join(render_experiment(docs, scorer, args.repeat)), flush=True)
    if not args.no_corpus_run:
        print("\n".join(corpus_run(args.corpus)), flush=True)
    end = os.getloadavg()
    print(f"\nload average {end[0]:.2f} / {end[1]:.2f} / {end[2]:.2f} (1/5/15 min) at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
