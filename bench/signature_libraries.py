"""Signature libraries vs papersift.sniff: which of the kinds papersift reads each one identifies,
and what importing it costs (issue 10's "use a maintained signature library where it replaces
hand-kept magic tables").

One sample per kind that ``papersift.sniff`` reports (plus the signature variants its table
lists: cpio's odc/newc/binary headers, ISO 9660 at 0x8001/0x8801), taken from ../shared/corpus
when it has one (the first file of that kind, by name) and built in code otherwise. Each sample
is typed from its bytes alone (no file name) by papersift.sniff, puremagic, filetype and
python-magic (libmagic); a library "identifies" a sample when its first answer names the same
kind. Import time is the median of --runs fresh interpreters.

    .venv/bin/python bench/signature_libraries.py [--runs 11]

Installs nothing into the project's venv: unless this interpreter already imports all three,
the libraries run in a throwaway venv, bench/.cache/signature-venv (git-ignored), which the
first run creates with pip, as bench/setup_goblin.sh does for GoblinTools.
"""

from __future__ import annotations

import argparse
import bz2
import functools
import gzip
import io
import json
import lzma
import os
import platform
import statistics
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "bench" / ".cache"
VENV = CACHE / "signature-venv"
SAMPLES = CACHE / "signature-samples"
CORPUS = REPO.parent / "shared" / "corpus" / "files"
LIBRARIES = ("puremagic", "filetype", "magic")
TEXT_KINDS = frozenset({"txt", "csv", "tsv", "json", "xml", "html"})
PIP_NAMES = {"puremagic": "puremagic", "filetype": "filetype", "magic": "python-magic"}
SHOWN = {"puremagic": "puremagic", "filetype": "filetype", "magic": "python-magic"}

#: a library's answer (extension or MIME type, lower case) -> papersift's kind name
ANSWERS = {
    "jpg": "jpeg", "jpe": "jpeg", "jfif": "jpeg", "tif": "tiff", "gz": "gzip", "tgz": "gzip", "tar.gz": "gzip",
    "bz2": "bzip2", "tbz2": "bzip2", "tar.bz2": "bzip2", "tar.xz": "xz", "z": "compress", "tar.z": "compress",
    "lz": "lzip", "zst": "zstd", "lha": "lzh", "deb": "ar", "udeb": "ar", "a": "ar", "lib": "ar", "htm": "html",
    "text": "txt",
    "application/x-gzip": "gzip", "application/x-rar-compressed": "rar", "application/x-rar": "rar",
    "image/x-ms-bmp": "bmp", "application/x-7z-compressed": "7z", "application/x-bzip2": "bzip2",
    "application/x-lzip": "lzip", "application/x-zstd": "zstd", "application/x-xz": "xz",
    "application/x-lzma": "lzma", "application/x-arj": "arj", "application/x-lzh-compressed": "lzh",
    "application/x-lha": "lzh", "application/x-iso9660-image": "iso", "application/x-cpio": "cpio",
    "application/x-archive": "ar", "application/x-debian-package": "ar", "application/x-tar": "tar",
    "application/x-compress": "compress", "application/vnd.ms-cab-compressed": "cab",
    "application/cdfv2": "ole", "application/x-ole-storage": "ole", "application/encrypted": "ole-encrypted",
    "application/vnd.ms-outlook": "msg", "text/plain": "txt", "text/csv": "csv", "text/xml": "xml",
    "text/html": "html", "text/rtf": "rtf", "application/rtf": "rtf", "application/json": "json",
    "application/epub+zip": "epub", "application/zip": "zip",
}


# -- the worker: runs in whichever interpreter has the libraries; imports nothing of papersift --


def identify(library: str, module: object, data: bytes) -> str | None:
    """The library's first answer for ``data``, as an extension or MIME type (None: no answer)."""
    if library == "puremagic":
        try:
            found = module.magic_string(data)  # type: ignore[attr-defined]  # ranked by confidence
        except Exception:  # puremagic raises PureError when nothing matches
            return None
        if not found:
            return None
        return str(found[0].extension).lstrip(".") or str(found[0].mime_type)
    if library == "filetype":
        kind = module.guess(data)  # type: ignore[attr-defined]
        return str(kind.extension) if kind is not None else None
    mime = str(module.from_buffer(data, mime=True))  # type: ignore[attr-defined]
    return None if mime in ("application/octet-stream", "") else mime


def typing_seconds(detect: Callable[[bytes], object], samples: Iterable[bytes], passes: int = 5) -> float:
    """Median time of a pass over every sample, after a first pass (lazy imports, caches)."""
    samples = list(samples)
    times = []
    for _ in range(passes + 1):
        started = time.perf_counter()
        for data in samples:
            detect(data)
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def worker(folder: Path) -> None:
    import importlib
    from importlib.metadata import version

    report: dict[str, object] = {}
    for library in LIBRARIES:
        module = importlib.import_module(library)
        samples = {sample.name: sample.read_bytes() for sample in sorted(folder.iterdir())}
        answers = {name: identify(library, module, data) for name, data in samples.items()}
        report[library] = {"version": version(PIP_NAMES[library]), "answers": answers,
                           "seconds": typing_seconds(functools.partial(identify, library, module), samples.values())}
    print(json.dumps(report))


# -- the samples ---------------------------------------------------------------------------------


def _tool(command: list[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    return subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, check=True, timeout=60).stdout


def _with_files(build: Callable[[Path], bytes]) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "t.txt").write_bytes(b"Signature sample: the harbour board's minutes.\n" * 20)
        return build(folder)


def _cpio(format_name: str) -> bytes:
    return _with_files(lambda folder: _tool(["cpio", "-o", "--quiet", "-H", format_name], folder, b"t.txt\n"))


def _archive(tool_args: list[str], out: str) -> bytes:
    def build(folder: Path) -> bytes:
        _tool([*tool_args[:-1], str(folder / out), *tool_args[-1:]], folder)
        return (folder / out).read_bytes()

    return _with_files(build)


def _iso_moved_to(offset: int) -> bytes:
    """An ISO 9660 image whose first volume descriptor is at ``offset`` (as a disc with a boot or
    UDF descriptor ahead of it): bsdtar's image, its descriptors moved back by whole sectors."""
    data = bytearray(_archive(["bsdtar", "--format", "iso9660", "-cf", "t.txt"], "t.iso"))
    shift = offset - 0x8001
    data[0x8000 + shift : 0x8000 + shift + 0x1000] = data[0x8000 : 0x9000]
    data[0x8000 : 0x8000 + shift] = bytes(shift)
    return bytes(data)


def _lzh() -> bytes:
    """A level-0 LHA archive holding one stored (-lh0-) member: lhasa reads it, nothing here writes one."""
    payload = b"Signature sample: the harbour board's minutes.\n"
    crc = 0
    for byte in payload:  # CRC-16/ARC
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    name = b"t.txt"
    body = (b"-lh0-" + struct.pack("<III", len(payload), len(payload), 0) + b"\x20\x00" + bytes([len(name)]) + name
            + struct.pack("<H", crc))
    return bytes([len(body), sum(body) & 0xFF]) + body + payload + b"\x00"


def _picture(kind: str) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 30, 30)).save(buffer, format=kind)
    return buffer.getvalue()


def _xls() -> bytes:
    import xlwt

    book = xlwt.Workbook()
    book.add_sheet("minutes").write(0, 0, "harbour board")
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _ole(streams: dict[str, bytes]) -> bytes:
    sys.path.insert(0, str(REPO / "tests" / "unit"))
    from test_sniff import ole_bytes  # the tests' minimal OLE2 writer

    return bytes(ole_bytes(streams))


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            stored = name == "mimetype"  # EPUB's first entry, uncompressed
            archive.writestr(name, data, compress_type=zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def _tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("t.txt")
        info.size = 3
        archive.addfile(info, io.BytesIO(b"42\n"))
    return buffer.getvalue()


TEXT = b"The harbour board met on Tuesday.\n" * 30
ROWS = [["item", "amount", "date"], ["copper wire", "42", "2026-01-02"], ["brass valve", "7", "2026-01-03"],
        ["buoy chain", "12", "2026-01-04"], ["lamp oil", "3", "2026-01-05"]]
EPUB_CONTAINER = (b'<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:'
                  b'container"><rootfiles><rootfile full-path="c.opf" media-type="application/oebps-package+xml"/>'
                  b"</rootfiles></container>")

FIXTURES = {"doc": "tests/fixtures/legacy/edital.doc", "ppt": "tests/fixtures/legacy/slides.ppt"}
#: (row label, papersift kind, builder): a label equal to its kind takes the corpus's sample when
#: there is one; the variants are always built; None: the corpus's sample or none
BUILT: list[tuple[str, str, Callable[[], bytes] | None]] = [
    ("pdf", "pdf", lambda: b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"),
    ("docx", "docx", None),
    ("xlsx", "xlsx", None),
    ("xlsm", "xlsm", None),
    ("pptx", "pptx", None),
    ("odt", "odt", None),
    ("ods", "ods", None),
    ("odp", "odp", None),
    ("ole-encrypted (OOXML with a password)", "ole-encrypted", None),
    ("epub", "epub", lambda: _zip({"mimetype": b"application/epub+zip", "META-INF/container.xml": EPUB_CONTAINER,
                                   "c.opf": b"<package/>"})),
    ("xml", "xml", lambda: b'<?xml version="1.0" encoding="UTF-8"?>\n<minutes><item>harbour</item></minutes>\n'),
    ("json", "json", lambda: json.dumps({"minutes": ["harbour", "board"], "year": 2026}).encode()),
    ("csv", "csv", lambda: "\n".join(",".join(r) for r in ROWS).encode() + b"\n"),
    ("tsv", "tsv", lambda: "\n".join("\t".join(r) for r in ROWS).encode() + b"\n"),
    ("txt", "txt", lambda: TEXT),
    ("rtf", "rtf", lambda: b"{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}} The harbour board.\\par }"),
    ("html", "html", lambda: b"<!DOCTYPE html><html><head><title>m</title></head><body>harbour</body></html>"),
    ("png", "png", lambda: _picture("PNG")),
    ("jpeg", "jpeg", lambda: _picture("JPEG")),
    ("tiff", "tiff", lambda: _picture("TIFF")),
    ("gif", "gif", lambda: _picture("GIF")),
    ("bmp", "bmp", lambda: _picture("BMP")),
    ("webp", "webp", lambda: _picture("WEBP")),
    ("zip", "zip", lambda: _zip({"t.txt": TEXT})),
    ("7z", "7z", lambda: _archive(["7z", "a", "-bd", "-t7z", "t.txt"], "t.7z")),
    ("rar", "rar", None),
    ("tar", "tar", _tar),
    ("gzip", "gzip", lambda: gzip.compress(TEXT)),
    ("bzip2", "bzip2", lambda: bz2.compress(TEXT)),
    ("xz", "xz", lambda: lzma.compress(TEXT)),
    ("zstd", "zstd", lambda: _tool(["zstd", "-q", "-c"], REPO, TEXT)),
    ("lzma", "lzma", lambda: lzma.compress(TEXT, format=lzma.FORMAT_ALONE)),
    ("lzip", "lzip", lambda: _tool(["lzip", "-c"], REPO, TEXT)),
    ("compress", "compress", lambda: _tool(["compress", "-c"], REPO, TEXT)),
    ("cab", "cab", lambda: _archive(["gcab", "-c", "-z", "t.txt"], "t.cab")),
    ("arj", "arj", lambda: _archive(["arj", "a", "t.txt"], "t.arj")),
    ("lzh", "lzh", _lzh),
    ("iso", "iso", lambda: _archive(["bsdtar", "--format", "iso9660", "-cf", "t.txt"], "t.iso")),
    ("iso (descriptor at 0x8801)", "iso", lambda: _iso_moved_to(0x8801)),
    ("cpio", "cpio", lambda: _cpio("newc")),
    ("cpio (odc)", "cpio", lambda: _cpio("odc")),
    ("cpio (binary)", "cpio", lambda: _cpio("bin")),
    ("ar", "ar", lambda: _archive(["ar", "rc", "t.txt"], "t.a")),
    ("doc", "doc", lambda: (REPO / FIXTURES["doc"]).read_bytes()),
    ("xls", "xls", _xls),
    ("ppt", "ppt", lambda: (REPO / FIXTURES["ppt"]).read_bytes()),
    ("msg (OLE2 built in code: streams, no CLSID)", "msg",
     lambda: _ole({"__substg1.0_0037001F": "harbour".encode("utf-16-le"),
                   "__substg1.0_1000001F": "board".encode("utf-16-le")})),
    ("ole (OLE2 built in code: no Office stream)", "ole", lambda: _ole({"SomethingElse": b"x" * 10})),
]

#: text that starts like a signature: a detector that trusts a short prefix alone takes it for a
#: binary. Told apart: typed as text of any kind, or not typed (the libraries do not type text)
LOOKALIKES: list[tuple[str, str, Callable[[], bytes]]] = [
    ("look-alike: text starting 'BM' (BMW)", "txt", lambda: b"BMW annual report: the harbour plant.\n" * 20),
    ("look-alike: text starting 'BZh9'", "txt", lambda: b"BZh9 is where a bzip2 stream starts.\n" * 20),
    ("look-alike: CSV starting '070707'", "csv", lambda: b"0707071234,harbour,42\n0707075678,board,7\n" * 10),
]


def build_samples() -> list[tuple[str, str, str, bytes]]:
    """(row label, expected kind, source, bytes): the corpus's first file of each kind, else built."""
    from papersift.sniff import MIME_TYPES, sniff

    from_corpus: dict[str, tuple[str, bytes]] = {}
    if CORPUS.is_dir():
        for path in sorted(CORPUS.iterdir()):
            data = path.read_bytes()
            kind = sniff(data, path.name).kind
            from_corpus.setdefault(kind, (f"corpus {path.name}", data))
    samples = []
    for label, kind, build in BUILT:
        if (label == kind or build is None) and kind in from_corpus:
            source, data = from_corpus[kind]
        elif build is not None:
            source, data = FIXTURES.get(label, "built in code"), build()
        else:
            continue
        samples.append((label, kind, source, data))
    listed = {kind for _, kind, _, _ in samples}
    for kind in sorted(set(from_corpus) - listed):
        samples.append((kind, kind, *from_corpus[kind]))
    samples += [(label, kind, "built in code", build()) for label, kind, build in LOOKALIKES]
    missing = set(MIME_TYPES) - listed - set(from_corpus) - {"empty", "unknown"}
    if missing:
        print(f"(no sample for: {', '.join(sorted(missing))})")
    return samples


def kind_of(answer: str | None) -> str | None:
    if answer is None:
        return None
    answer = answer.lower()
    from papersift.sniff import MIME_TYPES

    by_mime = {mime: kind for kind, mime in MIME_TYPES.items() if kind not in ("ole-encrypted", "empty", "unknown")}
    return ANSWERS.get(answer) or by_mime.get(answer) or (answer if answer in MIME_TYPES else None)


# -- running ------------------------------------------------------------------------------------


def library_python() -> Path:
    """An interpreter that imports the three libraries: this one, or the throwaway venv (made once)."""
    probe = subprocess.run([sys.executable, "-c", "import puremagic, filetype, magic"], capture_output=True)
    if probe.returncode == 0:
        return Path(sys.executable)
    python = VENV / "bin" / "python"
    if subprocess.run([str(python), "-c", "import puremagic, filetype, magic"], capture_output=True).returncode:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        *PIP_NAMES.values()], check=True)
    return python


#: the standard library sniff imports: loaded first, the import time left is what the module adds
STDLIB_OF_SNIFF = "import io, json, re, struct, zipfile, dataclasses, pathlib, typing, collections.abc"


def import_seconds(python: Path, module: str, runs: int, env: dict[str, str] | None = None,
                   preload: str = "") -> float:
    code = f"{preload}\nimport time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = [float(subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True,
                                  env=env).stdout) for _ in range(runs)]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="fresh interpreters per import time (median)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return

    from papersift.sniff import sniff

    print(f"{time.strftime('%Y-%m-%d')}, {platform.python_version()}, load average {os.getloadavg()[0]:.2f}; "
          f"command: .venv/bin/python bench/signature_libraries.py --runs {args.runs}")
    samples = build_samples()
    SAMPLES.mkdir(parents=True, exist_ok=True)
    for old in SAMPLES.iterdir():
        old.unlink()
    for index, (_, _, _, data) in enumerate(samples):
        (SAMPLES / f"{index:02d}").write_bytes(data)
    ours = [sniff(data).kind for _, _, _, data in samples]
    sniff_seconds = typing_seconds(sniff, (data for _, _, _, data in samples))
    python = library_python()
    found = json.loads(subprocess.run([str(python), __file__, "--worker", str(SAMPLES)], capture_output=True,
                                      text=True, check=True).stdout)

    header = ["sample", "source", "papersift.sniff", *(f"{SHOWN[lib]} {found[lib]['version']}" for lib in LIBRARIES)]
    print("\n| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    hits = {name: 0 for name in ("sniff", *LIBRARIES)}
    told_apart = dict(hits)
    for index, ((label, kind, source, _), mine) in enumerate(zip(samples, ours, strict=True)):
        cells = []
        for name, answer in (("sniff", mine), *((lib, found[lib]["answers"][f"{index:02d}"]) for lib in LIBRARIES)):
            as_kind = answer if name == "sniff" else kind_of(answer)
            if label.startswith("look-alike"):
                right = as_kind is None or as_kind in TEXT_KINDS
                told_apart[name] += right
            else:
                right = as_kind == kind
                hits[name] += right
            cells.append(("✓" if as_kind == kind else f"✓ {answer or 'none'}") if right
                         else f"✗ {answer}" if answer else "✗ none")
        print(f"| {label} | {source} | " + " | ".join(cells) + " |")
    print(f"| **identified** | {len(samples) - len(LOOKALIKES)} samples | " + " | ".join(
        f"**{hits[name]}**" for name in ("sniff", *LIBRARIES)) + " |")
    print(f"| **look-alikes told apart** | {len(LOOKALIKES)} samples | " + " | ".join(
        f"**{told_apart[name]}**" for name in ("sniff", *LIBRARIES)) + " |")

    env = {**os.environ, "PYTHONPATH": str(REPO / "layers" / "papersift" / "python")}
    print(f"\nImport: median of {args.runs} fresh interpreters; \"added\" first imports the standard library "
          f"sniff uses ({STDLIB_OF_SNIFF.removeprefix('import ')}), which the plan function loads anyway.\n")
    print(f"| module | import, ms | added import, ms | typing all {len(samples)} samples (median of 5 passes), ms |")
    print("|---|---|---|---|")
    for name, interpreter, module, seconds in (
            ("papersift.sniff", Path(sys.executable), "papersift.sniff", sniff_seconds),
            *((SHOWN[lib], python, lib, found[lib]["seconds"]) for lib in LIBRARIES)):
        cold = import_seconds(interpreter, module, args.runs, env)
        added = import_seconds(interpreter, module, args.runs, env, STDLIB_OF_SNIFF)
        print(f"| {name} | {cold * 1000:.1f} | {added * 1000:.1f} | {seconds * 1000:.1f} |")


if __name__ == "__main__":
    main()
