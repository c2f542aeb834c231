"""Hostile inputs built in code: bombs, traversal, links, XXE, odd names, lying sizes.

Each case is a ``Hostile``: a file name (any name a Linux file system can hold, including bytes
that are not UTF-8, as surrogate escapes), a builder that writes the file (big ones streamed,
never held whole in memory) and the document statuses the case may end with. Cases that try to
read a local file (XXE, links) point at ``secret``: a file the test plants, whose contents
(``SECRET_TOKEN``) must appear in no output.

``hostile_cases()`` is the suite; ``write_cases(folder, secret)`` writes it into a folder.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import random
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from archive_factory import nested_zip, tar_bytes, zip_bytes, zip_with_symlink
from pdf_factory import text_pdf, write_pdf

#: the contents of the planted secret file: no output may contain it
SECRET_TOKEN = "PAPERSIFT-SECRET-4b1d7e0c"
#: a marker every legit text in the suite carries, so a test can see text survive
MARKER = "harbourmaster"

MB = 1024 * 1024
LIMIT = "limit_exceeded"


@dataclass(frozen=True)
class Hostile:
    """One hostile input: its file name, how to write it, and how it may end."""

    name: str
    build: Callable[[Path, Path], None]  # (target file, secret file) -> None
    statuses: frozenset[str]
    why: str


def _bytes(data: bytes | Callable[[Path], bytes]) -> Callable[[Path, Path], None]:
    def build(target: Path, secret: Path) -> None:
        target.write_bytes(data(secret) if callable(data) else data)

    return build


# -- XML bombs and XXE -------------------------------------------------------------------------

_LAUGHS = "".join(
    f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
).replace("&lol0;", "lol")


def billion_laughs_dtd(root: str) -> str:
    """The classic: nine levels of ten references, 10**9 'lol's from a 1 KB declaration."""
    return f"<!DOCTYPE {root} [{_LAUGHS}]>"


def quadratic_dtd(root: str, size: int = 100_000) -> str:
    """One big entity referenced many times: no nesting, still gigabytes."""
    return f'<!DOCTYPE {root} [<!ENTITY big "{"B" * size}">]>'


def xxe_dtd(root: str, secret: Path) -> str:
    return f'<!DOCTYPE {root} [<!ENTITY xxe SYSTEM "file://{secret}">]>'


def xml_doc(dtd: str, body: str, root: str = "report") -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{dtd}\n<{root}>{body}</{root}>'.encode()


def svg_doc(dtd: str, text: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n{dtd}\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="200" height="50"><text x="0" y="20">{text}</text></svg>'
    ).encode()


def xinclude_xml(secret: Path) -> bytes:
    return (
        '<?xml version="1.0"?><report xmlns:xi="http://www.w3.org/2001/XInclude">'
        f"<p>{MARKER} before</p><xi:include href=\"file://{secret}\" parse=\"text\"/><p>after</p></report>"
    ).encode()


# -- office packages -------------------------------------------------------------------------------

_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def docx_package(document_xml: bytes | str, *, deflate_level: int = 6) -> bytes:
    """A minimal Word package around ``document_xml`` (word/document.xml)."""
    body = document_xml.encode() if isinstance(document_xml, str) else document_xml
    parts = {
        "[Content_Types].xml": (
            b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            b'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            b'<Default Extension="xml" ContentType="application/xml"/>'
            b'<Override PartName="/word/document.xml" ContentType="application/'
            b'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
        ),
        "_rels/.rels": (
            b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            b'officeDocument" Target="word/document.xml"/></Relationships>'
        ),
        "word/document.xml": body,
    }
    return _zip_parts(parts, deflate_level)


def word_document(dtd: str, paragraphs: Sequence[str]) -> str:
    runs = "".join(f"<w:p><w:r><w:t xml:space=\"preserve\">{p}</w:t></w:r></w:p>" for p in paragraphs)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{dtd}\n<w:document {_W}><w:body>{runs}</w:body></w:document>'


_SHEET_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
_REL_NS = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'


def xlsx_package(sheet_xml: str, shared_strings: str | None = None) -> bytes:
    """A minimal workbook: one sheet (``sheet_xml``) and optional shared strings."""
    overrides = (
        '<Override PartName="/xl/workbook.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    )
    rels = ('<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'worksheet" Target="worksheets/sheet1.xml"/>')
    if shared_strings is not None:
        overrides += ('<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                      'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>')
        rels += ('<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                 'relationships/sharedStrings" Target="sharedStrings.xml"/>')
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            f'<Default Extension="xml" ContentType="application/xml"/>{overrides}</Types>'
        ),
        "_rels/.rels": (
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            'officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": (
            f'<?xml version="1.0"?><workbook {_SHEET_NS} {_REL_NS}><sheets>'
            '<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": (
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f"{rels}</Relationships>"
        ),
        "xl/worksheets/sheet1.xml": sheet_xml,
    }
    if shared_strings is not None:
        parts["xl/sharedStrings.xml"] = shared_strings
    return _zip_parts({k: v.encode() if isinstance(v, str) else v for k, v in parts.items()})


def sheet_xml(rows: Iterable[Sequence[str]], *, dimension: str | None = None, dtd: str = "",
              refs: Callable[[int, int], str] | None = None) -> str:
    """Inline-string rows; ``dimension`` is the declared used range, ``refs`` names the cells."""
    out = [f'<?xml version="1.0" encoding="UTF-8"?>\n{dtd}\n<worksheet {_SHEET_NS}>']
    if dimension:
        out.append(f'<dimension ref="{dimension}"/>')
    out.append("<sheetData>")
    for r, row in enumerate(rows, start=1):
        out.append(f'<row r="{r}">')
        for c, value in enumerate(row):
            ref = refs(r, c) if refs else f"{chr(65 + c)}{r}"
            out.append(f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>')
        out.append("</row>")
    out.append("</sheetData></worksheet>")
    return "".join(out)


def shared_strings_xml(dtd: str, strings: Sequence[str]) -> str:
    items = "".join(f"<si><t>{s}</t></si>" for s in strings)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n{dtd}\n<sst {_SHEET_NS} count="{len(strings)}">'
            f"{items}</sst>")


def xlsx_shared(dtd: str, strings: Sequence[str]) -> bytes:
    """A sheet whose cells are shared strings (where the DTD lives)."""
    cells = "".join(f'<row r="{i + 1}"><c r="A{i + 1}" t="s"><v>{i}</v></c></row>' for i in range(len(strings)))
    sheet = f'<?xml version="1.0"?><worksheet {_SHEET_NS}><sheetData>{cells}</sheetData></worksheet>'
    return xlsx_package(sheet, shared_strings_xml(dtd, strings))


_ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
)


def odt_package(content_xml: bytes | str, mimetype: str = "application/vnd.oasis.opendocument.text") -> bytes:
    content = content_xml.encode() if isinstance(content_xml, str) else content_xml
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), mimetype)
        archive.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr(
            "META-INF/manifest.xml",
            '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
            '<manifest:file-entry manifest:full-path="content.xml"/></manifest:manifest>',
        )
    return buffer.getvalue()


def odt_content(dtd: str, paragraphs: Sequence[str]) -> str:
    body = "".join(f"<text:p>{p}</text:p>" for p in paragraphs)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n{dtd}\n<office:document-content {_ODF_NS}>'
            f"<office:body><office:text>{body}</office:text></office:body></office:document-content>")


_EPUB_CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def epub_package(chapter: bytes, opf_dtd: str = "") -> bytes:
    opf = (
        f'<?xml version="1.0"?>{opf_dtd}<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata/>'
        '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c1"/></spine></package>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        archive.writestr("META-INF/container.xml", _EPUB_CONTAINER)
        archive.writestr("OEBPS/content.opf", opf)
        archive.writestr("OEBPS/c1.xhtml", chapter)
    return buffer.getvalue()


def _zip_parts(parts: Mapping[str, bytes], level: int = 6) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def padded_part(head: str, tail: str, padding: int) -> bytes:
    """An XML part with ``padding`` bytes of whitespace in it: a decompression bomb in a package."""
    return head.encode() + b" " * padding + tail.encode()


# -- PDFs -----------------------------------------------------------------------------------------

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def _content(line: str) -> bytes:
    text = b"BT /F1 12 Tf 72 770 Td (" + line.encode("latin-1") + b") Tj ET"
    return b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream"


def _page(parent: int, contents: int) -> bytes:
    return (b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> "
            b"/Contents %d 0 R >>" % (parent, contents))


def cyclic_page_tree_pdf(line: str = f"The {MARKER} logs every ship in the harbour.") -> bytes:
    """A page tree whose /Pages node lists itself among its kids (and claims 3 pages)."""
    return write_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 2 0 R 6 0 R] /Count 3 >>",
        _page(2, 4),
        _content(line),
        _FONT,
        b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>",
    ])


def lying_count_pdf(count: int = 1_000_000, line: str = f"One real page for the {MARKER}.") -> bytes:
    """One real page under a /Pages node that declares ``count`` pages."""
    return write_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
        _page(2, 4),
        _content(line),
        _FONT,
    ])


def huge_mediabox_pdf(line: str = f"A page the size of a county, says the {MARKER}.") -> bytes:
    """A page that declares a 14,400 x 14,400 inch MediaBox: rendering it at 150 dpi would take 18 TB."""
    return write_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 1036800 1036800] /Resources << /Font << /F1 5 0 R >> >> "
        b"/Contents 4 0 R >>",
        _content(line),
        _FONT,
    ])


# -- archives ---------------------------------------------------------------------------------------


def zip_raw_names(members: Sequence[tuple[bytes, bytes]]) -> bytes:
    """A zip whose member names are the given raw bytes (no UTF-8 flag): placeholders patched."""
    placeholders = [(b"N%0*d" % (len(raw) - 1, i) if len(raw) > 1 else b"N", raw) for i, (raw, _) in
                    enumerate(members)]
    if len({p for p, _ in placeholders}) != len(placeholders):
        raise ValueError("raw names must be at least as long as their index")
    data = zip_bytes({p.decode(): payload for (p, _), (_, payload) in zip(placeholders, members, strict=True)},
                     zipfile.ZIP_STORED)
    for placeholder, raw in placeholders:
        data = data.replace(placeholder, raw)
    return data


def zip_bomb_stream(target: Path, size: int, name: str = "zeros.txt") -> None:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf, zf.open(name, "w", force_zip64=True) as dst:
        chunk = b"\0" * MB
        for _ in range(size // MB):
            dst.write(chunk)


def many_members_zip(target: Path, count: int, payload: bytes = b"x") -> None:
    """``count`` tiny stored members, streamed to disk (a 20,000-member zip is ~2 MB)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zf:
        for i in range(count):
            zf.writestr(f"m/{i:06d}.txt", payload)


def seven_zip(members: Mapping[str, bytes], symlinks: Mapping[str, str] = {}) -> bytes:
    """A 7z archive (7z binary) with files and symbolic links stored as links (-snl)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name, data in members.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes(data)
        for name, target in symlinks.items():
            os.symlink(target, src / name)
        out = Path(tmp) / "out.7z"
        names = [*members, *symlinks]
        subprocess.run(["7z", "a", "-bd", "-t7z", "-snl", str(out), *names], cwd=src, check=True,
                       capture_output=True, timeout=60)
        return out.read_bytes()


def seven_zip_traversal(name: str = "../../escaped-7z.txt") -> bytes:
    """A 7z whose member is named ``name`` (renamed with 7z rn, which stores it as given)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "plain.txt").write_text(f"{MARKER} traversal payload\n")
        (Path(tmp) / "ok.txt").write_text(f"{MARKER} stays inside\n")
        out = Path(tmp) / "out.7z"
        subprocess.run(["7z", "a", "-bd", "-t7z", str(out), "plain.txt", "ok.txt"], cwd=tmp, check=True,
                       capture_output=True, timeout=60)
        subprocess.run(["7z", "rn", "-bd", str(out), "plain.txt", name], cwd=tmp, check=True,
                       capture_output=True, timeout=60)
        return out.read_bytes()


def have_7z() -> bool:
    return shutil.which("7z") is not None


# -- big inputs, streamed ---------------------------------------------------------------------------


def random_file(target: Path, size: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    with target.open("wb") as out:
        left = size
        while left > 0:
            step = min(left, 4 * MB)
            out.write(rng.randbytes(step))
            left -= step


def one_line_html(target: Path, size: int) -> None:
    """``size`` bytes of words on one line inside one <p>: a text node far above libxml2's 10 MB."""
    words = f"{MARKER} keeps the tide tables and the lighthouse log ".encode()
    with target.open("wb") as out:
        out.write(b"<!DOCTYPE html><html><body><p>")
        for _ in range(size // len(words)):
            out.write(words)
        out.write(b"the-last-words-of-the-line</p></body></html>")


def paragraphs_html(target: Path, count: int, size: int) -> None:
    words = b"lorem ipsum dolor sit amet consectetur adipiscing elit "
    body = words * (size // len(words))
    with target.open("wb") as out:
        out.write(b"<!DOCTYPE html><html><body>")
        for i in range(count):
            out.write(b"<p>paragraph-%d-starts " % i + body + b"</p>")  # one line: libxml2's buffer limit
        out.write(b"</body></html>")


def deep_json(depth: int) -> bytes:
    return b'{"note": "' + MARKER.encode() + b'", "deep": ' + b"[" * depth + b"]" * depth + b"}"


def deep_html(depth: int) -> bytes:
    return (b"<!DOCTYPE html><html><body><p>" + MARKER.encode() + b" at the top</p>" + b"<div>" * depth
            + b"deep-inside" + b"</div>" * depth + b"<p>the end</p></body></html>")


def deep_xml(depth: int) -> bytes:
    return (b'<?xml version="1.0"?><report><p>' + MARKER.encode() + b" at the top</p>" + b"<d>" * depth
            + b"deep-inside" + b"</d>" * depth + b"<p>the end</p></report>")


def deep_rtf(depth: int) -> bytes:
    return b"{\\rtf1\\ansi " + MARKER.encode() + b" at the top " + b"{" * depth + b"deep" + b"}" * depth + b"}"


# -- the suite ----------------------------------------------------------------------------------------


def _text(words: str) -> bytes:
    return f"{MARKER}: {words}\n".encode()


def hostile_cases(*, big: bool = True) -> list[Hostile]:
    """Every hostile case; ``big=False`` leaves out the ones that write tens of megabytes."""
    ok = frozenset({"clean"})
    limited = frozenset({LIMIT})
    review = frozenset({"needs_review"})
    recovered = frozenset({"partially_recovered"})
    laughs, quad = billion_laughs_dtd, quadratic_dtd
    cases: list[Hostile] = [
        # -- sizes
        Hostile("zero-bytes.txt", _bytes(b""), frozenset({"empty"}), "zero-byte file"),
        Hostile("one-byte.bin", _bytes(b"\x00"), frozenset({"unsupported"}), "one NUL byte"),
        Hostile("one-byte.txt", _bytes(b"a"), ok, "one printable byte"),
        # -- PDFs
        Hostile("truncated.pdf", _bytes(text_pdf([f"{MARKER} page one " * 20, "page two " * 20])[:-300]),
                frozenset({"corrupt_unrecoverable"}), "a PDF cut short (no xref, no trailer)"),
        Hostile("truncated-head.pdf", _bytes(text_pdf(["cut short"])[:200]),
                frozenset({"corrupt_unrecoverable"}), "only the first 200 bytes"),
        # the one real page, read by a walker that keeps a visited set: a recovery, never phantom pages
        Hostile("cyclic-page-tree.pdf", _bytes(cyclic_page_tree_pdf()), recovered,
                "a /Pages node that is its own kid"),
        Hostile("lying-page-count.pdf", _bytes(lying_count_pdf()), recovered, "one page under /Count 1000000"),
        Hostile("huge-mediabox.pdf", _bytes(huge_mediabox_pdf()), ok, "a page that declares a gigantic MediaBox"),
        # -- decompression bombs
        Hostile("bomb.zip", lambda t, s: zip_bomb_stream(t, 16 * MB), limited, "16 MB of zeros deflated"),
        Hostile("bomb.gz", _bytes(lambda s: gzip.compress(b"\0" * (16 * MB), 9)), limited, "gzip bomb"),
        Hostile("bomb.bz2", _bytes(lambda s: bz2.compress(b"\0" * (16 * MB), 9)), limited, "bzip2 bomb"),
        Hostile("bomb.tar.gz", _bytes(lambda s: gzip.compress(tar_bytes({"zeros.bin": b"\0" * (8 * MB)}), 9)),
                limited, "tar.gz bomb"),
        Hostile("nested-12.zip", _bytes(nested_zip(12, _text("the leaf"))), limited, "zips twelve deep"),
        Hostile("bomb.docx", _bytes(lambda s: docx_package(padded_part(
            word_document("", [f"{MARKER} before the padding"])[:-len("</w:body></w:document>")],
            "</w:body></w:document>", 12 * MB), deflate_level=9)), limited, "a DOCX part of 12 MB of blanks"),
        Hostile("bomb.odt", _bytes(lambda s: odt_package(padded_part(
            odt_content("", [MARKER])[:-len("</office:text></office:body></office:document-content>")],
            "</office:text></office:body></office:document-content>", 12 * MB))), limited,
                "an ODT content.xml of 12 MB of blanks"),
        Hostile("bomb.xlsx", _bytes(lambda s: xlsx_package(padded_part(
            sheet_xml([[MARKER]])[:-len("</sheetData></worksheet>")], "</sheetData></worksheet>", 12 * MB)
            .decode())), limited, "an XLSX sheet of 12 MB of blanks"),
        Hostile("bomb.epub", _bytes(lambda s: epub_package(padded_part(
            f"<html><body><p>{MARKER}</p>", "</body></html>", 12 * MB))), limited,
                "an EPUB chapter of 12 MB of blanks"),
        # -- entity bombs
        Hostile("laughs.xml", _bytes(xml_doc(laughs("report"), f"<p>{MARKER} before</p><p>&lol9;</p><p>after</p>")),
                limited, "billion laughs in XML"),
        Hostile("quadratic.xml", _bytes(xml_doc(quad("report"), "<p>" + "&big;" * 20_000 + "</p>")), limited,
                "quadratic blowup in XML"),
        Hostile("laughs.svg", _bytes(svg_doc(laughs("svg"), f"{MARKER} &lol9;")), limited, "billion laughs in SVG"),
        Hostile("laughs.docx", _bytes(docx_package(word_document(laughs("w:document"),
                                                                  [f"{MARKER} before", "&lol9;", "after"]))),
                limited, "billion laughs in word/document.xml"),
        Hostile("laughs.odt", _bytes(odt_package(odt_content(laughs("office:document-content"),
                                                             [f"{MARKER} before", "&lol9;", "after"]))),
                limited, "billion laughs in content.xml"),
        Hostile("laughs.xlsx", _bytes(xlsx_shared(laughs("sst"), [f"{MARKER} before", "&lol9;", "after"])), limited,
                "billion laughs in sharedStrings.xml"),
        Hostile("laughs-sheet.xlsx", _bytes(xlsx_package(sheet_xml([[MARKER], ["&lol9;"]], dtd=laughs("worksheet")))),
                limited, "billion laughs in a worksheet"),
        Hostile("laughs.epub", _bytes(epub_package(
            f'<?xml version="1.0"?>{laughs("html")}<html><body><p>{MARKER} &lol9;</p></body></html>'.encode())),
                limited, "billion laughs in an EPUB chapter"),
        # -- XXE and XInclude: the secret must never show
        Hostile("xxe.xml", _bytes(lambda s: xml_doc(xxe_dtd("report", s), f"<p>{MARKER} &xxe; after</p>")),
                limited, "external entity to a local file"),
        Hostile("xinclude.xml", _bytes(xinclude_xml), ok, "XInclude of a local file (never processed)"),
        Hostile("xxe.svg", _bytes(lambda s: svg_doc(xxe_dtd("svg", s), f"{MARKER} &xxe;")), limited,
                "external entity in SVG"),
        Hostile("xxe.docx", _bytes(lambda s: docx_package(word_document(xxe_dtd("w:document", s),
                                                                          [f"{MARKER} &xxe; after"]))),
                limited, "external entity in word/document.xml"),
        Hostile("xxe.xlsx", _bytes(lambda s: xlsx_shared(xxe_dtd("sst", s), [f"{MARKER} &xxe; after"])), limited,
                "external entity in sharedStrings.xml"),
        Hostile("xxe.odt", _bytes(lambda s: odt_package(odt_content(xxe_dtd("office:document-content", s),
                                                                    [f"{MARKER} &xxe; after"]))),
                limited, "external entity in content.xml"),
        # -- nesting
        Hostile("deep.json", _bytes(deep_json(200_000)), limited, "a JSON array 200,000 deep"),
        Hostile("deep.html", _bytes(deep_html(5_000)), limited, "HTML nested 5,000 deep"),
        Hostile("deep.xml", _bytes(deep_xml(5_000)), limited, "XML nested 5,000 deep"),
        Hostile("deep.rtf", _bytes(deep_rtf(100_000)), ok, "RTF groups 100,000 deep"),
        # -- spreadsheets with lying sizes
        Hostile("dimension.xlsx", _bytes(xlsx_package(sheet_xml(
            ([f"{MARKER} {r}", str(r)] for r in range(2000)), dimension="A1:XFD1048576"))), ok,
                "2,000 rows under a declared A1:XFD1048576"),
        Hostile("far-column.xlsx", _bytes(xlsx_package(sheet_xml(
            [[MARKER, "x"]], refs=lambda r, c: f"{'ZZZZZZZZZZ' if c else 'A'}{r}"))), ok,
                "a cell reference far beyond column XFD"),
        # -- archives: traversal and links
        Hostile("traversal.zip", _bytes(zip_bytes({
            "../../escaped-zip.txt": _text("escape"), "/tmp/papersift-escaped-abs.txt": _text("abs"),
            "..\\..\\escaped-win.txt": _text("win"), "inside/ok.txt": _text("ok")})), review,
                "members named ../, /abs and ..\\"),
        Hostile("traversal.tar", _bytes(tar_bytes({"../escaped-tar.txt": _text("escape"), "ok.txt": _text("ok")})),
                review, "a tar member named ../"),
        Hostile("links.tar", _bytes(lambda s: tar_bytes({"ok.txt": _text("ok")}, symlinks={"sym.txt": str(s)},
                                                        hardlinks={"hard.txt": str(s)})), review,
                "tar symlink and hardlink to the secret"),
        Hostile("links.zip", _bytes(lambda s: zip_with_symlink("sym.txt", str(s), {"ok.txt": _text("ok")})), review,
                "zip symlink to the secret"),
        # -- names inside archives
        Hostile("names.zip", _bytes(zip_bytes({
            "x.txt": _text("file x"), "x.txt/report.json": _text("member under x"),
            "ctl\x01.txt": _text("control one"), "ctl\x02.txt": _text("control two"),
            "rtl\u202etxt.exe": _text("rtl"), "line\nbreak.txt": _text("newline"),
            "L" * 250 + ".txt": _text("long"), "é" * 200 + ".txt": _text("long multibyte"),
            "text.txt/text.txt": _text("result-named folder"), "text.txt": _text("result-named file"),
        })), ok, "member names that collide or are odd"),
        Hostile("raw-names.zip", _bytes(zip_raw_names([(b"caf\xe9-latin1.txt", _text("latin1")),
                                                        (b"bad-\xff\xfe.txt", _text("bad bytes"))])),
                ok, "member names that are not UTF-8"),
        Hostile("raw-names.tar", _tar_raw_names, ok,
                "tar member names that are not UTF-8"),
        Hostile("many-members.zip", lambda t, s: many_members_zip(t, 25, _text("member")), limited,
                "more members than max_archive_members (the suite sets it to 10)"),
        # -- names of the inputs themselves
        Hostile("08_dup.txt", _bytes(_text("first of the pair")), ok, "collides with ..\\08_dup.txt"),
        Hostile("..\\08_dup.txt", _bytes(_text("second of the pair")), ok, "backslash traversal in a name"),
        Hostile("new\nline.txt", _bytes(_text("newline in the name")), ok, "a newline in the name"),
        Hostile("ctrl-\x07\x1b[31m.txt", _bytes(_text("bell and escape")), ok, "control characters in the name"),
        Hostile("invoice-\u202etxt.exe", _bytes(_text("right-to-left override")), ok, "RTL override in the name"),
        Hostile("N" * 246 + ".txt", _bytes(_text("a 250-character name")), ok, "a 250-character name"),
        Hostile(os.fsdecode(b"not-utf8-\xff\xfe.txt"), _bytes(_text("invalid UTF-8 name")), ok,
                "a name that is not UTF-8"),
        Hostile(os.fsdecode(b"caf\xe9.txt"), _bytes(_text("latin-1 name")), ok, "a latin-1 name"),
        Hostile("report.json", _bytes(_text("named like a result file")), ok, "a name the output uses"),
    ]
    if have_7z():
        cases += [
            Hostile("links.7z", _bytes(lambda s: seven_zip({"ok.txt": _text("ok")}, {"sym.txt": str(s)})), review,
                    "7z symlink to the secret"),
            Hostile("traversal.7z", _bytes(seven_zip_traversal()), review, "a 7z member named ../../"),
        ]
    if big:
        cases += [
            Hostile("random-50mb.bin", lambda t, s: random_file(t, 50 * MB), frozenset({"unsupported"}),
                    "50 MB of random bytes"),
            Hostile("one-line-11mb.html", lambda t, s: one_line_html(t, 11 * MB), ok,
                    "11 MB of words on one line (a text node above libxml2's 10 MB)"),
            Hostile("paragraphs-20x600kb.html", lambda t, s: paragraphs_html(t, 20, 600 * 1024), ok,
                    "twenty 600 KB paragraphs (12 MB: libxml2 kept the first 10 MB)"),
        ]
    return cases


def _tar_raw_names(target: Path, secret: Path) -> None:
    with tarfile.open(target, "w", format=tarfile.GNU_FORMAT, encoding="utf-8", errors="surrogateescape") as tf:
        for raw, words in ((b"caf\xe9.txt", "latin1 member"), (b"bad-\xff.txt", "bad member")):
            data = _text(words)
            info = tarfile.TarInfo(os.fsdecode(raw))
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def write_cases(folder: Path, secret: Path, cases: Sequence[Hostile] | None = None) -> list[Path]:
    """Write every case into ``folder``; returns the paths in case order."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for case in cases if cases is not None else hostile_cases():
        path = folder / case.name
        case.build(path, secret)
        paths.append(path)
    return paths


def plant_secret(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    secret = folder / "secret.txt"
    secret.write_text(SECRET_TOKEN + "\n")
    return secret


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def contains_secret(root: Path) -> list[Path]:
    """Files under ``root`` whose bytes hold the secret token (plain or in a JSON/HTML escape)."""
    token = SECRET_TOKEN.encode()
    found = []
    for path in files_under(root):
        if path.is_symlink():
            found.append(path)
            continue
        with path.open("rb") as fh:
            tail = b""
            while chunk := fh.read(4 * MB):
                if token in tail + chunk:
                    found.append(path)
                    break
                tail = chunk[-len(token):]
    return found


__all__ = [
    "MARKER",
    "SECRET_TOKEN",
    "Hostile",
    "contains_secret",
    "files_under",
    "hostile_cases",
    "plant_secret",
    "write_cases",
]


def many_glyphs_pdf(glyphs: int) -> bytes:
    """One sound page of ``glyphs`` Helvetica glyphs (lines of words): pdfium's text page of it takes
    ~160 bytes a glyph (20 million: 3.3 GB), so it is stopped by the unit's memory limit."""
    line = b"(" + b"harbour log " * 100 + b") Tj 0 -2 Td\n"
    content = b"BT /F1 2 Tf 10 800 Td\n" + line * max(glyphs // 1200, 1) + b"ET\n"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> "
               b"/Contents 4 0 R >>",
               b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
