"""OOXML extraction: reading order, tables, the text that lives outside the body, damage."""

from __future__ import annotations

import datetime as dt
import io
import zipfile

import docx
import openpyxl
import pytest
from corpus_cases import CORPUS, manifest_rows, phrase_ok
from lxml import etree

from papersift.errors import CorruptInputError, EncryptedInputError
from papersift.formats import extract_units
from papersift.formats.docx import extract_docx
from papersift.formats.pptx import extract_pptx
from papersift.formats.xlsx import extract_xlsx
from papersift.settings import Settings
from papersift.sniff import sniff

SETTINGS = Settings()
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
WPS = "http://schemas.microsoft.com/office/word/2010/wordprocessingShape"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"


def saved(document: object) -> bytes:
    buf = io.BytesIO()
    document.save(buf)  # type: ignore[attr-defined]
    return buf.getvalue()


def rezip(package: bytes, changes: dict[str, bytes | None]) -> bytes:
    """Copy a zip, replacing (or with None, dropping) some members."""
    src = zipfile.ZipFile(io.BytesIO(package))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name in src.namelist():
            if name in changes:
                if changes[name] is not None:
                    out.writestr(name, changes[name])  # type: ignore[arg-type]
            else:
                out.writestr(name, src.read(name))
        for name, payload in changes.items():
            if name not in src.namelist() and payload is not None:
                out.writestr(name, payload)
    return buf.getvalue()


# -- Word ----------------------------------------------------------------------------------


def test_docx_keeps_tables_between_paragraphs_in_document_order() -> None:
    document = docx.Document()
    document.add_heading("Quarterly report", level=1)
    document.add_paragraph("Before the table.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([["Region", "Sales"], ["North", "42"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("After the table.")
    document.add_paragraph("A bullet", style="List Bullet")
    [page] = extract_docx(saved(document), SETTINGS)
    assert page.text == "Quarterly report\nBefore the table.\nRegion\tSales\nNorth\t42\nAfter the table.\nA bullet"
    assert page.markdown is not None
    md = page.markdown
    assert md.startswith("# Quarterly report")
    assert md.index("Before the table.") < md.index("| Region | Sales |") < md.index("After the table.")
    assert "- A bullet" in md
    assert [t.rows for t in page.tables] == [[["Region", "Sales"], ["North", "42"]]]
    assert page.report.engine == "ooxml:docx" and page.report.tables == 1


def test_docx_headers_footers_and_comments_are_kept() -> None:
    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "First header para"
    document.sections[0].footer.paragraphs[0].text = "Page footer text"
    paragraph = document.add_paragraph("Body text worthy of note.")
    document.add_comment(paragraph.runs, text="Other text worthy of note.", author="QA")
    [page] = extract_docx(saved(document), SETTINGS)
    lines = page.text.splitlines()
    assert lines[0] == "First header para"
    assert lines[-1] == "Page footer text"
    assert lines.index("Body text worthy of note.") + 1 == lines.index("[comment: Other text worthy of note.]")


def _with_body_xml(fragment: str) -> bytes:
    """A docx whose body gets ``fragment`` (a w:p) appended before the section properties."""
    document = docx.Document()
    document.add_paragraph("Intro")
    data = saved(document)
    part = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
    root = etree.fromstring(part)
    body = root.find(f"{{{W}}}body")
    assert body is not None
    wrapper = etree.fromstring(f'<w:wrap xmlns:w="{W}" xmlns:wps="{WPS}" xmlns:mc="{MC}">{fragment}</w:wrap>')
    body.insert(len(body) - 1, wrapper[0])
    return rezip(data, {"word/document.xml": etree.tostring(root)})


def test_docx_text_box_is_read_once_from_the_drawing_not_again_from_the_fallback() -> None:
    box = '<w:txbxContent><w:p><w:r><w:t>Suggested Reportable Symptoms</w:t></w:r></w:p></w:txbxContent>'
    data = _with_body_xml(
        f'<w:p><w:r><w:t>Anchor</w:t></w:r><w:r><mc:AlternateContent>'
        f'<mc:Choice Requires="wps"><w:drawing><wps:txbx>{box}</wps:txbx></w:drawing></mc:Choice>'
        f'<mc:Fallback><w:pict>{box}</w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>'
    )
    [page] = extract_docx(data, SETTINGS)
    assert page.text == "Intro\nAnchor\nSuggested Reportable Symptoms"


def test_docx_ruby_keeps_the_base_text_not_the_phonetic_guide() -> None:
    data = _with_body_xml(
        "<w:p><w:r><w:ruby><w:rt><w:r><w:t>とうきょう</w:t></w:r></w:rt>"
        "<w:rubyBase><w:r><w:t>東京</w:t></w:r></w:rubyBase></w:ruby></w:r></w:p>"
    )
    [page] = extract_docx(data, SETTINGS)
    assert page.text == "Intro\n東京"


def test_docx_deleted_revisions_and_field_codes_are_not_text() -> None:
    data = _with_body_xml(
        '<w:p><w:r><w:t xml:space="preserve">Kept </w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del>'
        '<w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:t>7</w:t></w:r></w:p>'
    )
    [page] = extract_docx(data, SETTINGS)
    assert page.text.splitlines()[-1] == "Kept 7"


def test_strict_ooxml_docx_is_read_like_transitional() -> None:
    document = docx.Document()
    document.add_paragraph("Some text")
    data = saved(document)
    part = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
    strict = part.replace(W.encode(), b"http://purl.oclc.org/ooxml/wordprocessingml/main")
    [page] = extract_docx(rezip(data, {"word/document.xml": strict}), SETTINGS)
    assert page.text == "Some text"


def test_docx_damage_raises_corrupt_input_with_a_reason() -> None:
    data = saved(docx.Document())
    with pytest.raises(CorruptInputError, match="not a readable zip"):
        extract_docx(data[: len(data) // 2], SETTINGS)
    with pytest.raises(CorruptInputError, match=r"word/document\.xml is missing"):
        extract_docx(rezip(data, {"word/document.xml": None}), SETTINGS)
    with pytest.raises(CorruptInputError, match="not a readable zip"):
        extract_docx(b"plain text, not a package", SETTINGS)


def test_docx_with_broken_xml_is_recovered_and_flagged() -> None:
    data = _with_body_xml("<w:p><w:r><w:t>Readable</w:t></w:r></w:p>")
    part = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
    broken = part.replace(b"</w:body>", b"<w:p><w:r><w:t>unclosed</w:body>")
    [page] = extract_docx(rezip(data, {"word/document.xml": broken}), SETTINGS)
    assert "Readable" in page.text
    assert "recovered_xml:word/document.xml" in page.report.signals


def test_encrypted_ooxml_handed_to_an_extractor_says_encrypted() -> None:
    from test_sniff import ole_bytes

    data = ole_bytes({"EncryptionInfo": b"x", "EncryptedPackage": b"y"})
    with pytest.raises(EncryptedInputError):
        extract_docx(data, SETTINGS)


# -- Excel -------------------------------------------------------------------------------------


def _workbook_with_cached_formula() -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Totals"
    sheet.append(["Item", "Amount", "When"])
    sheet.append(["Apples", 2, dt.datetime(2024, 3, 1)])
    sheet.append(["Pears", 3.5, dt.datetime(2024, 3, 2, 10, 30)])
    sheet["A4"] = "Total"
    sheet["B4"] = "=SUM(B2:B3)"
    sheet.oddHeader.center.text = "Header - For Internal Use Only"
    sheet.oddFooter.right.text = "Page &P of &N"
    second = workbook.create_sheet("Notes")
    second["A1"] = "Second sheet"
    data = saved(workbook)
    part = zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")
    # openpyxl writes formulas without a cached value; Excel would store one
    part = part.replace(b"<f>SUM(B2:B3)</f><v></v>", b"<f>SUM(B2:B3)</f><v>5.5</v>")
    assert b"<v>5.5</v>" in part
    return rezip(data, {"xl/worksheets/sheet1.xml": part})


def test_xlsx_gives_one_unit_per_sheet_with_cached_formula_values() -> None:
    pages = extract_xlsx(_workbook_with_cached_formula(), SETTINGS)
    assert [(p.number, p.label) for p in pages] == [(1, "Totals"), (2, "Notes")]
    totals = pages[0]
    assert "Total\t5.5" in totals.text
    assert "SUM" not in totals.text
    assert totals.records == [
        {"Item": "Apples", "Amount": 2, "When": "2024-03-01T00:00:00"},
        {"Item": "Pears", "Amount": 3.5, "When": "2024-03-02T10:30:00"},
        {"Item": "Total", "Amount": 5.5},
    ]
    assert totals.tables[0].rows[1] == ["Apples", "2", "2024-03-01"]
    assert totals.markdown is not None and totals.markdown.startswith("## Totals")
    assert "| Item | Amount | When |" in totals.markdown
    assert pages[1].text == "Second sheet"


def test_xlsx_page_header_and_footer_text_is_extracted() -> None:
    [totals, _] = extract_xlsx(_workbook_with_cached_formula(), SETTINGS)
    lines = totals.text.splitlines()
    assert lines[0] == "Header - For Internal Use Only"
    assert lines[-1] == "Page of"


def test_strict_xlsx_falls_back_to_reading_the_sheet_xml() -> None:
    data = _workbook_with_cached_formula()
    src = zipfile.ZipFile(io.BytesIO(data))
    strict = {
        name: src.read(name).replace(
            b"http://schemas.openxmlformats.org/spreadsheetml/2006/main", b"http://purl.oclc.org/ooxml/spreadsheetml/main"
        )
        for name in src.namelist()
        if name.endswith(".xml")
    }
    pages = extract_xlsx(rezip(data, dict(strict)), SETTINGS)
    assert [p.label for p in pages] == ["Totals", "Notes"]
    assert "Apples\t2" in pages[0].text and "Total\t5.5" in pages[0].text
    assert pages[0].report.engine in ("ooxml:xlsx:xml", "ooxml:xlsx:openpyxl")


def test_xlsx_without_workbook_part_is_corrupt() -> None:
    data = rezip(_workbook_with_cached_formula(), {"xl/workbook.xml": None})
    with pytest.raises(CorruptInputError, match=r"workbook\.xml"):
        extract_xlsx(data, SETTINGS)


# -- PowerPoint ----------------------------------------------------------------------------

P = "http://schemas.openxmlformats.org/presentationml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _sp(text: str, placeholder: str = "") -> str:
    ph = f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr>' if placeholder else "<p:nvPr/>"
    return (f'<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/>{ph}</p:nvSpPr><p:spPr/>'
            f'<p:txBody><a:bodyPr/><a:p><a:r><a:t>{text}</a:t></a:r></a:p></p:txBody></p:sp>')


def _slide(shapes: str, root: str = "sld") -> bytes:
    return (f'<p:{root} xmlns:p="{P}" xmlns:a="{A}" xmlns:r="{R}"><p:cSld><p:spTree>'
            f'<p:nvGrpSpPr/><p:grpSpPr/>{shapes}</p:spTree></p:cSld></p:{root}>').encode()


def _rels(*targets: tuple[str, str, str]) -> bytes:
    body = "".join(f'<Relationship Id="{i}" Type="{REL}/{t}" Target="{g}"/>' for i, t, g in targets)
    return f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{body}</Relationships>'.encode()


def pptx_bytes() -> bytes:
    """Two slides stored in reverse order of presentation, with a group, a table and notes."""
    table = (
        '<p:graphicFrame><p:nvGraphicFramePr/><a:graphic><a:graphicData><a:tbl>'
        '<a:tr><a:tc><a:txBody><a:p><a:r><a:t>Q</a:t></a:r></a:p></a:txBody></a:tc>'
        '<a:tc><a:txBody><a:p><a:r><a:t>Sales</a:t></a:r></a:p></a:txBody></a:tc></a:tr>'
        '<a:tr><a:tc><a:txBody><a:p><a:r><a:t>Q1</a:t></a:r></a:p></a:txBody></a:tc>'
        '<a:tc><a:txBody><a:p><a:r><a:t>10</a:t></a:r></a:p></a:txBody></a:tc></a:tr>'
        '</a:tbl></a:graphicData></a:graphic></p:graphicFrame>'
    )
    group = f"<p:grpSp><p:nvGrpSpPr/><p:grpSpPr/>{_sp('Text box4')}<p:grpSp>{_sp('Text box5')}</p:grpSp></p:grpSp>"
    members = {
        "[Content_Types].xml": (
            b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            b'<Override PartName="/ppt/presentation.xml" '
            b'ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>'
            b"</Types>"
        ),
        "_rels/.rels": _rels(("rId1", "officeDocument", "ppt/presentation.xml")),
        "ppt/presentation.xml": (
            f'<p:presentation xmlns:p="{P}" xmlns:r="{R}"><p:sldIdLst>'
            '<p:sldId id="256" r:id="rId2"/><p:sldId id="257" r:id="rId1"/></p:sldIdLst></p:presentation>'
        ).encode(),
        "ppt/_rels/presentation.xml.rels": _rels(("rId1", "slide", "slides/slide1.xml"),
                                                 ("rId2", "slide", "slides/slide2.xml")),
        "ppt/slides/slide2.xml": _slide(_sp("Opening title", "title") + group),
        "ppt/slides/_rels/slide2.xml.rels": _rels(("rId1", "notesSlide", "../notesSlides/notesSlide1.xml")),
        "ppt/notesSlides/notesSlide1.xml": _slide(_sp("Some notes on the opening.", "body") + _sp("1", "sldNum"),
                                                  root="notes"),
        "ppt/slides/slide1.xml": _slide(_sp("Closing words") + table),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, payload in members.items():
            zf.writestr(name, payload)
    return buf.getvalue()


def test_pptx_slides_follow_presentation_order_with_groups_and_notes() -> None:
    data = pptx_bytes()
    assert sniff(data).kind == "pptx"
    first, second = extract_units(data, sniff(data), SETTINGS)
    assert (first.label, second.label) == ("slide 1", "slide 2")
    assert first.text == "Opening title\nText box4\nText box5\n\nNotes:\nSome notes on the opening."
    assert first.markdown is not None and first.markdown.startswith("## Slide 1\n\n### Opening title")
    assert second.text == "Closing words\nQ\tSales\nQ1\t10"
    assert second.tables[0].rows == [["Q", "Sales"], ["Q1", "10"]]
    assert second.markdown is not None and "| Q | Sales |" in second.markdown


def test_pptx_with_a_damaged_presentation_part_falls_back_to_slide_names() -> None:
    data = rezip(pptx_bytes(), {"ppt/presentation.xml": b"<p:presentation"})
    pages = extract_pptx(data, SETTINGS)
    assert [p.text.splitlines()[0] for p in pages] == ["Closing words", "Opening title"]


def test_truncated_pptx_is_corrupt() -> None:
    data = pptx_bytes()
    with pytest.raises(CorruptInputError):
        extract_pptx(data[:-30], SETTINGS)


# -- corpus ----------------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="shared corpus not present")
@pytest.mark.parametrize(
    "row", manifest_rows(lambda r: r["out_name"].endswith((".docx", ".xlsx", ".xlsm", ".pptx"))),
    ids=lambda r: r["out_name"],
)
def test_corpus_office_file_yields_its_expected_phrase(row: dict[str, str]) -> None:
    data = (CORPUS / "files" / row["out_name"]).read_bytes()
    file_type = sniff(data, row["out_name"])
    # encrypted OOXML (sniffed as ole-encrypted) opens with the manifest's password, given verbatim
    settings = SETTINGS.replace(passwords=(row["password"],)) if row["password"] else SETTINGS
    units = extract_units(data, file_type, settings)
    assert phrase_ok(row["expected"], "\n".join(u.text for u in units))
