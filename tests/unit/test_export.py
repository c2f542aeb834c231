"""The exporter's core: the pinned schema, pages cut back out of text.txt, members out of an
archive's text, block records with their section, and Parquet written a row group at a time."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from papersift.export import (
    COLUMN_NAMES,
    EXPORT_COLUMNS,
    DocumentRecords,
    JsonlWriter,
    Origin,
    PageBody,
    document_records,
    split_member_texts,
    split_pages,
    stored_document_records,
)
from papersift.layout import EXPORTS_PREFIX, member_tag
from papersift.parquet import ParquetWriter
from papersift.storage import LocalDirStore

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

#: the export's schema as tables over it see it: a change here is a change to every such table
PINNED_SCHEMA = [
    ("doc_id", "string", False),
    ("source_name", "string", False),
    ("archive_path", "string", True),
    ("parent_doc_id", "string", True),
    ("detected_type", "string", False),
    ("document_status", "string", False),
    ("document_trusted", "bool", False),
    ("page", "int32", False),
    ("block", "int32", True),
    ("status", "string", True),
    ("trusted", "bool", False),
    ("engine", "string", True),
    ("confidence", "double", True),
    ("language", "string", True),
    ("headings", "list<element: string>", False),
    ("role", "string", False),
    ("text", "string", False),
    ("bbox", "list<element: double>", True),
]


def report(pages: int, status: str = "clean", page_status: str = "clean", **extra: Any) -> dict[str, Any]:
    return {"doc_id": "d1", "source": {"name": "a.pdf", "bucket": "b", "key": "incoming/a.pdf"},
            "detected_type": "pdf", "status": status,
            "pages": [{"number": n, "status": page_status, "engine": "pdfium", "confidence": 0.9, "language": "en"}
                      for n in range(1, pages + 1)], **extra}


def parquet_of(documents: list[DocumentRecords], **writer_options: int) -> Any:
    buffer = io.BytesIO()
    writer = ParquetWriter(buffer, **writer_options)
    for document in documents:
        writer.write(document)
    writer.close()
    return pq.ParquetFile(io.BytesIO(buffer.getvalue()))


def test_the_parquet_schema_is_pinned_field_by_field_in_order() -> None:
    document = document_records(report(1), [PageBody("text")], Origin("a.pdf"))
    schema = parquet_of([document]).schema_arrow
    assert [(f.name, str(f.type), f.nullable) for f in schema] == PINNED_SCHEMA
    assert list(COLUMN_NAMES) == [name for name, _, _ in PINNED_SCHEMA]
    assert [list(record) for record in document] == [list(COLUMN_NAMES)]


def test_text_txt_is_cut_back_into_its_pages_at_the_form_feeds() -> None:
    assert split_pages("one\ftwo\f\fthree", 4) == ["one", "two", "", "three"]
    assert split_pages("", 0) == []


def test_a_form_feed_inside_a_one_page_text_file_stays_in_its_page() -> None:
    assert split_pages("one\fpage two?\fthree\n", 1) == ["one\fpage two?\fthree\n"]


def test_surplus_form_feeds_stay_with_the_last_page_and_no_text_is_lost() -> None:
    assert split_pages("a\fb\fc\fd", 2) == ["a", "b\fc\fd"]
    assert split_pages("a", 3) == ["a", "", ""]


def test_each_archive_member_gets_its_own_text_back_from_the_archive_text() -> None:
    parts = [member_tag("docs/a.txt") + "\nAlpha\n\nstill alpha", member_tag("b.pdf") + "\nBeta page\fBeta two"]
    members = [{"path": "docs/a.txt", "doc_id": "m1"}, {"path": "empty.txt", "doc_id": "m2"},
               {"path": "skipped.bin", "doc_id": None}, {"path": "b.pdf", "doc_id": "m3"}]
    assert split_member_texts("\n\n".join(parts), members) == (
        "", {"docs/a.txt": "Alpha\n\nstill alpha", "b.pdf": "Beta page\fBeta two"})


def test_an_email_keeps_its_own_text_apart_from_its_attachments_text() -> None:
    text = "From: ana@example.com\n\nBody of the mail.\n\n" + member_tag("attachments/p.pdf") + "\nProposal page"
    own, members = split_member_texts(text, [{"path": "attachments/p.pdf", "doc_id": "m1"}])
    assert (own, members) == ("From: ana@example.com\n\nBody of the mail.", {"attachments/p.pdf": "Proposal page"})
    assert split_member_texts("No attachment had text.", [{"path": "x.txt", "doc_id": "m1"}]) == \
        ("No attachment had text.", {})


def test_block_records_carry_their_role_and_the_section_they_are_in() -> None:
    blocks = [{"role": "heading", "level": 1, "text": "1. Geometry"},
              {"role": "paragraph", "text": "Lines and points."},
              {"role": "heading", "level": 2, "text": "1.1 Hyperbolic"},
              {"role": "header", "text": "GEOMETRY 4"}]
    second = [{"role": "paragraph", "text": "Still hyperbolic."},
              {"role": "heading", "level": 1, "text": "2. Algebra"}, {"role": "list_item", "text": "groups"}]
    records = list(document_records(report(2), [PageBody("p1", blocks), PageBody("p2", second)], Origin("a.pdf"),
                                    unit="block"))
    assert [(r["page"], r["block"], r["role"], r["headings"]) for r in records] == [
        (1, 0, "heading", ["1. Geometry"]),
        (1, 1, "paragraph", ["1. Geometry"]),
        (1, 2, "heading", ["1. Geometry", "1.1 Hyperbolic"]),
        (1, 3, "header", ["1. Geometry", "1.1 Hyperbolic"]),
        (2, 0, "paragraph", ["1. Geometry", "1.1 Hyperbolic"]),
        (2, 1, "heading", ["2. Algebra"]),
        (2, 2, "list_item", ["2. Algebra"]),
    ]


def test_block_records_carry_their_box_and_a_block_without_one_a_null() -> None:
    blocks = [{"role": "heading", "level": 1, "text": "1. Geometry", "bbox": [0.121, 0.07, 0.42, 0.09]},
              {"role": "paragraph", "text": "A DOCX paragraph has no geometry."}]
    document = document_records(report(2), [PageBody("p1", blocks), PageBody("whole page")], Origin("a.pdf"),
                                unit="block")
    assert [r["bbox"] for r in document] == [[0.121, 0.07, 0.42, 0.09], None, None]
    table = parquet_of([document]).read()
    assert table.column("bbox").to_pylist() == [[0.121, 0.07, 0.42, 0.09], None, None]
    line = io.BytesIO()
    JsonlWriter(line).write(document)
    assert [json.loads(row)["bbox"] for row in line.getvalue().decode().splitlines()] == [
        [0.121, 0.07, 0.42, 0.09], None, None]


def test_a_page_without_blocks_is_one_page_record_in_block_mode() -> None:
    records = list(document_records(report(1), [PageBody("whole page")], Origin("a.pdf"), unit="block"))
    assert [(r["role"], r["block"], r["text"]) for r in records] == [("page", None, "whole page")]


def test_trusted_only_drops_the_pages_the_verdict_does_not_trust() -> None:
    doc = report(2, status="needs_review")
    doc["pages"][1]["status"] = "needs_ocr"
    records = list(document_records(doc, [PageBody("native"), PageBody("")], Origin("a.pdf"), trusted_only=True))
    assert [(r["page"], r["trusted"], r["document_trusted"]) for r in records] == [(1, True, False)]


def group_rows(parquet: Any) -> list[int]:
    return [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]


def test_parquet_goes_out_in_row_groups_of_the_size_asked() -> None:
    one_page_documents = [document_records(report(1), [PageBody(f"page {n}")], Origin(f"{n}.pdf"))
                          for n in range(25)]
    assert group_rows(parquet_of(one_page_documents, row_group_rows=10)) == [10, 10, 5]
    by_text = parquet_of(one_page_documents, row_group_text_chars=20)  # out once its text reaches 20
    assert group_rows(by_text) == [4, 4, 4, 3, 3, 3, 3, 1]
    assert by_text.read().column("text").to_pylist() == [f"page {n}" for n in range(25)]


def test_a_row_group_ends_at_a_document_boundary() -> None:
    documents = [document_records(report(pages), [PageBody("x")] * pages, Origin("a.pdf")) for pages in (3, 4, 2)]
    assert group_rows(parquet_of(documents, row_group_rows=5)) == [7, 2]


def test_a_document_in_the_bucket_is_exported_from_its_page_files(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path)
    doc = report(2)
    doc["source"].update(parent_doc_id="arch", archive_path="in/a.pdf")
    store.put("results/d1/report.json", json.dumps(doc).encode())
    store.put("results/d1/text.txt", b"not read\fwhen pages are there")
    for number in (1, 2):
        page = {"text": f"page {number}", "blocks": [{"role": "paragraph", "text": f"block of {number}"}]}
        store.put(f"results/d1/pages/{number:05d}.json", json.dumps(page).encode())
    pages = list(stored_document_records(store, "d1"))
    assert [(r["source_name"], r["archive_path"], r["text"]) for r in pages] == [
        ("a.pdf", "in/a.pdf", "page 1"), ("a.pdf", "in/a.pdf", "page 2")]
    blocks = list(stored_document_records(store, "d1", unit="block"))
    assert [r["text"] for r in blocks] == ["block of 1", "block of 2"]


def test_a_document_in_the_bucket_without_page_files_is_exported_from_its_text(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path)
    store.put("results/d1/report.json", json.dumps(report(2)).encode())
    store.put("results/d1/text.txt", "première\fseconde".encode())
    assert [r["text"] for r in stored_document_records(store, "d1")] == ["première", "seconde"]


def documented_table() -> tuple[list[tuple[str, str]], str]:
    """docs/export.md's CREATE EXTERNAL TABLE: its columns (name, type) and what follows them."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "export.md").read_text(encoding="utf-8")
    ddl = re.search(r"CREATE EXTERNAL TABLE \w+ \((.*?)\n\)(.*?);", docs, re.S)
    assert ddl, "docs/export.md lost its CREATE EXTERNAL TABLE"
    columns = [tuple(line.strip().rstrip(",").split()) for line in ddl.group(1).strip().splitlines()]
    assert all(len(column) == 2 for column in columns), columns
    return [(name, kind) for name, kind in columns], ddl.group(2)


def test_the_athena_table_in_the_docs_has_the_export_columns_in_order() -> None:
    """docs/export.md's DDL is what users paste: a column added or retyped must change it too."""
    columns, _ = documented_table()
    assert columns == [(c.name, c.athena_type) for c in EXPORT_COLUMNS]


#: how Athena (Hive DDL) spells each Arrow type the Parquet files hold, on the test's own authority
#: (not the Column's athena_type): a column retyped in the schema and not in the DDL fails here
HIVE_TYPE_OF_ARROW = {"string": "string", "bool": "boolean", "int32": "int", "int64": "bigint",
                      "double": "double", "list<element: string>": "array<string>",
                      "list<element: double>": "array<double>"}


def test_the_athena_table_reads_the_parquet_files_column_for_column() -> None:
    """The DDL's columns are the Parquet schema's, name for name and type for type, read from a
    file the writer made (what the export step writes under exports/); the table is Parquet at
    the bucket's exports/ prefix."""
    document = document_records(report(1), [PageBody("text")], Origin("a.pdf"))
    schema = parquet_of([document]).schema_arrow
    columns, storage = documented_table()
    assert columns == [(field.name, HIVE_TYPE_OF_ARROW[str(field.type)]) for field in schema]
    assert "STORED AS PARQUET" in storage
    assert re.search(r"LOCATION 's3://[^/']+/exports/'", storage), "the export step's prefix (papersift.layout)"
    assert EXPORTS_PREFIX == "exports/"


def test_a_filled_forms_values_are_block_records_of_their_page(tmp_path: Path) -> None:
    """A page's blocks cover its body lines; its form fields' values are kept beside them, and a
    block export had left every value out."""
    from form_factory import field_value, form_pdf
    from test_pipeline import _store_with

    from papersift.pipeline import process_document
    from papersift.settings import Settings

    store, document = _store_with(tmp_path, "form.pdf", form_pdf(pages=2))
    report_ = process_document(store, document, Settings(ocr_mode="off"))
    records = list(stored_document_records(store, report_.doc_id, unit="block"))
    fields = [(r["page"], r["text"]) for r in records if r["role"] == "form_field"]
    for page in (1, 2):
        for row in range(1, 5):
            assert any(p == page and text.endswith(field_value(page, row)) for p, text in fields), (page, row, fields)
