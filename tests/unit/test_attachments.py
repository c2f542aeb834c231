"""The files PDFs and emails hold, unpacked through the archives' code path (archives.attachments,
papersift.mail), and emails typed and read (sniff, formats.eml)."""

from __future__ import annotations

import io
import tracemalloc
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

import pytest
from attachment_factory import (
    email_with_attachments,
    outlook_msg,
    pdf_in_object_streams,
    pdf_with_attachments,
    pdf_with_endless_name_tree,
    pdf_with_flate_bomb,
)
from pdf_factory import text_pdf
from pypdf import PdfReader, PdfWriter

from papersift import archives, formats
from papersift.archives import ArchiveLimits, ArchiveStatus, MemberKind, MemberStatus
from papersift.errors import NestingTooDeepError
from papersift.formats.eml import extract_email, extract_outlook
from papersift.isolation import Limits
from papersift.mail import MAX_MIME_DEPTH, parse_message
from papersift.settings import Settings
from papersift.sniff import sniff

#: what the plan's worker may take in these tests
LIMITS = Limits(60, 2048)


def _unpack(tmp_path: Path, data: bytes, kind: str, limits: ArchiveLimits | None = None,
            passwords: tuple[str, ...] = ()) -> archives.UnpackedArchive:
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / f"source.{kind}"
    source.write_bytes(data)
    return archives.unpack(source, kind, tmp_path / "work", limits or ArchiveLimits(), passwords)


def _statuses(result: archives.UnpackedArchive) -> dict[str, str]:
    return {m.path: str(m.status) for m in result.members}


# -- typing an email -----------------------------------------------------------------------


def test_an_email_is_typed_eml_by_its_header_whatever_its_name() -> None:
    message = email_with_attachments(subject="Oi", plain="Corpo.", html=None, files={})
    assert sniff(message, "mensagem.txt").kind == "eml"
    assert sniff(message, "").kind == "eml"


def test_a_received_trace_line_first_still_types_an_email() -> None:
    data = (b"Received: from mx.example.com by mail.example.org;\r\n\tThu, 3 Dec 2026 10:00:00 +0000\r\n"
            b"From: a@example.com\r\nSubject: hi\r\n\r\nBody text.\r\n")
    assert sniff(data).kind == "eml"


def test_a_note_that_starts_with_a_colon_line_is_still_text() -> None:
    assert sniff(b"Subject: meeting notes\nAgenda: budget\n\nWe met on Monday.\n").kind == "txt"
    assert sniff(b"Note: this is prose.\nIt goes on without any header.\n").kind == "txt"


def test_an_outlook_message_is_typed_msg_by_its_streams() -> None:
    data = outlook_msg(subject="S", sender=("A", "a@example.com"), to="B", body="Body.", files={})
    assert sniff(data, "").kind == "msg" and sniff(data, "x.eml").kind == "msg"


# -- an email's own text -------------------------------------------------------------------


def test_email_text_is_its_headers_then_the_plain_body_not_the_html_alternative() -> None:
    message = email_with_attachments(subject="Proposta", plain="Segue a proposta.", html="<p>Segue a proposta.</p>",
                                     files={"a.txt": (b"anexo", "text/plain")})
    (unit,) = extract_email(message, Settings())
    assert unit.text.startswith("From: Ana Souza <ana@example.com>\nTo: Compras <compras@example.org>\n")
    assert "Subject: Proposta" in unit.text and unit.text.count("Segue a proposta.") == 1
    assert "anexo" not in unit.text and unit.report.status == "clean"


def test_an_html_only_body_is_read_as_text() -> None:
    message = email_with_attachments(subject="Aviso", plain=None, html="<html><body><p>Prazo <b>encerrado</b>.</p>"
                                                                       "<script>x()</script></body></html>", files={})
    (unit,) = extract_email(message, Settings())
    assert "Prazo encerrado." in unit.text and "<p>" not in unit.text and "x()" not in unit.text


def test_encoded_subject_and_a_latin1_body_are_decoded() -> None:
    message = EmailMessage()
    message["From"] = "José <jose@example.com>"
    message["Subject"] = "Relatório de gestão"
    message["MIME-Version"] = "1.0"
    message.set_content("Ação concluída às três horas.", charset="iso-8859-1", cte="quoted-printable")
    (unit,) = extract_email(message.as_bytes(), Settings())
    assert "Subject: Relatório de gestão" in unit.text and "Ação concluída às três horas." in unit.text


def test_a_forwarded_message_is_an_attachment_and_a_nameless_part_is_named_from_its_type() -> None:
    inner = EmailMessage()
    inner["From"] = "b@example.com"
    inner["Subject"] = "Original"
    inner.set_content("The original message body.")
    outer = EmailMessage()
    outer["From"] = "a@example.com"
    outer["Subject"] = "Fwd: Original"
    outer.set_content("See below.")
    outer.add_attachment(inner)
    outer.add_attachment(b"\x89PNG\r\n\x1a\n", maintype="image", subtype="png")
    parts = parse_message(outer.as_bytes())
    assert [a.name for a in parts.attachments] == ["attachment-1.eml", "attachment-2.png"]
    assert b"The original message body." in parts.attachments[0].payload()
    assert [b.text.strip() for b in parts.bodies] == ["See below."]


def test_mime_parts_nested_past_the_limit_end_nesting_too_deep() -> None:
    boundary = [f"b{n}" for n in range(MAX_MIME_DEPTH + 5)]
    head = "From: a@example.com\r\nMIME-Version: 1.0\r\n"
    body = "".join(f'Content-Type: multipart/mixed; boundary="{b}"\r\n\r\n--{b}\r\n' for b in boundary)
    body += "Content-Type: text/plain\r\n\r\ndeep\r\n" + "".join(f"--{b}--\r\n" for b in reversed(boundary))
    with pytest.raises(NestingTooDeepError):
        parse_message((head + body).encode())


# -- a PDF's files, unpacked as members ----------------------------------------------------------


def test_pdf_embedded_files_and_annotation_files_are_members_under_attachments(tmp_path: Path) -> None:
    data = pdf_with_attachments("Cover.", {"nota.txt": b"Nota.\n", "sub/anexo.pdf": text_pdf(["Anexo."])},
                                annotated={"clip.txt": b"Clip.\n"}, portfolio=True)
    result = _unpack(tmp_path, data, "pdf")
    assert result.status is ArchiveStatus.OK, result.reason
    assert _statuses(result) == {"attachments/nota.txt": "extracted", "attachments/sub/anexo.pdf": "extracted",
                                 "attachments/clip.txt": "extracted"}
    assert {m.kind for m in result.members} == {MemberKind.PDF_ATTACHMENT}
    by_path = {m.path: m for m in result.members}
    assert by_path["attachments/nota.txt"].local_path.read_bytes() == b"Nota.\n"  # type: ignore[union-attr]


def test_a_file_both_in_the_name_tree_and_on_an_annotation_is_one_member(tmp_path: Path) -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_with_attachments("Cover.", {"once.txt": b"Once.\n"}))))
    spec = writer._root_object["/Names"]["/EmbeddedFiles"]["/Names"][1]
    from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, NameObject

    annotation = DictionaryObject({NameObject("/Type"): NameObject("/Annot"),
                                   NameObject("/Subtype"): NameObject("/FileAttachment"),
                                   NameObject("/Rect"): ArrayObject([FloatObject(0)] * 4), NameObject("/FS"): spec})
    writer.pages[0][NameObject("/Annots")] = ArrayObject([writer._add_object(annotation)])
    buffer = io.BytesIO()
    writer.write(buffer)
    result = _unpack(tmp_path, buffer.getvalue(), "pdf")
    assert _statuses(result) == {"attachments/once.txt": "extracted"}


def test_a_pdf_without_files_has_no_attachments_and_holds_no_files() -> None:
    data = text_pdf(["Only a page."])
    assert formats.holds_files(data, sniff(data), LIMITS) is False
    assert formats.holds_files(pdf_with_attachments("x", {"a.txt": b"a"}), sniff(data), LIMITS) is True


def test_files_kept_in_object_streams_without_their_type_are_still_found_by_the_plan() -> None:
    in_tree = pdf_in_object_streams("Cover.", {"note.txt": b"Note.\n"})
    on_page = pdf_in_object_streams("Cover.", {}, annotated={"clip.txt": b"Clip.\n"})
    plain = pdf_in_object_streams("Cover.", {})
    for data in (in_tree, on_page, plain):  # nothing in the bytes names a file
        assert b"/EmbeddedFile" not in data and b"/FileAttachment" not in data and b"/ObjStm" in data
    assert formats.holds_files(in_tree, sniff(in_tree), LIMITS) is True
    assert formats.holds_files(on_page, sniff(on_page), LIMITS) is True
    assert formats.holds_files(plain, sniff(plain), LIMITS) is False


def test_files_kept_in_object_streams_are_unpacked_under_attachments(tmp_path: Path) -> None:
    data = pdf_in_object_streams("Cover.", {"note.txt": b"Note.\n"}, annotated={"clip.txt": b"Clip.\n"})
    result = _unpack(tmp_path, data, "pdf")
    assert _statuses(result) == {"attachments/note.txt": "extracted", "attachments/clip.txt": "extracted"}
    by_path = {m.path: m for m in result.members}
    assert by_path["attachments/clip.txt"].local_path.read_bytes() == b"Clip.\n"  # type: ignore[union-attr]


def test_a_name_tree_that_never_ends_stops_at_the_workers_deadline_naming_it(tmp_path: Path) -> None:
    import time

    data = pdf_with_endless_name_tree("Cover.")
    started = time.monotonic()
    result = _unpack(tmp_path, data, "pdf", ArchiveLimits(worker_seconds=1))
    assert time.monotonic() - started < 10  # the listing alone walks for minutes
    assert result.status is ArchiveStatus.LIMIT_EXCEEDED and result.members == []
    assert "took longer than 1 s (page_seconds)" in result.reason, result.reason
    assert archives.limit_code(result.reason) == "limit_exceeded"


def test_the_parser_the_plan_falls_back_on_finds_files_in_object_streams_too() -> None:
    from papersift.archives.attachments import declares_files

    assert declares_files(pdf_in_object_streams("Cover.", {}, annotated={"clip.txt": b"Clip.\n"}), "pdf") is True
    assert declares_files(pdf_in_object_streams("Cover.", {}), "pdf") is False
    assert declares_files(b"%PDF-1.5\n1 0 obj << /Type /ObjStm >> garbage", "pdf") is False


def test_the_plan_says_a_message_its_parser_cannot_finish_may_hold_files() -> None:
    message = email_with_attachments(subject="Big", plain="Body.", html=None,
                                     files={"big.bin": (b"\x01" * (24 * 1024 * 1024), "application/octet-stream")})
    assert formats.holds_files(message, sniff(message), Limits(60, 32)) is True  # the unpack step says why
    small = email_with_attachments(subject="Small", plain="Body.", html=None, files={})
    assert formats.holds_files(small, sniff(small), Limits(60, 32)) is False


def test_an_attachment_that_outgrows_the_memory_budget_is_skipped_and_the_next_one_read(tmp_path: Path) -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_with_flate_bomb("Cover.", name="big.txt",
                                                                           inflated=64 * 1024 * 1024))))
    from pypdf.generic import DictionaryObject, NameObject, NumberObject

    names = writer._root_object["/Names"]["/EmbeddedFiles"]["/Names"]
    stream = names[1].get_object()["/EF"]["/F"].get_object()
    # a predictor's parameters: pypdf decodes the stream whole, in the worker
    stream[NameObject("/DecodeParms")] = DictionaryObject({NameObject("/Predictor"): NumberObject(1)})
    writer.add_attachment("small.txt", b"Small.\n")
    buffer = io.BytesIO()
    writer.write(buffer)
    result = _unpack(tmp_path, buffer.getvalue(), "pdf", ArchiveLimits(worker_memory_mb=48))
    by_path = {m.path: m for m in result.members}
    big, small = by_path["attachments/big.txt"], by_path["attachments/small.txt"]
    assert big.status is MemberStatus.SKIPPED_LIMIT and big.reason.count("unit_memory_mb") == 1, big.reason
    assert small.status is MemberStatus.EXTRACTED and small.local_path is not None
    assert small.local_path.read_bytes() == b"Small.\n"


def test_a_message_too_big_for_the_memory_budget_ends_its_attachments_with_the_limit(tmp_path: Path) -> None:
    message = email_with_attachments(subject="Big", plain="Body.", html=None,
                                     files={"big.bin": (b"\x01" * (24 * 1024 * 1024), "application/octet-stream")})
    result = _unpack(tmp_path, message, "eml", ArchiveLimits(worker_memory_mb=32))
    assert result.status is ArchiveStatus.LIMIT_EXCEEDED and "(unit_memory_mb)" in result.reason, result.reason


def test_an_attachment_name_that_climbs_out_is_refused_like_an_archive_members(tmp_path: Path) -> None:
    data = pdf_with_attachments("Cover.", {"../../etc/passwd": b"root\n", "ok.txt": b"ok\n"})
    result = _unpack(tmp_path, data, "pdf")
    statuses = _statuses(result)
    assert statuses["attachments/ok.txt"] == "extracted"
    assert [s for p, s in statuses.items() if "passwd" in p] == ["unsafe_path"]
    assert not any((tmp_path / p).exists() for p in ("etc", "../etc"))


def test_an_encrypted_pdfs_files_open_with_its_password_only(tmp_path: Path) -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_with_attachments("Cover.", {"s.txt": b"Secret.\n"}))))
    writer.encrypt(user_password="pw", owner_password="owner", algorithm="AES-256")
    buffer = io.BytesIO()
    writer.write(buffer)
    assert _unpack(tmp_path / "a", buffer.getvalue(), "pdf").status is ArchiveStatus.ENCRYPTED
    opened = _unpack(tmp_path / "b", buffer.getvalue(), "pdf", passwords=("pw",))
    (member,) = opened.members
    assert member.status is MemberStatus.EXTRACTED and member.local_path is not None
    assert member.local_path.read_bytes() == b"Secret.\n"


def test_a_pdf_with_more_files_than_max_archive_members_lists_the_rest_skipped(tmp_path: Path) -> None:
    data = pdf_with_attachments("Cover.", {f"f{n:02d}.txt": f"File {n}.\n".encode() for n in range(30)})
    result = _unpack(tmp_path, data, "pdf", ArchiveLimits(max_members=5))
    counts = [str(m.status) for m in result.members]
    assert len(counts) == 30 and counts.count("extracted") == 5 and counts.count("skipped_limit") == 25
    assert result.status is ArchiveStatus.LIMIT_EXCEEDED and "max_archive_members" in result.reason


def test_a_huge_deflated_attachment_stops_at_the_ratio_with_memory_flat(tmp_path: Path) -> None:
    data = pdf_with_flate_bomb("Cover.", inflated=256 * 1024 * 1024)
    tracemalloc.start()
    result = _unpack(tmp_path, data, "pdf")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    (member,) = result.members
    assert member.status is MemberStatus.SKIPPED_LIMIT and "max_compression_ratio" in member.reason
    assert archives.limit_code(member.reason) == "decompression_bomb"
    assert peak < 48 * 1024 * 1024, peak  # inflated a chunk at a time, never whole (256 MB)


def test_email_attachments_are_members_and_a_zip_among_them_is_expanded(tmp_path: Path) -> None:
    import zipfile

    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("inner/n.txt", "Inner note.\n")
    message = email_with_attachments(subject="S", plain="Body.", html=None,
                                     files={"a.pdf": (text_pdf(["A."]), "application/pdf"),
                                            "b.zip": (bundle.getvalue(), "application/zip")})
    result = _unpack(tmp_path, message, "eml")
    assert _statuses(result) == {"attachments/a.pdf": "extracted", "attachments/b.zip": "nested_archive_expanded",
                                 "attachments/b.zip/inner/n.txt": "extracted"}
    kinds = {m.path: m.kind for m in result.members}
    assert kinds["attachments/a.pdf"] is MemberKind.EMAIL_ATTACHMENT
    assert kinds["attachments/b.zip/inner/n.txt"] is MemberKind.ARCHIVE_MEMBER


def test_an_email_without_attachments_has_an_empty_listing(tmp_path: Path) -> None:
    message = email_with_attachments(subject="S", plain="Body.", html=None, files={})
    result = _unpack(tmp_path, message, "eml")
    assert (result.status, result.members) == (ArchiveStatus.EMPTY, [])


# -- Outlook .msg ---------------------------------------------------------------------------------


def _outlook(files: dict[str, bytes]) -> bytes:
    return outlook_msg(subject="Proposta comercial", sender=("Ana Souza", "ana@example.com"), to="Compras",
                       body="Segue a proposta em anexo.\r\nAtenciosamente, Ana", files=files,
                       submitted=datetime(2026, 12, 3, 13, 15, tzinfo=UTC))


def test_an_outlook_message_reads_as_its_headers_and_body() -> None:
    (unit,) = extract_outlook(_outlook({"a.txt": b"Anexo."}), Settings())
    assert unit.text.startswith("From: Ana Souza <ana@example.com>\nTo: Compras\n"
                                "Date: Thu, 03 Dec 2026 13:15:00 +0000\nSubject: Proposta comercial\n\n")
    assert "Segue a proposta em anexo.\nAtenciosamente, Ana" in unit.text and "Anexo." not in unit.text
    assert unit.report.status == "clean"


def test_an_outlook_message_kept_only_as_rich_text_reads_its_body() -> None:
    """Outlook stores a message written in rich text as compressed RTF alone (no plain body)."""
    rtf = (rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Calibri;}}\f0\fs22 Segue a proposta "
           rb"\b revisada\b0 .\par Atenciosamente, Ana\par}")
    data = outlook_msg(subject="Proposta", sender=("Ana Souza", "ana@example.com"), to="Compras", body="",
                       files={}, rtf_body=rtf)
    (unit,) = extract_outlook(data, Settings())
    assert "Segue a proposta revisada." in unit.text and "Atenciosamente, Ana" in unit.text
    assert "rtf1" not in unit.text and unit.report.status == "clean"


def test_a_compressed_rtf_body_that_does_not_decompress_leaves_the_headers() -> None:
    data = outlook_msg(subject="Proposta", sender=("Ana Souza", "ana@example.com"), to="Compras", body="",
                       files={}, rtf_body=b"")
    broken = data.replace(b"LZFu", b"XXXX")
    (unit,) = extract_outlook(broken, Settings())
    assert unit.text.startswith("From: Ana Souza <ana@example.com>") and "Subject: Proposta" in unit.text


def test_outlook_attachments_are_email_attachments_small_and_large_alike(tmp_path: Path) -> None:
    large = ("Linha de texto do anexo grande.\n" * 400).encode()  # past the mini stream's 4,096 bytes
    result = _unpack(tmp_path, _outlook({"proposta.pdf": text_pdf(["P."]), "grande.txt": large}), "msg")
    assert _statuses(result) == {"attachments/proposta.pdf": "extracted", "attachments/grande.txt": "extracted"}
    assert {m.kind for m in result.members} == {MemberKind.EMAIL_ATTACHMENT}
    by_path = {m.path: m for m in result.members}
    assert by_path["attachments/grande.txt"].local_path.read_bytes() == large  # type: ignore[union-attr]


def test_a_damaged_outlook_message_is_corrupt_not_a_crash(tmp_path: Path) -> None:
    data = _outlook({"a.txt": b"A."})
    result = _unpack(tmp_path, data[:1024], "msg")
    assert result.status is ArchiveStatus.CORRUPT and "cannot be opened" in result.reason
