"""One route: `papersift run` (the workflow on embedded AWS) and `papersift extract`
(process_document) decide the same things for archives nested in ways the unpack step cannot
see; the corpus-wide comparison is in test_e2e_corpus.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from archive_factory import zip_bytes
from pdf_factory import text_pdf

from papersift_cli.main import main

from .flat_results import differences, read_flat

INNER_NOTE = "Ata da comissão guardada num zip com um membro mimetype."


def _zip_the_unpack_step_keeps_whole() -> bytes:
    """A plain zip that happens to hold a `mimetype` entry (not an ODF one): the unpack step takes it
    for a zipped document and keeps it as a file; its own plan then says archive."""
    return zip_bytes({"mimetype": b"text/plain", "ata.txt": (INNER_NOTE + "\n").encode()})


@pytest.mark.slow
def test_an_archive_member_whose_plan_says_archive_is_unpacked_by_run_as_by_extract(tmp_path: Path) -> None:
    outer = zip_bytes({
        "pacote/edital.pdf": text_pdf(["Edital de pregão eletrônico número sete."]),
        "pacote/anexos.zip": _zip_the_unpack_step_keeps_whole(),
        "pacote/leia.txt": b"Leia os anexos.\n",
    })
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "pacote.zip").write_bytes(outer)
    for command in ("run", "extract"):
        assert main([command, str(tmp_path / "in"), "--out", str(tmp_path / command), "--flat", "--quiet"]) == 0
    assert main(["run", str(tmp_path / "in"), "--out", str(tmp_path / "folders"), "--quiet"]) == 0
    inner_member = tmp_path / "folders" / "pacote.zip" / "members" / "pacote" / "anexos.zip" / "members" / "ata.txt"
    assert INNER_NOTE in (inner_member / "text.txt").read_text(encoding="utf-8"), "members of members get folders"
    run, extract = read_flat(tmp_path / "run"), read_flat(tmp_path / "extract")
    assert differences(run, extract) == []
    result = run["pacote.zip"]
    assert result.status == "clean", result.reason
    assert ("pacote/anexos.zip", "clean", 2) in result.members, result.members
    assert "=== pacote/anexos.zip ===\n" in result.text and f"=== ata.txt ===\n{INNER_NOTE}" in result.text
    report = json.loads((tmp_path / "run" / "pacote.zip.report.json").read_text(encoding="utf-8"))
    assert "not unpacked" not in json.dumps(report)
