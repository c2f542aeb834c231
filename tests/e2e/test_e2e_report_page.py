"""report.html from `papersift run`: written for every document, opened with --open, and an
archive's page linking its members' pages in the output folder."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from archive_factory import zip_bytes
from pdf_factory import text_pdf

from papersift_cli.main import main

pytestmark = pytest.mark.slow


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


def test_run_writes_report_pages_opens_the_first_and_links_archive_members_locally(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a-memo.pdf").write_bytes(text_pdf(["The harbour budget for the spring."]))
    (inputs / "b-bundle.zip").write_bytes(zip_bytes({"letters/first note.txt": b"A note about the orchard.\n",
                                                     "second.txt": b"A note about the mill.\n"}))
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    out = tmp_path / "out"
    assert main(["run", str(inputs), "--out", str(out), "--quiet", "--open"]) == 0

    assert opened == [(out / "a-memo.pdf" / "report.html").resolve().as_uri()]
    assert "harbour budget" in (out / "a-memo.pdf" / "report.html").read_text(encoding="utf-8")
    page = out / "b-bundle.zip" / "report.html"
    links = _Links()
    links.feed(page.read_text(encoding="utf-8"))
    members = sorted(h for h in links.hrefs if h.endswith("report.html"))
    assert members == ["members/letters/first%20note.txt/report.html", "members/second.txt/report.html"]
    for href in members:
        target = page.parent / href.replace("%20", " ")
        assert "A note about" in target.read_text(encoding="utf-8"), href
