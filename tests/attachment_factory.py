"""Documents that hold files, built in code: PDFs with embedded files (the document-level name
tree, a FileAttachment annotation, a portfolio), emails and Outlook messages with attachments. Nothing here
touches the disk."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any

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


# -- Outlook .msg: an OLE2 compound file (MS-CFB v3) laid out as MS-OXMSG says -------------------

_END, _FREE, _FAT_SECTOR, _NO_STREAM = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD, 0xFFFFFFFF


def outlook_msg(*, subject: str, sender: tuple[str, str], to: str, body: str,
                files: Mapping[str, bytes], submitted: datetime | None = None, rtf_body: bytes | None = None) -> bytes:
    """An Outlook message: subject, sender, recipients and plain body as Unicode string properties,
    the submit time as a fixed-size property, each of ``files`` as an attachment storage; with
    ``rtf_body`` (and an empty ``body``) the body only as compressed RTF, as Outlook keeps rich text."""
    def text(value: str) -> bytes:
        return value.encode("utf-16-le")

    streams: dict[str, bytes] = {
        "__substg1.0_0037001F": text(subject), "__substg1.0_0C1A001F": text(sender[0]),
        "__substg1.0_5D01001F": text(sender[1]), "__substg1.0_0E04001F": text(to),
    }
    if body:
        streams["__substg1.0_1000001F"] = text(body)
    if rtf_body is not None:
        from compressed_rtf import compress

        streams["__substg1.0_10090102"] = compress(rtf_body)
    properties = bytearray(32)
    if submitted is not None:
        ticks = int((submitted - datetime(1601, 1, 1, tzinfo=UTC)).total_seconds() * 10_000_000)
        properties += struct.pack("<IIQ", 0x00390040, 0x6, ticks)
    streams["__properties_version1.0"] = bytes(properties)
    for number, (name, data) in enumerate(files.items()):
        storage = f"__attach_version1.0_#{number:08X}"
        streams[f"{storage}/__substg1.0_3707001F"] = text(name)
        streams[f"{storage}/__substg1.0_37010102"] = data
        streams[f"{storage}/__properties_version1.0"] = bytes(8)
    return compound_file(streams)


def compound_file(streams: Mapping[str, bytes]) -> bytes:
    """An OLE2 compound file holding ``streams`` (path with '/' between storages -> bytes): 512-byte
    sectors, streams under 4,096 bytes in the mini stream, as the format requires."""
    nodes: dict[tuple[str, ...], dict[str, Any]] = {(): {"name": "Root Entry", "type": 5, "children": []}}
    for path, data in streams.items():
        parts = tuple(path.split("/"))
        for depth in range(1, len(parts)):
            if parts[:depth] not in nodes:
                nodes[parts[:depth]] = {"name": parts[depth - 1], "type": 1, "children": []}
                nodes[parts[:depth - 1]]["children"].append(parts[:depth])
        nodes[parts] = {"name": parts[-1], "type": 2, "data": data, "children": []}
        nodes[parts[:-1]]["children"].append(parts)
    order = list(nodes)
    ids = {key: number for number, key in enumerate(order)}
    sectors: list[bytes] = []
    fat: list[int] = []

    def allocate(data: bytes) -> int:
        count = (len(data) + 511) // 512
        if not count:
            return _END
        start = len(sectors)
        for i in range(count):
            sectors.append(data[i * 512:(i + 1) * 512].ljust(512, b"\0"))
            fat.append(start + i + 1 if i < count - 1 else _END)
        return start

    mini, minifat = bytearray(), []
    for key in order:
        node = nodes[key]
        if node["type"] != 2:
            continue
        data = node["data"]
        node["size"] = len(data)
        if len(data) >= 4096:
            node["start"] = allocate(data)
        elif data:
            start, count = len(mini) // 64, (len(data) + 63) // 64
            mini += data.ljust(count * 64, b"\0")
            minifat += [start + i + 1 if i < count - 1 else _END for i in range(count)]
            node["start"] = start
        else:
            node["start"] = _END
    root = nodes[()]
    root["start"], root["size"] = allocate(bytes(mini)), len(mini)
    minifat_bytes = b"".join(struct.pack("<I", entry) for entry in minifat)
    minifat_start = allocate(minifat_bytes) if minifat else _END
    links: dict[tuple[str, ...], tuple[int, int]] = {}

    def tree(keys: list[tuple[str, ...]]) -> int:
        if not keys:
            return _NO_STREAM
        middle = len(keys) // 2
        links[keys[middle]] = (tree(keys[:middle]), tree(keys[middle + 1:]))
        return ids[keys[middle]]

    child = {key: tree(sorted(nodes[key]["children"], key=lambda k: (len(k[-1]), k[-1].upper())))
             for key in order if nodes[key]["type"] != 2}
    entries = bytearray()
    for key in order:
        node = nodes[key]
        name = node["name"].encode("utf-16-le") + b"\0\0"
        left, right = links.get(key, (_NO_STREAM, _NO_STREAM))
        entries += struct.pack("<64sHBBIII16sIQQIQ", name, len(name), node["type"], 1, left, right,
                               child.get(key, _NO_STREAM), b"\0" * 16, 0, 0, 0, node.get("start", _END),
                               node.get("size", 0))
    while len(entries) % 512:
        entries += struct.pack("<64sHBBIII16sIQQIQ", b"", 0, 0, 0, _NO_STREAM, _NO_STREAM, _NO_STREAM,
                               b"\0" * 16, 0, 0, 0, 0, 0)
    directory_start = allocate(bytes(entries))
    fat_sectors = 1
    while len(fat) + fat_sectors > fat_sectors * 128:
        fat_sectors += 1
    first_fat = len(sectors)
    fat += [_FAT_SECTOR] * fat_sectors
    fat += [_FREE] * (fat_sectors * 128 - len(fat))
    table = b"".join(struct.pack("<I", entry) for entry in fat)
    sectors += [table[i * 512:(i + 1) * 512] for i in range(fat_sectors)]
    difat = [first_fat + i for i in range(fat_sectors)] + [_FREE] * (109 - fat_sectors)
    header = struct.pack("<8s16sHHHHH6sIIIIIIIII", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"\0" * 16, 0x3E, 3,
                         0xFFFE, 9, 6, b"\0" * 6, 0, fat_sectors, directory_start, 0, 4096, minifat_start,
                         (len(minifat_bytes) + 511) // 512, _END, 0)
    header += b"".join(struct.pack("<I", entry) for entry in difat)
    return header + b"".join(sectors)


def pdf_with_endless_name_tree(page_text: str, kids: int = 2000, entries: int = 49_000) -> bytes:
    """A one-page PDF whose /EmbeddedFiles name tree has ``kids`` nodes that all share one /Names
    array of ``entries`` names pointing at nothing (one real file first): a small file whose
    listing walks ``kids * entries`` pairs, for ever to a reader. Written as an incremental update
    over a PDF whose tree holds the real file."""
    base = pdf_with_attachments(page_text, {"real.txt": b"the one real file\n"})
    reader = PdfReader(io.BytesIO(base))
    node = reader.trailer["/Root"]["/Names"].raw_get("/EmbeddedFiles")
    real = node.get_object()["/Names"]
    size = int(reader.trailer["/Size"])
    shared, first_kid = size, size + 1
    objects = {shared: b"[ (%s) %d 0 R " % (real[0].encode(), real[1].idnum) + b"(x) null " * entries + b"]",
               node.idnum: b"<< /Kids [ %s ] >>" % b" ".join(b"%d 0 R" % (first_kid + n) for n in range(kids))}
    objects.update({first_kid + n: b"<< /Names %d 0 R >>" % shared for n in range(kids)})
    update, offsets = b"", {}
    for number, body in objects.items():
        offsets[number] = len(base) + len(update)
        update += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = b"xref\n0 1\n0000000000 65535 f \n%d 1\n%010d 00000 n \n%d %d\n" % (
        node.idnum, offsets[node.idnum], shared, kids + 1)
    xref += b"".join(b"%010d 00000 n \n" % offsets[number] for number in range(shared, first_kid + kids))
    trailer = b"trailer\n<< /Size %d /Root %d 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (
        first_kid + kids, reader.trailer.raw_get("/Root").idnum, _startxref(base), len(base) + len(update))
    return base + update + xref + trailer


def _startxref(data: bytes) -> int:
    return int(data[data.rindex(b"startxref") + len(b"startxref"):].split()[0])


def pdf_in_object_streams(page_text: str, files: Mapping[str, bytes], *,
                          annotated: Mapping[str, bytes] | None = None) -> bytes:
    """A one-page PDF 1.5 as compact writers make it: every dictionary (catalog, name tree, page,
    file specifications, FileAttachment annotations) inside one compressed object stream, an
    xref stream, and the embedded files' streams without the optional ``/Type /EmbeddedFile``;
    nothing in its bytes names an embedded file."""
    plain: dict[int, bytes] = {}  # number -> a stream object's whole text
    packed: dict[int, bytes] = {}  # number -> a dictionary's text, inside the object stream
    content = b"BT /F1 12 Tf 20 100 Td (%s) Tj ET" % page_text.encode("latin-1")
    plain[4] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)
    packed[5] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    number, tree, annotations = 6, [], []
    for name, data, on_page in [*((n, d, False) for n, d in files.items()),
                                *((n, d, True) for n, d in (annotated or {}).items())]:
        deflated = zlib.compress(data)
        plain[number] = b"<< /Length %d /Filter /FlateDecode /Params << /Size %d >> >>\nstream\n%s\nendstream" % (
            len(deflated), len(data), deflated)
        spec = b"(%s)" % name.encode("latin-1")
        packed[number + 1] = b"<< /Type /Filespec /F %s /UF %s /EF << /F %d 0 R >> >>" % (spec, spec, number)
        if on_page:
            packed[number + 2] = (b"<< /Type /Annot /Subtype /FileAttachment /Rect [10 10 30 30] /FS %d 0 R >>"
                                  % (number + 1))
            annotations.append(b"%d 0 R" % (number + 2))
        else:
            tree.append(b"%s %d 0 R" % (spec, number + 1))
        number += 3
    names = b" /Names << /EmbeddedFiles << /Names [%s] >> >>" % b" ".join(tree) if tree else b""
    packed[1] = b"<< /Type /Catalog /Pages 2 0 R%s >>" % names
    packed[2] = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
    packed[3] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R "
                 b"/Resources << /Font << /F1 5 0 R >> >> /Annots [%s] >>" % b" ".join(annotations))
    object_stream, xref_number = number, number + 1
    order = sorted(packed)
    bodies, header, at = b"", [], 0
    for n in order:
        header.append(b"%d %d" % (n, at))
        bodies += packed[n] + b"\n"
        at = len(bodies)
    head = b" ".join(header) + b"\n"
    stream_data = zlib.compress(head + bodies)
    plain[object_stream] = (b"<< /Type /ObjStm /N %d /First %d /Length %d /Filter /FlateDecode >>\n"
                            b"stream\n%s\nendstream" % (len(order), len(head), len(stream_data), stream_data))
    out, offsets = b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n", {}
    for n in sorted(plain):
        offsets[n] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (n, plain[n])
    offsets[xref_number] = len(out)
    rows = [struct.pack(">BIH", 0, 0, 65535)]
    for n in range(1, xref_number + 1):
        if n in packed:
            rows.append(struct.pack(">BIH", 2, object_stream, order.index(n)))
        elif n in offsets:
            rows.append(struct.pack(">BIH", 1, offsets[n], 0))
        else:  # a number left unused (a file with no annotation)
            rows.append(struct.pack(">BIH", 0, 0, 0))
    table = b"".join(rows)
    out += (b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n%s\nendstream\nendobj\n"
            % (xref_number, xref_number + 1, len(table), table))
    return out + b"startxref\n%d\n%%%%EOF\n" % offsets[xref_number]
