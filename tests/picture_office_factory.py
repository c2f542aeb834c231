"""Office files, e-books and web pages holding pictures, built in code: a pasted scan in a Word
document, a screenshot on a slide, a picture in a sheet, an ODF drawing frame, an EPUB image,
an HTML data: URI, and a Word document with thousands of tiny and repeated pictures."""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Sequence

import docx
import openpyxl
from docx.shared import Inches
from openpyxl.drawing.image import Image as SheetImage
from PIL import Image
from scan_factory import image_bytes, text_image

SCAN_LINES = ("Invoice number 4711 is due on Monday.", "Please pay the whole amount today.")
#: the words a reading of SCAN_LINES must give
SCAN_WORDS = ("Invoice", "4711", "Monday", "whole", "amount")


def scan_png(lines: Sequence[str] = SCAN_LINES) -> bytes:
    return image_bytes(text_image(lines))


def pasted_scan_docx(lines: Sequence[str] = SCAN_LINES, *, text: str = "") -> bytes:
    """A Word document whose content is one inline picture of ``lines`` (and ``text`` before it)."""
    document = docx.Document()
    if text:
        document.add_paragraph(text)
    document.add_picture(io.BytesIO(scan_png(lines)), width=Inches(6))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def tiny_png(seed: int) -> bytes:
    """An 8 x 8 picture, different bytes for every seed: a bullet, a rule, a spacer."""
    picture = Image.new("RGB", (8, 8), (seed % 256, seed // 256 % 256, seed // 65536 % 256))
    return image_bytes(picture)


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"


def many_pictures_docx(tiny: int, copies: int, *, text: str = "A report with many pictures.") -> bytes:
    """A Word document of one paragraph and ``1 + tiny + copies`` picture parts: one scan, ``tiny``
    distinct 8 x 8 pictures and ``copies`` parts holding the scan's very bytes again."""
    scan = scan_png()
    pictures = [scan, *(tiny_png(n) for n in range(tiny)), *([scan] * copies)]
    blips = "".join(f'<w:r><w:drawing><a:blip xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
                    f'r:embed="rId{n}"/></w:drawing></w:r>' for n in range(1, len(pictures) + 1))
    document = (f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}" xmlns:r="{_REL}"><w:body>'
                f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p><w:p>{blips}</w:p></w:body></w:document>")
    rels = "".join(f'<Relationship Id="rId{n}" Type="{_REL}/image" Target="media/image{n}.png"/>'
                   for n in range(1, len(pictures) + 1))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", (
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>'
            '<Override PartName="/word/document.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'))
        archive.writestr("_rels/.rels", f'<?xml version="1.0"?><Relationships xmlns="{_PKG_REL}"><Relationship '
                                        f'Id="rId1" Type="{_REL}/officeDocument" Target="word/document.xml"/>'
                                        f"</Relationships>")
        archive.writestr("word/document.xml", document)
        archive.writestr("word/_rels/document.xml.rels",
                         f'<?xml version="1.0"?><Relationships xmlns="{_PKG_REL}">{rels}</Relationships>')
        for n, data in enumerate(pictures, start=1):
            archive.writestr(f"word/media/image{n}.png", data, compress_type=zipfile.ZIP_STORED)
    return buffer.getvalue()


def sheet_with_picture_xlsx() -> bytes:
    """A workbook whose first sheet holds a few cells and a picture of SCAN_LINES."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["item", "amount"])
    sheet.append(["rent", 1200])
    sheet.add_image(SheetImage(io.BytesIO(scan_png())), "D2")
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def _relationships(*targets: tuple[str, str, str]) -> str:
    body = "".join(f'<Relationship Id="{i}" Type="{_REL}/{t}" Target="{g}"/>' for i, t, g in targets)
    return f'<Relationships xmlns="{_PKG_REL}">{body}</Relationships>'


def slide_with_picture_pptx(title: str = "Quarterly figures") -> bytes:
    """A two-slide presentation: slide 1 a title and a picture of SCAN_LINES, slide 2 a title only."""

    def slide(text: str, picture: bool) -> str:
        shape = (f'<p:sp><p:nvSpPr><p:cNvPr id="2" name="t"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr/>'
                 f"<p:txBody><a:bodyPr/><a:p><a:r><a:t>{text}</a:t></a:r></a:p></p:txBody></p:sp>")
        pic = ('<p:pic><p:nvPicPr><p:cNvPr id="3" name="scan"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>'
               '<p:blipFill><a:blip r:embed="rId2"/></p:blipFill><p:spPr/></p:pic>') if picture else ""
        return (f'<p:sld xmlns:p="{_P}" xmlns:a="{_A}" xmlns:r="{_REL}"><p:cSld><p:spTree><p:nvGrpSpPr/>'
                f"<p:grpSpPr/>{shape}{pic}</p:spTree></p:cSld></p:sld>")

    parts = {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="png" ContentType="image/png"/><Override PartName="/ppt/presentation.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>'
            "</Types>"),
        "_rels/.rels": _relationships(("rId1", "officeDocument", "ppt/presentation.xml")),
        "ppt/presentation.xml": (f'<p:presentation xmlns:p="{_P}" xmlns:r="{_REL}"><p:sldIdLst>'
                                 '<p:sldId id="256" r:id="rId1"/><p:sldId id="257" r:id="rId2"/></p:sldIdLst>'
                                 "</p:presentation>"),
        "ppt/_rels/presentation.xml.rels": _relationships(("rId1", "slide", "slides/slide1.xml"),
                                                          ("rId2", "slide", "slides/slide2.xml")),
        "ppt/slides/slide1.xml": slide(title, True),
        "ppt/slides/_rels/slide1.xml.rels": _relationships(("rId2", "image", "../media/image1.png")),
        "ppt/slides/slide2.xml": slide("Thank you", False),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
        archive.writestr("ppt/media/image1.png", scan_png())
    return buffer.getvalue()


_ODF_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
           'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
           'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
           'xmlns:xlink="http://www.w3.org/1999/xlink"')


def odt_with_picture(text: str = "") -> bytes:
    """A text document of ``text`` and a drawing frame showing Pictures/scan.png (SCAN_LINES)."""
    paragraph = f"<text:p>{text}</text:p>" if text else ""
    content = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODF_NS}><office:body>'
               f'<office:text>{paragraph}<text:p><draw:frame><draw:image xlink:href="Pictures/scan.png"/>'
               f"</draw:frame></text:p></office:text></office:body></office:document-content>")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("Pictures/scan.png", scan_png())
        archive.writestr("META-INF/manifest.xml",
                         '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                         '<manifest:file-entry manifest:full-path="content.xml"/></manifest:manifest>')
    return buffer.getvalue()


def epub_with_picture() -> bytes:
    """A one-chapter book whose chapter is a heading and images/scan.png (SCAN_LINES)."""
    chapter = (b'<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body>'
               b'<h1>Chapter one</h1><p><img src="images/scan.png" alt=""/></p></body></html>')
    opf = ('<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata/>'
           '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>'
           '<item id="i1" href="images/scan.png" media-type="image/png"/></manifest>'
           '<spine><itemref idref="c1"/></spine></package>')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        archive.writestr("META-INF/container.xml", (
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>"))
        archive.writestr("OEBPS/content.opf", opf)
        archive.writestr("OEBPS/c1.xhtml", chapter)
        archive.writestr("OEBPS/images/scan.png", scan_png())
    return buffer.getvalue()


def html_with_data_uri(*, remote: str = "https://example.invalid/never-fetched.png") -> bytes:
    """A web page of a heading, the scan as a data: URI, and a picture by URL (never fetched)."""
    inline = base64.b64encode(scan_png()).decode("ascii")
    return (f'<!DOCTYPE html><html><body><h1>Notice</h1><img src="data:image/png;base64,{inline}">'
            f'<img src="{remote}"></body></html>').encode()
