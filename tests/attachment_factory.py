"""Documents that hold files, built in code: PDFs with embedded files (the document-level name
tree, a FileAttachment annotation, a portfolio) and emails with attachments. Nothing here
touches the disk."""

from __future__ import annotations

import io
import zlib
from collections.abc import Mapping
from email.message import EmailMessage

from pdf_factory import text_pdf
from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    FloatObject,
    NameObject,
    NumberObject,
    StreamObject,
    TextStringObject,
)


def pdf_with_attachments(page_text: str, files: Mapping[str, bytes], *, annotated: Mapping[str, bytes] | None = None,
                         portfolio: bool = False) -> bytes:
    """A one-page PDF reading ``page_text``, ``files`` in its /EmbeddedFiles name tree and
    ``annotated`` as FileAttachment annotations on its page; ``portfolio`` adds a /Collection."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf([page_text]))))
    for name, data in files.items():
        writer.add_attachment(name, data)
    for name, data in (annotated or {}).items():
        _annotate(writer, name, data)
    if portfolio:
        writer._root_object[NameObject("/Collection")] = DictionaryObject(
            {NameObject("/Type"): NameObject("/Collection"), NameObject("/View"): NameObject("/D")})
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _annotate(writer: PdfWriter, name: str, data: bytes) -> None:
    """A FileAttachment annotation (paperclip) on the first page holding ``data`` as ``name``."""
    stream = DecodedStreamObject()
    stream.set_data(data)
    stream[NameObject("/Type")] = NameObject("/EmbeddedFile")
    spec = DictionaryObject({
        NameObject("/Type"): NameObject("/Filespec"),
        NameObject("/F"): TextStringObject(name),
        NameObject("/UF"): TextStringObject(name),
        NameObject("/EF"): DictionaryObject({NameObject("/F"): writer._add_object(stream)}),
    })
    annotation = DictionaryObject({
        NameObject("/Type"): NameObject("/Annot"),
        NameObject("/Subtype"): NameObject("/FileAttachment"),
        NameObject("/Rect"): ArrayObject([FloatObject(x) for x in (10, 10, 30, 30)]),
        NameObject("/FS"): writer._add_object(spec),
        NameObject("/Contents"): TextStringObject(name),
    })
    page = writer.pages[0]
    annotations = page.get("/Annots")
    if annotations is None:
        page[NameObject("/Annots")] = ArrayObject([writer._add_object(annotation)])
    else:
        annotations.get_object().append(writer._add_object(annotation))


def pdf_with_flate_bomb(page_text: str, name: str = "zeros.txt", inflated: int = 64 * 1024 * 1024) -> bytes:
    """A PDF whose one embedded file is ``inflated`` bytes of zeros deflated to a few kilobytes."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf([page_text]))))
    writer.add_attachment(name, b"placeholder")
    deflate = zlib.compressobj(9)
    packed = b"".join(deflate.compress(b"\0" * (1024 * 1024)) for _ in range(inflated // (1024 * 1024)))
    packed += deflate.flush()
    names = writer._root_object["/Names"]["/EmbeddedFiles"]["/Names"]
    stream = names[1].get_object()["/EF"]["/F"].get_object()
    replacement = StreamObject()
    replacement._data = packed
    replacement[NameObject("/Filter")] = NameObject("/FlateDecode")
    replacement[NameObject("/Type")] = NameObject("/EmbeddedFile")
    replacement[NameObject("/Length")] = NumberObject(len(packed))
    names[1].get_object()["/EF"][NameObject("/F")] = writer._add_object(replacement)
    del stream
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def email_with_attachments(*, subject: str, plain: str | None, html: str | None,
                           files: Mapping[str, tuple[bytes, str]]) -> bytes:
    """An RFC 822 message: a plain and/or HTML body (multipart/alternative when both) and
    ``files`` (name -> (bytes, MIME type)) as attachments."""
    message = EmailMessage()
    message["From"] = "Ana Souza <ana@example.com>"
    message["To"] = "Compras <compras@example.org>"
    message["Date"] = "Thu, 03 Dec 2026 10:15:00 -0300"
    message["Subject"] = subject
    if plain is not None:
        message.set_content(plain)
        if html is not None:
            message.add_alternative(html, subtype="html")
    elif html is not None:
        message.set_content(html, subtype="html")
    for name, (data, mime) in files.items():
        maintype, subtype = mime.split("/", 1)
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return message.as_bytes()
