"""Archives through `papersift run` on the embedded AWS: unpack, the member Map (inline and
Distributed), each member as its own document, and the archive's tagged text and member list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from archive_factory import compress, have, tar_bytes, with_tool, zip_bytes
from pdf_factory import text_pdf

from papersift.steps.contracts import UnpackResult
from papersift_cli.main import main

from .conftest import docx_bytes

PDF_TEXT = "Edital de licitação número quarenta e dois."
DOCX_TEXT = "Contrato de fornecimento de material de escritório."
NOTE_TEXT = "Nota escondida no arquivo interno."


def _report(folder: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return report


def _members(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["path"]: m for m in report["members"]}


def _tagged_sections(text: str) -> dict[str, str]:
    """text.txt split at its `=== <path> ===` tag lines: path -> that member's text."""
    sections: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("=== ") and line.endswith(" ==="):
            current = line[4:-4]
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return sections


def test_tender_zip_with_nested_zip_empty_file_and_traversal_gets_one_entry_per_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = zip_bytes({"deep/note.txt": (NOTE_TEXT + "\n").encode()})
    archive = zip_bytes({
        "edital/anexo_1.pdf": text_pdf([PDF_TEXT]),
        "edital/contrato.docx": docx_bytes([DOCX_TEXT]),
        "edital/inner.zip": inner,
        "edital/vazio.txt": b"",
        "../evil.txt": b"should never be written anywhere\n",
    })
    (tmp_path / "edital.zip").write_bytes(archive)
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "edital.zip"), "--out", str(out)]) == 0
    summary = capsys.readouterr().out
    assert "edital.zip" in summary

    folder = out / "edital.zip"
    report = _report(folder)
    members = _members(report)
    statuses = {path: m["status"] for path, m in members.items()}
    assert statuses["edital/anexo_1.pdf"] == "clean"
    assert statuses["edital/contrato.docx"] == "clean"
    assert statuses["edital/inner.zip"] == "nested_archive_expanded"
    assert statuses["edital/inner.zip/deep/note.txt"] == "clean"
    assert statuses["edital/vazio.txt"] == "empty"
    assert [s for p, s in statuses.items() if "evil.txt" in p] == ["unsafe_path"]
    assert len(members) == 6
    # each processed member is a document of its own, with its own id, type and pages
    for path in ("edital/anexo_1.pdf", "edital/contrato.docx", "edital/inner.zip/deep/note.txt", "edital/vazio.txt"):
        assert members[path]["doc_id"], path
    assert members["edital/anexo_1.pdf"]["detected_type"] == "pdf"
    assert members["edital/anexo_1.pdf"]["page_count"] == 1
    assert len({members[p]["doc_id"] for p in members if members[p]["doc_id"]}) == 4
    assert report["status"] == "needs_review" and "unsafe_path" in report["reason"]

    text = (folder / "text.txt").read_text(encoding="utf-8")
    sections = _tagged_sections(text)
    assert text.startswith("=== edital/anexo_1.pdf ===\n")
    assert PDF_TEXT in sections["edital/anexo_1.pdf"]
    assert DOCX_TEXT in sections["edital/contrato.docx"]
    assert NOTE_TEXT in sections["edital/inner.zip/deep/note.txt"]
    # members without text (the empty file, the nested zip itself, the refused path) get no tag line
    assert set(sections) == {"edital/anexo_1.pdf", "edital/contrato.docx", "edital/inner.zip/deep/note.txt"}
    assert "should never be written" not in text
    assert "## edital/anexo_1.pdf" in (folder / "document.md").read_text(encoding="utf-8")
    assert not (tmp_path / "evil.txt").exists() and not (out / "evil.txt").exists()


def test_archive_with_more_members_than_the_threshold_goes_through_the_distributed_member_map(
    tmp_path: Path, recorded_unpacks: list[UnpackResult]
) -> None:
    archive = zip_bytes({f"lote/item_{n}.txt": f"Item {n} do lote: parafusos tamanho {n}.\n".encode()
                         for n in range(1, 9)})
    (tmp_path / "lote.zip").write_bytes(archive)
    config = tmp_path / "papersift.toml"
    config.write_text("[papersift]\ndistributed_map_threshold = 3\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "lote.zip"), "--out", str(out), "--config", str(config), "--quiet"]) == 0
    assert [(u.use_distributed_map, u.item_count, u.items) for u in recorded_unpacks] == [(True, 8, [])]
    report = _report(out / "lote.zip")
    members = _members(report)
    assert sorted(members) == sorted(f"lote/item_{n}.txt" for n in range(1, 9))
    assert {path: m["status"] for path, m in members.items()} == {path: "clean" for path in members}, report
    assert report["status"] == "clean", report["reason"]
    sections = _tagged_sections((out / "lote.zip" / "text.txt").read_text(encoding="utf-8"))
    for n in range(1, 9):
        assert f"parafusos tamanho {n}." in sections[f"lote/item_{n}.txt"]


@pytest.mark.skipif(not have("7z"), reason="7z is needed to write a password-protected zip")
def test_password_protected_zip_is_encrypted_without_the_password_and_extracted_with_it(tmp_path: Path) -> None:
    archive = with_tool("zip-crypto", {"segredo/ata.txt": b"Ata da reuniao secreta do conselho.\n"},
                        password="SECRET")
    source = tmp_path / "cofre.zip"
    source.write_bytes(archive)
    locked, opened = tmp_path / "locked", tmp_path / "opened"
    assert main(["run", str(source), "--out", str(locked), "--quiet"]) == 0
    report = _report(locked / "cofre.zip")
    assert report["status"] == "encrypted", report["reason"]
    assert _members(report)["segredo/ata.txt"]["status"] == "encrypted"
    assert "reuniao secreta" not in (locked / "cofre.zip" / "text.txt").read_text(encoding="utf-8")

    assert main(["run", str(source), "--out", str(opened), "--password", "SECRET", "--quiet"]) == 0
    report = _report(opened / "cofre.zip")
    assert report["status"] == "clean", report["reason"]
    assert _members(report)["segredo/ata.txt"]["status"] == "clean"
    assert "Ata da reuniao secreta" in (opened / "cofre.zip" / "text.txt").read_text(encoding="utf-8")


def test_tar_gz_with_a_misleading_extension_is_still_unpacked(tmp_path: Path) -> None:
    data = compress(tar_bytes({"docs/readme.txt": b"Instrucoes de montagem da estante.\n",
                               "docs/lista.txt": b"Lista de pecas: doze cavilhas.\n"}), "gzip")
    (tmp_path / "pacote.foo").write_bytes(data)
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "pacote.foo"), "--out", str(out), "--quiet"]) == 0
    report = _report(out / "pacote.foo")
    assert report["status"] == "clean", report["reason"]
    assert set(_members(report)) == {"docs/readme.txt", "docs/lista.txt"}
    sections = _tagged_sections((out / "pacote.foo" / "text.txt").read_text(encoding="utf-8"))
    assert "montagem da estante" in sections["docs/readme.txt"]
    assert "doze cavilhas" in sections["docs/lista.txt"]


def test_archive_members_get_their_own_output_folders_and_count_in_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "anexos.zip"
    source.write_bytes(zip_bytes({"anexos/leia-me.txt": b"Anexos do edital 12/2026.\n",
                                  "anexos/nota.txt": "Nota técnica sobre o lote 2.\n".encode()}))
    out = tmp_path / "out"
    assert main(["run", str(source), "--out", str(out)]) == 0
    member = out / "anexos.zip" / "members" / "anexos" / "nota.txt"
    assert (member / "text.txt").read_text(encoding="utf-8").startswith("Nota técnica")
    member_report = json.loads((member / "report.json").read_text(encoding="utf-8"))
    assert member_report["source"]["archive_path"] == "anexos/nota.txt"
    assert "clean (+2 members)" in capsys.readouterr().out
