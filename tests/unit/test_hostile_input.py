"""Hostile inputs through the core, one regression test per case the bad-input suite found.

Fixtures come from ``hostile_factory`` (built in code); ``tests/e2e/test_e2e_hostile.py`` runs the
whole suite through `papersift extract` and `papersift run`.
"""

from __future__ import annotations

import time
import tracemalloc
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from archive_factory import tar_bytes
from hostile_factory import (
    MARKER,
    SECRET_TOKEN,
    billion_laughs_dtd,
    cyclic_page_tree_pdf,
    deep_html,
    deep_json,
    deep_xml,
    docx_package,
    epub_package,
    hostile_cases,
    lying_count_pdf,
    many_glyphs_pdf,
    many_members_zip,
    odt_content,
    odt_package,
    one_line_html,
    paragraphs_html,
    plant_secret,
    sheet_xml,
    svg_doc,
    word_document,
    xlsx_package,
    xlsx_shared,
    xml_doc,
    xxe_dtd,
    zip_bomb_stream,
)
from pdf_factory import numbered_pdf

from papersift import archives
from papersift.archives.zips import declared_entries
from papersift.errors import EntityBombError, NestingTooDeepError
from papersift.formats import extract_units
from papersift.formats.pdf import page_count
from papersift.pipeline import process_document
from papersift.report import LIMIT_ERROR_CODES, DocumentStatus, PageStatus, status_for_error
from papersift.settings import Settings
from papersift.sniff import sniff
from papersift.steps.contracts import DocumentRef, document_id
from papersift.steps.plan import plan_document
from papersift.steps.unpack import member_object_key
from papersift.storage import LocalDirStore

CASES = {case.name: case for case in hostile_cases()}


def _process(tmp_path: Path, name: str, data: bytes, settings: Settings | None = None):  # type: ignore[no-untyped-def]
    store = LocalDirStore(tmp_path / "store")
    key = f"incoming/{name}"
    store.put(key, data)
    document = DocumentRef(doc_id=document_id("b", key), bucket="b", key=key, source_name=name)
    return store, process_document(store, document, settings or Settings())


def _units(name: str, data: bytes):  # type: ignore[no-untyped-def]
    return extract_units(data, sniff(data, name), Settings())


def _case_bytes(tmp_path: Path, name: str) -> bytes:
    secret = plant_secret(tmp_path / "secret")
    target = tmp_path / "case.bin"
    CASES[name].build(target, secret)
    return target.read_bytes()


# -- statuses ------------------------------------------------------------------------------------


def test_every_limit_code_is_a_limit_exceeded_status_and_corrupt_is_not_failed() -> None:
    assert {status_for_error(code) for code in LIMIT_ERROR_CODES} == {DocumentStatus.LIMIT_EXCEEDED}
    assert status_for_error("corrupt") is DocumentStatus.CORRUPT_UNRECOVERABLE
    assert status_for_error("RuntimeError") is DocumentStatus.FAILED


def test_truncated_pdf_is_corrupt_unrecoverable_not_failed(tmp_path: Path) -> None:
    _, report = _process(tmp_path, "truncated.pdf", _case_bytes(tmp_path, "truncated-head.pdf"))
    assert report.status == "corrupt_unrecoverable" and report.error_code == "corrupt"


def test_one_nul_byte_is_no_text() -> None:
    assert sniff(b"\x00", "one-byte.bin").kind == "unknown"


# -- entity bombs and XXE -----------------------------------------------------------------------------

BOMBS = ["laughs.xml", "quadratic.xml", "laughs.svg", "laughs.docx", "laughs.odt", "laughs.xlsx",
         "laughs-sheet.xlsx", "laughs.epub"]


@pytest.mark.parametrize("name", BOMBS)
def test_entity_bombs_in_every_xml_container_are_refused_as_entity_bombs(tmp_path: Path, name: str) -> None:
    data = _case_bytes(tmp_path, name)
    started = time.perf_counter()
    with pytest.raises(EntityBombError):
        _units(name, data)
    _, report = _process(tmp_path, name, data)
    assert report.status == "limit_exceeded" and report.error_code == "entity_bomb" and not report.trusted
    assert time.perf_counter() - started < 5


XXE = ["xxe.xml", "xxe.svg", "xxe.docx", "xxe.xlsx", "xxe.odt"]


@pytest.mark.parametrize("name", XXE)
def test_an_external_entity_is_never_read_and_its_unit_is_truncated(tmp_path: Path, name: str) -> None:
    [unit] = _units(name, _case_bytes(tmp_path, name))[:1]
    assert SECRET_TOKEN not in unit.text
    assert "&xxe;" in unit.text
    assert name.endswith(".svg") or "after" in unit.text.split("&xxe;")[-1]
    assert unit.report.status == PageStatus.TRUNCATED and "external_entity" in unit.report.signals
    assert "not resolved" in unit.report.reason
    _, report = _process(tmp_path, name, _case_bytes(tmp_path, name))
    assert report.status == "limit_exceeded" and report.error_code == "external_entity"


def test_text_right_after_an_unresolved_entity_is_kept_in_docx(tmp_path: Path) -> None:
    secret = plant_secret(tmp_path)
    data = docx_package(word_document(xxe_dtd("w:document", secret), ["before &xxe; and the words after it"]))
    [unit] = _units("x.docx", data)
    assert "before &xxe; and the words after it" in unit.text


def test_internal_entities_are_expanded_and_trusted() -> None:
    data = xml_doc('<!DOCTYPE report [<!ENTITY co "Acme &amp; Sons">]>', f"<p>{MARKER} works for &co; today</p>")
    [unit] = _units("co.xml", data)
    assert f"{MARKER} works for Acme & Sons today" in unit.text
    assert unit.report.status == PageStatus.CLEAN


def test_an_internal_entity_bomb_in_an_attribute_is_refused() -> None:
    data = xml_doc(billion_laughs_dtd("r"), '<p title="&lol9;">text</p>', "r")
    with pytest.raises(EntityBombError):
        _units("attr.xml", data)


def test_svg_and_odt_entity_bombs_say_where() -> None:
    with pytest.raises(EntityBombError, match=r"content\.xml"):
        _units("b.odt", odt_package(odt_content(billion_laughs_dtd("office:document-content"), ["&lol9;"])))
    with pytest.raises(EntityBombError, match="expand"):
        _units("b.svg", svg_doc(billion_laughs_dtd("svg"), "&lol9;"))


def test_xinclude_is_never_processed(tmp_path: Path) -> None:
    [unit] = _units("xi.xml", _case_bytes(tmp_path, "xinclude.xml"))
    assert SECRET_TOKEN not in unit.text and MARKER in unit.text


# -- big text nodes and deep nesting ------------------------------------------------------------------


def test_twelve_megabytes_of_words_on_one_html_line_is_text_not_empty(tmp_path: Path) -> None:
    path = tmp_path / "line.html"
    one_line_html(path, 12 * 1024 * 1024)
    [unit] = _units("line.html", path.read_bytes())
    assert unit.report.status == PageStatus.CLEAN and unit.report.char_count > 12_000_000
    assert unit.text.rstrip().endswith("the-last-words-of-the-line")


def test_twenty_one_megabyte_paragraphs_on_one_line_keep_all_twenty(tmp_path: Path) -> None:
    path = tmp_path / "paras.html"
    paragraphs_html(path, 20, 1024 * 1024)
    data = path.read_bytes().replace(b"\n", b"")
    [unit] = _units("paras.html", data)
    assert all(f"paragraph-{i}-starts" in unit.text for i in range(20))


def test_html_nested_past_libxml2s_depth_is_truncated_not_clean() -> None:
    [unit] = _units("deep.html", deep_html(5_000))
    assert unit.report.status == PageStatus.TRUNCATED and "nesting_too_deep" in unit.report.signals
    assert MARKER in unit.text


def test_html_nested_a_thousand_deep_is_read_whole() -> None:
    [unit] = _units("deep.html", deep_html(1_500))  # past Python's recursion limit, inside libxml2's
    assert unit.report.status == PageStatus.CLEAN and "deep-inside" in unit.text and "the end" in unit.text


def test_xml_nested_past_libxml2s_depth_is_truncated_not_clean() -> None:
    [unit] = _units("deep.xml", deep_xml(5_000))
    assert unit.report.status == PageStatus.TRUNCATED and MARKER in unit.text


def test_json_200000_deep_is_nesting_too_deep_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(NestingTooDeepError, match="JSON nests deeper"):
        _units("deep.json", deep_json(200_000))
    _, report = _process(tmp_path, "deep.json", deep_json(200_000))
    assert report.status == "limit_exceeded" and report.error_code == "nesting_too_deep"
    assert "RecursionError" not in report.reason


# -- declared sizes ------------------------------------------------------------------------------------


def test_xlsx_declared_dimension_does_not_size_the_rows(tmp_path: Path) -> None:
    data = _case_bytes(tmp_path, "dimension.xlsx")
    started = time.perf_counter()
    [unit] = _units("dimension.xlsx", data)
    assert time.perf_counter() - started < 1.0  # 2.4 s when every row was padded to column XFD
    assert len(unit.records) >= 999 and unit.text.count("\n") == 1999
    assert max(len(line.split("\t")) for line in unit.text.splitlines()) == 2


def test_xlsx_cell_reference_beyond_column_xfd_is_not_believed(tmp_path: Path) -> None:
    [unit] = _units("far.xlsx", _case_bytes(tmp_path, "far-column.xlsx"))
    assert unit.text.strip() == f"{MARKER}\tx"


def test_xlsx_sheet_beyond_its_cell_budget_is_truncated(monkeypatch: pytest.MonkeyPatch) -> None:
    from papersift.formats import xlsx

    monkeypatch.setattr(xlsx, "_MAX_CELLS", 100)
    data = xlsx_package(sheet_xml([[f"r{r}", "x"] for r in range(200)]))
    [unit] = _units("wide.xlsx", data)
    assert unit.report.status == PageStatus.TRUNCATED and "more than 100 cells" in unit.report.reason


def test_lying_page_count_is_checked_before_any_batch_is_planned(tmp_path: Path) -> None:
    data = lying_count_pdf(1_000_000)
    assert page_count(data, Settings()) == 1
    store = LocalDirStore(tmp_path)
    store.put("incoming/lying.pdf", data)
    ref = DocumentRef(doc_id="dlying", bucket="b", key="incoming/lying.pdf", source_name="lying.pdf")
    plan = plan_document(store, ref, Settings())
    assert plan.page_count == 1 and plan.batch_count == 1
    [page] = _units("lying.pdf", data)
    assert page.report.status == PageStatus.RECOVERED and "declares 1000000 pages but holds 1" in page.report.reason


def test_cyclic_page_tree_gives_no_phantom_pages(tmp_path: Path) -> None:
    data = cyclic_page_tree_pdf()
    assert page_count(data, Settings()) == 1
    _, report = _process(tmp_path, "cyclic.pdf", data)
    assert report.page_count == 1 and report.status == "partially_recovered"
    assert "loops" in report.pages[0].reason


def test_pages_beyond_max_pages_get_no_batch_and_are_listed_skipped_limit_with_the_limit_named(tmp_path: Path) -> None:
    store, report = _process(tmp_path, "long.pdf", numbered_pdf(12), Settings(max_pages=5, page_batch_size=2))
    assert report.status == "limit_exceeded" and report.error_code == "max_pages" and report.page_count == 12
    assert "the document has 12 pages; only the first 5 are extracted (max_pages)" in report.reason
    assert [p.status for p in report.pages] == ["clean"] * 5 + ["skipped_limit"] * 7
    assert [p.number for p in report.pages] == list(range(1, 13))
    assert report.pages[5].signals == ["max_pages"] and "max_pages=5" in report.pages[5].reason
    assert len(store.list_keys(f"work/{report.doc_id}/pages/")) == 5


def test_a_page_that_outgrows_the_memory_limit_is_stopped_by_the_limit_not_called_damaged(tmp_path: Path) -> None:
    """A page whose engine keeps allocating until the unit's address space runs out, then aborts
    as a C library does (SIGABRT, no word): the page ends failed with memory_limit, and the
    document limit_exceeded naming it, not corrupt_unrecoverable."""
    from papersift.isolation import Limits, UnitFailure, run_units

    failures = [result for _, result in run_units(_no_state, _hoard_then_abort, [1], Limits(60, memory_mb=300))]
    (failure,) = failures
    assert isinstance(failure, UnitFailure) and failure.error.code == "memory_limit"
    assert "300 MB a unit may use (unit_memory_mb)" in str(failure.error) and "SIGABRT" in str(failure.error)


def test_a_sound_page_too_big_for_the_unit_memory_ends_limit_exceeded_and_reads_clean_under_a_larger_limit(
    tmp_path: Path
) -> None:
    """Two million sound glyphs on one page: pdfium aborts (SIGABRT) when it cannot allocate past a
    200 MB unit limit; that is the limit (memory_limit), not damage, and the same page is clean
    under the default limit."""
    data = many_glyphs_pdf(2_000_000)
    _, limited = _process(tmp_path / "limited", "glyphs.pdf", data, Settings(unit_memory_mb=200))
    assert (limited.status, limited.error_code) == ("limit_exceeded", "memory_limit")
    assert limited.pages[0].status == "failed" and limited.pages[0].signals == ["memory_limit"]
    assert "200 MB a unit may use (unit_memory_mb)" in limited.reason
    _, read = _process(tmp_path / "read", "glyphs.pdf", data)
    assert read.status == "clean" and read.char_count > 200_000


def test_a_crash_without_growing_is_still_an_engine_crash(tmp_path: Path) -> None:
    from papersift.isolation import Limits, UnitFailure, run_units

    (failure,) = [result for _, result in run_units(_no_state, _abort_at_once, [1], Limits(60, memory_mb=300))]
    assert isinstance(failure, UnitFailure) and failure.error.code == "engine_crashed"


def _no_state() -> None:
    return None


def _hoard_then_abort(_state: None, _number: int) -> None:
    """What pdfium does on a 20-million-glyph page under the limit: grow, then abort on the failed allocation."""
    import time

    held = []
    try:
        while True:
            held.append(bytearray(8 << 20))
            time.sleep(0.01)
    except MemoryError:
        _abort_at_once(_state, _number)


def _abort_at_once(_state: None, _number: int) -> None:
    import faulthandler
    import os
    import signal

    faulthandler.disable()  # pytest's: no traceback of the worker on stderr
    os.kill(os.getpid(), signal.SIGABRT)


# -- archives ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "code"), [("bomb.zip", "decompression_bomb"), ("bomb.gz", "decompression_bomb"),
                                            ("bomb.bz2", "decompression_bomb"), ("bomb.docx", "decompression_bomb"),
                                            ("nested-12.zip", "nesting_too_deep")])
def test_decompression_and_nesting_bombs_are_limit_exceeded_with_their_code(tmp_path: Path, name: str,
                                                                             code: str) -> None:
    _, report = _process(tmp_path, name, _case_bytes(tmp_path, name))
    assert report.status == "limit_exceeded" and report.error_code == code


@pytest.mark.slow
def test_zip_of_20000_members_lists_every_member_with_memory_flat(tmp_path: Path) -> None:
    source = tmp_path / "many.zip"
    many_members_zip(source, 20_000)
    limits = archives.ArchiveLimits(max_members=10_000, max_listed=100_000)
    tracemalloc.start()
    started = time.perf_counter()
    result = archives.unpack(source, "zip", tmp_path / "work", limits)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    statuses = Counter(str(m.status) for m in result.members)
    assert statuses == {"extracted": 10_000, "skipped_limit": 10_000} and result.unlisted == 0
    assert result.status is archives.ArchiveStatus.LIMIT_EXCEEDED
    assert peak < 64 * 1024 * 1024, peak  # names and statuses only: ~19 MB measured
    assert seconds < 30


def test_zip_declaring_more_members_than_can_be_listed_is_refused_unread(tmp_path: Path) -> None:
    source = tmp_path / "many.zip"
    many_members_zip(source, 300)
    assert declared_entries(source) == 300
    result = archives.unpack(source, "zip", tmp_path / "work", archives.ArchiveLimits(max_members=10, max_listed=100))
    assert result.status is archives.ArchiveStatus.LIMIT_EXCEEDED and not result.members
    assert "declares 300 members" in result.reason


def test_tar_members_after_a_member_count_stop_are_listed(tmp_path: Path) -> None:
    source = tmp_path / "many.tar"
    source.write_bytes(tar_bytes({f"m{i:03d}.txt": b"x" for i in range(30)}, symlinks={"zz-link": "/etc/passwd"}))
    result = archives.unpack(source, "tar", tmp_path / "work", archives.ArchiveLimits(max_members=10))
    assert len(result.members) == 31
    assert Counter(str(m.status) for m in result.members) == {"extracted": 10, "skipped_limit": 21}


def test_zip_bomb_stops_within_seconds(tmp_path: Path) -> None:
    source = tmp_path / "bomb.zip"
    zip_bomb_stream(source, 64 * 1024 * 1024)
    started = time.perf_counter()
    result = archives.unpack(source, "zip", tmp_path / "work", archives.ArchiveLimits())
    assert time.perf_counter() - started < 5
    assert [str(m.status) for m in result.members] == ["skipped_limit"]
    assert archives.limit_code(result.members[0].reason) == "decompression_bomb"


def test_members_x_txt_and_x_txt_slash_report_json_are_both_documents(tmp_path: Path) -> None:
    _, report = _process(tmp_path, "names.zip", _case_bytes(tmp_path, "names.zip"))
    paths = {m.path: m for m in report.members}
    assert {"x.txt", "x.txt/report.json", "text.txt", "text.txt/text.txt"} <= set(paths)
    assert all(m.doc_id and m.status == "clean" for m in report.members), report.members
    assert len({m.doc_id for m in report.members}) == len(report.members) == 10
    assert paths["ctl_.txt"].original_name == "ctl\x01.txt"
    assert paths["ctl_ (2).txt"].original_name == "ctl\x02.txt"


def test_member_names_that_are_not_utf8_are_json_text(tmp_path: Path) -> None:
    _, report = _process(tmp_path, "raw-names.tar", _case_bytes(tmp_path, "raw-names.tar"))
    assert {m.path for m in report.members} == {"café.txt", "bad-ÿ.txt"}
    assert {m.original_name for m in report.members} == {"caf\\xe9.txt", "bad-\\xff.txt"}
    assert report.to_dict()  # serialises: no lone surrogates


def test_member_object_keys_are_unique_and_short_whatever_the_paths() -> None:
    long_path = "/".join(["d" * 250] * 6) + "/leaf.txt"
    keys = {member_object_key("d" + "0" * 40, i, path) for i, path in enumerate(["x.txt", "x.txt/report.json",
                                                                                 long_path])}
    assert len(keys) == 3 and all(len(k.encode()) < 400 for k in keys)
    assert not any(a != b and b.startswith(a + "/") for a in keys for b in keys)


def test_links_and_traversal_never_leave_the_work_folder(tmp_path: Path) -> None:
    for name in ("traversal.zip", "traversal.tar", "links.tar", "links.zip"):
        source = tmp_path / name
        source.write_bytes(_case_bytes(tmp_path, name))
        work = tmp_path / f"work-{name}"
        result = archives.unpack(source, archives.archive_kind(source) or "zip", work, archives.ArchiveLimits())
        unsafe = [m for m in result.members if m.status is archives.MemberStatus.UNSAFE_PATH]
        assert unsafe, name
        for member in result.extracted:
            assert member.local_path is not None and member.local_path.resolve().is_relative_to(work.resolve())
            assert SECRET_TOKEN.encode() not in member.local_path.read_bytes()
    assert not list(tmp_path.parent.glob("escaped-*")) and not Path("/tmp/papersift-escaped-abs.txt").exists()


def test_epub_chapter_bomb_and_zip_part_bomb(tmp_path: Path) -> None:
    with pytest.raises(EntityBombError):
        _units("b.epub", epub_package(
            f'<?xml version="1.0"?>{billion_laughs_dtd("html")}<html><body><p>&lol9;</p></body></html>'.encode()))
    data = docx_package(word_document("", [MARKER]))
    assert zipfile.ZipFile(__import__("io").BytesIO(data)).testzip() is None


def test_shared_strings_entity_bomb_is_not_read_by_openpyxl() -> None:
    with pytest.raises(EntityBombError):
        _units("b.xlsx", xlsx_shared(billion_laughs_dtd("sst"), ["&lol9;"]))


def test_a_catch_on_an_input_error_records_the_input_status_not_failed(tmp_path: Path) -> None:
    from papersift.steps.assemble import assemble_document
    from papersift.steps.contracts import AssembleRequest, StepError

    store = LocalDirStore(tmp_path)
    ref = DocumentRef(doc_id="dcatch", bucket="b", key="incoming/x.xml", source_name="x.xml")
    caught = StepError.model_validate({"Error": "EntityBombError", "Cause": '{"errorMessage": "billion laughs"}'})
    report = assemble_document(store, AssembleRequest(**ref.model_dump(), error=caught), Settings())
    assert report.status == "limit_exceeded" and report.error_code == "entity_bomb"
    crash = StepError.model_validate({"Error": "MemoryError", "Cause": "boom"})
    report = assemble_document(store, AssembleRequest(**ref.model_dump(), error=crash), Settings())
    assert report.status == "failed" and report.error_code == "MemoryError"
