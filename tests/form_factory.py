"""Filled PDF forms and annotated pages built in code: each function returns the bytes of a PDF.

The forms are drawn as generators write them: reportlab's AcroForm fields with their values
drawn by the widgets' appearances (what every viewer shows), a blank form filled by pypdf (which
writes the appearances too), the same form flattened (its values moved into the page's content),
text boxes and notes as pypdf writes them, and an XFA-only form whose answers are in its datasets.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from pypdf import PdfReader, PdfWriter
from pypdf.annotations import FreeText, Text
from pypdf.generic import (
    ArrayObject,
    BooleanObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
    TextStringObject,
)
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

FORM_HEADING = "Application form: please fill in every field."


def field_value(page: int, row: int) -> str:
    """The value form_pdf writes into field ``row`` of ``page`` (1-based): unique on the form."""
    return f"answer-{page:03d}-{row:03d} Smith"


def form_pdf(pages: int = 1, fields_per_page: int = 4, filled: bool = True) -> bytes:
    """``pages`` pages of ``fields_per_page`` labelled text fields (reportlab, appearances
    drawn), each holding field_value(page, row) when ``filled``."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    rows_per_column = 50
    for page in range(1, pages + 1):
        pdf.setFont("Helvetica", 11)
        pdf.drawString(40, A4[1] - 40, f"{FORM_HEADING} Page {page}.")
        for row in range(1, fields_per_page + 1):
            column, line = divmod(row - 1, rows_per_column)
            x, y = 40 + column * 280, A4[1] - 70 - line * 15
            pdf.setFont("Helvetica", 6)
            pdf.drawString(x, y + 3, f"Answer to question {row} of the section:")
            pdf.acroForm.textfield(name=f"p{page}.q{row}", value=field_value(page, row) if filled else "",
                                   x=x + 130, y=y, width=140, height=12, fontSize=7, borderWidth=0)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def filled_by_pypdf(values: dict[str, str], flatten: bool = False) -> bytes:
    """A blank one-page form_pdf filled by pypdf (appearances regenerated), optionally flattened:
    the values then are page content, the widgets gone."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(form_pdf(1, len(values), filled=False))))
    writer.update_page_form_field_values(writer.pages[0], values, auto_regenerate=False, flatten=flatten)
    if flatten:
        writer.remove_annotations(subtypes="/Widget")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def choices_pdf() -> bytes:
    """A checked and an unchecked box, a choice, a radio group and an empty text field."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 780, FORM_HEADING)
    form = pdf.acroForm
    form.checkbox(name="agree", tooltip="I agree to the terms", checked=True, x=150, y=700, size=12)
    form.checkbox(name="newsletter", checked=False, x=150, y=680, size=12)
    form.choice(name="country", value="France", options=["Germany", "France", "Italy"], x=150, y=650,
                width=120, height=18)
    form.radio(name="colour", value="blue", selected=True, x=150, y=620, size=12)
    form.radio(name="colour", value="red", selected=False, x=180, y=620, size=12)
    form.textfield(name="remarks", value="", x=150, y=590, width=200, height=18)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def annotated_pdf(box_text: str, note: str, author: str = "Reviewer") -> bytes:
    """A page of text with a FreeText annotation (a text box typed onto it) and a sticky note."""
    from pdf_factory import text_pdf

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf([["The report of the committee follows here."]]))))
    writer.add_annotation(0, FreeText(text=box_text, rect=(72, 600, 400, 640)))
    sticky = Text(text=note, rect=(450, 700, 470, 720), open=False)
    sticky[NameObject("/T")] = TextStringObject(author)
    writer.add_annotation(0, sticky)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def xfa_pdf(values: Sequence[tuple[str, str]]) -> bytes:
    """An XFA-only form (/NeedsRendering): a placeholder page for viewers without XFA, and the
    answers only in the ``datasets`` packet of the AcroForm's /XFA array."""
    from pdf_factory import text_pdf

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf([["Please wait... this form needs an XFA viewer."]]))))
    leaves = "".join(f"<{name}>{value}</{name}>" for name, value in values)
    packets = {
        "template": b'<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="form1"/></template>',
        "datasets": (f'<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>'
                     f"<form1>{leaves}</form1></xfa:data></xfa:datasets>").encode(),
    }
    xfa = ArrayObject()
    for name, content in packets.items():
        stream = DecodedStreamObject()
        stream.set_data(content)
        xfa.extend([TextStringObject(name), writer._add_object(stream)])
    writer._root_object[NameObject("/AcroForm")] = DictionaryObject(
        {NameObject("/Fields"): ArrayObject(), NameObject("/XFA"): xfa})
    writer._root_object[NameObject("/NeedsRendering")] = BooleanObject(True)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()

