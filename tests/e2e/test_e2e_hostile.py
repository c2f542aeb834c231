"""The bad-input suite (``hostile_factory``) through `papersift extract` (the core, in process) and
`papersift run` (the embedded AWS pipeline): every input gets exactly one result with a status it
may have; nothing is written outside the output and work folders; no local file's contents (the
planted secret, which XXE and links point at) appear in any output.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_factory import (
    Hostile,
    contains_secret,
    files_under,
    hostile_cases,
    plant_secret,
    write_cases,
)

from papersift.names import name_text
from papersift_cli.main import main

#: archives are cut at 10 members so the 25-member zip shows skipped_limit in seconds
CONFIG = "[papersift]\nmax_archive_members = 10\n"


@pytest.fixture
def jail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """inputs/, out/ and cwd/ under one folder, the secret beside them, and work/ (TMPDIR) linked
    from it; the run's working directory and temporary folder are these, so a relative or temporary
    escape lands where the test looks. work/ is a short path under the system's temporary folder:
    the local runner's fork server puts a Unix socket there (at most 108 bytes of path)."""
    for name in ("inputs", "out", "cwd"):
        (tmp_path / name).mkdir()
    work = Path(tempfile.mkdtemp(prefix="ps-work-"))
    (tmp_path / "work").symlink_to(work)
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setenv("TMPDIR", str(work))
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    (tmp_path / "papersift.toml").write_text(CONFIG, encoding="utf-8")
    try:
        yield tmp_path
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _reports(out: Path) -> dict[str, dict[str, object]]:
    """Top-level report.json per output folder, keyed by the input name it reports."""
    reports: dict[str, dict[str, object]] = {}
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        name = str(report["source"]["name"])  # type: ignore[index]
        assert name not in reports, f"two folders report {name!r}"
        reports[name] = report
    return reports


def _run_suite(jail: Path, command: str) -> tuple[list[Hostile], dict[str, dict[str, object]]]:
    secret = plant_secret(jail / "secret")
    cases = hostile_cases()
    write_cases(jail / "inputs", secret, cases)
    before = files_under(jail)
    code = main([command, str(jail / "inputs"), "--out", str(jail / "out"), "--config", str(jail / "papersift.toml"),
                 "--quiet"])
    assert code == 0
    written = files_under(jail) - before
    outside = [p for p in written if not p.is_relative_to(jail / "out")]
    assert not outside, outside  # files_under does not follow the work/ link: its files are the run's own
    assert not Path("/tmp/papersift-escaped-abs.txt").exists()
    assert not contains_secret(jail / "out") and not contains_secret((jail / "work").resolve())
    return cases, _reports(jail / "out")


def _check(cases: list[Hostile], reports: dict[str, dict[str, object]]) -> None:
    assert len(reports) == len(cases), "inputs in and statuses out must match"
    wrong = {case.name: (reports[name_text(case.name)]["status"], reports[name_text(case.name)]["reason"])
             for case in cases if reports[name_text(case.name)]["status"] not in case.statuses}
    assert not wrong, wrong
    for report in reports.values():
        assert report["status"] != "failed", report
        assert report["reason"], report
        for member in report["members"]:  # type: ignore[attr-defined]
            assert member["status"] and member["status"] != "failed", (report["source"], member)
    many = reports["many-members.zip"]["members"]
    assert Counter(m["status"] for m in many) == {"clean": 10, "skipped_limit": 15}  # type: ignore[attr-defined]


@pytest.mark.slow
def test_hostile_suite_through_papersift_extract(jail: Path) -> None:
    cases, reports = _run_suite(jail, "extract")
    _check(cases, reports)
    assert not list((jail / "work").resolve().iterdir()), "a finished extract leaves no work files"


@pytest.mark.slow
def test_hostile_suite_through_papersift_run(jail: Path) -> None:
    cases, reports = _run_suite(jail, "run")
    _check(cases, reports)
    names = reports["names.zip"]
    folder = next(p for p in (jail / "out").iterdir() if p.name == "names.zip")
    member_reports = [json.loads(p.read_text()) for p in folder.glob("members/**/report.json")]
    assert len(member_reports) == len(names["members"]) == 10  # type: ignore[arg-type]
    assert {r["source"]["archive_path"] for r in member_reports} >= {"x.txt", "x.txt/report.json"}
