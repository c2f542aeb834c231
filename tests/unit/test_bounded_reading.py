"""Long texts and big parts read in bounded pieces give what the whole read gives (issue 20: the
hostile run's 1,645 MB worker was one 100 MB HTML line split into 17 million words at once, and a
120 MB word/document.xml made a 270 MB tree). The piece sizes are made tiny here, so every cut
lands somewhere a whole read would not notice: inside runs of spaces, next to numbers, between
letters of other scripts."""

from __future__ import annotations

import io
import json
import random
import zipfile

import docx
import pytest
from lxml import etree

from papersift import plaintext, quality
from papersift.formats import docx as docx_format
from papersift.formats.docx import extract_docx
from papersift.formats.markup import read_html_document
from papersift.plaintext import collapse_whitespace, whitespace_pieces
from papersift.settings import Settings

SETTINGS = Settings()
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#: every character str.split() splits on that a cut could meet, and some it does not
SPACES = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2009", "\u3000", "\u2028"]
TOKENS = ["harbour", "Stra\u00dfe", "\u6771\u4eac", "\u0645\u0631\u062d\u0628\u0627", "1\u2009000", "12,5%",
          "(cid:3)", "\ufffd", "-\n", "\x02", "...", "\u2500\u2500\u2500", "\u00e9t\u00e9", "Word", "x"]


def random_text(rng: random.Random, tokens: int) -> str:
    return "".join(rng.choice(TOKENS) + "".join(rng.choice(SPACES) for _ in range(rng.randint(0, 3)))
                   for _ in range(tokens))


@pytest.fixture
def tiny_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plaintext, "_COLLAPSE_PIECE", 7)


def test_whitespace_pieces_cut_only_at_whitespace_and_leave_out_only_the_cut() -> None:
    rng = random.Random(1)
    for _ in range(300):
        text = random_text(rng, rng.randint(0, 60))
        pieces = list(whitespace_pieces(text, 5))
        assert [w for piece in pieces for w in piece.split()] == text.split()
        at, cuts = 0, []
        for piece in pieces:
            assert text.startswith(piece, at)
            cuts.append(text[at + len(piece):at + len(piece) + 1])
            at += len(piece) + 1
        assert at in (len(text), len(text) + 1)  # all of it, the last piece followed by a cut or the end
        cuts = [cut for cut in cuts if cut]
        assert all(cut in " \t\n\r\x0b\x0c\u3000" for cut in cuts), cuts  # never a thin space in 1\u2009000


@pytest.mark.usefixtures("tiny_pieces")
def test_collapse_whitespace_in_pieces_is_the_whole_split_and_join() -> None:
    rng = random.Random(2)
    for _ in range(500):
        text = random_text(rng, rng.randint(0, 80))
        assert collapse_whitespace(text) == " ".join(text.split()), repr(text)


@pytest.mark.usefixtures("tiny_pieces")
def test_a_long_texts_verdict_read_in_pieces_is_the_whole_reads() -> None:
    rng = random.Random(3)
    texts = [random_text(rng, rng.randint(50, 3000)) for _ in range(40)]
    texts += [" ".join(rng.choice(("harbour", "tide", "lighthouse", "log")) for _ in range(5000))]  # ASCII path
    in_pieces = [quality.assess_text(text) for text in texts]
    plaintext._COLLAPSE_PIECE = 1 << 30  # type: ignore[attr-defined]  # the fixture restores it
    whole = [quality.assess_text(text) for text in texts]
    assert in_pieces == whole


@pytest.mark.usefixtures("tiny_pieces")
def test_a_huge_one_line_html_read_in_pieces_gives_the_whole_lines_words() -> None:
    rng = random.Random(4)
    words = [rng.choice(("tide", "tables", "lighthouse", "log", "harbourmaster")) for _ in range(20_000)]
    spaced = "".join(w + rng.choice(("  ", " ", "\t", "\n ")) for w in words)
    read = read_html_document(f"<!DOCTYPE html><html><body><p>{spaced}</p><p>the end</p></body></html>")
    assert read.text == " ".join(words) + "\nthe end"


# -- a big word/document.xml read as a stream of its body's children ----------------------------


def _saved(document: object) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)  # type: ignore[attr-defined]
    return buffer.getvalue()


def _with_document_xml(package: bytes, change: object) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(package))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            data = source.read(name)
            target.writestr(name, change(data) if name == "word/document.xml" else data)  # type: ignore[operator]
    return out.getvalue()


def _documents() -> dict[str, bytes]:
    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "A header"
    document.sections[0].footer.paragraphs[0].text = "A footer"
    document.add_heading("Quarterly report", level=1)
    noted = document.add_paragraph("Body text worthy of note.")
    document.add_comment(noted.runs, text="A comment on it.", author="QA")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([["Region", "Sales"], ["North", "42"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("A bullet", style="List Bullet")
    for i in range(50):
        document.add_paragraph(f"Paragraph {i} of the harbourmaster's log.")
    ordinary = _saved(document)
    box = f'<w:p xmlns:w="{W}"><w:r><w:t>Anchor</w:t></w:r><w:r><w:pict><w:txbxContent><w:p><w:r><w:t>In a box' \
          "</w:t></w:r></w:p></w:txbxContent></w:pict></w:r></w:p>"
    sdt = f'<w:sdt xmlns:w="{W}"><w:sdtContent><w:p><w:r><w:t>In a control</w:t></w:r></w:p></w:sdtContent></w:sdt>'

    def insert(*fragments: str) -> object:
        def change(part: bytes) -> bytes:
            root = etree.fromstring(part)
            body = root.find(f"{{{W}}}body")
            assert body is not None
            for fragment in fragments:
                body.insert(3, etree.fromstring(fragment))
            return etree.tostring(root)
        return change

    return {
        "ordinary": ordinary,
        "boxes and controls": _with_document_xml(ordinary, insert(box, sdt)),
        "broken": _with_document_xml(ordinary, lambda p: p.replace(b"</w:body>", b"<w:p><w:r><w:t>open</w:body>")),
        "doctype": _with_document_xml(ordinary, lambda p: p.replace(
            b"<w:document", b'<!DOCTYPE w:document [<!ENTITY co "Harbour Co">]><w:document', 1).replace(
            b"Paragraph 7 of", b"&co; 7 of")),
        "no body": _with_document_xml(ordinary, lambda p: p.replace(b"w:body>", b"w:corpus>")),
    }


@pytest.mark.parametrize("name", list(_documents()))
def test_a_docx_body_read_as_a_stream_is_the_whole_trees(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _documents()[name]
    [whole] = extract_docx(data, SETTINGS)
    streamed_children: list[str] = []
    stream = docx_format.stream_children

    def counted(raw: bytes, container: str):  # type: ignore[no-untyped-def]
        for child in stream(raw, container):
            streamed_children.append(child.tag)
            yield child

    monkeypatch.setattr(docx_format, "STREAM_BYTES", 0)
    monkeypatch.setattr(docx_format, "stream_children", counted)
    [streamed] = extract_docx(data, SETTINGS)
    assert (streamed.text, streamed.markdown, [t.rows for t in streamed.tables]) == \
        (whole.text, whole.markdown, [t.rows for t in whole.tables])
    assert (streamed.report.signals, streamed.report.reason, streamed.report.status) == \
        (whole.report.signals, whole.report.reason, whole.report.status)
    if name in ("ordinary", "boxes and controls"):
        assert len(streamed_children) > 50  # read from the stream, not from the whole tree after all
    if name == "ordinary":
        assert "Paragraph 49 of the harbourmaster's log." in streamed.text


# -- a page's JSON written and read without a third copy ----------------------------------------


def test_json_bytes_with_long_strings_in_pieces_is_json_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    from papersift import workfiles

    monkeypatch.setattr(workfiles, "JSON_PIECE_CHARS", 5)
    rng = random.Random(5)
    odd = ["\"", "\\", "\n", "\x00", "\u2028", "\x7f", "é", "\U0001f600", "</script>", "a"]

    def value(depth: int) -> object:
        roll = rng.random()
        if depth > 3 or roll < 0.4:
            return rng.choice([None, True, 1.5, 7, "".join(rng.choice(odd) for _ in range(rng.randint(0, 30)))])
        if roll < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        if roll < 0.9:
            return {"".join(rng.choice(odd) for _ in range(rng.randint(0, 8))): value(depth + 1)
                    for _ in range(rng.randint(0, 4))}
        return {rng.randint(0, 9): value(depth + 1), "text": "long enough to be cut"}  # keys json.dumps converts

    for _ in range(400):
        sample = value(0)
        assert workfiles.json_bytes(sample) == json.dumps(sample, ensure_ascii=False).encode("utf-8"), sample


def test_get_json_reads_what_put_json_wrote(tmp_path: object) -> None:
    from papersift.storage import LocalDirStore
    from papersift.workfiles import get_json, put_json

    store = LocalDirStore(tmp_path)  # type: ignore[arg-type]
    page = {"number": 1, "text": "tide " * 300_000, "markdown": "# tide\n\n" + "log " * 300_000, "x": "\x7fé"}
    put_json(store, "work/d/pages/1.json", page)
    assert get_json(store, "work/d/pages/1.json") == page
