"""PDFs built in code for tests: each function returns the bytes of one small PDF.

Importable by any test (``from tests.pdf_factory import text_pdf`` or, with tests on the
path, ``from pdf_factory import ...``). Nothing here touches the disk.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from pypdf import PdfReader, PdfWriter
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, TableStyle
from reportlab.platypus import Table as RLTable


def text_pdf(pages: Sequence[str | Sequence[str]]) -> bytes:
    """One page per item; an item is a line or a list of lines, drawn in Helvetica."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for page in pages:
        lines = [page] if isinstance(page, str) else list(page)
        y = A4[1] - 72
        for line in lines:
            pdf.setFont("Helvetica", 11)
            pdf.drawString(72, y, line)
            y -= 16
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def styled_pdf(pages: Sequence[Sequence[tuple[str, float] | tuple[str, float, str]]], font: str = "Helvetica") -> bytes:
    """One page per item; an item is a list of (line, font size) or (line, font size, font name),
    drawn top-down with a line's spacing 1.4 times its size."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for page in pages:
        y = A4[1] - 72
        for line, size, *named in page:
            y -= 1.4 * size
            pdf.setFont(named[0] if named else font, size)
            pdf.drawString(72, y, line)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def numbered_pdf(count: int, template: str = "This is page number {n} of the document.") -> bytes:
    return text_pdf([template.format(n=n) for n in range(1, count + 1)])


def rotated_pdf(lines: Sequence[str], rotate: int) -> bytes:
    """One page of upright ``lines`` (text_pdf's), then shown turned by its /Rotate (degrees
    clockwise, set with pypdf): the text reads in the page's own frame, whatever the display does."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf([lines]))))
    writer.pages[0].rotate(rotate)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def cropped_pdf(lines: Sequence[str], crop: tuple[float, float, float, float]) -> bytes:
    """text_pdf's page of ``lines`` shown through a crop box (x0, y0, x1, y1 in points, set with
    pypdf): what a viewer shows is the box, the page draws everything."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf([lines]))))
    from pypdf.generic import RectangleObject

    writer.pages[0].cropbox = RectangleObject(crop)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def turned_text_pdf(lines: Sequence[str], degrees: int, rotate: int = 0) -> bytes:
    """``lines`` drawn with a text matrix turned ``degrees`` counter-clockwise about the middle of
    an A4 page (reportlab's rotate), the page itself turned by ``rotate`` (/Rotate, clockwise)."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.translate(A4[0] / 2, A4[1] / 2)
    pdf.rotate(degrees)
    pdf.setFont("Helvetica", 11)
    for row, line in enumerate(lines):
        pdf.drawString(-250, 200 - 16 * row, line)
    pdf.showPage()
    pdf.save()
    if not rotate:
        return buffer.getvalue()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(buffer.getvalue())))
    writer.pages[0].rotate(rotate)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _noise_image(width: int = 400, height: int = 300) -> ImageReader:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for i in range(0, height, 12):
        draw.line((10, i, width - 10, i), fill=(i % 255, 40, 90), width=3)
    return ImageReader(image)


def image_only_pdf(pages: int = 1) -> bytes:
    """Pages that draw one large picture and have no text layer: a scan's shape."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for _ in range(pages):
        pdf.drawImage(_noise_image(), 36, 36, width=A4[0] - 72, height=A4[1] - 72)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def mixed_pdf(text: str = "A native first page with enough words to be trusted as text.") -> bytes:
    """Page 1 native text, page 2 image only."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, A4[1] - 72, text)
    pdf.showPage()
    pdf.drawImage(_noise_image(), 36, 36, width=A4[0] - 72, height=A4[1] - 72)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def encrypted_pdf(
    plain: bytes,
    user_password: str | bytes = "",
    owner_password: str | None = "owner-secret",
    algorithm: str = "AES-128",
) -> bytes:
    """``plain`` encrypted with pypdf. RC4 algorithms store a str password as Latin-1 bytes."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(plain)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm=algorithm)  # type: ignore[arg-type]
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def truncated_pdf(plain: bytes | None = None, keep: int = 200) -> bytes:
    """The first ``keep`` bytes of a valid PDF: a download cut short."""
    return (plain or text_pdf(["cut short"]))[:keep]


def linearized_pdf(count: int = 40) -> bytes:
    """A linearized PDF of ``count`` pages, laid out as linearizers write one: the linearization
    dictionary and the first page's cross-reference section (its trailer's /Prev pointing to the
    main one at the end), the catalog and page 1, then the other pages, the page tree last and the
    main cross-reference table. Cut in half, it keeps page 1 and loses the page tree."""
    resources = b"/MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"

    def content(n: int) -> bytes:
        text = b"BT /F1 12 Tf 72 720 Td (This is page number %d of the document.) Tj ET" % n
        return b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text)

    # 1 linearization dictionary, 2 catalog, 3 font, 4 page 1, 5 its content, 6 the page tree, then pairs
    first = {2: b"<< /Type /Catalog /Pages 6 0 R >>",
             3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
             4: b"<< /Type /Page /Parent 6 0 R %s /Contents 5 0 R >>" % resources,
             5: content(1)}
    rest: dict[int, bytes] = {}
    kids = [4]
    for n in range(2, count + 1):
        page = 5 + 2 * (n - 1)
        kids.append(page)
        rest[page] = b"<< /Type /Page /Parent 6 0 R %s /Contents %d 0 R >>" % (resources, page + 1)
        rest[page + 1] = content(n)
    rest[6] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), count)
    size = 2 * count + 5

    def build(main_xref: int, length: int) -> tuple[bytes, int]:
        out = io.BytesIO()
        out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = {1: out.tell()}
        out.write(b"1 0 obj\n<< /Linearized 1 /L %010d /O 4 /N %d /T %010d /H [0 0] /E 0 >>\nendobj\n"
                  % (length, count, main_xref))
        body = b"".join(b"%d 0 obj\n" % number + first[number] + b"\nendobj\n" for number in sorted(first))
        trailer = b"trailer\n<< /Size %d /Root 2 0 R /Prev %010d >>\nstartxref\n0\n%%%%EOF\n" % (size, main_xref)
        start = out.tell() + len(b"xref\n2 4\n") + 20 * len(first) + len(trailer)  # entries are 20 bytes
        xref_at = out.tell()
        for number in sorted(first):
            offsets[number] = start + body.index(b"%d 0 obj\n" % number)
        out.write(b"xref\n2 4\n" + b"".join(b"%010d 00000 n \n" % offsets[k] for k in sorted(first)) + trailer)
        out.write(body)
        for number in sorted(rest, key=lambda k: (k == 6, k)):  # the page tree last
            offsets[number] = out.tell()
            out.write(b"%d 0 obj\n" % number + rest[number] + b"\nendobj\n")
        main = out.tell()
        out.write(b"xref\n0 %d\n0000000000 65535 f \n" % size)
        out.write(b"".join(b"%010d 00000 n \n" % offsets[number] for number in range(1, size)))
        out.write(b"trailer\n<< /Size %d >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref_at))
        return out.getvalue(), main

    data, main = build(0, 0)  # the second pass fills in the offsets the first one measured
    return build(main, len(data))[0]


def write_pdf(objects: Sequence[bytes], header: bytes = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n") -> bytes:
    """Objects 1..n (object 1 the catalog) written with a cross-reference table and trailer."""
    out = io.BytesIO()
    out.write(header)
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def raw_pdf(content: bytes, font: bytes, extra_objects: Sequence[bytes] = ()) -> bytes:
    """A one-page PDF written by hand: ``font`` is the font dictionary (object 5)."""
    stream = zlib.compress(content)
    return write_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> "
        b"/Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        font,
        *extra_objects,
    ])


def _text_content(lines: Sequence[bytes]) -> bytes:
    parts = [b"BT /F1 12 Tf 72 770 Td 16 TL"]
    for line in lines:
        escaped = line.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
        parts.append(b"(" + escaped + b") Tj T*")
    parts.append(b"ET")
    return b"\n".join(parts)


def differences_font_pdf(
    lines: Sequence[str] = ("The quarterly report shows revenue growth", "in every region of the company"),
) -> bytes:
    """A simple font whose /Encoding /Differences gives every letter a low code (1, 2, ...)
    named by a glyph name with no Unicode meaning (/g1, /g2, ...), and no /ToUnicode.

    This is how subsetting tools break PDFs in the wild: the text is stored, but pdfium
    yields control characters, pypdf '/g0/g4', pdfminer '(cid:1)' and pdftotext control
    characters again: no engine can recover it.
    """
    letters = sorted({ord(ch) for line in lines for ch in line if ch.isalpha()})
    code_of = {letter: i + 1 for i, letter in enumerate(letters)}
    differences = b" ".join(b"%d /g%d" % (code, code) for code in code_of.values())
    font = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 0 /LastChar 255 /Widths ["
        + b" 500" * 256
        + b"] /Encoding << /Type /Encoding /Differences ["
        + differences
        + b"] >> >>"
    )
    content = [bytes(code_of.get(ord(ch), ord(ch)) for ch in line) for line in lines]
    return raw_pdf(_text_content(content), font)


def byte_swapped_map_pdf(
    lines: Sequence[str] = ("The quarterly report shows revenue growth", "in every region of the company"),
) -> bytes:
    """Helvetica whose ToUnicode map is written in the wrong byte order (U+4D00 for 'M'), as om__cmyk.pdf's
    is: every engine reads CJK where the page shows Latin."""
    codes = sorted({ord(ch) for line in lines for ch in line})
    entries = b"\n".join(b"<%02X> <%02X00>" % (code, code) for code in codes)
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Swapped def "
            b"1 begincodespacerange <00> <FF> endcodespacerange %d beginbfchar\n" % len(codes)
            + entries + b"\nendbfchar endcmap CMapName currentdict /CMap defineresource pop end end")
    font = (b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding "
            b"/ToUnicode 6 0 R >>")
    stream = b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream"
    return raw_pdf(_text_content([line.encode("latin-1") for line in lines]), font, [stream])


def shifted_font_pdf(
    lines: Sequence[str] = ("The quarterly report shows revenue growth", "in every region of the company"),
    shift: int = 3,
) -> bytes:
    """Letters re-mapped by /Differences to other real glyph names (a -> d, ...): extraction
    yields a word-shaped substitution cipher ('Wkh txduwhuob...')."""
    entries = []
    for base in (ord("a"), ord("A")):
        for i in range(26):
            entries.append(b"%d /%s" % (base + i, chr(base + (i + shift) % 26).encode()))
    font = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
        b"/Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [" + b" ".join(entries) + b"] >> >>"
    )
    return raw_pdf(_text_content([line.encode("latin-1") for line in lines]), font)


#: a German lecture-notes page's prose, one line between two formulas each
_LECTURE_LINES = (
    "Die Funktion ist auf dem ganzen Intervall stetig und besitzt dort eine Stammfunktion",
    "Wir zeigen zuerst dass die Folge beschränkt ist und dann dass sie monoton wächst",
    "Daraus folgt mit dem Satz von Bolzano und Weierstraß dass der Grenzwert existiert",
    "Für jede natürliche Zahl gilt die folgende Abschätzung der Summe aller Glieder",
    "Man beachte dass die Bedingung des Satzes nur hinreichend aber nicht notwendig ist",
    "Im nächsten Abschnitt betrachten wir die Ableitung der Funktion an jeder Stelle",
    "Damit ist der Beweis des Hilfssatzes vollständig erbracht und wir kommen zum Satz",
)


def math_font_pdf(base_font: str = "ABCDEF+CMEX10", delimiters: tuple[bytes, bytes] = (b"\x12 ", b" \x13"),
                  differences: str | None = "18 /parenleftbigg /parenrightbigg", type3: bool = False,
                  repeat: int = 1) -> bytes:
    """A LaTeX-like page: German prose in Helvetica, and after each line a formula ``( x + y ) =
    ( a + b )`` whose delimiters are the codes ``delimiters`` of a font named ``base_font`` (Type 1,
    or Type 3 with ``type3``), not embedded, with no ToUnicode and, unless ``differences`` is None,
    an /Encoding whose /Differences names them (TeX's names: cmex's big parentheses by default).
    pdfium writes such codes as they are (U+0012, U+0013): about 5% of the page's glyphs, 28 codes
    (``repeat``: the prose and formulas that many times, up to 3). (Each
    delimiter shares its text object with a space: pdfium leaves out an object of one unmapped code.)"""
    left, right = (code.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") for code in delimiters)
    lines, y = [], 770
    for line in _LECTURE_LINES * repeat:
        lines.append(b"BT /F1 11 Tf 72 %d Td (%s) Tj ET" % (y, line.encode("cp1252")))
        formula = b"".join(b"/F2 11 Tf (%s) Tj /F1 11 Tf ( %s ) Tj /F2 11 Tf (%s) Tj /F1 11 Tf ( = ) Tj"
                           % (left, terms, right) for terms in (b"x + y", b"a + b"))
        lines.append(b"BT 100 %d Td %s ET" % (y - 16, formula))
        y -= 32
    encoding = b"/Encoding << /Type /Encoding /Differences [%s] >>" % differences.encode() if differences else b""
    name = base_font.encode()
    widths = b"/FirstChar 0 /LastChar 255 /Widths [" + b" 500" * 256 + b"]"
    if type3:
        glyphs = [item[1:] for item in (differences or "").split() if item.startswith("/")]
        procs = b" ".join(b"/%s 7 0 R" % glyph.encode() for glyph in glyphs)
        font = (b"<< /Type /Font /Subtype /Type3 /Name /%s /BaseFont /%s /FontBBox [0 0 500 700] "
                b"/FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << %s >> %s %s /Resources << >> >>"
                % (name, name, procs, widths, encoding))
    else:
        font = b"<< /Type /Font /Subtype /Type1 /BaseFont /%s %s %s >>" % (name, widths, encoding)
    glyph = b"500 0 0 0 500 700 d1 0 0 m 500 700 l S"
    return _helvetica_and_page(lines, font, [b"<< /Length %d >>\nstream\n" % len(glyph) + glyph + b"\nendstream"])


def no_space_pdf(words: Sequence[str] = ("What", "is", "Earth", "Science?")) -> bytes:
    """Words placed one by one with gaps but no space characters: some engines run them together."""
    parts = [b"BT /F1 12 Tf"]
    x = 72.0
    for word in words:
        parts.append(b"1 0 0 1 %.1f 770 Tm (%s) Tj" % (x, word.encode("latin-1")))
        x += 7.0 * len(word) + 6.0
    parts.append(b"ET")
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    return raw_pdf(b"\n".join(parts), font)


def empty_pages_pdf() -> bytes:
    """A syntactically valid PDF with a page tree of zero pages."""
    return write_pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"],
                     header=b"%PDF-1.4\n")


def table_pdf(
    rows: Sequence[Sequence[str]] = (
        ("Region", "Revenue", "Growth"),
        ("North", "1,200", "4%"),
        ("South", "950", "2%"),
        ("East", "1,430", "7%"),
    ),
    title: str = "Table 1: Revenue by region",
    boxed_note: str | None = None,
) -> bytes:
    """A page with a title line, a ruled grid table and (optionally) a framed one-cell note."""
    buffer = io.BytesIO()
    doc = SimpleDocTemplate(buffer, pagesize=A4)
    styles = getSampleStyleSheet()
    story: list[object] = [Paragraph("Quarterly figures for all regions are listed below.", styles["Normal"])]
    story += [Spacer(1, 12), Paragraph(title, styles["Normal"])]
    grid = RLTable([list(r) for r in rows])
    grid.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    story.append(grid)
    if boxed_note:
        story.append(Spacer(1, 24))
        note = RLTable([[boxed_note]])
        note.setStyle(TableStyle([("BOX", (0, 0), (-1, -1), 0.5, colors.black)]))
        story.append(note)
    doc.build(story)  # type: ignore[arg-type]
    return buffer.getvalue()


def broken_page_tree_pdf(line: str = "The quarterly report shows revenue growth in every region.") -> bytes:
    """A one-page PDF whose catalog points /Pages at an object that does not exist: pdfium sees
    no pages and pypdf refuses the tree, but the page object itself is intact."""
    content = b"BT /F1 12 Tf 72 770 Td (" + line.encode("latin-1") + b") Tj ET"
    return write_pdf([
        b"<< /Type /Catalog /Pages 9 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ], header=b"%PDF-1.4\n")


def _truetype_program_without_cmap() -> bytes:
    """reportlab's Vera.ttf with its cmap table dropped from the table directory."""
    import reportlab

    with open(f"{reportlab.__path__[0]}/fonts/Vera.ttf", "rb") as fh:
        program = fh.read()
    tables = int.from_bytes(program[4:6], "big")
    entries = [program[12 + 16 * i : 28 + 16 * i] for i in range(tables)]
    kept = [entry for entry in entries if entry[:4] != b"cmap"]
    directory = program[:4] + len(kept).to_bytes(2, "big") + program[6:12] + b"".join(kept)
    # the tables stay where they were: the shortened directory is padded to its old length
    return directory + b"\0" * (12 + 16 * tables - len(directory)) + program[12 + 16 * tables :]


def truetype_without_cmap_pdf(codes: bytes = b'!"#$%') -> bytes:
    """A few glyphs from an embedded subset TrueType font with no cmap and no ToUnicode: their
    codes say nothing about the characters, yet pdfium reads them as ASCII punctuation."""
    program = zlib.compress(_truetype_program_without_cmap())
    first, last = min(codes), max(codes)
    font = (b"<< /Type /Font /Subtype /TrueType /BaseFont /ABCDEF+Vera /FirstChar %d /LastChar %d /Widths [%s] "
            b"/FontDescriptor 6 0 R >>" % (first, last, b" ".join([b"600"] * (last - first + 1))))
    descriptor = (b"<< /Type /FontDescriptor /FontName /ABCDEF+Vera /Flags 4 /FontBBox [0 -200 1000 900] "
                  b"/ItalicAngle 0 /Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 7 0 R >>")
    stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(program) + program + b"\nendstream"
    escaped = codes.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    return raw_pdf(b"BT /F1 24 Tf 72 700 Td (" + escaped + b") Tj ET", font, [descriptor, stream])


def _vera_subset(word: str, codes: bytes, flags: int = 32, encoding: bytes = b"",
                 descriptor_object: int = 6) -> tuple[bytes, bytes, bytes, bytes]:
    """``word`` as drawn with an embedded subset of reportlab's Vera.ttf whose own cmap numbers its
    glyphs as a subsetting tool chose (code ``codes[i]`` draws ``word[i]``), no ToUnicode: the font
    dictionary, its descriptor (object ``descriptor_object``; the program the next one), the
    program's stream, and the codes escaped for a PDF string."""
    import reportlab
    from reportlab.pdfbase.ttfonts import TTFontFile

    font_file = TTFontFile(f"{reportlab.__path__[0]}/fonts/Vera.ttf")
    slots = [0] * (max(codes) + 1)  # the subset's code -> the character whose glyph it draws
    for code, char in zip(codes, word, strict=True):
        slots[code] = ord(char)
    program = zlib.compress(font_file.makeSubset(slots))
    first, last = min(codes), max(codes)
    widths = b" ".join(b"%d" % font_file.charWidths.get(slots[code], 600) for code in range(first, last + 1))
    font = (b"<< /Type /Font /Subtype /TrueType /BaseFont /ABCDEF+Vera /FirstChar %d /LastChar %d /Widths [%s] "
            b"%s /FontDescriptor %d 0 R >>" % (first, last, widths, encoding, descriptor_object))
    descriptor = (b"<< /Type /FontDescriptor /FontName /ABCDEF+Vera /Flags %d /FontBBox [0 -200 1000 900] "
                  b"/ItalicAngle 0 /Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 %d 0 R >>"
                  % (flags, descriptor_object + 1))
    stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(program) + program + b"\nendstream"
    escaped = codes.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    return font, descriptor, stream, escaped


def subset_truetype_without_map_pdf(word: str = "Phone", codes: bytes = b'"7+%-', flags: int = 32,
                                    encoding: bytes = b"") -> bytes:
    """``word`` drawn with an embedded subset TrueType font (reportlab's subsetter over Vera.ttf)
    whose own cmap numbers its glyphs as a subsetting tool chose: code ``codes[i]`` draws
    ``word[i]``. No ToUnicode and no /Encoding (unless ``encoding`` gives one), non-symbolic by
    default (``flags``): every engine reads the codes as standard ones, '"7+%-' for 'Phone', while
    every viewer draws the word."""
    font, descriptor, stream, escaped = _vera_subset(word, codes, flags, encoding)
    return raw_pdf(b"BT /F1 36 Tf 72 700 Td (" + escaped + b") Tj ET", font, [descriptor, stream])


def predefined_cmap_pdf(text: str = "東京都は日本の首都であり、多くの人々が働いています。", cmap: str = "90ms-RKSJ-H",
                        encoding: str = "shift_jis") -> bytes:
    """CJK text through a Type0 font with a predefined CMap, no ToUnicode and no embedded font:
    the characters come only from the Adobe-Japan1 collection's maps."""
    font = b"<< /Type /Font /Subtype /Type0 /BaseFont /MS-Mincho /Encoding /%s /DescendantFonts [6 0 R] >>" % (
        cmap.encode())
    cid_font = (b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /MS-Mincho /CIDSystemInfo << /Registry (Adobe) "
                b"/Ordering (Japan1) /Supplement 2 >> /FontDescriptor 7 0 R /DW 1000 >>")
    descriptor = (b"<< /Type /FontDescriptor /FontName /MS-Mincho /Flags 4 /FontBBox [0 -200 1000 900] /ItalicAngle 0 "
                  b"/Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 >>")
    content = b"BT /F1 12 Tf 72 700 Td <" + text.encode(encoding).hex().encode() + b"> Tj ET"
    return raw_pdf(content, font, [cid_font, descriptor])


def vertical_cjk_pdf(columns: Sequence[str] = ("東京都は日本の", "首都であり多く", "の人々が働く")) -> bytes:
    """Japanese in vertical writing (a -V CMap: glyphs advance down the column), ``columns`` in
    reading order (right to left), and the content stream drawing the columns from left to
    right, as some generators do: the stream's order is not the reading order."""
    font = b"<< /Type /Font /Subtype /Type0 /BaseFont /MS-Mincho /Encoding /UniJIS-UCS2-V /DescendantFonts [6 0 R] >>"
    cid_font = (b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /MS-Mincho /CIDSystemInfo << /Registry (Adobe) "
                b"/Ordering (Japan1) /Supplement 2 >> /FontDescriptor 7 0 R /DW 1000 >>")
    descriptor = (b"<< /Type /FontDescriptor /FontName /MS-Mincho /Flags 4 /FontBBox [0 -200 1000 900] /ItalicAngle 0 "
                  b"/Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 >>")
    parts = [b"BT /F1 14 Tf"]
    for drawn, column in enumerate(reversed(columns)):  # leftmost column first
        parts.append(b"1 0 0 1 %d 700 Tm <%s> Tj" % (100 + 30 * drawn, column.encode("utf-16-be").hex().encode()))
    parts.append(b"ET")
    return raw_pdf(b"\n".join(parts), font, [cid_font, descriptor])


def native_and_scanned_pdf(native_lines: Sequence[str] = (
        "A native first page with enough plain words to be trusted as it is written.",
        "Its text layer is sound, and no engine but pdfium reads it.")) -> bytes:
    """Page 1 a native text page, page 2 a scan of printed text (scan_factory.LINES): only page 2
    needs OCR."""
    from scan_factory import scanned_pdf, text_image

    writer = PdfWriter()
    for part in (text_pdf([list(native_lines)]), scanned_pdf([text_image()])):
        for page in PdfReader(io.BytesIO(part)).pages:
            writer.add_page(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _picture_reader(image: object) -> ImageReader:
    return ImageReader(image)


def annex_pdf(native_lines: Sequence[str] = ("Tender notice 12/2026: the signed annex follows.",
                                             "The annex below is a scan pasted into this page.")) -> bytes:
    """A digital page with a native text layer and, below it, a picture of printed text (a scanned
    annex pasted in): the picture's text is in no text layer."""
    from scan_factory import text_image

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    y = A4[1] - 72
    for line in native_lines:
        pdf.setFont("Helvetica", 11)
        pdf.drawString(72, y, line)
        y -= 16
    annex = text_image()  # 1100 px wide: 5.5 inches at 200 dpi
    width = A4[0] - 144
    pdf.drawImage(_picture_reader(annex), 72, y - 40 - width * annex.height / annex.width, width=width,
                  height=width * annex.height / annex.width)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


#: a scanned page's printed lines (invisible_layer_pdf draws them as the picture)
SCANNED_PROSE = (
    "The committee met on the first of March to review the tenders.",
    "Three offers were received before the closing date and time.",
    "Each offer was opened in public and its price read aloud.",
    "The lowest offer came from a firm based in the northern district.",
    "Its references were checked and found to be in good order.",
    "The committee recommends that the contract be awarded to it.",
)


def invisible_layer_pdf(layer_lines: Sequence[str]) -> bytes:
    """A scan (a full-page picture of SCANNED_PROSE) under an invisible text layer (render mode 3,
    as OCR tools write one) holding ``layer_lines``: an earlier OCR's reading of the page."""
    from PIL import Image
    from scan_factory import text_image

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    scan = Image.new("L", (1240, 1754), 255)  # an A4 page at 150 dpi, printed at the top
    scan.paste(text_image(SCANNED_PROSE, font_size=30, width=1240, margin=90), (0, 0))
    pdf.drawImage(_picture_reader(scan), 0, 0, width=A4[0], height=A4[1])
    text = pdf.beginText(72, A4[1] - 100)
    text.setTextRenderMode(3)
    text.setFont("Helvetica", 12)
    for line in layer_lines:
        text.textLine(line)
    pdf.drawText(text)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


_NOTES_WORDS = ("the", "geodesic", "through", "two", "points", "meets", "boundary", "circle", "at", "right",
                "angles", "so", "every", "triangle", "has", "angle", "sum", "below", "pi", "and", "area", "grows")


def lecture_notes_pdf(sections: Sequence[tuple[str, Sequence[str], int]], first_page_number: int = 1) -> bytes:
    """Lecture notes as LaTeX lays them out: each section (title, subsection titles, pages) opens
    with its title, a running head (the section's title, upper case, and the page number) tops
    every page after its first, a page number alone sits at the foot of each page, and the
    outline lists the sections with their subsections nested under them."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    opened: list[tuple[str, int, int]] = []  # title, level, page index
    page_index = 0
    for title, subsections, pages in sections:
        for page in range(pages):
            number = first_page_number + page_index
            y = A4[1] - 50
            if page:
                pdf.setFont("Helvetica", 9)
                pdf.drawString(72, y, f"{title.upper()}    {number}")
                y -= 30
            else:
                pdf.setFont("Helvetica-Bold", 16)
                pdf.drawString(72, y, title)
                opened.append((title, 1, page_index))
                y -= 30
            pdf.setFont("Helvetica", 11)
            if page < len(subsections):
                pdf.setFont("Helvetica-Bold", 12)
                pdf.drawString(72, y, subsections[page])
                opened.append((subsections[page], 2, page_index))
                y -= 20
                pdf.setFont("Helvetica", 11)
            for line in range(12):
                words = [_NOTES_WORDS[(page_index * 5 + line * 3 + k) % len(_NOTES_WORDS)] for k in range(9)]
                pdf.drawString(72, y, " ".join(words).capitalize() + ".")
                y -= 16
            pdf.setFont("Helvetica", 9)
            pdf.drawString(A4[0] / 2, 40, str(number))
            pdf.showPage()
            page_index += 1
    pdf.save()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(buffer.getvalue())))
    parent = None
    for title, level, index in opened:
        item = writer.add_outline_item(title=title, page_number=index, parent=parent if level == 2 else None)
        if level == 1:
            parent = item
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def subset_word_on_sound_page_pdf(word: str = "Phone", codes: bytes = b'"7+%-', body_lines: int = 40) -> bytes:
    """:func:`sound_page_with_unmapped_word_pdf` with codes from 0x21 on, as subsetters number a
    font's first glyphs: every engine reads them as punctuation and figures ('"7+%-')."""
    return sound_page_with_unmapped_word_pdf(word, codes, body_lines)


def sound_page_with_unmapped_word_pdf(word: str = "Phone", codes: bytes = b"\x01\x02\x03\x04\x05",
                                      body_lines: int = 40) -> bytes:
    """A long page of sound Helvetica prose whose last line ends with ``word`` drawn by an embedded
    subset TrueType font (reportlab's subsetter over Vera.ttf) with no ToUnicode and no /Encoding,
    its glyphs numbered by ``codes``: codes below 0x20 have no Unicode anywhere in the file, and
    every engine leaves the word out of the page's otherwise sound text (codes above, see
    :func:`subset_word_on_sound_page_pdf`)."""
    subset, descriptor, stream, escaped = _vera_subset(word, codes, descriptor_object=7)
    words = _NOTES_WORDS
    lines = [b"(" + " ".join(words[(i * 3 + k) % len(words)] for k in range(11)).encode("latin-1") + b") Tj T*"
             for i in range(body_lines)]
    content = b"\n".join([b"BT /F1 11 Tf 72 780 Td 15 TL", *lines,
                          b"(Call the harbour office by ) Tj /F2 11 Tf (" + escaped + b") Tj ET"])
    return _helvetica_and_page([content], subset, [descriptor, stream])


def _helvetica_and_page(lines: Sequence[bytes], font: bytes, extra_objects: Sequence[bytes]) -> bytes:
    """A one-page PDF drawing ``lines`` (content) with Helvetica as /F1 (object 5) and ``font`` as /F2
    (object 6), ``extra_objects`` from object 7 on."""
    content = zlib.compress(b"\n".join(lines))
    return write_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> "
        b"/Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        font,
        *extra_objects,
    ])
#: font sizes of tagged_pdf's lines by their tag (any other: body text)
_TAG_SIZES = {"H1": 18.0, "H2": 14.0, "H3": 12.0}


def tagged_pdf(pages: Sequence[Sequence[tuple[str, ...]]], marked: bool = True) -> bytes:
    """A tagged PDF written by hand: one page per item, an item a list of lines (tag, text) or
    (tag, text, sections), drawn top-down in Helvetica (H1 18 pt, H2 14, H3 12, others 11), each
    line its own marked-content sequence (``/Tag <</MCID n>> BDC ... EMC``) and its own structure
    element of that tag (``sections``: inside that many nested ``Sect`` elements) under one
    ``Document`` element; a tag ``""`` draws the line unmarked. The parent tree maps each page's
    MCIDs to their elements; the catalog has ``/MarkInfo /Marked true`` unless not ``marked``."""
    count = len(pages)
    first_page = 6
    page_numbers = [first_page + 2 * k for k in range(count)]
    next_number = first_page + 2 * count
    elements: list[bytes] = []  # objects from next_number on
    document_kids: list[int] = []
    nums: list[bytes] = []
    contents: list[bytes] = []
    for page_index, lines in enumerate(pages):
        page_ref = page_numbers[page_index]
        parts: list[bytes] = []
        parents: list[int] = []
        y = A4[1] - 72
        for line in lines:
            tag, text = line[0], line[1]
            sections = int(line[2]) if len(line) > 2 else 0
            size = _TAG_SIZES.get(tag, 11.0)
            y -= 1.4 * size
            escaped = text.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
            drawn = b"BT /F1 %.1f Tf 72 %.1f Td (%s) Tj ET" % (size, y, escaped)
            if not tag:
                parts.append(drawn)
                continue
            mcid = len(parents)
            parts.append(b"/%s <</MCID %d>> BDC %s EMC" % (tag.encode(), mcid, drawn))
            parent = 5
            chain: list[int] = []
            for _ in range(sections):
                chain.append(next_number + len(elements))
                elements.append(b"")  # filled below, once its kid is known
            element = next_number + len(elements)
            elements.append(b"<< /Type /StructElem /S /%s /P %d 0 R /Pg %d 0 R /K %d >>"
                            % (tag.encode(), chain[-1] if chain else parent, page_ref, mcid))
            for depth, number in enumerate(chain):
                above = chain[depth - 1] if depth else parent
                below = chain[depth + 1] if depth + 1 < len(chain) else element
                elements[number - next_number] = b"<< /Type /StructElem /S /Sect /P %d 0 R /K [%d 0 R] >>" % (
                    above, below)
            document_kids.append(chain[0] if chain else element)
            parents.append(element)
        contents.append(b"\n".join(parts))
        nums.append(b"%d [%s]" % (page_index, b" ".join(b"%d 0 R" % p for p in parents)))
    mark = b" /MarkInfo << /Marked true >>" if marked else b""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /StructTreeRoot 4 0 R%s >>" % mark,
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % n for n in page_numbers), count),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /StructTreeRoot /K [5 0 R] /ParentTree << /Nums [%s] >> /ParentTreeNextKey %d >>"
        % (b" ".join(nums), count),
        b"<< /Type /StructElem /S /Document /P 4 0 R /K [%s] >>" % b" ".join(b"%d 0 R" % k for k in document_kids),
    ]
    for page_index, content in enumerate(contents):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /StructParents %d "
                       b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>"
                       % (page_index, page_numbers[page_index] + 1))
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    return write_pdf([*objects, *elements])


def wide_to_unicode_pdf(pages: Sequence[str]) -> bytes:
    """Pages of text through one Type0 font (Identity-H, no embedded program) whose ToUnicode
    map is two ranges over the whole Basic Multilingual Plane, as libharu writes it (63,488
    codes: ``<0000> <D7FF> <0000>``, ``<E000> <FFFF> <E000>``); each page's text drawn as its
    UTF-16 codes."""
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CIDSystemInfo << /Registry (Adobe) "
            b"/Ordering (UCS) /Supplement 0 >> def /CMapName /Wide-UCS def /CMapType 2 def "
            b"2 begincodespacerange <0000> <D7FF> <E000> <FFFF> endcodespacerange "
            b"2 beginbfrange <0000> <D7FF> <0000> <E000> <FFFF> <E000> endbfrange "
            b"endcmap CMapName currentdict /CMap defineresource pop end end")
    count = len(pages)
    first_page = 8  # objects 1-7: catalog, pages, font, descendant, descriptor, map, (unused)
    kids = b" ".join(b"%d 0 R" % (first_page + 2 * i) for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Wide /Encoding /Identity-H /DescendantFonts [4 0 R] "
        b"/ToUnicode 6 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Wide /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor 5 0 R /DW 600 >>",
        b"<< /Type /FontDescriptor /FontName /Wide /Flags 32 /FontBBox [0 -200 1000 900] /ItalicAngle 0 "
        b"/Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
        b"<< >>",
    ]
    for number, text in enumerate(pages):
        content = b"BT /F1 12 Tf 72 770 Td <" + text.encode("utf-16-be").hex().encode() + b"> Tj ET"
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
                       b"/Contents %d 0 R >>" % (first_page + 2 * number + 1))
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    return write_pdf(objects)


# -- a real file with one font's ToUnicode map rewritten (issue 17) -----------------------------

_CMAP_ENTRY = re.compile(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>")
_CMAP_RANGE = re.compile(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*(<[0-9A-Fa-f]+>|\[[^\]]*\])")


def _parsed_to_unicode(data: bytes) -> tuple[dict[int, str], int]:
    """Code -> Unicode text of a ToUnicode CMap's bfchar and bfrange sections, and the codes' width
    in bytes."""
    mapping: dict[int, str] = {}
    width = 1
    for section in re.findall(rb"beginbfchar(.*?)endbfchar", data, re.S):
        for source, target in _CMAP_ENTRY.findall(section):
            width = len(source) // 2
            mapping[int(source, 16)] = bytes.fromhex(target.decode()).decode("utf-16-be", "replace")
    for section in re.findall(rb"beginbfrange(.*?)endbfrange", data, re.S):
        for low, high, target in _CMAP_RANGE.findall(section):
            width = len(low) // 2
            first, last = int(low, 16), int(high, 16)
            if last - first > 0xFFFF:
                continue
            if target.startswith(b"["):
                for offset, item in enumerate(re.findall(rb"<([0-9A-Fa-f]+)>", target)):
                    mapping[first + offset] = bytes.fromhex(item.decode()).decode("utf-16-be", "replace")
                continue
            start = bytes.fromhex(target[1:-1].decode())
            for offset in range(last - first + 1):
                value = int.from_bytes(start, "big") + offset
                mapping[first + offset] = value.to_bytes(len(start), "big").decode("utf-16-be", "replace")
    return mapping, width


def _written_to_unicode(mapping: dict[int, str], width: int) -> bytes:
    """A ToUnicode CMap of bfchar entries for ``mapping``."""
    digits = 2 * width
    items = sorted(mapping.items())
    chunks = []
    for start in range(0, len(items), 100):
        part = items[start:start + 100]
        lines = b"\n".join(b"<%s> <%s>" % (f"{code:0{digits}X}".encode(), text.encode("utf-16-be").hex().upper()
                                           .encode()) for code, text in part)
        chunks.append(b"%d beginbfchar\n" % len(part) + lines + b"\nendbfchar")
    high = b"F" * digits
    return (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CIDSystemInfo << /Registry (Adobe) "
            b"/Ordering (UCS) /Supplement 0 >> def /CMapName /Probe-UCS def /CMapType 2 def "
            b"1 begincodespacerange <" + b"0" * digits + b"> <" + high + b"> endcodespacerange\n"
            + b"\n".join(chunks) + b"\nendcmap CMapName currentdict /CMap defineresource pop end end")


def shifted_letter(char: str) -> str:
    """The letter after ``char`` (z -> a), other characters as they are: a map a tool got wrong by one."""
    for base in ("a", "A"):
        if base <= char <= chr(ord(base) + 25):
            return chr(ord(base) + (ord(char) - ord(base) + 1) % 26)
    return char


#: a fixed permutation of the alphabet (no letter on itself): plausible-looking letters, no words
_PERMUTED = "qwertyuiopasdfghjklzxcvbnm"


def permuted_letter(char: str) -> str:
    """``char`` through a fixed permutation of the alphabet (case kept), other characters as they are."""
    if "a" <= char <= "z":
        return _PERMUTED[ord(char) - ord("a")]
    if "A" <= char <= "Z":
        return _PERMUTED[ord(char) - ord("A")].upper()
    return char


def remapped_font_pdf(data: bytes, font: str, letter: Callable[[str], str], pages: Sequence[int] = ()) -> bytes:
    """The PDF ``data`` with the ToUnicode map of every font named ``font`` (base name, subset tag
    aside) on ``pages`` (1-based; all when empty) rewritten so that each code maps to
    ``letter`` of what it mapped to: the font's own map where it has one, else one written from its
    codes as ASCII (printable codes, what a simple font's letters are in the standard encodings and
    TeX's). The glyphs drawn stay the same; only the text layer of that font is wrong."""
    from pypdf.generic import DecodedStreamObject, NameObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    done: dict[int, Any] = {}
    for number, page in enumerate(writer.pages, start=1):
        if pages and number not in pages:
            continue
        resources = page.get("/Resources")
        fonts = resources.get_object().get("/Font") if resources is not None else None
        for ref in (fonts.get_object().values() if fonts is not None else ()):
            dictionary = ref.get_object()
            name = str(dictionary.get("/BaseFont", "")).lstrip("/")
            if name.split("+", 1)[-1] != font or id(dictionary) in done:
                continue
            if "/ToUnicode" in dictionary:
                mapping, width = _parsed_to_unicode(dictionary["/ToUnicode"].get_object().get_data())
            else:
                mapping, width = {code: chr(code) for code in range(0x21, 0x7F)}, 1
            stream = DecodedStreamObject()
            stream.set_data(_written_to_unicode({code: "".join(map(letter, text)) for code, text in mapping.items()},
                                                width))
            dictionary[NameObject("/ToUnicode")] = writer._add_object(stream)
            done[id(dictionary)] = dictionary
    if not done:
        raise ValueError(f"no font {font!r} on the pages asked")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
