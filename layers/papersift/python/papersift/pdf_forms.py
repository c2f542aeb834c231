"""What a PDF page says outside its text layer: form field values and annotation texts.

A filled form's answers live in its widget annotations (the field's /V, drawn by the widget's
appearance), not in the page's content stream, so no text layer holds them: pdfium's text page
skips annotations, pypdf and pdfminer read content streams only. A reader sees them on the
page, so they come out with it, after its text. The same holds for FreeText annotations (text
boxes typed onto a page) and text annotations (sticky notes), and for the data of an XFA form,
which has no widgets at all.

pdfium reads them through its annotation and form-fill API: the page is loaded already, asking
whether it has annotations costs one call, and a page of a hundred filled fields costs well
under a millisecond. What the text layer already holds (a flattened form, a text box the
generator also wrote as text, the appearances poppler draws into its text) is left out, so a
flattened form and a filled one read the same.
"""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2.raw as pdfium_c

from papersift.content import FormField

#: pdfium's field types, as the page report names them
_FIELD_KINDS = {
    pdfium_c.FPDF_FORMFIELD_TEXTFIELD: "text",
    pdfium_c.FPDF_FORMFIELD_COMBOBOX: "choice",
    pdfium_c.FPDF_FORMFIELD_LISTBOX: "choice",
    pdfium_c.FPDF_FORMFIELD_CHECKBOX: "checkbox",
    pdfium_c.FPDF_FORMFIELD_RADIOBUTTON: "radio",
}
#: annotations whose /Contents is text the page shows or carries for its reader
_TEXT_ANNOTATIONS = {pdfium_c.FPDF_ANNOT_FREETEXT: "freetext", pdfium_c.FPDF_ANNOT_TEXT: "note"}
#: the value of a check box or radio button that is not selected
_OFF = "Off"
#: a form of more fields than this on one page is read up to here (a hostile file's millions)
MAX_FIELDS_PER_PAGE = 2_000
#: XFA data values read from one document, at most
MAX_XFA_VALUES = 5_000


class FormReader:
    """Form field values and annotation texts of one pdfium document's pages, the form-fill
    environment set up on the first page that has a widget (never for a document without forms)."""

    def __init__(self, document: Any) -> None:
        self.document = document
        self.form_type = pdfium_c.FPDF_GetFormType(document)
        self._info: Any = None
        self._handle: Any = None
        self._buffer = (ctypes.c_ushort * _BUFFER_UNITS)()  # what pdfium's string getters write into

    def _form_handle(self) -> Any:
        if self._handle is None and self.form_type != pdfium_c.FORMTYPE_NONE:
            self._info = pdfium_c.FPDF_FORMFILLINFO(version=2)  # pdfium keeps a pointer to it
            self._handle = pdfium_c.FPDFDOC_InitFormFillEnvironment(self.document, self._info) or None
        return self._handle

    def page_fields(self, page: Any) -> list[FormField]:
        """The filled fields and annotation texts of a loaded pdfium page, in the page's
        annotation order; a radio group or a field with several widgets once."""
        c = pdfium_c
        count = c.FPDFPage_GetAnnotCount(page)
        fields: list[FormField] = []
        seen: set[tuple[str, str]] = set()
        for index in range(min(count, MAX_FIELDS_PER_PAGE)):
            annot = c.FPDFPage_GetAnnot(page, index)
            if not annot:
                continue
            try:
                found = self._annotation(annot)
            finally:
                c.FPDFPage_CloseAnnot(annot)
            if found is not None and (found.name, found.value) not in seen:
                seen.add((found.name, found.value))
                fields.append(found)
        return fields

    def _annotation(self, annot: Any) -> FormField | None:
        c = pdfium_c
        subtype = c.FPDFAnnot_GetSubtype(annot)
        if subtype in _TEXT_ANNOTATIONS:
            text = _clean(_wide(self._buffer, c.FPDFAnnot_GetStringValue, annot, b"Contents"))
            title = _clean(_wide(self._buffer, c.FPDFAnnot_GetStringValue, annot, b"T"))
            return FormField(name=title, value=text, kind=_TEXT_ANNOTATIONS[subtype]) if text else None
        if subtype != c.FPDF_ANNOT_WIDGET:
            return None
        handle = self._form_handle()
        if handle is None:
            return None
        kind = _FIELD_KINDS.get(c.FPDFAnnot_GetFormFieldType(handle, annot))
        if kind is None:  # push buttons, signatures: nothing a person filled in
            return None
        value = _clean(_wide(self._buffer, c.FPDFAnnot_GetFormFieldValue, handle, annot))
        if not value or value == _OFF:
            return None
        label = _clean(_wide(self._buffer, c.FPDFAnnot_GetFormFieldAlternateName, handle, annot))
        name = _clean(_wide(self._buffer, c.FPDFAnnot_GetFormFieldName, handle, annot))
        return FormField(name=label or name.rsplit(".", 1)[-1] or name, value=value, kind=kind)

    def xfa_fields(self) -> list[FormField]:
        """The values of an XFA form's data (its ``datasets`` packet), for a form that has only
        XFA (no AcroForm widgets carry its values): element path and text of each filled leaf."""
        if self.form_type != pdfium_c.FORMTYPE_XFA_FULL:
            return []
        c = pdfium_c
        for index in range(c.FPDF_GetXFAPacketCount(self.document)):
            size = c.FPDF_GetXFAPacketName(self.document, index, None, 0)
            name_buffer = ctypes.create_string_buffer(max(size, 1))
            c.FPDF_GetXFAPacketName(self.document, index, name_buffer, size)
            if name_buffer.value != b"datasets":
                continue
            length = ctypes.c_ulong()
            c.FPDF_GetXFAPacketContent(self.document, index, None, 0, ctypes.byref(length))
            content = ctypes.create_string_buffer(max(length.value, 1))
            if not c.FPDF_GetXFAPacketContent(self.document, index, content, length.value, ctypes.byref(length)):
                return []
            return xfa_data_fields(content.raw[: length.value])
        return []

    def close(self) -> None:
        if self._handle is not None:
            pdfium_c.FPDFDOC_ExitFormFillEnvironment(self._handle)
            self._handle = None


def xfa_data_fields(datasets: bytes) -> list[FormField]:
    """Filled leaves of an XFA ``datasets`` packet: ``<xfa:data><form1><name>Ada</name>...``
    gives ``name: Ada``. Damaged XML gives nothing (the text layer is read all the same). Read
    with nothing outside the packet resolved, no entity expanded (formats._xml's policy, without
    importing the formats package, which imports this module's callers)."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                             recover=True)
    try:
        root = etree.fromstring(datasets, parser)
    except (etree.XMLSyntaxError, ValueError):
        return []
    if root is None:
        return []
    fields: list[FormField] = []
    for element in root.iter():
        if not isinstance(element.tag, str) or len(element):
            continue
        value = _clean(element.text or "")
        if value:
            fields.append(FormField(name=element.tag.rsplit("}", 1)[-1], value=value, kind="xfa"))
            if len(fields) >= MAX_XFA_VALUES:
                break
    return fields


#: UTF-16 units of the buffer pdfium's string getters write into: a field's value or name fits
_BUFFER_UNITS = 512


def _wide(buffer: Any, function: Any, *args: Any) -> str:
    """A UTF-16 string from a pdfium getter that takes (..., buffer, length in bytes) and returns
    the length it needs: one call into a buffer kept for the purpose, a second only for a string
    longer than it (asking for the length first would double the calls on a form of thousands)."""
    size = function(*args, buffer, 2 * _BUFFER_UNITS)
    if size <= 2:
        return ""
    if size <= 2 * _BUFFER_UNITS:
        return ctypes.string_at(buffer, size - 2).decode("utf-16-le", errors="replace")
    longer = (ctypes.c_ushort * (size // 2))()
    function(*args, longer, size)
    return ctypes.string_at(longer, size - 2).decode("utf-16-le", errors="replace")


def _clean(value: str) -> str:
    """One line per line of the value, no blank ones (pdfium keeps a field's CR line breaks)."""
    if value.isprintable() and "  " not in value and value == value.strip():
        return value  # the common one-line value: nothing to do
    lines = (" ".join(line.split()) for line in value.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)
