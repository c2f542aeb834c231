"""Times GoblinTools inside its own venv (bench/.venv-goblin), so its pypdf<7 never meets ours.

Reads {"paths": [...], "repeat": N} as JSON on stdin, runs one warm-up pass and N timed passes
over all paths with OCR off, and prints {"version", "times", "failures", "chars", "pages"} as JSON,
``pages`` holding each path's page statuses from GoblinTools' own ExtractionReport
(clean / recovered / corrupt_unrecoverable). Interpreter start and imports are outside the
timings, as they are for the in-process engines.

With ``--whole-process PATH...`` it extracts each path once, as a user's script would, and prints
nothing: the bench times the whole interpreter (start, imports, extraction) from outside.
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


def main() -> None:
    if sys.argv[1:2] == ["--whole-process"]:
        whole_process(sys.argv[2:])
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
