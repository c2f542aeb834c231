"""The workflow steps over a local ObjectStore: batching, idempotent retries, verdicts,
and reports that validate against the published schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from archive_factory import zip_bytes

from papersift.listing import document_item
from papersift.pipeline import process_document
from papersift.report import ExtractionReport
from papersift.settings import Settings
from papersift.steps.assemble import assemble_document
from papersift.steps.contracts import AssembleRequest, DocumentOptions, DocumentRef, StepError, document_id
from papersift.steps.extract import extract_batch
from papersift.steps.plan import plan_document
from papersift.storage import LocalDirStore
from papersift.workfiles import page_key

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "layers/papersift/python/papersift/schema/report.schema.json").read_text()
)


def _store_with(tmp_path: Path, name: str, data: bytes,
                options: DocumentOptions | None = None) -> tuple[LocalDirStore, DocumentRef]:
    store = LocalDirStore(tmp_path / "bucket")
    key = f"incoming/{name}"
    store.put(key, data, metadata=options.metadata() if options else None)
    return store, _ref(key)


def _ref(key: str, doc_id: str | None = None) -> DocumentRef:
    return DocumentRef(doc_id=doc_id or document_id("local", key), bucket="local", key=key,
                       source_name=key.rsplit("/", 1)[-1])


def test_document_id_is_stable_per_object_version_and_distinct_across_versions():
    assert document_id("b", "k", "v1") == document_id("b", "k", "v1")
    assert document_id("b", "k", "v1") != document_id("b", "k", "v2")
    assert document_id("b", "k", None, '"abc"') == document_id("b", "k", None, "abc")
    assert len(document_id("b", "x" * 900)) <= 80, "execution names are at most 80 characters"


def test_options_round_trip_non_ascii_and_space_only_passwords():
    options = DocumentOptions(passwords=("garçon", "    "), extract_tables=True)
    assert DocumentOptions.from_metadata(options.metadata()) == options
    settings = DocumentOptions.from_metadata(options.metadata()).apply(Settings(passwords=("base",)))
    assert settings.passwords == ("base", "garçon", "    ") and settings.extract_tables is True


def test_plan_cuts_a_pdf_into_batches_of_the_configured_size(tmp_path, pdf_factory):
    store, document = _store_with(tmp_path, "long.pdf", pdf_factory.numbered_pdf(23))
    plan = plan_document(store, _ref(document.key, "d1"), Settings(page_batch_size=10))
    assert plan.status == "ready" and plan.page_count == 23
    assert [(b.first_page, b.last_page) for b in plan.batches] == [(1, 10), (11, 20), (21, 23)]
    assert not plan.use_distributed_map


def test_large_plans_move_batches_to_a_manifest_for_the_distributed_map(tmp_path, pdf_factory):
    store, document = _store_with(tmp_path, "long.pdf", pdf_factory.numbered_pdf(12))
    plan = plan_document(store, _ref(document.key, "d2"), Settings(page_batch_size=2, distributed_map_threshold=3))
    assert plan.use_distributed_map and plan.batches == [], "state stays small"
    manifest = json.loads(store.get(plan.manifest_key))
    assert len(manifest) == 6 and manifest[-1]["last_page"] == 12


def test_retried_batch_skips_pages_already_written(tmp_path, pdf_factory, monkeypatch):
    store, document = _store_with(tmp_path, "doc.pdf", pdf_factory.numbered_pdf(3))
    plan = plan_document(store, _ref(document.key, "d3"), Settings())
    extract_batch(store, plan.batches[0], Settings())
    assert store.exists(page_key("d3", 3))
    import papersift.formats as formats

    monkeypatch.setattr(formats, "extract_units", lambda *a, **k: pytest.fail("finished pages re-extracted"))
    assert extract_batch(store, plan.batches[0], Settings()).skipped is True


@pytest.mark.parametrize(
    ("name", "data", "status", "reason_part"),
    [
        ("empty.txt", b"", "empty", "empty"),
        ("blob.bin", bytes(range(256)) * 8, "unsupported", "unknown"),
        ("broken.pdf", b"%PDF-1.7\n1 0 obj <</Type /Catalog>>\n", "corrupt_unrecoverable", "unreadable pdf"),
    ],
)
def test_bad_input_ends_with_a_status_and_a_reason(tmp_path, name, data, status, reason_part):
    store, document = _store_with(tmp_path, name, data)
    report = process_document(store, document, Settings())
    assert report.status == status
    assert report.reason and reason_part in report.reason.lower()
    assert store.exists(f"results/{report.doc_id}/report.json")


def test_text_and_report_cover_every_page_and_validate_against_the_schema(tmp_path, pdf_factory):
    store, document = _store_with(tmp_path, "doc.pdf", pdf_factory.numbered_pdf(30))
    report = process_document(store, document, Settings(page_batch_size=7))
    assert report.status == "clean" and report.page_count == 30
    text = store.get(f"results/{report.doc_id}/text.txt").decode()
    for n in range(1, 31):
        assert f"page number {n} of" in text
    assert text.count("\f") == 29, "pages are separated by form feeds"
    data = json.loads(store.get(f"results/{report.doc_id}/report.json"))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert [p["number"] for p in data["pages"]] == list(range(1, 31))


def test_encrypted_pdf_opens_with_a_password_from_the_upload_options(tmp_path, pdf_factory):
    locked = pdf_factory.encrypted_pdf(pdf_factory.numbered_pdf(2), user_password="s3cret")
    store, document = _store_with(tmp_path, "locked.pdf", locked)
    assert process_document(store, document, Settings()).status == "encrypted"
    store, document = _store_with(tmp_path / "2", "locked.pdf", locked, DocumentOptions(passwords=("wrong", "s3cret")))
    assert process_document(store, document, Settings()).status == "clean"


def test_catch_target_records_failed_and_the_item_says_not_trusted(tmp_path):
    store = LocalDirStore(tmp_path / "bucket")
    failure = StepError.model_validate({"Error": "States.Timeout", "Cause": "took too long"})
    request = AssembleRequest(**_ref("incoming/x.pdf", "dx").model_dump(), error=failure)
    report = assemble_document(store, request, Settings())
    item = document_item(report)
    assert item["status"] == "failed" and item["trusted"] is False
    assert "States.Timeout" in item["reason"] and "took too long" in item["reason"]
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(store.get("results/dx/report.json")))


def test_archive_members_become_documents_tagged_with_their_path(tmp_path, pdf_factory):
    inner = zip_bytes({"deep/note.txt": b"inner note text"})
    outer = zip_bytes({"edital/anexo_1.pdf": pdf_factory.numbered_pdf(2), "edital/anexos.zip": inner,
                  "vazio.txt": b"", "../evil.txt": b"x"})
    store, document = _store_with(tmp_path, "edital.zip", outer)
    report = process_document(store, document, Settings())
    by_path = {m.path: m for m in report.members}
    assert set(by_path) == {"edital/anexo_1.pdf", "edital/anexos.zip", "edital/anexos.zip/deep/note.txt",
                            "vazio.txt", "../evil.txt"}, "every member ends with a recorded status"
    assert by_path["edital/anexo_1.pdf"].status == "clean" and by_path["edital/anexo_1.pdf"].page_count == 2
    assert by_path["vazio.txt"].status == "empty"
    assert by_path["../evil.txt"].status == "unsafe_path" and by_path["../evil.txt"].doc_id is None
    assert report.status == "needs_review" and "evil" in report.reason
    text = store.get(f"results/{report.doc_id}/text.txt").decode()
    assert "=== edital/anexo_1.pdf ===\nThis is page number 1" in text
    assert "=== edital/anexos.zip/deep/note.txt ===\ninner note text" in text
    member_report = json.loads(store.get(f"results/{by_path['edital/anexo_1.pdf'].doc_id}/report.json"))
    assert member_report["source"]["archive_path"] == "edital/anexo_1.pdf"
    assert member_report["source"]["parent_doc_id"] == report.doc_id
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(store.get(f"results/{report.doc_id}/report.json")))


def test_encrypted_zip_is_reported_encrypted_without_a_password_and_opens_with_one(tmp_path):
    import shutil
    import subprocess

    if not shutil.which("7z"):
        pytest.skip("7z not installed")
    (tmp_path / "secret.txt").write_text("sealed bid: 147.200,04")
    subprocess.run(["7z", "a", "-tzip", "-pbid", str(tmp_path / "locked.zip"), str(tmp_path / "secret.txt")],
                   check=True, capture_output=True)
    locked = (tmp_path / "locked.zip").read_bytes()
    store, document = _store_with(tmp_path / "a", "locked.zip", locked)
    assert process_document(store, document, Settings()).status == "encrypted"
    store, document = _store_with(tmp_path / "b", "locked.zip", locked, DocumentOptions(passwords=("bid",)))
    report = process_document(store, document, Settings())
    assert report.status == "clean"
    assert "sealed bid" in store.get(f"results/{report.doc_id}/text.txt").decode()


def test_archive_of_empty_members_is_empty_with_no_text(tmp_path):
    import bz2

    store, document = _store_with(tmp_path, "empty-file.txt.bz2", bz2.compress(b""))
    report = process_document(store, document, Settings())
    assert report.status == "empty" and [m.status for m in report.members] == ["empty"]
    assert store.get(f"results/{report.doc_id}/text.txt") == b""


def test_clean_text_is_an_extra_file_and_the_original_text_is_untouched(tmp_path):
    original = "A sessão pública de licitação será às 10h.\n"
    store, document = _store_with(tmp_path, "ata.txt", original.encode(), DocumentOptions(clean_text=True))
    report = process_document(store, document, Settings())
    assert store.get(f"results/{report.doc_id}/text.txt").decode().startswith("A sessão pública de licitação")
    cleaned = store.get(f"results/{report.doc_id}/text.clean.txt").decode()
    assert "sessao publica" in cleaned and "licitacao" in cleaned, "accents folded"
    assert " de " not in f" {cleaned} ", "Portuguese stopwords removed"
    store, document = _store_with(tmp_path / "plain", "ata.txt", original.encode())
    report = process_document(store, document, Settings())
    assert not store.exists(f"results/{report.doc_id}/text.clean.txt"), "off unless asked"


def test_clean_text_folds_with_anyascii_when_the_settings_choose_it(tmp_path):
    """anyascii (ISC) for a deployment that ships no GPL library: it writes capital ligatures
    in title case where unidecode writes them in capitals."""
    original = "Œuvre à l'étude\n"
    texts = {}
    for name in ("unidecode", "anyascii"):
        store, document = _store_with(tmp_path / name, "oeuvre.txt", original.encode(),
                                      DocumentOptions(clean_text=True))
        report = process_document(store, document, Settings(clean_text_transliterator=name))
        texts[name] = store.get(f"results/{report.doc_id}/text.clean.txt").decode()
    assert texts == {"unidecode": "OEuvre l'etude", "anyascii": "Oeuvre l'etude"}


def test_retried_batch_resumes_at_the_first_unfinished_page(tmp_path, pdf_factory):
    store, document = _store_with(tmp_path, "doc.pdf", pdf_factory.numbered_pdf(6))
    plan = plan_document(store, _ref(document.key, "d4"), Settings())
    extract_batch(store, plan.batches[0], Settings())
    for number in (4, 5, 6):  # an earlier try died after page 3
        (tmp_path / "bucket" / page_key("d4", number)).unlink()
    kept = {n: (tmp_path / "bucket" / page_key("d4", n)).read_bytes() + b" " for n in (1, 2, 3)}
    for number, data in kept.items():  # marked: a page extracted again would lose the mark
        (tmp_path / "bucket" / page_key("d4", number)).write_bytes(data)
    assert extract_batch(store, plan.batches[0], Settings()).pages == 3
    assert all(store.get(page_key("d4", n)) == data for n, data in kept.items())
    assert all(store.exists(page_key("d4", n)) for n in range(4, 7))


def test_a_batch_checks_only_its_own_pages_never_the_pages_of_the_whole_document(tmp_path, pdf_factory,
                                                                                 monkeypatch):
    """Each batch once listed every page written so far: a 10,000-page PDF's 100 batches listed
    ~500,000 keys. A fresh batch now asks about its first page only; a retried one searches its range."""
    store, document = _store_with(tmp_path, "doc.pdf", pdf_factory.numbered_pdf(9))
    settings = Settings(page_batch_size=3)
    plan = plan_document(store, _ref(document.key, "d5"), settings)
    monkeypatch.setattr(store, "list_keys", lambda prefix: pytest.fail(f"a batch listed {prefix}"))
    checked: list[str] = []
    exists = store.exists
    monkeypatch.setattr(store, "exists", lambda key: checked.append(key) or exists(key))
    for batch in plan.batches:
        extract_batch(store, batch, settings)
    assert checked == [page_key("d5", n) for n in (1, 4, 7)]
    checked.clear()
    (tmp_path / "bucket" / page_key("d5", 9)).unlink()  # the last try died before page 9
    assert [extract_batch(store, batch, settings).pages for batch in plan.batches] == [3, 3, 1]
    assert len(checked) <= 3 * 3 and all(store.exists(page_key("d5", n)) for n in range(1, 10))


def test_a_document_whose_extractor_finds_no_text_is_empty_not_clean(tmp_path):
    import io

    from pypdf import PdfWriter

    writer, buffer = PdfWriter(), io.BytesIO()
    for _ in range(2):
        writer.add_blank_page(595, 842)
    writer.write(buffer)
    store, document = _store_with(tmp_path, "blank.pdf", buffer.getvalue())
    report = process_document(store, document, Settings())
    assert report.status == "empty" and "no text found" in report.reason and not report.trusted


def test_an_oversized_file_is_refused_from_its_size_without_being_read(tmp_path, monkeypatch):
    store, document = _store_with(tmp_path, "huge.txt", b"x" * 5000)
    monkeypatch.setattr(store, "get_with_metadata", lambda key: pytest.fail("an oversized file was read"))
    report = process_document(store, document, Settings(max_file_bytes=4096))
    assert report.status == "limit_exceeded" and report.error_code == "limit_exceeded" and not report.trusted
    assert "5000 bytes, over max_file_bytes=4096" in report.reason


@pytest.mark.parametrize("key", ["../outside.txt", "a/../../outside.txt", "/etc/passwd", ""])
def test_a_store_key_cannot_reach_outside_its_folder(tmp_path: Path, key: str) -> None:
    store = LocalDirStore(tmp_path / "bucket")
    with pytest.raises(ValueError, match="escapes the store"):
        store.put(key, b"x")
    assert not (tmp_path / "outside.txt").exists()


def test_a_store_writes_again_into_a_folder_removed_behind_its_back(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "bucket")
    store.put("work/doc/pages/00001.json", b"1")
    shutil.rmtree(tmp_path / "bucket" / "work")
    store.put("work/doc/pages/00002.json", b"2")
    assert store.get("work/doc/pages/00002.json") == b"2"


def test_a_pdfs_attachments_become_documents_its_text_first_then_theirs(tmp_path):
    from attachment_factory import pdf_with_attachments

    data = pdf_with_attachments("The cover page of the bid.", {"nota.txt": b"A note about the lots.\n"})
    store, document = _store_with(tmp_path, "bid.pdf", data, DocumentOptions(clean_text=True))
    report = process_document(store, document, Settings())
    assert report.status == "clean" and "attachments: all 1 member document(s) trusted" in report.reason
    (member,) = report.members
    assert (member.path, member.kind, member.status) == ("attachments/nota.txt", "pdf_attachment", "clean")
    text = store.get(f"results/{report.doc_id}/text.txt").decode()
    assert text == "The cover page of the bid.\n\n=== attachments/nota.txt ===\nA note about the lots.\n"
    assert "lots" in store.get(f"results/{report.doc_id}/text.clean.txt").decode()
    member_report = json.loads(store.get(f"results/{member.doc_id}/report.json"))
    assert member_report["source"]["member_kind"] == "pdf_attachment"
    assert document_item(ExtractionReport.from_dict(member_report))["member_kind"] == "pdf_attachment"
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(store.get(f"results/{report.doc_id}/report.json")))


def test_a_pdf_whose_attachment_list_is_damaged_keeps_its_pages_and_asks_for_review(tmp_path):
    import io

    from attachment_factory import pdf_with_attachments
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject, NumberObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_with_attachments("Cover page text.", {"a.txt": b"A"}))))
    writer._root_object["/Names"]["/EmbeddedFiles"][NameObject("/Names")] = NumberObject(7)
    buffer = io.BytesIO()
    writer.write(buffer)
    store, document = _store_with(tmp_path, "broken.pdf", buffer.getvalue())
    report = process_document(store, document, Settings())
    assert report.status == "needs_review" and "attachments" in report.reason, report.reason
    assert report.page_count == 1 and report.pages[0].status == "clean"
    assert store.get(f"results/{report.doc_id}/text.txt").decode().startswith("Cover page text.")
