"""The CLI's output layout: any name an input or an archive member can have gets its own safe folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from papersift_cli.output import FileResult, OutputLayout, place_results, safe_component, unique_names, write_folder


def _result(name: str, members: list[FileResult] | None = None, doc_id: str = "") -> FileResult:
    report = {"status": "clean", "reason": "ok", "doc_id": doc_id or f"d-{abs(hash(name))}", "page_count": 1}
    files = {"text.txt": name.encode("utf-8", "surrogateescape"), "report.json": json.dumps(report).encode()}
    result = FileResult.from_files(name, files, 0.1)
    result.members = members or []
    return result


def test_08_dup_and_backslash_08_dup_get_two_folders(tmp_path: Path) -> None:
    results = [_result("08_dup.txt"), _result("..\\08_dup.txt")]
    place_results(results)
    assert len({r.folder for r in results}) == 2
    for result in results:
        write_folder(result, tmp_path)
        assert (tmp_path / result.folder / "text.txt").read_text() == result.name
        assert (tmp_path / result.folder).resolve().parent == tmp_path.resolve()


@pytest.mark.parametrize("name", ["new\nline.txt", "ctrl-\x07\x1b[31m.txt", "invoice-\u202etxt.exe", "N" * 250 + ".txt",
                                  os.fsdecode(b"not-utf8-\xff\xfe.txt"), "..", ".", "a/b", "é" * 200 + ".txt",
                                  "report.json", ""])
def test_any_name_is_one_safe_folder_inside_the_output(tmp_path: Path, name: str) -> None:
    component = safe_component(name)
    assert component not in ("", ".", "..") and "/" not in component and "\n" not in component
    assert "\u202e" not in component and len(component.encode("utf-8")) <= 200
    result = _result(name)
    write_folder(result, tmp_path)
    assert (tmp_path / result.folder / "report.json").is_file()
    assert (tmp_path / result.folder).resolve().parent == tmp_path.resolve()


def test_names_that_collide_after_sanitizing_or_in_case_get_numbered_folders() -> None:
    layout = OutputLayout()
    folders = [layout.stem(n) for n in ("a\x01.txt", "a\x02.txt", "A_.txt", "a_.txt")]
    assert folders == ["a_.txt", "a_ (2).txt", "A_ (3).txt", "a_ (4).txt"]


def test_a_member_that_is_both_a_file_and_a_folder_writes_both(tmp_path: Path) -> None:
    members = [_result("x.txt", doc_id="dx"), _result("x.txt/report.json", doc_id="dxr"),
               _result("text.txt/text.txt", doc_id="dtt"), _result("text.txt", doc_id="dt")]
    archive = _result("names.zip", members, doc_id="dzip")
    archive.files["report.json"] = json.dumps({
        "doc_id": "dzip", "source": {"bucket": "b", "key": "k", "name": "names.zip"}, "detected_type": "zip",
        "mime_type": "application/zip", "detected_by": "magic", "status": "clean", "reason": "", "page_count": 0,
        "members": [{"path": m.name, "status": "clean", "doc_id": m.doc_id} for m in members]}).encode()
    place_results([archive])
    write_folder(archive, tmp_path)
    written = {m.name: (tmp_path / m.folder / "text.txt").read_text() for m in members}
    assert written == {m.name: m.name for m in members}
    page = (tmp_path / archive.folder / "report.html").read_text()
    assert 'href="members/x.txt/report.json_/report.html"' in page


def test_deep_member_paths_are_folded_below_the_path_limit() -> None:
    layout = OutputLayout()
    archive = _result("deep.zip", [_result("/".join(["d" * 200] * 10) + "/leaf.txt")])
    layout.place(archive)
    assert len(archive.members[0].folder.encode()) < 1100 and archive.members[0].folder.endswith("leaf.txt")


def test_unique_names_are_json_text_and_fit_a_file_system() -> None:
    names = unique_names([Path(os.fsdecode(b"caf\xe9.txt")), Path("caf\\xe9.txt"), Path("x" * 300)])
    assert names[0] == "caf\\xe9.txt" and names[1] == "caf\\xe9-2.txt"
    assert all(len(n.encode("utf-8")) <= 255 for n in names)
    json.dumps(names).encode("utf-8")
