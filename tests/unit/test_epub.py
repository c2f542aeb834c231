"""EPUB: chapters in spine order (not manifest or zip order), each through the HTML rules."""

from __future__ import annotations

import io
import zipfile

import pytest

from papersift.errors import CorruptInputError, EncryptedInputError
from papersift.formats import extract_units
from papersift.formats.epub import extract_epub, spine_paths
from papersift.settings import Settings
from papersift.sniff import sniff

CONTAINER = (
    '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>"
)


def chapter(title: str, body: str, encoding: str = "utf-8") -> bytes:
    return (
        f'<?xml version="1.0" encoding="{encoding}"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
        f"<title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
    ).encode(encoding)


def epub(
    chapters: dict[str, bytes], spine: list[str], *, encryption: str | None = None, absent: tuple[str, ...] = ()
) -> bytes:
    manifest = "".join(
        f'<item id="{name.split(".")[0]}" href="{name}" media-type="application/xhtml+xml"/>'
        for name in [*chapters, *absent]
    )
    manifest += '<item id="css" href="style.css" media-type="text/css"/>'
    itemrefs = "".join(f'<itemref idref="{name.split(".")[0]}"/>' for name in spine)
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f"<metadata/><manifest>{manifest}</manifest><spine>{itemrefs}</spine></package>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("META-INF/container.xml", CONTAINER)
        if encryption:
            archive.writestr("META-INF/encryption.xml", encryption)
        archive.writestr("OEBPS/content.opf", opf)
        for name, data in chapters.items():
            archive.writestr(f"OEBPS/{name}", data)
        archive.writestr("OEBPS/style.css", "p{}")
    return buffer.getvalue()


def test_chapters_follow_the_spine_and_empty_ones_are_left_out() -> None:
    chapters = {
        "a.xhtml": chapter("Capítulo Dois", "<p>Segundo.</p>"),
        "b.xhtml": chapter("Capítulo Um", "<p>Primeiro com <em>ênfase</em>.</p><ul><li>item</li></ul>"),
        "cover.xhtml": b'<html xmlns="http://www.w3.org/1999/xhtml"><body><img src="c.png"/></body></html>',
        "c.xhtml": chapter("Latin-1", "<p>Coração</p>", encoding="iso-8859-1"),
    }
    data = epub(chapters, ["cover.xhtml", "b.xhtml", "a.xhtml", "c.xhtml"])
    assert spine_paths(data, Settings()) == ["OEBPS/cover.xhtml", "OEBPS/b.xhtml", "OEBPS/a.xhtml", "OEBPS/c.xhtml"]
    units = extract_units(data, sniff(data, "book.epub"), Settings())
    assert [u.label for u in units] == ["OEBPS/b.xhtml", "OEBPS/a.xhtml", "OEBPS/c.xhtml"]
    assert [u.number for u in units] == [1, 2, 3]
    assert units[0].text == "Capítulo Um\nPrimeiro com ênfase.\n- item"
    assert units[0].markdown == "# Capítulo Um\n\nPrimeiro com ênfase.\n\n- item"
    assert units[2].text == "Latin-1\nCoração"
    assert all(u.report.status == "clean" for u in units)


def test_drm_encrypted_chapters_are_reported_but_obfuscated_fonts_are_not() -> None:
    def encryption(uri: str, algorithm: str) -> str:
        return (
            '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
            'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
            f'<enc:EncryptionMethod Algorithm="{algorithm}"/><enc:CipherData>'
            f'<enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData></encryption>'
        )

    chapters = {"a.xhtml": chapter("One", "<p>text</p>")}
    locked = epub(
        chapters, ["a.xhtml"], encryption=encryption("OEBPS/a.xhtml", "http://www.w3.org/2001/04/xmlenc#aes128-cbc")
    )
    with pytest.raises(EncryptedInputError, match="DRM"):
        extract_epub(locked, Settings())
    fonts = epub(chapters, ["a.xhtml"], encryption=encryption("OEBPS/font.otf", "http://www.idpf.org/2008/embedding"))
    assert extract_epub(fonts, Settings())[0].text == "One\ntext"


def test_broken_books_fail_with_a_reason() -> None:
    with pytest.raises(CorruptInputError, match="no XHTML chapters"):
        extract_epub(epub({"a.xhtml": chapter("x", "")}, []), Settings())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
    with pytest.raises(CorruptInputError, match="container"):
        extract_epub(buffer.getvalue(), Settings())
    dangling = epub({}, ["zz.xhtml"], absent=("zz.xhtml",))
    with pytest.raises(CorruptInputError, match="missing"):
        extract_epub(dangling, Settings())
