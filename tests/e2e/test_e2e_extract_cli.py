"""`papersift extract` as a user runs it: inputs read side by side, each written out the moment it
is done, its work folder inside the output folder and gone at the end (a killed run's is removed
by the next run)."""

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


def slow_scan(path: Path, frames: int = 6) -> Path:
    """A picture document of several frames: seconds of OCR."""
    images = [text_image() for _ in range(frames)]
    images[0].save(path, format="TIFF", save_all=True, append_images=images[1:])
    return path


def test_a_finished_input_is_written_while_a_slow_one_is_still_read(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    slow_scan(inputs / "a-slow-scan.tif")
    (inputs / "b-note.txt").write_text("The ferry leaves at dawn from the northern pier.\n")
    out = tmp_path / "out"
    process = subprocess.Popen([str(PAPERSIFT), "extract", str(inputs), "--out", str(out), "--quiet",
                                "--ocr", "local-only"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: (out / "b-note.txt" / "report.json").exists())
        assert process.poll() is None, "the note was written before the scan was done"
        assert [p.name for p in out.glob(".papersift-work-*")], "the work folder is in the output folder"
    finally:
        assert process.wait(timeout=300) == 0, process.stderr.read() if process.stderr else ""
    assert (out / "a-slow-scan.tif" / "text.txt").read_text().count("quick brown fox") == 6
    assert not list(out.glob(".papersift-work-*")), "no work folder left behind"


def test_a_killed_run_leaves_its_work_in_the_output_folder_and_the_next_run_removes_it(tmp_path: Path) -> None:
    scan = slow_scan(tmp_path / "scan.tif")
    out = tmp_path / "out"
    process = subprocess.Popen([str(PAPERSIFT), "extract", str(scan), "--out", str(out), "--quiet",
                                "--ocr", "local-only"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for(lambda: list(out.glob(".papersift-work-*/.papersift-work-folder")))
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    (left,) = out.glob(".papersift-work-*")
    note = tmp_path / "note.txt"
    note.write_text("A second run over the same output folder.\n")
    done = subprocess.run([str(PAPERSIFT), "extract", str(note), "--out", str(out), "--quiet"], check=False)
    assert done.returncode == 0
    assert not left.exists() and not list(out.glob(".papersift-work-*"))


# a pid no process has (above the kernel's pid_max limit): the "owner" of the last two is gone
@pytest.mark.parametrize("name", [".papersift-work-keep.txt", ".papersift-work-4194305-abcdefgh",
                                  ".papersift-tmp-4194305-0a1b2c3d"])
def test_a_result_folder_named_like_the_work_folder_survives_the_next_extract_into_it(tmp_path: Path,
                                                                                      name: str) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / name).write_text("A note whose name looks like a work folder.\n")
    out = tmp_path / "out"
    first = subprocess.run([str(PAPERSIFT), "extract", str(inputs / name), "--out", str(out),
                            "--quiet"], check=False)
    assert first.returncode == 0
    kept = out / name
    assert "work folder" in (kept / "text.txt").read_text()
    note = tmp_path / "note.txt"
    note.write_text("A second run over the same output folder.\n")
    second = subprocess.run([str(PAPERSIFT), "extract", str(note), "--out", str(out), "--quiet"], check=False)
    assert second.returncode == 0
    assert (kept / "report.json").is_file() and (kept / "text.txt").is_file()
    assert (out / "note.txt" / "report.json").is_file()


def test_ctrl_c_stops_the_lanes_and_their_workers_and_says_so(tmp_path: Path) -> None:
    """Ctrl-C as a terminal sends it, to the command's process group."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name in ("a-scan.tif", "b-scan.tif"):
        slow_scan(inputs / name, frames=30)
    out = tmp_path / "out"
    # a session of its own: Ctrl-C reaches the whole process group, as a terminal sends it
    process = subprocess.Popen([str(PAPERSIFT), "extract", str(inputs), "--out", str(out), "--quiet",
                                "--ocr", "local-only"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    assert wait_for(lambda: list(out.glob(".papersift-work-*/work")))
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert b"papersift: interrupted" in stderr and b"Traceback" not in stderr
    # lanes lead process groups of their own, in the command's session
    assert wait_for(lambda: not _processes_in_session(process.pid), seconds=30), "a lane or worker outlived it"
    assert not list(out.glob(".papersift-work-*"))


def _processes_in_session(session: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session and fields[0] != "Z":  # zombies are already gone
                found.append(int(entry.name))
    return found


def test_kill_9_of_extract_ends_its_lanes_and_workers_and_the_next_run_removes_their_folders(
    tmp_path: Path
) -> None:
    """kill -9 of the command while two lanes read long PDFs: within seconds no process of the run is
    left, a reader of its stdout sees the end (`| cat` ends), and the lanes' folders, named after the
    killed pid, are removed by the next run (issue 20)."""
    from pdf_factory import numbered_pdf

    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for index in range(4):
        (inputs / f"long-{index}.pdf").write_bytes(numbered_pdf(1500))
    temp = tmp_path / "tmp"
    temp.mkdir()
    marker = f"SIFT_TEST_RUN={os.getpid()}-{time.monotonic_ns()}"
    env = {**os.environ, "TMPDIR": str(temp), marker.split("=")[0]: marker.split("=")[1]}
    process = subprocess.Popen([str(PAPERSIFT), "extract", str(inputs), "--out", str(tmp_path / "out"), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        assert wait_for(lambda: len(list(temp.glob("papersift-lane-*"))) == 2)
        lanes = list(temp.glob(f"papersift-lane-{process.pid}-*"))
        assert len(lanes) == 2, "the lanes' folders are named after the command's pid"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert wait_for(lambda: not processes_with(marker), seconds=5), "a lane or worker outlived the command"
        assert process.stdout is not None and process.stdout.read() == b"", "stdout reached its end"
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
    note = tmp_path / "note.txt"
    note.write_text("A second run, after the killed one.\n")
    done = subprocess.run([str(PAPERSIFT), "extract", str(note), "--out", str(tmp_path / "out"), "--quiet"],
                          check=False, env=env, stdout=subprocess.DEVNULL)
    assert done.returncode == 0
    assert not any(lane.exists() for lane in lanes)


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_stop_extract_like_ctrl_c_and_leave_no_temporary_folder(
    tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    """What `timeout`, systemd and a closed terminal send, to the command alone: it says so, exits
    128 + the signal's number, and leaves no process, work folder or temporary folder (issue 20)."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name in ("a-scan.tif", "b-scan.tif"):
        slow_scan(inputs / name, frames=30)
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "out"
    marker = f"SIFT_TEST_RUN={os.getpid()}-{time.monotonic_ns()}"
    env = {**os.environ, "TMPDIR": str(temp), marker.split("=")[0]: marker.split("=")[1]}
    process = subprocess.Popen([str(PAPERSIFT), "extract", str(inputs), "--out", str(out), "--quiet",
                                "--ocr", "local-only"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert wait_for(lambda: list(out.glob(".papersift-work-*/work")))
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == code, stderr
    assert b"papersift: interrupted (" + stop.name.encode() + b")" in stderr and b"Traceback" not in stderr
    assert wait_for(lambda: not processes_with(marker), seconds=10), "a lane or worker outlived it"
    assert not list(out.glob(".papersift-work-*")) and not list(temp.iterdir())


_MODULES_AFTER_EXTRACT = """import sys
from papersift_cli.main import main
main(["extract", sys.argv[1], "--out", sys.argv[2], "--quiet", "--ocr", sys.argv[3]])
print("papersift.steps.ocr" in sys.modules, "PIL.Image" in sys.modules)"""


@pytest.mark.parametrize(("ocr", "loads_ocr_stage"), [("off", False), ("local-first", True)])
def test_with_ocr_off_a_native_pdf_is_read_without_loading_the_ocr_stage(tmp_path: Path, ocr: str,
                                                                         loads_ocr_stage: bool) -> None:
    """No engine reads a page with OCR off, so none is looked for: the OCR stage (PIL, Tesseract's
    wrapper, the renderer) is ~0.09 s of a small file's process floor."""
    from pdf_factory import text_pdf

    pdf = tmp_path / "native.pdf"
    pdf.write_bytes(text_pdf(["A native page with enough words on it to be trusted as its own text layer."]))
    run = subprocess.run([sys.executable, "-c", _MODULES_AFTER_EXTRACT, str(pdf), str(tmp_path / "out"), ocr],
                         capture_output=True, text=True, check=True)
    assert run.stdout.split()[-2:] == [str(loads_ocr_stage)] * 2
    assert (tmp_path / "out" / "native.pdf" / "text.txt").read_text(encoding="utf-8").startswith("A native page")
