"""One route: `papersift run` (the workflow on embedded AWS) and `papersift extract`
(process_document) decide the same things for nested archives; the corpus-wide comparison is in
test_e2e_corpus.py. The workflow's branch for a member whose own plan says archive (MemberUnpack),
which one detector leaves for unpack-side failures only, is forced here with the real handlers by
making the unpack step keep members whole; tests/infra/test_workflow_on_moto.py pins its states
with fake steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from archive_factory import zip_bytes
from pdf_factory import text_pdf

from papersift_cli.main import main

from .flat_results import differences, read_flat

INNER_NOTE = "Ata da comissão guardada num zip com um membro mimetype."


def _zip_with_a_stray_mimetype_entry() -> bytes:
    """A plain zip holding a `mimetype` entry that is no ODF one: the unpack step once took it for a
    zipped document and kept it whole while its plan said archive; both now call it an archive."""
    return zip_bytes({"mimetype": b"text/plain", "ata.txt": (INNER_NOTE + "\n").encode()})


@pytest.mark.slow
def test_a_zip_nested_in_a_zip_is_expanded_alike_by_run_and_by_extract(tmp_path: Path) -> None:
    outer = zip_bytes({
        "pacote/edital.pdf": text_pdf(["Edital de pregão eletrônico número sete."]),
        "pacote/anexos.zip": _zip_with_a_stray_mimetype_entry(),
        "pacote/leia.txt": b"Leia os anexos.\n",
    })
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "pacote.zip").write_bytes(outer)
    for command in ("run", "extract"):
        assert main([command, str(tmp_path / "in"), "--out", str(tmp_path / command), "--flat", "--quiet"]) == 0
    assert main(["run", str(tmp_path / "in"), "--out", str(tmp_path / "folders"), "--quiet"]) == 0
    inner_member = tmp_path / "folders" / "pacote.zip" / "members" / "pacote" / "anexos.zip" / "ata.txt"
    assert INNER_NOTE in (inner_member / "text.txt").read_text(encoding="utf-8")
    run, extract = read_flat(tmp_path / "run"), read_flat(tmp_path / "extract")
    assert differences(run, extract) == []
    result = run["pacote.zip"]
    assert result.status == "clean", result.reason
    assert ("pacote/anexos.zip", "nested_archive_expanded", 0) in result.members, result.members
    assert ("pacote/anexos.zip/ata.txt", "clean", 1) in result.members, result.members
    assert f"=== pacote/anexos.zip/ata.txt ===\n{INNER_NOTE}" in result.text
    report = json.loads((tmp_path / "run" / "pacote.zip.report.json").read_text(encoding="utf-8"))
    assert "not unpacked" not in json.dumps(report)



INNER_MINUTES = "Ata da sessão pública guardada num zip que o unpack deixou inteiro."


@pytest.mark.slow
def test_a_member_whose_own_plan_says_archive_is_unpacked_alike_by_run_and_by_extract(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workflow's MemberUnpack branch with the real handlers: the unpack step is made to keep
    every member whole (its detector says "not an archive"), so the inner zip reaches its own plan,
    which says archive; `run` unpacks it in the member Map as `extract` does in process_document."""
    monkeypatch.setattr("papersift.archives.tree.archive_kind", lambda path: None)
    outer = zip_bytes({"pacote/edital.pdf": text_pdf(["Edital de pregão eletrônico número oito."]),
                       "pacote/anexos.zip": zip_bytes({"ata.txt": (INNER_MINUTES + "\n").encode()})})
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "pacote.zip").write_bytes(outer)
    for command in ("run", "extract"):
        assert main([command, str(tmp_path / "in"), "--out", str(tmp_path / command), "--flat", "--quiet"]) == 0
    run, extract = read_flat(tmp_path / "run"), read_flat(tmp_path / "extract")
    assert differences(run, extract) == []
    result = run["pacote.zip"]
    assert result.status == "clean", result.reason
    # kept whole by the unpack step (no nested_archive_expanded marker), then a document of its own
    # whose members are its own report's: the outer text nests them under its tag line
    assert result.members == (("pacote/anexos.zip", "clean", 1), ("pacote/edital.pdf", "clean", 1))
    assert f"=== pacote/anexos.zip ===\n=== ata.txt ===\n{INNER_MINUTES}" in result.text
    assert "not unpacked" not in (tmp_path / "run" / "pacote.zip.report.json").read_text(encoding="utf-8")


DEEP_NOTE = "Nota anexada ao anexo do e-mail."


@pytest.mark.slow
def test_attachments_of_attachments_are_read_alike_by_run_and_by_extract(tmp_path: Path) -> None:
    """A PDF with an attachment inside a zip, and inside an email, is a holder one level down: its
    files are unpacked there (MemberUnpack after its text), by both commands alike."""
    from attachment_factory import email_with_attachments, pdf_with_attachments

    holder = pdf_with_attachments("Capa do anexo em PDF.", {"nota.txt": (DEEP_NOTE + "\n").encode()})
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "pacote.zip").write_bytes(zip_bytes({"pacote/capa.pdf": holder}))
    (tmp_path / "in" / "mensagem.eml").write_bytes(email_with_attachments(
        subject="Anexos", plain="Segue o PDF.", html=None, files={"capa.pdf": (holder, "application/pdf")}))
    for command in ("run", "extract"):
        assert main([command, str(tmp_path / "in"), "--out", str(tmp_path / command), "--flat", "--quiet"]) == 0
    run, extract = read_flat(tmp_path / "run"), read_flat(tmp_path / "extract")
    assert differences(run, extract) == []
    for name, member in (("pacote.zip", "pacote/capa.pdf"), ("mensagem.eml", "attachments/capa.pdf")):
        result = run[name]
        assert result.status == "clean", (name, result.reason)
        assert (member, "clean", 1) in result.members, result.members
        assert f"=== {member} ===\nCapa do anexo em PDF.\n\n=== attachments/nota.txt ===\n{DEEP_NOTE}" in result.text
