"""sniff: files are typed by their bytes, whatever their name says."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import random
import struct
import tarfile
import zipfile
from pathlib import Path

import docx
import openpyxl
import pytest
from reportlab.pdfgen import canvas

from papersift.sniff import ARCHIVE_KINDS, sniff

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"


# -- fixtures built in code ----------------------------------------------------------------


def pdf_bytes() -> bytes:
    buf = io.BytesIO()
    page = canvas.Canvas(buf)
    page.drawString(72, 720, "hello")
    page.save()
    return buf.getvalue()


def docx_bytes() -> bytes:
    document = docx.Document()
    document.add_paragraph("hello")
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def xlsx_bytes() -> bytes:
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "hello"
    buf = io.BytesIO()
    workbook.save(buf)
    return buf.getvalue()


def zip_of(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, payload in members.items():
            zf.writestr(name, payload)
    return buf.getvalue()


def rewrite_member(package: bytes, name: str, old: bytes, new: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(package))
    return zip_of({n: src.read(n).replace(old, new) if n == name else src.read(n) for n in src.namelist()})


def ooxml_types(main_type: str, part: str) -> bytes:
    return (
        '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/{part}" ContentType="{main_type}"/></Types>'
    ).encode()


def ole_bytes(streams: dict[str, bytes]) -> bytes:
    """A minimal OLE2 compound file (v3, 512-byte sectors): FAT, one directory sector, streams.

    Streams are padded to the 4096-byte mini-stream cutoff so they live in the regular FAT.
    """
    assert len(streams) <= 3
    end, free, fat_sector = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD
    fat = [fat_sector, end]
    data_sectors = b""
    entries = []
    next_sector = 2
    for name, payload in streams.items():
        payload = payload.ljust(4096, b"\0")
        count = len(payload) // 512
        fat += [next_sector + i + 1 for i in range(count - 1)] + [end]
        entries.append((name, 2, next_sector, len(payload)))
        data_sectors += payload
        next_sector += count
    fat += [free] * (128 - len(fat))

    def entry(name: str, kind: int, start: int, size: int, right: int, child: int) -> bytes:
        encoded = (name + "\0").encode("utf-16-le")
        return (
            encoded.ljust(64, b"\0")
            + struct.pack("<HBB", len(encoded), kind, 1)
            + struct.pack("<III", free, right, child)
            + b"\0" * 16
            + struct.pack("<I", 0)
            + b"\0" * 16
            + struct.pack("<IQ", start, size)
        )

    directory = entry("Root Entry", 5, end, 0, free, 1 if entries else free)
    for i, (name, kind, start, size) in enumerate(entries, start=1):
        directory += entry(name, kind, start, size, i + 1 if i < len(entries) else free, free)
    directory = directory.ljust(512, b"\0")
    header = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        + b"\0" * 16
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
        + b"\0" * 6
        + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, end, 0, end, 0)
        + struct.pack("<109I", 0, *([free] * 108))
    )
    assert len(header) == 512
    return header + struct.pack("<128I", *fat) + directory + data_sectors


def tar_bytes(members: dict[str, bytes], without_magic: bool = False) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tf.addfile(info, io.BytesIO(payload))
    data = bytearray(buf.getvalue())
    if without_magic:  # an old V7 tar: no "ustar" at 257, only the header checksum
        data[257:265] = b"\0" * 8
        data[148:156] = b" " * 8
        data[148:156] = b"%06o\0 " % sum(data[:512])
    return bytes(data)


def newc_cpio(name: str, payload: bytes) -> bytes:
    fields = [0, 0o100644, 0, 0, 1, 0, len(payload), 0, 0, 0, 0, len(name) + 1, 0]
    header = b"070701" + b"".join(b"%08X" % f for f in fields) + name.encode() + b"\0"
    header += b"\0" * (-len(header) % 4)
    return header + payload + b"\0" * (-len(payload) % 4)


# -- magic bytes -----------------------------------------------------------------------------

MAGIC_CASES = {
    "rtf": b"{\\rtf1\\ansi hello}",
    "7z": b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\0" * 40,
    "rar4": b"Rar!\x1a\x07\x00" + b"\0" * 40,
    "rar5": b"Rar!\x1a\x07\x01\x00" + b"\0" * 40,
    "gzip": gzip.compress(b"42\n"),
    "bzip2": bz2.compress(b"42\n"),
    "bzip2-empty": bz2.compress(b""),
    "xz": lzma.compress(b"42\n", format=lzma.FORMAT_XZ),
    "lzma": lzma.compress(b"42\n" * 100, format=lzma.FORMAT_ALONE),
    "zstd": b"\x28\xb5\x2f\xfd\x20\x03\x19\x00\x00\x34\x32\x0a",
    "lzip": b"LZIP\x01\x0c" + b"\0" * 30,
    "compress": b"\x1f\x9d\x90" + b"\x34\x64\x28" * 4,
    "cab": b"MSCF\0\0\0\0" + b"\x55\x00\x00\x00" + b"\0" * 40,
    "arj": b"\x60\xea\x2a\x00\x1e\x06\x01\x00\x10\x00\x02" + b"\0" * 40,
    "lzh": b"\x20\x00-lh5-" + b"\0" * 40,
    "iso": b"\0" * 0x8001 + b"CD001\x01" + b"\0" * 100,
    "cpio-newc": newc_cpio("t/t.txt", b"42\n"),
    "cpio-odc": b"070707" + b"0" * 70,
    "cpio-binary-le": b"\xc7\x71" + b"\0" * 40,
    "cpio-binary-be": b"\x71\xc7" + b"\0" * 40,
    "tar": tar_bytes({"t/t.txt": b"42\n"}),
    "tar-v7": tar_bytes({"t/t.txt": b"42\n"}, without_magic=True),
    "ar": b"!<arch>\ndebian-binary   1342943816  0     0     100644  4         `\n2.0\n",
    "png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 20,
    "jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\0" * 20,
    "tiff-le": b"II*\x00\x08\x00\x00\x00" + b"\0" * 20,
    "tiff-be": b"MM\x00*\x00\x00\x00\x08" + b"\0" * 20,
    "gif": b"GIF89a\x01\x00\x01\x00" + b"\0" * 20,
    "bmp": b"BM" + struct.pack("<IHHII", 70, 0, 0, 54, 40) + b"\0" * 40,
    "webp": b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\0" * 20,
}


@pytest.mark.parametrize("case", sorted(MAGIC_CASES))
def test_magic_bytes_decide_the_kind_whatever_the_name(case: str) -> None:
    expected = case.split("-")[0].rstrip("45")
    found = sniff(MAGIC_CASES[case], "misleading.txt")
    assert (found.kind, found.detected_by) == (expected, "magic")


def test_archive_kinds_are_flagged_as_archives() -> None:
    assert sniff(gzip.compress(b"x")).is_archive
    assert not sniff(pdf_bytes()).is_archive
    assert {"lzip", "compress", "lzma", "cpio", "iso"} <= ARCHIVE_KINDS


def test_a_pdf_named_zip_is_a_pdf() -> None:
    found = sniff(pdf_bytes(), "report.zip")
    assert (found.kind, found.mime, found.detected_by) == ("pdf", "application/pdf", "magic")


def test_pdf_header_after_junk_within_the_first_kilobyte_is_found() -> None:
    assert sniff(b"\r\n" + b"x" * 500 + pdf_bytes()).kind == "pdf"


def test_tar_gz_named_foo_is_gzip() -> None:
    data = gzip.compress(tar_bytes({"t/t.txt": b"42\n"}))
    assert sniff(data, "t.tar.xz.foo").kind == "gzip"


def test_text_starting_with_bm_is_not_a_bitmap() -> None:
    assert sniff(b"BMW cars are built in Munich.\nThey are fast.\n").kind == "txt"


# -- zip containers ----------------------------------------------------------------------------


def test_docx_is_typed_by_its_content_types_not_its_name() -> None:
    found = sniff(docx_bytes(), "scan.bin")
    assert (found.kind, found.detected_by) == ("docx", "container")


def test_xlsx_and_macro_enabled_xlsm_are_told_apart_by_content_type() -> None:
    xlsx = xlsx_bytes()
    xlsm = rewrite_member(
        xlsx,
        "[Content_Types].xml",
        b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
        b"application/vnd.ms-excel.sheet.macroEnabled.main+xml",
    )
    assert sniff(xlsx, "a.xlsm").kind == "xlsx"
    assert sniff(xlsm, "a.xlsx").kind == "xlsm"


def test_pptx_by_content_type() -> None:
    types = ooxml_types(
        "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml", "ppt/presentation.xml"
    )
    assert sniff(zip_of({"[Content_Types].xml": types, "ppt/presentation.xml": b"<p/>"})).kind == "pptx"


def test_ooxml_without_content_types_falls_back_to_its_main_part() -> None:
    assert sniff(zip_of({"word/document.xml": b"<w:document/>"})).kind == "docx"


@pytest.mark.parametrize(
    ("mimetype", "kind"),
    [
        ("application/vnd.oasis.opendocument.text", "odt"),
        ("application/vnd.oasis.opendocument.spreadsheet", "ods"),
        ("application/vnd.oasis.opendocument.presentation", "odp"),
        ("application/epub+zip", "epub"),
    ],
)
def test_odf_and_epub_by_their_mimetype_member(mimetype: str, kind: str) -> None:
    data = zip_of({"mimetype": mimetype.encode(), "content.xml": b"<office:document-content/>"})
    found = sniff(data, "x.zip")
    assert (found.kind, found.detected_by) == (kind, "container")


def test_plain_zip_is_zip() -> None:
    found = sniff(zip_of({"a.txt": b"hello"}), "a.docx")
    assert (found.kind, found.detected_by) == ("zip", "container")


def test_damaged_zip_is_still_zip() -> None:
    data = zip_of({"a.txt": b"hello" * 100})[:40]
    found = sniff(data)
    assert (found.kind, found.detected_by) == ("zip", "magic")


# -- OLE2 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("streams", "kind"),
    [
        (["WordDocument", "1Table"], "doc"),
        (["Workbook"], "xls"),
        (["PowerPoint Document", "Current User"], "ppt"),
        (["EncryptionInfo", "EncryptedPackage"], "ole-encrypted"),
        (["SomethingElse"], "ole"),
    ],
)
def test_ole2_files_are_typed_by_stream_names(streams: list[str], kind: str) -> None:
    data = ole_bytes({name: b"x" * 10 for name in streams})
    found = sniff(data, "file.docx")
    assert (found.kind, found.detected_by) == (kind, "container")


def test_truncated_ole2_uses_the_extension_as_a_last_resort() -> None:
    data = ole_bytes({"WordDocument": b"x"})[:600]
    assert sniff(data, "old.doc") == sniff(data, "OLD.DOC")
    assert (sniff(data, "old.doc").kind, sniff(data, "old.doc").detected_by) == ("doc", "extension")
    assert sniff(data, "noname").kind == "ole"


# -- text family ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"<!DOCTYPE html><html><body>hi</body></html>",
        b"  \n\n<HTML><HEAD><TITLE>x</TITLE></HEAD></HTML>",
        b"\xef\xbb\xbf<!doctype HTML>\n<p>x</p>",
        "\ufeff<html><body>日本語</body></html>".encode("utf-16-le"),
        b"<?xml version='1.0'?>\n<!DOCTYPE html PUBLIC '-//W3C//DTD XHTML 1.0//EN' 'x'><html/>",
        b"<!-- generated -->\n<html><body>x</body></html>",
    ],
)
def test_html_is_recognised_after_bom_whitespace_and_case(data: bytes) -> None:
    assert sniff(data, "page.txt").kind == "html"


def test_utf16_html_with_bom_is_html() -> None:
    data = b"\xff\xfe" + "<html><body>Alloy steel 日本語</body></html>".encode("utf-16-le")
    assert sniff(data).kind == "html"


def test_xml_declaration_means_xml() -> None:
    found = sniff(b'<?xml version="1.0" encoding="utf-8"?>\n<root><a>1</a></root>', "data.txt")
    assert (found.kind, found.detected_by) == ("xml", "content")


@pytest.mark.parametrize(
    "data",
    [b'{"a": 1, "b": [1, 2]}', b'  [{"a": 1}, {"a": 2}]\n', b'{"truncated": "yes", "x": [' + b"1, " * 30000],
)
def test_json_by_content(data: bytes) -> None:
    assert sniff(data, "x.txt").kind == "json"


def test_ini_section_is_not_json() -> None:
    assert sniff(b"[section]\nkey=value\nother=thing\n").kind == "txt"


def test_csv_with_steady_delimiter_counts_is_csv_without_extension() -> None:
    data = b'name,age,city\nAna,31,"Lisbon, PT"\nBob,42,Porto\nCid,25,Faro\n'
    found = sniff(data, "export")
    assert (found.kind, found.detected_by) == ("csv", "content")


def test_tab_separated_is_tsv() -> None:
    assert sniff(b"a\tb\tc\n1\t2\t3\n4\t5\t6\n7\t8\t9\n").kind == "tsv"


def test_prose_with_commas_is_text() -> None:
    data = b"Hello, world. This is prose.\nIt has commas, here, and there, quite a few.\nAnd no structure.\n"
    assert sniff(data, "notes").kind == "txt"


def test_extension_breaks_the_tie_for_a_short_csv() -> None:
    assert sniff(b"a,b\n1,2\n", "tiny.csv") == sniff(b"a,b\n1,2\n", "TINY.CSV")
    assert (sniff(b"a,b\n1,2\n", "tiny.csv").kind, sniff(b"a,b\n1,2\n", "tiny.csv").detected_by) == ("csv", "extension")
    assert sniff(b"a,b\n1,2\n", "tiny.txt").kind == "txt"
    assert sniff(b"a\tb\n1\t2\n", "tiny.tsv").kind == "tsv"


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("plain ascii", "ascii"),
        ("çà et là, déjà vu", "utf-8"),
        ("\ufeffwith a bom", "utf-8 bom"),
    ],
)
def test_plain_text_is_txt(data: str, why: str) -> None:
    found = sniff(data.encode("utf-8"))
    assert (found.kind, found.detected_by) == ("txt", "content"), why


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-16", "utf-32-le", "utf-32-be", "utf-32", "cp1252"])
def test_wide_and_legacy_encodings_are_text(encoding: str) -> None:
    text = "Hamburgers are delicious. Café crème costs 3 €.\nSecond line of text here.\n"
    assert sniff(text.encode(encoding), "noext").kind == "txt"


def test_extensionless_wombat_is_text() -> None:
    assert sniff(b"wombat", "file_we_dont_want_imported").kind == "txt"


def test_empty_and_whitespace_only() -> None:
    assert (sniff(b"").kind, sniff(b"").detected_by) == ("empty", "empty")
    assert sniff(b" \n\t \n").kind == "txt"


def test_random_binary_is_unknown() -> None:
    data = random.Random(7).randbytes(4096)
    found = sniff(data, "data.txt")
    assert (found.kind, found.mime) == ("unknown", "application/octet-stream")


# -- corpus ---------------------------------------------------------------------------------

#: category -> kinds a correct sniff may give
CATEGORY_KINDS = {
    "native_pdf": {"pdf"},
    "broken_font_pdf": {"pdf"},
    "scanned_pdf": {"pdf"},
    "mixed_pdf": {"pdf"},
    "encrypted_pdf": {"pdf"},
    "archive": set(ARCHIVE_KINDS),
    "docx": {"docx"},
    "xlsx": {"xlsx", "xlsm", "ole-encrypted"},
    "pptx": {"pptx", "ole-encrypted"},
    "odt": {"odt", "ods", "odp"},
    "rtf": {"rtf"},
    "html": {"html"},
    "txt": {"txt"},
    "image": {"png", "jpeg", "tiff", "gif", "bmp", "webp"},
}
#: files whose exact kind is the point of the case
EXACT = {
    "pa__t.cpio.foo": "cpio",
    "pa__t.txt.gz.foo": "gzip",
    "pa__t.tar.xz.foo": "xz",
    "us__file_we_dont_want_imported": "txt",
    "tk__testEXCEL_protected_passtika_2.xlsx": "ole-encrypted",
    "tk__testPPT_protected_passtika.pptx": "ole-encrypted",
    "tk__testEXCEL_macro.xlsm": "xlsm",
    "us__fake-text-utf-16-be.txt": "txt",
    "tk__test_ignore_IBM420.html": "html",
    "pj__bug1020226.pdf": "pdf",
    "tk__empty-file.txt.bz2": "bzip2",
    "tk__testZIP_corrupted_oom.zip": "zip",
    "rz__zipWithTooBigCDirSizeField.zip": "zip",
    "ms__cve-2010-2800-mszip-infinite-loop.cab": "cab",
    "us__fake-power-point-malformed.pptx": "pptx",
    "dl__odf_table_with_title_01.ods": "ods",
    "dl__odf_presentation_01.odp": "odp",
}


def _corpus_rows() -> list[dict[str, str]]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    with manifest.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.mark.corpus
@pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="shared corpus not present")
def test_every_corpus_file_gets_a_kind_fitting_its_category() -> None:
    wrong = []
    for row in _corpus_rows():
        data = (CORPUS / "files" / row["out_name"]).read_bytes()
        kind = sniff(data, row["out_name"]).kind
        allowed = {EXACT[row["out_name"]]} if row["out_name"] in EXACT else CATEGORY_KINDS.get(row["category"])
        if allowed is None:
            continue  # misnamed/corrupt files not listed in EXACT have no fixed answer
        if kind not in allowed:
            wrong.append(f"{row['out_name']}: {kind} not in {sorted(allowed)}")
    assert not wrong, "\n".join(wrong)
    assert len(_corpus_rows()) >= 70


@pytest.mark.parametrize("text", [
    "Привет, мир. Это простой текст.\nВторая строка, тоже.\nТретья строка.\n",
    "مرحبا بالعالم، هذا نص.\nسطر ثان، نعم.\n",
    "สวัสดีครับ นี่คือข้อความ\nบรรทัดที่สอง\n",
    "Dear reader,\nthis letter, written in haste, says little.\nRegards, Ann\n",
])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_text_without_a_bom_is_text_and_decodes(text: str, encoding: str) -> None:
    """A non-Latin alphabet in UTF-16 has few zero bytes: its high bytes, one script's block, tell it."""
    from papersift.plaintext import decode_text

    data = text.encode(encoding)
    assert sniff(data, "letter").kind == "txt"
    assert decode_text(data) == (text, encoding)


def test_16_bit_samples_are_not_taken_for_utf16_text() -> None:
    samples = b"".join(struct.pack("<h", (i * 37) % 400 - 200) for i in range(4000))
    assert sniff(samples, "take.raw").kind == "unknown"


@pytest.mark.parametrize(("brands", "kind"), [
    (b"avif\x00\x00\x00\x00avifmif1miaf", "avif"), (b"mif1\x00\x00\x00\x00mif1avif", "avif"),
    (b"heic\x00\x00\x00\x00mif1heic", "heic"), (b"mif1\x00\x00\x00\x00mif1heic", "heic"),
    (b"isom\x00\x00\x02\x00isomiso2mp41", "unknown"), (b"qt  \x00\x00\x00\x00qt  ", "unknown"),
])
def test_iso_bmff_pictures_are_typed_by_their_ftyp_brands(brands: bytes, kind: str) -> None:
    box = struct.pack(">I", 8 + len(brands)) + b"ftyp" + brands
    assert sniff(box + b"\x00" * 200, "IMG_0001").kind == kind
