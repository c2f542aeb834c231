"""Documents that hold files through `papersift run` on the embedded AWS: a PDF's embedded files
(name tree, FileAttachment annotation, portfolio) and an email's attachments are members, each
processed as a document of its own, listed, limited and written out exactly as archive members."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from archive_factory import zip_bytes
from attachment_factory import (
    email_with_attachments,
    outlook_msg,
    pdf_in_object_streams,
    pdf_with_attachments,
    pdf_with_endless_name_tree,
    pdf_with_flate_bomb,
)
from pdf_factory import text_pdf

from papersift.settings import Settings
from papersift.steps.contracts import UnpackResult
from papersift_cli.local_aws import LocalAws
from papersift_cli.main import main

COVER = "Tender portfolio 12/2026: the documents follow as attachments."
NOTE = "Delivery schedule: the first lot arrives in March."
ANNEX = "Annex one lists the unit prices of every item."
CLIP = "Paperclip note: the signed copy is with the notary."
BODY = "Segue a proposta comercial em anexo, com a tabela de precos."
PROPOSAL = "Proposal for the supply of office chairs and desks."
NOTES = "Notas de entrega: o lote dois segue na semana seguinte."


def _report(folder: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return report


def _members(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["path"]: m for m in report["members"]}


def _portfolio() -> bytes:
    return pdf_with_attachments(COVER, {"nota.txt": (NOTE + "\n").encode(), "anexo.pdf": text_pdf([ANNEX])},
                                annotated={"clip.txt": (CLIP + "\n").encode()}, portfolio=True)


def _email() -> bytes:
    return email_with_attachments(
        subject="Proposta comercial", plain=BODY, html=f"<p>{BODY}</p>",
        files={"proposta.pdf": (text_pdf([PROPOSAL]), "application/pdf"),
               "notas.txt": ((NOTES + "\n").encode(), "text/plain")})


def test_pdf_portfolio_lists_its_embedded_files_and_paperclip_as_members_each_read_as_a_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "portfolio.pdf").write_bytes(_portfolio())
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "portfolio.pdf"), "--out", str(out)]) == 0
    folder = out / "portfolio.pdf"
    report = _report(folder)
    assert report["status"] == "clean", report["reason"]
    assert report["detected_type"] == "pdf" and report["page_count"] == 1
    members = _members(report)
    assert set(members) == {"attachments/nota.txt", "attachments/anexo.pdf", "attachments/clip.txt"}
    for path, member in members.items():
        assert (member["kind"], member["status"]) == ("pdf_attachment", "clean"), path
        assert member["doc_id"], path
    assert members["attachments/anexo.pdf"]["detected_type"] == "pdf"
    text = (folder / "text.txt").read_text(encoding="utf-8")
    assert text.startswith(COVER)  # the PDF's own page first, then each attachment under its tag
    for path, phrase in (("attachments/nota.txt", NOTE), ("attachments/anexo.pdf", ANNEX),
                         ("attachments/clip.txt", CLIP)):
        assert f"=== {path} ===\n{phrase}" in text
    # members' folders, as an archive's: <input>/members/<path>/
    annex = folder / "members" / "attachments" / "anexo.pdf"
    assert ANNEX in (annex / "text.txt").read_text(encoding="utf-8")
    member_report = _report(annex)
    assert member_report["source"]["archive_path"] == "attachments/anexo.pdf"
    assert member_report["source"]["member_kind"] == "pdf_attachment"
    # report.html's member tree shows them as it shows an archive's
    page = (folder / "report.html").read_text(encoding="utf-8")
    tree = page[page.index('id="member-tree"'):]
    assert tree.index("attachments/") < tree.index("anexo.pdf") and tree.count("pdf attachment") == 3
    assert "clean (+3 members)" in capsys.readouterr().out


def test_email_gives_its_headers_and_body_as_its_text_and_its_attachments_as_members(tmp_path: Path) -> None:
    (tmp_path / "proposta.eml").write_bytes(_email())
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "proposta.eml"), "--out", str(out), "--quiet"]) == 0
    folder = out / "proposta.eml"
    report = _report(folder)
    assert report["detected_type"] == "eml", report
    assert report["status"] == "clean", report["reason"]
    text = (folder / "text.txt").read_text(encoding="utf-8")
    head = text.split("\n\n=== ")[0]
    for line in ("From: Ana Souza <ana@example.com>", "To: Compras <compras@example.org>",
                 "Date: Thu, 03 Dec 2026 10:15:00 -0300", "Subject: Proposta comercial", BODY):
        assert line in head
    assert head.count(BODY) == 1  # the plain alternative only, not the HTML one again
    assert "base64" not in text and "Content-Type" not in text
    members = _members(report)
    assert set(members) == {"attachments/proposta.pdf", "attachments/notas.txt"}
    assert {(m["kind"], m["status"]) for m in members.values()} == {("email_attachment", "clean")}
    assert f"=== attachments/proposta.pdf ===\n{PROPOSAL}" in text
    assert f"=== attachments/notas.txt ===\n{NOTES}" in text
    assert (folder / "members" / "attachments" / "notas.txt" / "text.txt").read_text(encoding="utf-8").startswith(NOTES)


def test_outlook_message_gives_its_headers_and_body_and_its_attachments_as_members(tmp_path: Path) -> None:
    message = outlook_msg(subject="Proposta comercial", sender=("Ana Souza", "ana@example.com"), to="Compras",
                          body=BODY, files={"proposta.pdf": text_pdf([PROPOSAL]), "notas.txt": (NOTES + "\n").encode()})
    (tmp_path / "proposta.msg").write_bytes(message)
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "proposta.msg"), "--out", str(out), "--quiet"]) == 0
    folder = out / "proposta.msg"
    report = _report(folder)
    assert (report["detected_type"], report["status"]) == ("msg", "clean"), report["reason"]
    text = (folder / "text.txt").read_text(encoding="utf-8")
    assert text.startswith("From: Ana Souza <ana@example.com>\nTo: Compras\nSubject: Proposta comercial\n\n" + BODY)
    members = _members(report)
    assert {(p, m["kind"], m["status"]) for p, m in members.items()} == {
        ("attachments/proposta.pdf", "email_attachment", "clean"),
        ("attachments/notas.txt", "email_attachment", "clean")}
    assert f"=== attachments/proposta.pdf ===\n{PROPOSAL}" in text


def test_email_with_only_an_html_body_is_read_as_text(tmp_path: Path) -> None:
    message = email_with_attachments(subject="Aviso", plain=None,
                                     html=f"<html><body><h1>Aviso</h1><p>{BODY}</p></body></html>", files={})
    (tmp_path / "aviso.eml").write_bytes(message)
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "aviso.eml"), "--out", str(out), "--quiet"]) == 0
    report = _report(out / "aviso.eml")
    assert report["status"] == "clean", report["reason"]
    text = (out / "aviso.eml" / "text.txt").read_text(encoding="utf-8")
    assert BODY in text and "<p>" not in text and "Subject: Aviso" in text
    assert report["members"] == []


def test_an_attachment_inflating_past_the_ratio_is_refused_like_a_zip_bomb(tmp_path: Path) -> None:
    (tmp_path / "bomb.pdf").write_bytes(pdf_with_flate_bomb(COVER, inflated=300 * 1024 * 1024))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "bomb.pdf"), "--out", str(out), "--quiet"]) == 0
    report = _report(out / "bomb.pdf")
    (member,) = report["members"]
    assert (member["path"], member["kind"], member["status"]) == ("attachments/zeros.txt", "pdf_attachment",
                                                                  "skipped_limit")
    assert "max_compression_ratio" in member["reason"]
    assert report["status"] == "limit_exceeded" and report["error_code"] == "decompression_bomb", report["reason"]
    assert COVER in (out / "bomb.pdf" / "text.txt").read_text(encoding="utf-8")  # its own page is still read


def test_a_name_tree_that_hangs_its_listing_ends_limit_exceeded_with_the_pdfs_own_page_read(tmp_path: Path) -> None:
    (tmp_path / "endless.pdf").write_bytes(pdf_with_endless_name_tree(COVER))
    config = tmp_path / "papersift.toml"
    config.write_text("[papersift]\npage_seconds = 1\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "endless.pdf"), "--out", str(out), "--config", str(config), "--quiet"]) == 0
    report = _report(out / "endless.pdf")
    assert report["status"] == "limit_exceeded" and report["error_code"] == "limit_exceeded", report["reason"]
    assert "took longer than 1 s (page_seconds)" in report["reason"], report["reason"]
    assert report["members"] == []  # nothing was listed: no member is left without a status
    assert [page["status"] for page in report["pages"]] == ["clean"]
    assert (out / "endless.pdf" / "text.txt").read_text(encoding="utf-8").startswith(COVER)


def test_files_a_compact_writer_keeps_in_object_streams_are_members_too(tmp_path: Path) -> None:
    (tmp_path / "compact.pdf").write_bytes(pdf_in_object_streams(
        "Compact cover page.", {"nota.txt": (NOTE + "\n").encode()}, annotated={"clip.txt": (CLIP + "\n").encode()}))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "compact.pdf"), "--out", str(out), "--quiet"]) == 0
    report = _report(out / "compact.pdf")
    assert report["status"] == "clean", report["reason"]
    members = _members(report)
    assert {path: (m["kind"], m["status"]) for path, m in members.items()} == {
        "attachments/nota.txt": ("pdf_attachment", "clean"), "attachments/clip.txt": ("pdf_attachment", "clean")}
    text = (out / "compact.pdf" / "text.txt").read_text(encoding="utf-8")
    assert text.startswith("Compact cover page.")
    assert f"=== attachments/nota.txt ===\n{NOTE}" in text and f"=== attachments/clip.txt ===\n{CLIP}" in text


def test_more_attachments_than_max_archive_members_are_listed_skipped_like_an_archives(tmp_path: Path) -> None:
    files = {f"item_{n:02d}.txt": f"Item {n} of the lot.\n".encode() for n in range(1, 13)}
    (tmp_path / "many.eml").write_bytes(email_with_attachments(
        subject="Lote", plain=BODY, files={name: (data, "text/plain") for name, data in files.items()}, html=None))
    config = tmp_path / "papersift.toml"
    config.write_text("[papersift]\nmax_archive_members = 5\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "many.eml"), "--out", str(out), "--config", str(config), "--quiet"]) == 0
    report = _report(out / "many.eml")
    statuses = [m["status"] for m in report["members"]]
    assert len(statuses) == 12  # every attachment has a recorded status
    assert statuses.count("clean") == 5 and statuses.count("skipped_limit") == 7
    assert report["status"] == "limit_exceeded", report["reason"]
    assert BODY in (out / "many.eml" / "text.txt").read_text(encoding="utf-8")


def test_a_zip_attached_to_an_email_is_expanded_in_place_like_a_nested_archive(tmp_path: Path) -> None:
    bundle = zip_bytes({"docs/nota.txt": (NOTE + "\n").encode()})
    (tmp_path / "zip.eml").write_bytes(email_with_attachments(
        subject="Arquivos", plain=BODY, html=None, files={"docs.zip": (bundle, "application/zip")}))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "zip.eml"), "--out", str(out), "--quiet"]) == 0
    members = _members(_report(out / "zip.eml"))
    assert (members["attachments/docs.zip"]["kind"], members["attachments/docs.zip"]["status"]) == \
        ("email_attachment", "nested_archive_expanded")
    inner = members["attachments/docs.zip/docs/nota.txt"]
    assert (inner["kind"], inner["status"]) == ("archive_member", "clean")


def test_each_attachment_has_a_dynamodb_item_naming_its_kind_and_its_parent(tmp_path: Path) -> None:
    source = tmp_path / "portfolio.pdf"
    source.write_bytes(_portfolio())
    with LocalAws(Settings()) as aws:
        key = aws.drop(source)
        assert aws.wait([key], timeout=120)
        items = aws.results.items()
    (parent,) = [item for item in items.values() if not item.get("parent_doc_id")]
    assert parent["member_count"] == 3 and parent["status"] == "clean"
    children = [item for item in items.values() if item.get("parent_doc_id") == parent["doc_id"]]
    assert sorted(str(item["archive_path"]) for item in children) == [
        "attachments/anexo.pdf", "attachments/clip.txt", "attachments/nota.txt"]
    assert {item["member_kind"] for item in children} == {"pdf_attachment"}
    assert {item["status"] for item in children} == {"clean"}


def test_an_email_with_more_attachments_than_the_threshold_goes_through_the_distributed_member_map(
    tmp_path: Path, recorded_unpacks: list[UnpackResult]
) -> None:
    files = {f"item_{n}.txt": (f"Item {n} do lote: parafusos tamanho {n}.\n".encode(), "text/plain") for n in range(5)}
    (tmp_path / "lote.eml").write_bytes(email_with_attachments(subject="Lote", plain=BODY, html=None, files=files))
    config = tmp_path / "papersift.toml"
    config.write_text("[papersift]\ndistributed_map_threshold = 2\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "lote.eml"), "--out", str(out), "--config", str(config), "--quiet"]) == 0
    assert [(u.use_distributed_map, u.item_count, u.items) for u in recorded_unpacks] == [(True, 5, [])]
    report = _report(out / "lote.eml")
    assert report["status"] == "clean", report["reason"]
    assert {m["status"] for m in report["members"]} == {"clean"} and len(report["members"]) == 5
    text = (out / "lote.eml" / "text.txt").read_text(encoding="utf-8")
    assert all(f"parafusos tamanho {n}." in text for n in range(5))
