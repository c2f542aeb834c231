"""`papersift run` (the embedded-AWS pipeline) stopped the ways a user's run is stopped: SIGTERM
(`timeout`, systemd, a container runtime), SIGHUP (a closed terminal) and kill -9, each checked by
what is on disk and which processes are left afterwards (issue 20)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_watch import processes_with, wait_for
from scan_factory import text_image

pytestmark = pytest.mark.slow

PAPERSIFT = Path(sys.executable).with_name("papersift")
NOTE = "The ferry leaves at dawn from the northern pier.\n"


def _a_note_and_slow_scans(inputs: Path) -> None:
    """A note that finishes in seconds and a picture document of minutes of OCR."""
    inputs.mkdir()
    (inputs / "a-note.txt").write_text(NOTE)
    # frames that differ: identical ones are read once (the frame survey), in a second
    images = [text_image([f"Frame {n} of the survey notes: the quick brown fox jumps over the lazy dog."] * 12)
              for n in range(1, 41)]
    images[0].save(inputs / "b-scan.tif", format="TIFF", save_all=True, append_images=images[1:])


def _start_run(tmp_path: Path, stderr: int | None = subprocess.PIPE) -> tuple[subprocess.Popen[bytes], str, Path, Path]:
    inputs = tmp_path / "inputs"
    _a_note_and_slow_scans(inputs)
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "out"
    marker = f"SIFT_FAULT_TEST_RUN={os.getpid()}-{time.monotonic_ns()}"
    env = {**os.environ, "TMPDIR": str(temp), marker.split("=")[0]: marker.split("=")[1]}
    process = subprocess.Popen([str(PAPERSIFT), "run", str(inputs), "--out", str(out), "--quiet",
                                "--ocr", "local-only"], stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    return process, marker, temp, out


def _assert_note_complete(out: Path) -> None:
    folder = out / "a-note.txt"
    assert (folder / "text.txt").read_text() == NOTE.rstrip("\n") or NOTE.strip() in (folder / "text.txt").read_text()
    assert (folder / "report.json").is_file() and (folder / "document.md").is_file()


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_stop_run_like_ctrl_c_keeping_what_finished_and_no_temporary_folder(
    tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    process, marker, temp, out = _start_run(tmp_path)
    try:
        assert wait_for(lambda: (out / "a-note.txt" / "report.json").exists() or process.poll() is not None,
                        seconds=300)
        assert process.poll() is None, process.communicate()[1]
        process.send_signal(stop)
        _, stderr = process.communicate(timeout=90)
        assert process.returncode == code, stderr
        assert b"papersift: interrupted (" + stop.name.encode() + b")" in stderr and b"Traceback" not in stderr
        assert b"1 of 2" in stderr and b"a-note.txt" in stderr, stderr
        assert wait_for(lambda: not processes_with(marker, zombies=False), seconds=15), \
            "a process of the run outlived it"
    finally:
        if process.poll() is None:
            process.kill()
        for pid in processes_with(marker, zombies=False):
            os.kill(pid, signal.SIGKILL)
    _assert_note_complete(out)
    assert not list(temp.glob("papersift-*")) and not list(out.glob(".papersift-*"))
    assert sorted(p.name for p in out.iterdir()) == ["a-note.txt"], "only what finished is in the output folder"


def test_kill_9_of_run_leaves_no_process_and_the_next_run_into_the_folder_removes_its_leftovers(
    tmp_path: Path
) -> None:
    process, marker, temp, out = _start_run(tmp_path, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: (out / "a-note.txt" / "report.json").exists(), seconds=300)
        assert wait_for(lambda: list(temp.glob("papersift-*")), seconds=300)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert wait_for(lambda: not processes_with(marker, zombies=False), seconds=10), \
            "a process of the run outlived it"
    finally:
        if process.poll() is None:
            process.kill()
        for pid in processes_with(marker, zombies=False):
            os.kill(pid, signal.SIGKILL)
    left = [*temp.glob("papersift-*"), *out.glob(".papersift-*")]
    note = tmp_path / "second.txt"
    note.write_text("A second run into the same output folder.\n")
    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run([str(PAPERSIFT), "run", str(note), "--out", str(out), "--quiet"], check=False,
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert not any(path.exists() for path in left), left
    assert not list(temp.glob("papersift-*")) and not list(out.glob(".papersift-*"))
    _assert_note_complete(out)
    assert (out / "second.txt" / "report.json").is_file()
