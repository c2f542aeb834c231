"""Progress output: a redrawn line only on a terminal, plain lines in logs."""

from __future__ import annotations

import io

from papersift_cli.progress import Progress


def test_without_a_terminal_only_plain_per_file_lines_are_written() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream=stream)
    progress.update(pages_done=3, current="a.pdf")
    progress.finished("a.pdf", "clean", 3, 1.25)
    progress.finished("b.pdf", "encrypted", 0, 0.5, "no password opens it")
    progress.close()
    assert "\r" not in stream.getvalue()
    assert stream.getvalue().splitlines() == [
        "[1/2] a.pdf: clean, 3 page(s), 1.2s",
        "[2/2] b.pdf: encrypted, 0 page(s), 0.5s (no password opens it)",
    ]


def test_on_a_terminal_the_status_line_is_redrawn_and_cleared_before_file_lines() -> None:
    stream = io.StringIO()
    progress = Progress(1, stream=stream, live=True)
    progress.update(pages_done=7, current="long.pdf")
    assert "\rpapersift: 0/1 files, 7 pages | long.pdf" in stream.getvalue()
    progress.finished("long.pdf", "clean", 9, 2.0)
    progress.close()
    assert " \r[1/1] long.pdf: clean, 9 page(s), 2.0s\n" in stream.getvalue()  # live line wiped first
    assert stream.getvalue().endswith("\r")


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_stream_whose_reader_has_gone_is_dropped_and_the_run_goes_on() -> None:
    progress = Progress(2, stream=_ClosedPipe(), live=True)
    progress.update(pages_done=1, current="a.pdf")
    progress.finished("a.pdf", "clean", 1, 0.1)
    progress.log("papersift: gave up waiting")
    progress.close()
    assert progress.files_done == 1 and not progress.live
