"""Times GoblinTools inside its own venv (bench/.venv-goblin), so its pypdf<7 never meets ours.

Reads {"paths": [...], "repeat": N} as JSON on stdin, runs one warm-up pass and N timed passes
over all paths with OCR off, and prints {"version", "times", "failures", "chars"} as JSON.
Interpreter start and imports are outside the timings, as they are for the in-process engines.
"""

from __future__ import annotations

import json
import logging
import sys
import time


def main() -> None:
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

    one_pass()
    times: list[float] = []
    failures = chars = 0
    for _ in range(int(request["repeat"])):
        seconds, failures, chars = one_pass()
        times.append(seconds)
    json.dump({"version": goblintools.__version__, "times": times, "failures": failures, "chars": chars}, sys.stdout)


if __name__ == "__main__":
    main()
