"""Times GoblinTools inside its own venv (bench/.venv-goblin), so its pypdf<7 never meets ours.

Reads {"paths": [...], "repeat": N} as JSON on stdin, runs one warm-up pass and N timed passes
over all paths with OCR off, and prints {"version", "times", "failures", "chars", "pages"} as JSON,
``pages`` holding each path's page statuses from GoblinTools' own ExtractionReport
(clean / recovered / corrupt_unrecoverable). Interpreter start and imports are outside the
timings, as they are for the in-process engines.

With ``--whole-process PATH...`` it extracts each path once, as a user's script would, and prints
nothing: the bench times the whole interpreter (start, imports, extraction) from outside.

With ``--ocr [--lang L] PATH...`` (bench/ocr_throughput.py; needs ``goblintools[local-ocr]``, which
``bench/setup_goblin.sh --ocr`` installs) it extracts each path once through GoblinTools' own OCR
path: ``TextExtractor(ocr_handler=True, ocr_images=True, config=GoblinConfig(ocr=OCRConfig(
tesseract_lang=L)))`` then ``extract_from_file``. A PDF is OCR'd when its text layer has no
meaningful text (``OCRProcessor.extract_text_from_pdf``: pdf2image at ``pdf_ocr_dpi`` 200, a deskew
by projection profiles, ``pytesseract.image_to_string``, pages in a ``multiprocessing.Pool`` of
``cpu_count()`` workers); an image (JPEG/PNG/TIFF, every frame) goes to
``extract_text_from_image`` frame by frame, and only with ``ocr_images=True``. GoblinTools' own
default language is ``por``; L defaults to ``eng``. Prints one JSON object: ``{"version", "files":
{path: {"text", "seconds", "cpu_seconds", "used_ocr", "pages"}}}``, seconds measured inside the
interpreter after the imports (cpu_seconds: this process plus its reaped children: the pool and
tesseract).
"""

from __future__ import annotations

import json
import logging
import sys
import time


def whole_process(paths: list[str]) -> None:
    logging.disable(logging.CRITICAL)
    from goblintools import TextExtractor

    extractor = TextExtractor(ocr_handler=False)
    for path in paths:
        extractor.extract_from_file(path)


def ocr(args: list[str]) -> None:
    import os
    import resource

    language = "eng"
    if args[:1] == ["--lang"]:
        language, args = args[1], args[2:]
    logging.disable(logging.CRITICAL)
    import goblintools
    from goblintools import GoblinConfig, OCRConfig, TextExtractor

    goblintools.configure(suppress_warnings=True)
    extractor = TextExtractor(ocr_handler=True, ocr_images=True,
                              config=GoblinConfig(ocr=OCRConfig(tesseract_lang=language)))

    def cpu() -> float:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    files: dict[str, dict[str, object]] = {}
    for path in args:
        started, cpu_started = time.perf_counter(), cpu()
        try:
            text, error = extractor.extract_from_file(path), None
        except Exception as exc:
            text, error = "", f"{type(exc).__name__}: {exc}"
        report = extractor.last_extraction_report
        files[path] = {"text": text, "seconds": time.perf_counter() - started, "cpu_seconds": cpu() - cpu_started,
                       "used_ocr": bool(getattr(report, "used_ocr", False)) or os.path.splitext(path)[1].lower()
                       not in (".pdf",),
                       "pages": [f"{page.status}:{page.engine}" for page in report.pages] if report is not None else [],
                       "error": error}
    json.dump({"version": goblintools.__version__, "language": language, "files": files}, sys.stdout)


def main() -> None:
    if sys.argv[1:2] == ["--whole-process"]:
        whole_process(sys.argv[2:])
        return
    if sys.argv[1:2] == ["--ocr"]:
        ocr(sys.argv[2:])
        return
    request = json.load(sys.stdin)
    logging.disable(logging.CRITICAL)
    import goblintools
    from goblintools import TextExtractor

    goblintools.configure(suppress_warnings=True)
    paths: list[str] = request["paths"]

    def one_pass() -> tuple[float, int, int]:
        extractor = TextExtractor(ocr_handler=False)  # OCR off: the text-layer path only
        failures = chars = 0
        started = time.perf_counter()
        for path in paths:
            text = extractor.extract_from_file(path)
            failures += not text.strip()
            chars += len(text)
        return time.perf_counter() - started, failures, chars

    extractor = TextExtractor(ocr_handler=False)
    pages: dict[str, list[str]] = {}
    for path in paths:
        extractor.extract_from_file(path)
        report = extractor.last_extraction_report
        pages[path] = [page.status for page in report.pages] if report is not None else []
    times: list[float] = []
    failures = chars = 0
    for _ in range(int(request["repeat"])):
        seconds, failures, chars = one_pass()
        times.append(seconds)
    json.dump({"version": goblintools.__version__, "times": times, "failures": failures, "chars": chars,
               "pages": pages}, sys.stdout)


if __name__ == "__main__":
    main()
