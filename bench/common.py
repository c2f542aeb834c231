"""What the bench scripts share: the deterministic inputs they build (prose, a synthetic PDF, a
big zip), cached under bench/.cache/, and the subreaper that counts the CPU of the processes a
command leaves behind. One module the scripts import, importing none of them, so no bench
script needs another (which had tied pdf_throughput, run_overhead and archive_memory into one
import cycle). Standard library only at import: reportlab and python-docx load when an input is
first built.
"""

from __future__ import annotations

import ctypes
import io
import os
import random
import subprocess
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / ".cache"
FIXED_TIME = (2026, 1, 2, 3, 4, 6)
PR_SET_CHILD_SUBREAPER = 36


# -- prose and a synthetic PDF (pdf_throughput, run_overhead's pdf-10000) ----------------------


WORDS = (  # noqa: SIM905 - a word list reads better as prose
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they "
    "you were her she there been one all we their has would when if so no will more about can said them some could "
    "into time only its our other may than these first any after over also new two most where through years much "
    "before between well those under many such should because each while both during without against since within "
    "report committee council board market price growth policy system water energy health school research study "
    "results analysis method data model process design value public private program budget contract service "
    "customer product company industry region country city river valley mountain coast harbour railway bridge "
    "station museum library hospital university student teacher history science language culture society "
    "government election minister president court law right rule order evidence witness decision appeal "
    "increase decrease change development investment revenue income expense profit loss account balance "
    "quarter annual monthly weekly daily morning evening summer winter spring autumn north south east west "
    "important significant previous current future general specific local national international economic "
    "social political technical financial environmental medical legal practical reasonable available "
    "describe explain consider include provide require receive continue remain follow suggest indicate "
    "measure compare review improve reduce support develop maintain establish produce publish approve"
).split()


def paragraph(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(9, 22))]
        if rng.random() < 0.25:
            words.insert(rng.randint(1, len(words) - 1), f"{rng.randint(2, 2030):,}")
        sentence = " ".join(words)
        out.append(sentence[0].upper() + sentence[1:] + rng.choice(".....;?"))
    return " ".join(out).replace(";", ".")


def synthetic_pdf(pages: int) -> Path:
    """A deterministic native PDF: ~2.5 KB of prose per page in Times, Helvetica and Courier
    (regular, bold, italic), generated once and cached."""
    target = CACHE / f"synthetic-{pages}p-v1.pdf"
    if target.exists():
        return target
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    CACHE.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261130)
    tmp = target.with_suffix(".tmp")
    c = canvas.Canvas(str(tmp), pagesize=A4, invariant=1)
    width, height = A4
    body_fonts = ("Times-Roman", "Times-Roman", "Helvetica", "Times-Italic")
    for number in range(1, pages + 1):
        y = height - 60
        c.setFont("Helvetica-Bold", 14)
        c.drawString(56, y, f"Section {number}. " + paragraph(rng, 1)[:60].rstrip(" .,"))
        y -= 26
        written = 0
        while written < 2500 and y > 80:
            font = rng.choice(body_fonts)
            if rng.random() < 0.1:
                font = "Courier"
            size = 9 if font == "Courier" else 10
            text = paragraph(rng, rng.randint(2, 5))
            line_chars = 98 if font == "Courier" else 108
            lines: list[str] = []
            current = ""
            for word in text.split():
                if current and len(current) + 1 + len(word) > line_chars:
                    lines.append(current)
                    current = word
                else:
                    current = f"{current} {word}" if current else word
            lines.append(current)
            c.setFont(font, size)
            for line in lines:
                if y <= 80:
                    break
                c.drawString(56, y, line)
                written += len(line) + 1
                y -= size + 3
            y -= 8
        c.setFont("Helvetica-Oblique", 8)
        c.drawString(width / 2 - 20, 40, f"Page {number} of {pages}")
        c.showPage()
    c.save()
    tmp.rename(target)
    return target


# -- the archive (archive_memory, run_overhead's zip-2000 and zip-20000) ------------------------


def _pdf(rng: random.Random, pages: int) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    for _ in range(pages):
        text = c.beginText(56, A4[1] - 60)
        text.setFont(rng.choice(("Helvetica", "Times-Roman", "Courier")), 10)
        for _ in range(rng.randint(10, 30)):
            text.textLine(" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14))))
        c.drawText(text)
        c.showPage()
    c.save()
    return buffer.getvalue()


def _docx(rng: random.Random) -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.created = document.core_properties.modified = datetime(*FIXED_TIME)
    document.add_heading(paragraph(rng, 1)[:50], level=1)
    for _ in range(rng.randint(2, 6)):
        document.add_paragraph(paragraph(rng, rng.randint(2, 5)))
    buffer = io.BytesIO()
    document.save(buffer)
    return _restamp(buffer.getvalue())


def _restamp(package: bytes) -> bytes:
    """python-docx stamps its zip entries with the current time: pin them, for identical bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            pinned = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME)
            pinned.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(pinned, source.read(info))
    return out.getvalue()


def build_archive(members: int) -> Path:
    """60% txt, 30% PDF (1-3 pages), 10% docx, in 20 folders; the same bytes on every run."""
    target = CACHE / f"archive-{members}-v1.zip"
    if target.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    rng = random.Random(members)
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for index in range(members):
            roll = rng.random()
            if roll < 0.6:
                name, data = (
                    f"note-{index:05d}.txt",
                    "\n\n".join(paragraph(rng, rng.randint(3, 8)) for _ in range(rng.randint(1, 4))).encode(),
                )
            elif roll < 0.9:
                name, data = f"paper-{index:05d}.pdf", _pdf(rng, rng.randint(1, 3))
            else:
                name, data = f"letter-{index:05d}.docx", _docx(rng)
            info = zipfile.ZipInfo(f"folder-{index % 20:02d}/{name}", date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_STORED if name.endswith(".docx") else zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    tmp.rename(target)
    return target


# -- CPU time inside functions ------------------------------------------------------------------


class CpuInside:
    """The CPU time (``time.process_time``: on shared cores the wall clock also counts other
    processes' turns) spent inside the functions ``wrap`` returns, summed until reset."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - started
        return timed


# -- processes left behind ---------------------------------------------------------------------


def become_subreaper() -> bool:
    """Orphaned descendants of our children are reparented to this process (Linux only)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def reap_orphans(seconds: float = 30.0) -> tuple[float, float]:
    """Wait for descendants left behind (reparented here); their CPU seconds and largest RSS (MB)."""
    cpu, rss = 0.0, 0.0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.05)
            continue
        cpu += usage.ru_utime + usage.ru_stime
        rss = max(rss, usage.ru_maxrss / 1024)
    return cpu, rss


# -- one command measured ----------------------------------------------------------------------


@dataclass
class Measured:
    """One command's wall, exit, CPU and peaks: ``peak_rss_mb`` is ``os.wait4``'s (the largest of
    the child and every descendant it reaped); ``main_rss_mb`` the child's own high-water mark and
    ``largest_mb``/``largest`` the largest other process under it (sampled from /proc: VmHWM only
    grows, so a sample misses at most the growth of a process's last interval);
    ``orphans_rss_mb`` the largest descendant left behind and reaped here (a subreaper)."""

    exit_code: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    peak_rss_mb: float = 0.0
    main_rss_mb: float = 0.0
    largest_mb: float = 0.0
    largest: str = ""
    orphans_rss_mb: float = 0.0
    output: bytes = b""
    #: every sampled process under the child (the child itself left out), largest first
    processes: list[tuple[float, str]] = field(default_factory=list)


def _ppid_and_hwm(pid: int) -> tuple[int, float]:
    ppid, hwm = -1, 0.0
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
        for line in status:
            if line.startswith("PPid:"):
                ppid = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return ppid, hwm


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read().split(b"\0")
    except OSError:
        return "?"
    return " ".join(os.path.basename(w.decode(errors="replace")) if i == 0 else w.decode(errors="replace")
                    for i, w in enumerate(words[:4]) if w)[:80]


def _sample_tree(seen: dict[int, tuple[float, str]], stop: threading.Event, interval: float) -> None:
    """Every ``interval`` s: the high-water mark of every process under this one (ours: a subreaper
    adopts what the child leaves behind), by pid, with its command line."""
    me = os.getpid()
    while not stop.wait(interval):
        parents: dict[int, int] = {}
        marks: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                parents[int(entry)], marks[int(entry)] = _ppid_and_hwm(int(entry))
            except (OSError, ValueError):
                continue
        under = {me}
        grew = True
        while grew:
            grew = False
            for pid, ppid in parents.items():
                if ppid in under and pid not in under:
                    under.add(pid)
                    grew = True
        for pid in under - {me}:
            best, name = seen.get(pid, (0.0, ""))
            if marks.get(pid, 0.0) > best:
                seen[pid] = (marks[pid], name or _cmdline(pid))


def run_measured(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None,
                 interval: float = 0.1) -> Measured:
    """Run ``argv`` to its end (call become_subreaper() first to count what it leaves behind)."""
    result = Measured()
    seen: dict[int, tuple[float, str]] = {}
    stop = threading.Event()
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    sampler = threading.Thread(target=_sample_tree, args=(seen, stop, interval), daemon=True)
    sampler.start()
    assert proc.stdout is not None
    result.output = proc.stdout.read()  # the child cannot block on a full pipe while we wait
    _, status, usage = os.wait4(proc.pid, 0)
    result.wall = time.perf_counter() - started
    proc.returncode = result.exit_code = os.waitstatus_to_exitcode(status)
    orphans_cpu, result.orphans_rss_mb = reap_orphans()
    stop.set()
    sampler.join()
    result.cpu = usage.ru_utime + usage.ru_stime + orphans_cpu
    result.peak_rss_mb = usage.ru_maxrss / 1024
    result.main_rss_mb = seen.pop(proc.pid, (0.0, ""))[0]
    if seen:
        result.largest_mb, result.largest = max(seen.values())
        result.processes = sorted(seen.values(), reverse=True)
    return result


def checkout(revision: str, into: Path) -> Path:
    """``revision`` of this repository written out into ``into`` (git archive), with the word lists
    the install step builds (python -m papersift.lexicon: git holds none), for a side-by-side run."""
    import shutil
    import tarfile

    archive = subprocess.run(["git", "-C", str(REPO), "archive", revision], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    built = REPO / "layers" / "papersift" / "python" / "papersift" / "data"
    data = into / "layers" / "papersift" / "python" / "papersift" / "data"
    data.mkdir(exist_ok=True)
    for words in built.glob("words-*"):
        shutil.copy2(words, data / words.name)
    return into
