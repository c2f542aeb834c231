"""What the CLI leaves on disk when writing results fails: a document's folder complete or absent,
report.json never beside a partial text, the failed document said as such and the others written.

Faults are injected at the writer's boundaries (``write_file``, ``os.replace``) and, for a real
short write, with a file-size limit in a child process. The full disk through the real commands:
``tests/e2e/test_e2e_full_disk.py``."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from papersift_cli import output
from papersift_cli.leftovers import make_output_folder, output_marker, remove_stale_output
from papersift_cli.output import FileResult, ResultWriter, print_summary

RESULT_FILES = {"document.md", "report.html", "report.json", "text.txt"}


def result(name: str, text: str = "The heron returned to the marsh.\n", members: list[FileResult] | None = None,
           doc_id: str = "") -> FileResult:
    report = {"status": "clean", "reason": "", "doc_id": doc_id or f"d-{name}", "page_count": 1}
    files = {"text.txt": text.encode(), "document.md": text.encode(), "report.html": b"<html></html>",
             "report.json": json.dumps(report).encode()}
    found = FileResult.from_files(name, files, 0.1)
    found.members = members or []
    return found


def refusing(monkeypatch: pytest.MonkeyPatch, file_name: str, error: int = errno.ENOSPC) -> None:
    """Every write of ``file_name`` fails as a full disk (or ``error``) fails it."""
    real = output.write_file

    def write_file(path: Path, data: bytes, exclusive: bool = False) -> None:
        if path.name == file_name:
            raise OSError(error, os.strerror(error))
        real(path, data, exclusive)

    monkeypatch.setattr(output, "write_file", write_file)


def leftovers(out: Path) -> list[str]:
    return [p.name for p in out.rglob(".papersift-*")]


@pytest.mark.parametrize("refused", ["text.txt", "document.md", "report.json"])
def test_a_full_disk_on_one_file_leaves_its_document_failed_with_the_reason_and_the_others_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: str
) -> None:
    writer = ResultWriter(tmp_path, ["big.csv", "small.txt"], flat=False)
    refusing(monkeypatch, refused)
    big = writer.write(0, result("big.csv"))
    monkeypatch.undo()
    small = writer.write(1, result("small.txt"))
    assert (big.status, big.unwritten, small.status, small.unwritten) == ("failed", True, "clean", False)
    assert "no space left on device" in big.reason and str(tmp_path) in big.reason
    assert {p.name for p in (tmp_path / "big.csv").iterdir()} == {"status.json"}
    assert json.loads((tmp_path / "big.csv" / "status.json").read_text())["reason"] == big.reason
    assert {p.name for p in (tmp_path / "small.txt").iterdir()} == RESULT_FILES
    assert leftovers(tmp_path) == []


def test_a_write_failing_in_an_archive_member_leaves_no_member_and_no_archive_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    members = [result("a.txt", doc_id="da"), result("b/c.txt", doc_id="dc")]
    archive = result("bundle.zip", members=members, doc_id="dzip")
    archive.files["report.json"] = json.dumps({
        "doc_id": "dzip", "source": {"bucket": "b", "key": "k", "name": "bundle.zip"}, "detected_type": "zip",
        "mime_type": "application/zip", "detected_by": "magic", "status": "clean", "reason": "", "page_count": 2,
        "members": [{"path": m.name, "status": "clean", "doc_id": m.doc_id} for m in members]}).encode()
    real = output.write_file

    def full_at_the_second_member(path: Path, data: bytes, exclusive: bool = False) -> None:
        if "c.txt" in path.parts:
            raise OSError(errno.EIO, "Input/output error")
        real(path, data, exclusive)

    monkeypatch.setattr(output, "write_file", full_at_the_second_member)
    written = ResultWriter(tmp_path, ["bundle.zip"], flat=False).write(0, archive)
    assert written.status == "failed" and "input/output error" in written.reason and written.members == []
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")] == ["bundle.zip",
                                                                                 "bundle.zip/status.json"]


def test_a_second_run_replaces_the_folder_whole(tmp_path: Path) -> None:
    (tmp_path / "note.txt").mkdir()
    (tmp_path / "note.txt" / "text.clean.txt").write_text("from an earlier run with --clean")
    (tmp_path / "note.txt" / "text.txt").write_text("earlier text")
    ResultWriter(tmp_path, ["note.txt"], flat=False).write(0, result("note.txt", text="new text\n"))
    assert {p.name for p in (tmp_path / "note.txt").iterdir()} == RESULT_FILES
    assert (tmp_path / "note.txt" / "text.txt").read_text() == "new text\n"
    assert leftovers(tmp_path) == []


def test_a_result_folder_is_made_with_the_users_umask_not_private(tmp_path: Path) -> None:
    ResultWriter(tmp_path, ["note.txt"], flat=False).write(0, result("note.txt"))
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "note.txt").stat().st_mode & 0o777 == 0o777 & ~umask
    assert (tmp_path / "note.txt" / "text.txt").stat().st_mode & 0o777 == 0o666 & ~umask


def test_flat_a_failed_report_rename_leaves_an_error_status_and_no_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = ResultWriter(tmp_path, ["big.csv", "small.txt"], flat=True)
    (tmp_path / "big.csv.report.json").write_text('{"status": "clean"}')  # an earlier run's
    real_replace = os.replace

    def replace(source: str | Path, target: str | Path) -> None:
        if str(target).endswith(".report.json"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    big = writer.write(0, result("big.csv"))
    monkeypatch.undo()
    writer.write(1, result("small.txt"))
    assert big.status == "failed" and big.unwritten
    assert (tmp_path / "big.csv.status").read_text() == "error\n"
    assert (tmp_path / "big.csv.txt").read_text() == ""
    assert not (tmp_path / "big.csv.report.json").exists()
    assert (tmp_path / "small.txt.status").read_text() == "ok\n"
    assert json.loads((tmp_path / "small.txt.report.json").read_text())["status"] == "clean"
    assert leftovers(tmp_path) == []


def test_a_real_short_write_never_leaves_a_report_beside_partial_text(tmp_path: Path) -> None:
    """A file-size limit (RLIMIT_FSIZE) lets the kernel write part of text.txt, then refuse (EFBIG):
    the trap of a full disk (a 15 MB text on a 20 MB file system) with no mock in the way."""
    script = textwrap.dedent(f"""
        import json, resource, signal, sys
        from pathlib import Path
        sys.path[:0] = {sys.path!r}
        from test_result_writer import result
        from papersift_cli.output import ResultWriter
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        writer = ResultWriter(Path({str(tmp_path)!r}), ["big.csv", "small.txt"], flat=False)
        big = writer.write(0, result("big.csv", text="x" * (3 << 20)))
        small = writer.write(1, result("small.txt"))
        print(json.dumps([big.status, big.reason, small.status]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).parent)
    big_status, reason, small_status = json.loads(done.stdout)
    assert (big_status, small_status) == ("failed", "clean") and "file too large" in reason
    assert {p.name for p in (tmp_path / "big.csv").iterdir()} == {"status.json"}
    assert {p.name for p in (tmp_path / "small.txt").iterdir()} == RESULT_FILES
    assert leftovers(tmp_path) == []


def test_the_summary_counts_the_documents_whose_results_could_not_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    writer = ResultWriter(tmp_path, ["big.csv", "small.txt"], flat=False)
    refusing(monkeypatch, "text.txt")
    results = [writer.write(0, result("big.csv"))]
    monkeypatch.undo()
    results.append(writer.write(1, result("small.txt")))
    summary = io.StringIO()
    print_summary(results, summary, 1.0)
    assert "1 of them failed as their results could not be written: cannot write its results to" in summary.getvalue()
    assert "1 trusted" in summary.getvalue() and "0 broken" in summary.getvalue()


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_next_run_removes_only_its_own_leftovers_whose_owner_is_gone(tmp_path: Path) -> None:
    """Left by a killed run: a half-written result (marked), a --flat temporary file, a work folder
    (marked). Kept: result folders of inputs named exactly like them (no marker inside), and this
    process's own."""
    gone = dead_pid()
    half = tmp_path / f".papersift-tmp-{gone}-0a1b2c3d"
    work = tmp_path / f".papersift-work-{gone}-abcdefgh"
    for folder, kind in ((half, "tmp"), (work, "work")):
        folder.mkdir()
        (folder / output_marker(kind)).write_text("")
        (folder / "text.txt").write_text("half")
    flat_part = tmp_path / f".papersift-tmp-{gone}-9f8e7d6c"
    flat_part.write_text("half a text")
    named_like_them = [tmp_path / f".papersift-work-{gone}-12345678", tmp_path / f".papersift-tmp-{gone}-87654321",
                       tmp_path / ".papersift-work-keep.txt"]
    for folder in named_like_them:
        folder.mkdir()
        (folder / "report.json").write_text("{}")
    own = make_output_folder(tmp_path, "tmp")
    removed = remove_stale_output(tmp_path)
    assert sorted(removed) == sorted([half, work, flat_part])
    assert all((folder / "report.json").is_file() for folder in named_like_them)
    assert own.is_dir()
