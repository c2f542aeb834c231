"""Peak memory of the hostile inputs (issue 20): every process of `papersift run` and `papersift
extract` over the bad-input suite stays under 1 GiB, and which input drives the peak.

    .venv/bin/python bench/hostile_memory.py       # both commands over all, then each big input alone (both)
    .venv/bin/python bench/hostile_memory.py --commands extract --alone all --only-alone
    .venv/bin/python bench/hostile_memory.py --alone one-line-100mb.html,words-120mb.docx --only-alone

The inputs, written into a temporary folder: tests/hostile_factory.py's ``hostile_cases(big=True)``
(the issue-11 suite: bombs, XXE, traversal, odd names, 50 MB of random bytes, an 11 MB one-line
HTML, twenty 600 KB paragraphs) and the second set issue 20 names as candidates for its 1,358 MiB:
``one-line-100mb.html`` (100 MB of words on one line in one <p>), ``words-120mb.docx`` (a 120 MB
word/document.xml of paragraphs of prose) and ``million-rows.xlsx`` (a sheet of 1,000,000 rows
of a number and a phrase), built streamed, never held whole here. The commands run with the
settings test_e2e_hostile.py uses (``max_archive_members = 10``), otherwise the defaults.

Per command: exit, wall, CPU, the peak RSS from ``os.wait4`` (the command or any descendant it
reaped), the command's own high-water mark, and the largest other process (a lane, a page worker,
the fork server, tesseract) with its command line, sampled from /proc every 0.1 s
(bench/common.py's run_measured). Then each big input (``--alone big``, the default: the inputs
of 10 MB or more) or every input (``--alone all``) alone through `papersift extract` and
`papersift run` (``--alone-commands``): the same numbers, which say which input drives the
peak. One command at a time: the machine is shared.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shlex
import shutil
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAPERSIFT = REPO / ".venv" / "bin" / "papersift"
MB = 1024 * 1024
#: the settings of tests/e2e/test_e2e_hostile.py (the issue-11 run)
CONFIG = "[papersift]\nmax_archive_members = 10\n"
GIB_MB = 1024.0

sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))
from common import WORDS, Measured, become_subreaper, paragraph, run_measured  # noqa: E402
from hostile_factory import (  # noqa: E402
    Hostile,
    docx_package,
    hostile_cases,
    one_line_html,
    plant_secret,
    word_document,
    write_cases,
    xlsx_package,
)

# -- the issue-20 set ------------------------------------------------------------------------------


def _prose(seed: int, count: int = 2000) -> list[str]:
    """Paragraphs cycled through a big part: a period (~1 MB) beyond deflate's 32 KB window, so the
    part compresses like prose (~3x), not like a bomb."""
    rng = random.Random(seed)
    return [paragraph(rng, rng.randint(3, 8)) for _ in range(count)]


def _package_with_big_part(target: Path, package: bytes, name: str, head: bytes, body: Iterator[bytes],
                           tail: bytes) -> None:
    """``package``'s parts, with part ``name`` replaced by head + body + tail written streamed."""
    with zipfile.ZipFile(io.BytesIO(package)) as source, \
            zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as out:
        for info in source.infolist():
            if info.filename != name:
                out.writestr(info.filename, source.read(info))
        with out.open(name, "w", force_zip64=True) as part:
            part.write(head)
            for chunk in body:
                part.write(chunk)
            part.write(tail)


def words_docx(target: Path, size: int) -> None:
    marker = "@@BODY@@"
    head, tail = word_document("", [marker]).encode().split(
        f'<w:p><w:r><w:t xml:space="preserve">{marker}</w:t></w:r></w:p>'.encode())

    def body() -> Iterator[bytes]:
        written = 0
        paragraphs = _prose(20)
        while written < size:
            for text in paragraphs:
                chunk = f'<w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'.encode()
                written += len(chunk)
                yield chunk
                if written >= size:
                    return

    _package_with_big_part(target, docx_package(word_document("", [marker])), "word/document.xml", head, body(),
                           tail)


def million_rows_xlsx(target: Path, rows: int) -> None:
    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<worksheet {ns}><dimension ref="A1:B{rows}"/><sheetData>'.encode()
    rng = random.Random(21)
    phrases = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))) for _ in range(5000)]

    def body() -> Iterator[bytes]:
        for r in range(1, rows + 1):
            yield (f'<row r="{r}"><c r="A{r}"><v>{r * 7 % 100003}</v></c>'
                   f'<c r="B{r}" t="inlineStr"><is><t>{phrases[r % len(phrases)]}</t></is></c></row>').encode()

    _package_with_big_part(target, xlsx_package("<worksheet/>"), "xl/worksheets/sheet1.xml", head, body(),
                           b"</sheetData></worksheet>")


def issue20_cases() -> list[Hostile]:
    ok = frozenset({"clean"})
    return [
        Hostile("one-line-100mb.html", lambda t, s: one_line_html(t, 100 * MB), ok, "100 MB of words on one line"),
        Hostile("words-120mb.docx", lambda t, s: words_docx(t, 120 * MB), ok, "a 120 MB word/document.xml"),
        Hostile("million-rows.xlsx", lambda t, s: million_rows_xlsx(t, 1_000_000), ok, "1,000,000 rows"),
    ]


# -- running -------------------------------------------------------------------------------------


def command(name: str, inputs: Path, out: Path, config: Path) -> list[str]:
    argv = [str(PAPERSIFT), name, str(inputs), "--out", str(out), "--config", str(config), "--quiet"]
    return argv + (["--timeout", "3600"] if name == "run" else [])


def statuses(out: Path) -> Counter[str]:
    found: Counter[str] = Counter()
    for report in out.glob("*/report.json"):
        found[str(json.loads(report.read_text(encoding="utf-8")).get("status"))] += 1
    return found


def row(label: str, name: str, m: Measured, found: Counter[str]) -> str:
    over = " **over 1 GiB**" if max(m.peak_rss_mb, m.main_rss_mb, m.largest_mb) >= GIB_MB else ""
    shown = ", ".join(f"{s} {n}" for s, n in sorted(found.items())) or "-"
    return (f"| {label} | {name} | {m.exit_code} | {m.wall:.1f} | {m.cpu:.1f} | {m.peak_rss_mb:.0f} | "
            f"{m.main_rss_mb:.0f} | {m.largest_mb:.0f} `{m.largest}` | {shown}{over} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commands", default="extract,run", help="the whole set through these (extract,run)")
    parser.add_argument("--alone", default="big", help="big (inputs of 10 MB or more), all, none, or input names")
    parser.add_argument("--only-alone", action="store_true", help="skip the whole-set runs")
    parser.add_argument("--alone-commands", default="extract,run", help="each input alone through these")
    parser.add_argument("--no-issue20", action="store_true", help="only the issue-11 suite")
    args = parser.parse_args(argv)

    subreaper = become_subreaper()
    print("# hostile inputs: peak RSS per process\n")
    print(f"- command: `{' '.join(shlex.quote(a) for a in ['bench/hostile_memory.py', *sys.argv[1:]])}`")
    if not subreaper:
        print("- (not a subreaper here: descendants left behind are not counted)")
    with tempfile.TemporaryDirectory(prefix="papersift-hostile-") as tmp:
        root = Path(tmp)
        secret = plant_secret(root / "secret")
        cases = hostile_cases(big=True) + ([] if args.no_issue20 else issue20_cases())
        paths = write_cases(root / "inputs", secret, cases)
        config = root / "papersift.toml"
        config.write_text(CONFIG, encoding="utf-8")
        total = sum(p.stat().st_size for p in paths)
        print(f"- inputs: {len(paths)} files, {total / MB:.0f} MiB; settings: `{CONFIG.strip()}`")
        print("\n| input | command | exit | wall s | CPU s | peak RSS MB (wait4) | main process MB "
              "| largest descendant MB | statuses |")
        print("|---|---|---:|---:|---:|---:|---:|---|---|", flush=True)
        runs = [] if args.only_alone else [c for c in args.commands.split(",") if c]
        for name in runs:
            print(f"  all: papersift {name} ...", file=sys.stderr, flush=True)
            out = root / f"out-{name}"
            m = run_measured(command(name, root / "inputs", out, config), cwd=root)
            print(row(f"all {len(paths)}", name, m, statuses(out)), flush=True)
            if m.exit_code:
                print("  " + m.output.decode(errors="replace")[-600:], file=sys.stderr)
        if args.alone == "none":
            return 0
        names = set(args.alone.split(",")) if args.alone not in ("big", "all") else set()
        for path in paths:
            wanted = (args.alone == "all" or (args.alone == "big" and path.stat().st_size >= 10 * MB)
                      or path.name in names)
            if not wanted:
                continue
            for name in [c for c in args.alone_commands.split(",") if c]:
                print(f"  alone: {path.name!r} through {name} ...", file=sys.stderr, flush=True)
                single = root / "single"
                single.mkdir()
                os.link(path, single / path.name)
                out = root / "out-single"
                m = run_measured(command(name, single, out, config), cwd=root)
                print(row(f"`{path.name}` ({path.stat().st_size / MB:.1f} MiB)", name, m, statuses(out)),
                      flush=True)
                for folder in (single, out):
                    _remove(folder)
    return 0


def _remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
