"""Form field values, XFA data and annotation texts come out with their page, after its text."""

from __future__ import annotations

import form_factory
import pytest
from corpus_cases import CORPUS

from papersift.content import FormField, PageContent, new_fields
from papersift.formats import pdf
from papersift.settings import Settings

SETTINGS = Settings(ocr_mode="off")


def _pages(data: bytes, last: int = 1) -> list[PageContent]:
    return pdf.extract_pages(data, SETTINGS, 1, last)


def test_filled_text_fields_come_after_the_page_text_and_are_counted():
    (page,) = _pages(form_factory.form_pdf(1, 4))
    layer, _, fields = page.text.partition("\n\n")
    assert layer.startswith(form_factory.FORM_HEADING)  # the text layer first ...
    assert fields.splitlines() == [f"q{row}: {form_factory.field_value(1, row)}" for row in range(1, 5)]
    assert page.report.form_fields == 4 and page.report.status == "clean"
    assert page.report.char_count == len(page.text)


def test_document_md_lists_the_fields_under_their_own_marker_and_not_twice():
    (page,) = _pages(form_factory.form_pdf(1, 2))
    markdown = page.to_markdown()
    body, marker, listed = markdown.partition("<!-- form fields page=1 count=2 -->\n")
    assert marker and form_factory.field_value(1, 1) not in body
    assert listed.splitlines() == [f"- **q{row}:** {form_factory.field_value(1, row)}" for row in (1, 2)]


def test_a_page_with_form_fields_round_trips_through_its_work_file():
    (page,) = _pages(form_factory.form_pdf(1, 2))
    again = PageContent.from_dict(page.to_dict())
    assert again.form_fields == page.form_fields and again.to_markdown() == page.to_markdown()


def test_a_flattened_form_reads_the_same_values_as_the_filled_one():
    values = {"p1.q1": "Grace Hopper", "p1.q2": "Arlington Virginia"}
    (filled,) = _pages(form_factory.filled_by_pypdf(values))
    (flat,) = _pages(form_factory.filled_by_pypdf(values, flatten=True))
    for value in values.values():
        assert filled.text.count(value) == 1 and flat.text.count(value) == 1
    assert filled.report.form_fields == 2 and flat.report.form_fields == 0  # flat: the values are its text


def test_checked_boxes_choices_and_radio_groups_come_out_once_and_blank_fields_not_at_all():
    (page,) = _pages(form_factory.choices_pdf())
    fields = page.text.partition("\n\n")[2].splitlines()
    # the tooltip names the box; the unchecked box and the empty text field say nothing
    assert fields == ["I agree to the terms: Yes", "country: France", "colour: blue"]


def test_text_boxes_and_notes_come_out_with_the_page():
    (page,) = _pages(form_factory.annotated_pdf("Approved by the board on 3 March", "Check the totals"))
    assert page.text.endswith("\n\nApproved by the board on 3 March\nNote (Reviewer): Check the totals")
    assert page.report.form_fields == 2


def test_an_xfa_only_form_gives_its_data_with_the_first_page():
    (page,) = _pages(form_factory.xfa_pdf([("name", "Ada Lovelace"), ("city", "London")]))
    assert page.text.endswith("\n\nname: Ada Lovelace\ncity: London")


def test_a_value_the_text_layer_holds_is_not_repeated_but_a_short_one_inside_a_word_is_kept():
    fields = [FormField("name", "Ada Lovelace", "text"), FormField("age", "1", "text"),
              FormField("agree", "Yes", "checkbox")]
    kept = new_fields(fields, "Name: Ada\n  Lovelace\nPage 12 Yes")
    # "1" is only inside "12"; a check box's "Yes" is no text the page draws, whatever it says
    assert [f.name for f in kept] == ["age", "agree"]


def test_every_value_of_a_fifty_page_form_of_five_thousand_fields_comes_out():
    pages = _pages(form_factory.form_pdf(50, 100), last=50)
    assert all(p.report.status == "clean" and p.report.form_fields == 100 for p in pages)
    text = "\n".join(p.text for p in pages)
    missing = [(n, row) for n in range(1, 51) for row in range(1, 101)
               if text.count(form_factory.field_value(n, row)) != 1]
    assert missing == []


def test_pages_without_annotations_read_as_before():
    from pdf_factory import text_pdf

    (page,) = _pages(text_pdf([["A page of prose and nothing else on it."]]))
    assert page.text == "A page of prose and nothing else on it." and page.form_fields == []
    assert page.report.form_fields == 0


@pytest.mark.skipif(not (CORPUS / "files" / "pj__ZapfDingbats.pdf").is_file(), reason="shared corpus not present")
def test_a_freetext_header_only_poppler_drew_now_reads_through_pdfium():
    # class D of MANIFEST-trust: the red header is a FreeText annotation pdfium's text page omits
    data = (CORPUS / "files" / "pj__ZapfDingbats.pdf").read_bytes()
    page = _pages(data)[0]
    assert page.report.engine == "pdfium" and page.report.status == "clean"
    assert "Originial document can be found at" in page.text
