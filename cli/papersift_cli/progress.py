"""Progress for long runs: a redrawn status line on a terminal, plain log lines otherwise.

Logs and CI capture stderr without a terminal; a carriage-return line there is noise, so the
live line is only drawn when the stream is a TTY. Per-file lines are printed in both cases. A
stream whose reader has gone (``2>&1 | head``) is dropped without a word: the run goes on, its
results are on disk.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from typing import TextIO

from papersift.names import shown_name


class Progress:
    def __init__(self, total_files: int, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.total_files = total_files
        self.files_done = 0
        self.pages_done = 0
        self.current = ""
        self._drawn = False
        self._lock = threading.Lock()

    def update(self, pages_done: int | None = None, current: str | None = None) -> None:
        """New counts while files run: redraws the live line (no output without a TTY)."""
        with self._lock:
            if pages_done is not None:
                self.pages_done = pages_done
            if current is not None:
                self.current = current
            if self.live:
                self._draw()

    def finished(self, name: str, status: str, pages: int, seconds: float, reason: str = "") -> None:
        """One file is done: a permanent line, then the live line again."""
        with self._lock:
            self.files_done += 1
            line = (f"[{self.files_done}/{self.total_files}] {shown_name(name)}: {status}, {pages} page(s), "
                    f"{seconds:.1f}s")
            if reason and status not in ("clean",):
                line += f" ({shown_name(reason)})"
            self._clear()
            self._write(line + "\n")
            if self.live:
                self._draw()
            self._flush()

    def log(self, message: str) -> None:
        with self._lock:
            self._clear()
            self._write(message + "\n")
            if self.live:
                self._draw()
            self._flush()

    def close(self) -> None:
        with self._lock:
            self._clear()
            self._flush()

    def _draw(self) -> None:
        width = shutil.get_terminal_size((100, 20)).columns - 1
        line = f"papersift: {self.files_done}/{self.total_files} files, {self.pages_done} pages"
        if self.current:
            line += f" | {shown_name(self.current)}"
        self._write("\r" + line[:width].ljust(width))
        self._flush()
        self._drawn = self.live

    def _clear(self) -> None:
        if self._drawn:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self._write("\r" + " " * width + "\r")
            self._drawn = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
        except BrokenPipeError:
            self._reader_gone()

    def _flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self) -> None:
        """Nothing more to this stream; /dev/null under its descriptor too, so that what is left
        in its buffer goes nowhere at exit instead of ending in a traceback."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self.stream.fileno())
        except (OSError, ValueError):  # not a file (a test's StringIO)
            pass
        finally:
            os.close(devnull)
        self.stream = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the progress
        self.live = False
