"""What a new user hits on the command line (issue 22), through the real `papersift` command: bad
usage is one line and exit 2 before any work starts; an input it cannot read fails alone, named as
the user gave it; a closed pipe ends it quietly; a missing extra names its install command."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from importlib.metadata import version
from pathlib import Path

import pytest
from scan_factory import LINES, text_image

pytestmark = pytest.mark.slow

PAPERSIFT = Path(sys.executable).with_name("papersift")
NOTE = "The ferry leaves at dawn from the northern pier.\n"


def papersift(*args: str | Path, env: dict[str, str] | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PAPERSIFT), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


def one_line_usage_error(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"papersift: error: {says}"]
    assert done.stdout == ""


def note(folder: Path, name: str = "note.txt") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(NOTE, encoding="utf-8")
    return path


# -- bad usage: one line, exit 2, nothing started ---------------------------------------------------


@pytest.mark.parametrize("command", ["extract", "run"])
def test_an_out_that_is_a_file_is_a_one_line_usage_error(command: str, tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("not a folder", encoding="utf-8")
    done = papersift(command, note(tmp_path), "--out", taken, "--quiet")
    one_line_usage_error(done, f"--out {taken} is a file, not a folder")
    assert taken.read_text(encoding="utf-8") == "not a folder"


def test_an_out_that_cannot_be_made_is_a_one_line_usage_error(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file" / "out"  # its parent is a file: no user can make it, root neither
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    done = papersift("extract", note(tmp_path), "--out", blocked, "--quiet")
    one_line_usage_error(done, f"--out {blocked}: cannot make the folder: not a directory")


@pytest.mark.parametrize("value", ["-1", "0", "nan"])
def test_a_timeout_not_above_zero_is_refused_before_anything_runs(value: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = papersift("run", note(tmp_path), "--out", out, "--timeout", value, "--quiet")
    one_line_usage_error(done, f"--timeout must be a number of seconds above 0, not {float(value):g}")
    assert not out.exists()


@pytest.mark.parametrize("command", ["extract", "run"])
def test_a_misspelt_papersift_variable_is_refused_naming_the_nearest_before_anything_is_written(
        command: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = papersift(command, note(tmp_path), "--out", out, "--quiet",
                     env={**os.environ, "PAPERSIFT_OCR_MODEE": "off"})
    one_line_usage_error(done, "unknown environment variable PAPERSIFT_OCR_MODEE (nearest: PAPERSIFT_OCR_MODE): "
                               "unset it or correct its name")
    assert not out.exists()


def test_a_build_scripts_papersift_variable_is_no_setting_and_run_goes_on(tmp_path: Path) -> None:
    """PAPERSIFT_SKIP_LAYER_BUILD (exported for `cdk synth`) once made the local handlers' settings fail: exit 1."""
    out = tmp_path / "out"
    done = papersift("run", note(tmp_path), "--out", out, "--quiet",
                     env={**os.environ, "PAPERSIFT_SKIP_LAYER_BUILD": "1"})
    assert done.returncode == 0, done.stderr
    assert (out / "note.txt" / "text.txt").read_text(encoding="utf-8") == NOTE


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_a_port_out_of_range_is_refused_instead_of_serving_on_another(port: str) -> None:
    done = papersift("serve", "--port", port, timeout=60)
    one_line_usage_error(done, f"--port must be 0 to 65535, not {port}")


def test_version_is_the_installed_packages() -> None:
    done = papersift("--version", timeout=60)
    assert done.returncode == 0
    assert done.stdout == f"papersift {version('papersift')}\n"


# -- inputs it cannot read: that input fails, the rest go on -----------------------------------------


@pytest.fixture
def odd_inputs(tmp_path: Path) -> Path:
    """A readable note beside a FIFO and a dangling symlink: entries no user can read as a file."""
    folder = tmp_path / "inputs"
    note(folder, "b-note.txt")
    os.mkfifo(folder / "a-pipe")
    (folder / "c-gone.pdf").symlink_to(tmp_path / "deleted.pdf")
    return folder


def folder_status(out: Path, name: str) -> dict[str, str]:
    return dict(json.loads((out / name / "status.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("command", ["extract", "run"])
def test_a_fifo_and_a_dangling_symlink_fail_alone_named_as_given(command: str, odd_inputs: Path,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = papersift(command, odd_inputs, "--out", out)
    assert done.returncode == 0, done.stderr  # a bad input is a result
    assert "Traceback" not in done.stderr
    pipe, gone = odd_inputs / "a-pipe", odd_inputs / "c-gone.pdf"
    assert folder_status(out, "a-pipe") == {"status": "failed",
                                            "reason": f"{pipe} is a named pipe (FIFO), not a regular file"}
    assert folder_status(out, "c-gone.pdf") == {
        "status": "failed", "reason": f"{gone} is a symbolic link to {tmp_path / 'deleted.pdf'}, which does not exist"}
    assert "ferry leaves at dawn" in (out / "b-note.txt" / "text.txt").read_text(encoding="utf-8")
    assert f"a-pipe: failed, 0 page(s), 0.0s ({pipe} is a named pipe (FIFO)" in done.stderr
    assert "2 not extracted" in done.stdout


#: a sitecustomize that makes the open of one path (DENY_OPEN_OF; not PAPERSIFT_*, which are settings) fail as chmod 000
#: does for any user but root (the tests may run as root, whom no mode stops)
DENY_OPEN = textwrap.dedent('''
    import builtins, errno, io, os

    _denied = os.environ["DENY_OPEN_OF"]
    _open = io.open

    def _guarded(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.path.abspath(os.fspath(file)) == _denied:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(file))
        return _open(file, *args, **kwargs)

    builtins.open = io.open = _guarded
''')


def unreadable(path: Path, tmp_path: Path) -> dict[str, str]:
    """``path`` made unreadable to the command: chmod 000, or as root the hook above. The env."""
    env = dict(os.environ)
    if os.geteuid() != 0:
        path.chmod(0)
        return env
    hooks = tmp_path / "deny-open"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(DENY_OPEN, encoding="utf-8")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hooks), env.get("PYTHONPATH")]))
    env["DENY_OPEN_OF"] = str(path.resolve())
    return env


@pytest.mark.parametrize("command", ["extract", "run"])
def test_an_unreadable_input_fails_with_its_own_path_and_the_file_beside_it_is_written(
        command: str, tmp_path: Path) -> None:
    inputs = tmp_path / "inputs"
    locked = note(inputs, "a-locked.txt")
    note(inputs, "b-open.txt")
    env = unreadable(locked, tmp_path)
    out = tmp_path / "out"
    done = papersift(command, inputs, "--out", out, "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    assert folder_status(out, "a-locked.txt") == {"status": "failed",
                                                  "reason": f"cannot read {locked}: permission denied"}
    assert "ferry leaves at dawn" in (out / "b-open.txt" / "text.txt").read_text(encoding="utf-8")
    assert ".papersift-work" not in done.stdout + done.stderr


# -- a reader that goes away --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["extract", "run"])
def test_a_closed_stdout_ends_quietly_with_the_runs_own_exit_code(command: str, tmp_path: Path) -> None:
    """`papersift run ... | head`: the reader is gone before the summary is written."""
    out = tmp_path / "out"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([str(PAPERSIFT), command, note(tmp_path), "--out", out], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=300, check=False)
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert (out / "note.txt" / "text.txt").is_file()


# -- a missing extra -----------------------------------------------------------------------------------


#: a sitecustomize that makes the modules in NOT_INSTALLED_MODULES uninstalled
BLOCK_IMPORTS = textwrap.dedent('''
    import os, sys

    _missing = set(os.environ["NOT_INSTALLED_MODULES"].split(","))

    class _NotInstalled:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in _missing:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _NotInstalled())
''')


def without(modules: str, tmp_path: Path) -> dict[str, str]:
    hooks = tmp_path / "not-installed"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(BLOCK_IMPORTS, encoding="utf-8")
    env = dict(os.environ, NOT_INSTALLED_MODULES=modules)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hooks), env.get("PYTHONPATH")]))
    return env


def test_run_without_the_local_extra_names_moto_and_the_install_command(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = papersift("run", note(tmp_path), "--out", out, env=without("moto", tmp_path))
    one_line_usage_error(done, "`papersift run` needs the local extra (moto is not installed): "
                               "pip install 'papersift[local]'")
    assert not out.exists()


@pytest.mark.parametrize("missing", ["werkzeug", "moto"])
def test_serve_without_the_local_extra_names_the_package_and_the_install_command(missing: str,
                                                                                 tmp_path: Path) -> None:
    done = papersift("serve", "--port", "0", env=without(missing, tmp_path), timeout=60)
    one_line_usage_error(done, f"`papersift serve` needs the local extra ({missing} is not installed): "
                               "pip install 'papersift[local]'")


def test_run_with_the_export_step_on_and_no_pyarrow_names_the_export_extra(tmp_path: Path) -> None:
    """export_parquet puts the export step in the workflow: without pyarrow each document's export
    would fail, recorded one by one, so the run refuses to start, naming the install command."""
    config = tmp_path / "papersift.toml"
    config.write_text("[papersift]\nexport_parquet = true\n", encoding="utf-8")
    out = tmp_path / "out"
    done = papersift("run", note(tmp_path), "--out", out, "--config", config, env=without("pyarrow", tmp_path))
    one_line_usage_error(done, "setting export_parquet: Parquet needs pyarrow, which is not installed: "
                               "pip install 'papersift[export]'")
    assert not out.exists()


def test_doctor_needs_pyarrow_only_with_the_export_step_on(tmp_path: Path) -> None:
    config = tmp_path / "papersift.toml"
    config.write_text('[papersift]\nocr_mode = "off"\nexport_parquet = true\n', encoding="utf-8")
    env = without("pyarrow", tmp_path)
    needed = papersift("doctor", "--config", config, "--out", tmp_path, env=env)
    assert needed.returncode == 1, needed.stdout + needed.stderr
    assert "FAIL pyarrow: not installed (Parquet exports): pip install 'papersift[export]'" in needed.stdout
    config.write_text('[papersift]\nocr_mode = "off"\n', encoding="utf-8")
    optional = papersift("doctor", "--config", config, "--out", tmp_path, env=env)
    assert "WARN pyarrow: not installed" in optional.stdout
    assert "FAIL pyarrow" not in optional.stdout, optional.stdout


def test_extract_needs_no_local_extra(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = papersift("extract", note(tmp_path), "--out", out, "--quiet", env=without("moto,werkzeug", tmp_path))
    assert done.returncode == 0, done.stderr
    assert (out / "note.txt" / "text.txt").is_file()


# -- the live line on a terminal -----------------------------------------------------------------------


def scan(path: Path, frames: int) -> Path:
    """A picture document: seconds of OCR, a page at a time (each frame its own words: repeated
    frames are read once)."""
    images = [text_image([f"Page {number} of the scanned minutes", *LINES]) for number in range(1, frames + 1)]
    images[0].save(path, format="TIFF", save_all=True, append_images=images[1:])
    return path


def live_lines_on_a_terminal(inputs: Path, tmp_path: Path, *options: str) -> str:
    """What `papersift extract` draws on stderr when stderr is a terminal (a pty)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([str(PAPERSIFT), "extract", str(inputs), "--out", str(tmp_path / "out"), "--ocr",
                                "local-only", *options], stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            if select.select([leader], [], [], 1)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the command closed its end
                    break
                if not chunk:
                    break
                seen += chunk
            elif process.poll() is not None:
                break
    finally:
        assert process.wait(timeout=300) == 0
        os.close(leader)
    return seen.decode("utf-8", errors="replace")


def live_states(text: str, until: str) -> list[str]:
    """The live line's states drawn before ``until`` appears."""
    return [line.strip() for line in text.split(until, 1)[0].split("\r") if line.strip().startswith("papersift: ")]


def pages_of(line: str) -> int:
    return int(line.split(" files, ", 1)[1].split(" pages", 1)[0])


def test_the_live_line_names_the_input_a_lane_reads_now_and_counts_its_pages_as_they_are_read(
        tmp_path: Path) -> None:
    """Two lanes, three inputs: the scan (largest, so first) runs while the two notes finish; the
    live line (drawn only on a terminal) names it, and its page count moves before it is done."""
    inputs = tmp_path / "inputs"
    note(inputs, "a-note.txt")
    note(inputs, "b-note.txt")
    scan(inputs / "c-scan.tif", 8)
    config = tmp_path / "papersift.toml"
    config.write_text("[papersift]\nparallel_files = 2\n", encoding="utf-8")
    live = live_states(live_lines_on_a_terminal(inputs, tmp_path, "--config", str(config)), "c-scan.tif: ")
    assert any(line.endswith("| c-scan.tif") for line in live), live
    counts = [pages_of(line) for line in live if line.startswith("papersift: 2/3 files")]  # the notes are done
    assert len(set(counts)) > 1 and max(counts) > 2, live


def test_a_single_input_on_a_terminal_shows_its_pages_as_they_are_read(tmp_path: Path) -> None:
    single = scan(tmp_path / "scan.tif", 6)
    live = live_states(live_lines_on_a_terminal(single, tmp_path), "scan.tif: ")
    counts = [pages_of(line) for line in live]
    assert any(line.endswith("| scan.tif") for line in live), live
    assert 0 < max(counts) <= 6 and len(set(counts)) > 2, live
