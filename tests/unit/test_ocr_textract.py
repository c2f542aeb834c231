"""The Textract engine against the real service's recorded answers (../shared/textract, replayed
through a real boto3 client), botocore's Stubber for the errors, and PDFs and pictures built in
code for what is sent."""

from __future__ import annotations

import http.server
import io
import json
import random
import socket
import threading
from collections.abc import Iterator

import boto3
import botocore.credentials
import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from pdf_factory import encrypted_pdf, numbered_pdf, text_pdf
from PIL import Image
from pypdf import PdfReader
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas
from scan_factory import LINES, scanned_pdf, text_image
from textract_replay import ReplayingTextract, input_bytes, recorded_response

from papersift.errors import OcrRejectedError, OcrThrottledError, OcrUnavailableError
from papersift.ocr.reading import TEXTRACT
from papersift.ocr.textract import (
    ANALYZE_DOCUMENT,
    CLIENT_CONFIG,
    DETECT_DOCUMENT_TEXT,
    MAX_DOCUMENT_BYTES,
    MAX_IMAGE_SIDE,
    MAX_PDF_PAGE_POINTS,
    PageDocument,
    TextractReader,
    one_page_pdf,
    page_picture,
    reading_from_response,
)


@pytest.fixture
def replay() -> ReplayingTextract:
    return ReplayingTextract()


def _lines(response: dict) -> list[dict]:
    return [b for b in response["Blocks"] if b["BlockType"] == "LINE"]


# --- text in reading order -----------------------------------------------------------------


def test_reading_order_pdf_keeps_the_service_order_not_top_to_bottom(replay: ReplayingTextract) -> None:
    """reading_order.pdf: 'Left right' sits a hair above 'Are those' and 'Field13' above 'Field11';
    sorted by position they would swap. The text follows the service's order (LAYOUT blocks,
    each a paragraph), never the coordinates."""
    data = input_bytes("reading_order.pdf")
    reading = TextractReader(replay.client).read(data, tables=True)

    lines = _lines(recorded_response("reading_order.pdf", "analyze_document"))
    by_top = [line["Text"] for line in sorted(lines, key=lambda b: b["Geometry"]["BoundingBox"]["Top"])]
    service = [line["Text"] for line in lines]
    assert by_top != service
    assert by_top.index("Left right") < by_top.index("Are those")
    assert reading.text.split("\n") == [service[0], "", *service[1:]]
    assert reading.text.index("Are those") < reading.text.index("Left right") < reading.text.index("Words in order?")
    assert reading.text.index("Field11") < reading.text.index("Field12") < reading.text.index("Field13")


def test_analyze_document_is_asked_for_tables_only(replay: ReplayingTextract) -> None:
    """AnalyzeDocument with FeatureTypes TABLES and nothing else (FORMS, LAYOUT cost extra)."""
    reading = TextractReader(replay.client).read(input_bytes("reading_order.pdf"), tables=True)
    assert [c.operation for c in replay.calls] == [ANALYZE_DOCUMENT]
    assert replay.calls[0].params["FeatureTypes"] == ["TABLES"]
    assert replay.calls[0].document == input_bytes("reading_order.pdf")
    assert reading.engine == TEXTRACT and reading.api == ANALYZE_DOCUMENT
    assert reading.words == 33
    assert 0.99 < (reading.confidence or 0) <= 1.0
    assert reading.seconds >= 0


def test_table_title(replay: ReplayingTextract) -> None:
    """reading_order.pdf's table has a TABLE_TITLE: it becomes the Table's title; header cells
    spread over two lines are one cell."""
    reading = TextractReader(replay.client).read(input_bytes("reading_order.pdf"), tables=True)
    (table,) = reading.tables
    assert table.title == "This is a sample test for the word ordering in Textract."
    assert table.header_rows == 1
    assert table.rows == [
        ["Are those Words in order?", "Left right Top bottom", "Top Top Top Top"],
        ["Field11", "Field12", "Field13"],
        ["Field21", "Field22", "Field23"],
        ["Field31", "Field32", "Field33"],
    ]


# --- tables --------------------------------------------------------------------------------


def test_merged_cell_text_fills_every_row_it_spans(replay: ReplayingTextract) -> None:
    """test.png: 'Contract Year' is a MERGED_CELL over rows 2-4 of column 1; each row says it."""
    reading = TextractReader(replay.client).read(input_bytes("test.png"), tables=True)
    (table,) = reading.tables
    assert table.header_rows == 1
    assert [row[0] for row in table.rows] == ["Term", "Contract Year", "Contract Year", "Contract Year"]
    assert table.rows[3][1] == "Contract Year 3: February 1, 2025 - January - 31, 2026"
    markdown = table.to_markdown()
    assert markdown.splitlines()[0] == "| Term | January St, 2020 |"
    assert "| Contract Year | Contract Year 2: February 1, 2024 -January - 31, 2025 |" in markdown
    assert any("merged cells" in note for note in reading.notes)


def test_several_tables_on_one_page(replay: ReplayingTextract) -> None:
    """paystub_tables.png: four tables, in the response's order, one with a merged 'Gross Pay'
    over two columns, one with a title."""
    reading = TextractReader(replay.client).read(input_bytes("paystub_tables.png"), tables=True)
    assert [t.index for t in reading.tables] == [0, 1, 2, 3]
    first, taxes, earnings, benefits = reading.tables
    assert first.rows == [["CO.", "FILE", "DEPT.", "CLOCK", "NUMBER"], ["ABC", "126543", "123456", "12345", "00000000"]]
    assert taxes.rows[1:] == [["State:", "2"], ["Local:", "2"]]
    assert earnings.rows[0] == ["Earnings", "rate", "hours", "this period", "year to date"]
    assert earnings.rows[-1] == ["", "Gross Pay", "Gross Pay", "$ 452.43", "23,526.80"]
    assert benefits.title == "Other Benefits and"
    assert benefits.rows[0] == ["Information", "this period", "total to date"]
    assert "| Regular | 10.00 | 32.00 | 320.00 | 16,640.00 |" in earnings.to_markdown()
    # the text still holds every line, a blank line between the layout's blocks
    assert "\n\nEarnings Statement\n\n" in reading.text
    assert reading.words == 106


# --- DetectDocumentText ---------------------------------------------------------------------


def test_detect_document_text_on_a_picture(replay: ReplayingTextract) -> None:
    """single-page-1.png: lines in the service's order, one per line, no blank lines (no LAYOUT
    in a DetectDocumentText answer), the mean word confidence on 0..1, no tables."""
    reading = TextractReader(replay.client).read(input_bytes("single-page-1.png"))
    response = recorded_response("single-page-1.png", "detect_document_text")
    words = [b["Confidence"] for b in response["Blocks"] if b["BlockType"] == "WORD"]
    assert [c.operation for c in replay.calls] == [DETECT_DOCUMENT_TEXT]
    assert "FeatureTypes" not in replay.calls[0].params
    assert reading.api == DETECT_DOCUMENT_TEXT
    assert reading.text.split("\n") == [line["Text"] for line in _lines(response)]
    assert reading.text.startswith("Textractor Test\nDocument\nPage (1)\n")
    assert reading.words == 51
    assert reading.confidence == pytest.approx(sum(words) / len(words) / 100)
    assert reading.tables == ()


def test_detect_document_text_on_a_single_page_pdf(replay: ReplayingTextract) -> None:
    reading = TextractReader(replay.client).read(input_bytes("textractor-singlepage-doc.pdf"))
    assert reading.words == 53
    assert len(reading.text.split("\n")) == 25
    assert "Name of package: Textractor" in reading.text


def test_page_document_notes_reach_the_reading(replay: ReplayingTextract) -> None:
    document = PageDocument(input_bytes("single-page-1.png"), "png", ("rendered at 300 dpi",))
    reading = TextractReader(replay.client).read(document)
    assert reading.notes[0] == "rendered at 300 dpi"


def test_pages_of_a_multi_page_response() -> None:
    """The asynchronous answer for two pages (GetDocumentTextDetection) holds Page on each block:
    each page reads alone, and the two together hold every word."""
    response = recorded_response("textractor-multipage-doc.pdf", "get_document_text_detection")
    first, second = (reading_from_response(response, api=DETECT_DOCUMENT_TEXT, page=n) for n in (1, 2))
    assert first.words + second.words == 106
    assert first.text.startswith("Textractor Test")
    assert first.text != second.text and second.text
    assert reading_from_response(response, api=DETECT_DOCUMENT_TEXT, page=3).confidence is None


def test_replay_refuses_a_document_it_has_no_answer_for(replay: ReplayingTextract) -> None:
    with pytest.raises(LookupError, match="no recorded DetectDocumentText"):
        replay.client.detect_document_text(Document={"Bytes": b"%PDF-1.7 not recorded"})


def test_replayed_requests_are_validated_by_botocore(replay: ReplayingTextract) -> None:
    from botocore.exceptions import ParamValidationError

    with pytest.raises(ParamValidationError):
        replay.client.analyze_document(Document={"Bytes": input_bytes("test.png")}, FeatureTypes="TABLES")


# --- what is sent: the one-page PDF cut -----------------------------------------------------


def _page_image_data(pdf: bytes, index: int) -> list[bytes]:
    page = PdfReader(io.BytesIO(pdf)).pages[index]
    xobjects = page["/Resources"]["/XObject"]
    return [xobjects[name].get_object().get_data() for name in xobjects]


def test_one_page_cut_of_a_multi_page_pdf() -> None:
    original = numbered_pdf(5)
    document = one_page_pdf(original, 3)
    assert document is not None and document.format == "pdf"
    reader = PdfReader(io.BytesIO(document.data))
    assert len(reader.pages) == 1
    assert "This is page number 3 of the document." in reader.pages[0].extract_text()
    assert "page 3 of 5" in document.notes[0]


def test_one_page_cut_keeps_the_original_image() -> None:
    """A scan of four pages, each its own picture: the cut holds page 2's picture as its original
    bytes (no re-render) and none of the others."""
    pages = [text_image([f"Scanned page {n}", *LINES]) for n in range(1, 5)]
    original = scanned_pdf(pages)
    document = one_page_pdf(original, 2)
    assert document is not None
    (picture,) = _page_image_data(document.data, 0)
    assert [picture] == _page_image_data(original, 1)
    assert all(_page_image_data(original, n) != [picture] for n in (0, 2, 3))
    assert len(document.data) < len(original) / 2


def test_one_page_cut_of_an_encrypted_pdf() -> None:
    """Opened with the password that works, written without encryption (Textract refuses
    password-protected PDFs); no password that opens it: no cut."""
    locked = encrypted_pdf(numbered_pdf(3), user_password="garçon", algorithm="AES-256")
    document = one_page_pdf(locked, 2, passwords=("wrong", "garçon"))
    assert document is not None
    reader = PdfReader(io.BytesIO(document.data))
    assert not reader.is_encrypted
    assert "page number 2" in reader.pages[0].extract_text()
    assert any("decrypted" in note for note in document.notes)
    assert one_page_pdf(locked, 2, passwords=("wrong",)) is None


def test_one_page_cut_leaves_linked_pages_behind() -> None:
    """A link on page 1 to page 3 must not carry page 3 (and its picture) into the cut."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    pdf.drawString(72, 700, "See the last page")
    pdf.linkRect("", "last", (72, 690, 300, 720))
    pdf.showPage()
    pdf.showPage()
    pdf.bookmarkPage("last")
    noise = Image.effect_noise((600, 600), 80).convert("L")
    from reportlab.lib.utils import ImageReader

    pdf.drawImage(ImageReader(noise), 36, 36, width=500, height=500)
    pdf.showPage()
    pdf.save()
    original = buffer.getvalue()
    document = one_page_pdf(original, 1)
    assert document is not None
    assert len(document.data) < 10_000 < len(original)


def test_one_page_cut_not_made_past_the_limits() -> None:
    """A page over 40 inches on a side, or bytes pypdf cannot read: None, send a picture."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(MAX_PDF_PAGE_POINTS + 100, 800))
    pdf.drawString(72, 400, "a banner")
    pdf.showPage()
    pdf.save()
    assert one_page_pdf(buffer.getvalue(), 1) is None
    assert one_page_pdf(b"%PDF-1.4 this is no pdf at all", 1) is None


def test_one_page_cut_of_a_page_that_is_not_there() -> None:
    with pytest.raises(ValueError, match="page 4 asked of a PDF of 2 pages"):
        one_page_pdf(text_pdf(["one", "two"]), 4)
    with pytest.raises(ValueError, match="start at 1"):
        one_page_pdf(text_pdf(["one"]), 0)


# --- what is sent: the picture ----------------------------------------------------------------


def test_picture_within_the_limits_is_a_png() -> None:
    image = Image.new("L", (1200, 1600), 255)
    document = page_picture(image)
    assert document.format == "png" and document.notes == ()
    assert Image.open(io.BytesIO(document.data)).size == (1200, 1600)


def test_picture_over_the_side_limit_is_scaled() -> None:
    image = Image.new("L", (MAX_IMAGE_SIDE + 2_000, 300), 255)
    document = page_picture(image)
    sent = Image.open(io.BytesIO(document.data))
    assert max(sent.size) == MAX_IMAGE_SIDE
    assert sent.size == (MAX_IMAGE_SIDE, 250)
    assert "scaled" in document.notes[0]


def test_picture_over_the_byte_limit_is_recompressed() -> None:
    """Noise does not compress: its PNG is over 10 MB, so it goes as JPEG under it."""
    image = Image.frombytes("RGB", (1900, 1900), random.Random(7).randbytes(1900 * 1900 * 3))
    document = page_picture(image)
    assert document.format == "jpeg"
    assert len(document.data) <= MAX_DOCUMENT_BYTES
    assert Image.open(io.BytesIO(document.data)).size == (1900, 1900)
    assert "sent as JPEG" in document.notes[0]


def test_picture_scaled_down_when_even_jpeg_is_too_big() -> None:
    image = Image.effect_noise((1000, 1000), 120)
    document = page_picture(image, max_bytes=60_000)
    sent = Image.open(io.BytesIO(document.data))
    assert document.format == "jpeg" and len(document.data) <= 60_000
    assert sent.width < 1000
    assert any("scaled to" in note for note in document.notes)


def test_transparent_picture_is_flattened_on_white() -> None:
    image = Image.new("RGBA", (50, 50), (0, 0, 0, 0))
    document = page_picture(image)
    assert Image.open(io.BytesIO(document.data)).convert("RGB").getpixel((10, 10)) == (255, 255, 255)


def test_sixteen_bit_gray_keeps_its_ink() -> None:
    """Pillow's own I;16 -> L clips at 255 (every pixel white): the ink must survive."""
    image = Image.new("I;16", (40, 40), 65535)
    image.paste(Image.new("I;16", (20, 20), 8000), (10, 10))
    sent = Image.open(io.BytesIO(page_picture(image).data))
    assert sent.mode == "L"
    assert sent.getpixel((0, 0)) == 255 and sent.getpixel((20, 20)) < 40


# --- errors ---------------------------------------------------------------------------------


@pytest.fixture
def stubbed() -> Iterator[tuple[TextractReader, Stubber]]:
    """A real client with the handler's Config; Stubber answers (no credentials are used)."""
    client = boto3.client("textract", region_name="us-east-1", aws_access_key_id="stub",
                          aws_secret_access_key="stub", config=CLIENT_CONFIG)
    with Stubber(client) as stubber:
        yield TextractReader(client), stubber
        stubber.assert_no_pending_responses()


@pytest.mark.parametrize("code", ["ThrottlingException", "ProvisionedThroughputExceededException",
                                  "LimitExceededException"])
@pytest.mark.parametrize("tables", [False, True])
def test_throttling_raises_ocr_throttled(stubbed: tuple[TextractReader, Stubber], code: str, tables: bool) -> None:
    reader, stubber = stubbed
    method = "analyze_document" if tables else "detect_document_text"
    stubber.add_client_error(method, service_error_code=code, service_message="Rate exceeded")
    with pytest.raises(OcrThrottledError, match=code) as caught:
        reader.read(b"%PDF-1.7", tables=tables)
    assert isinstance(caught.value.__cause__, ClientError)


@pytest.mark.parametrize("code", ["InvalidParameterException", "UnsupportedDocumentException",
                                  "BadDocumentException", "DocumentTooLargeException", "InvalidS3ObjectException"])
def test_rejection_raises_ocr_rejected_with_the_service_message(stubbed: tuple[TextractReader, Stubber],
                                                                code: str) -> None:
    reader, stubber = stubbed
    stubber.add_client_error("detect_document_text", service_error_code=code,
                             service_message="Request has unsupported document format")
    with pytest.raises(OcrRejectedError, match=f"{code}: Request has unsupported document format"):
        reader.read(b"\x89PNG")


@pytest.mark.parametrize("code", ["AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException"])
def test_access_and_identity_errors_make_textract_unavailable(stubbed: tuple[TextractReader, Stubber],
                                                              code: str) -> None:
    reader, stubber = stubbed
    stubber.add_client_error("detect_document_text", service_error_code=code, http_status_code=403)
    with pytest.raises(OcrUnavailableError, match=code):
        reader.read(b"\x89PNG")


def test_other_service_errors_propagate(stubbed: tuple[TextractReader, Stubber]) -> None:
    reader, stubber = stubbed
    stubber.add_client_error("detect_document_text", service_error_code="InternalServerError", http_status_code=500)
    with pytest.raises(ClientError, match="InternalServerError"):
        reader.read(b"\x89PNG")


def test_a_page_over_the_byte_limit_is_rejected_without_a_call(stubbed: tuple[TextractReader, Stubber]) -> None:
    reader, _ = stubbed  # no response queued: a call would fail the Stubber
    with pytest.raises(OcrRejectedError, match="over Textract's synchronous limit"):
        reader.read(b"\0" * (MAX_DOCUMENT_BYTES + 1))


def test_missing_credentials_make_textract_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real client with no credential source at all: botocore refuses to sign, nothing is sent."""
    session = botocore.session.Session()
    session.register_component("credential_provider", botocore.credentials.CredentialResolver(providers=[]))
    client = session.create_client("textract", region_name="us-east-1", config=CLIENT_CONFIG)
    with pytest.raises(OcrUnavailableError, match="NoCredentialsError"):
        TextractReader(client).read(b"\x89PNG")


def test_no_client_makes_textract_unavailable() -> None:
    with pytest.raises(OcrUnavailableError, match="no Textract client"):
        TextractReader(None).read(b"\x89PNG")


def _free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_endpoint_makes_textract_unavailable() -> None:
    client = boto3.client("textract", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x",
                          endpoint_url=f"http://127.0.0.1:{_free_loopback_port()}",
                          config=CLIENT_CONFIG.merge(Config(retries={"total_max_attempts": 1})))
    with pytest.raises(OcrUnavailableError, match="EndpointConnectionError"):
        TextractReader(client).read(b"\x89PNG")


class _Throttling(http.server.BaseHTTPRequestHandler):
    """Answers every request as the service does when throttling, and counts them."""

    requests = 0

    def do_POST(self) -> None:
        type(self).requests += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"__type": "ThrottlingException", "message": "Rate exceeded"}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_client_config_retries_once_then_throttling_reaches_the_workflow() -> None:
    """The handler's Config over real HTTP (a loopback stand-in that always throttles): one
    retry in the SDK, then botocore gives up and the page raises OcrThrottledError for the
    workflow's backoff."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _Throttling)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        client = boto3.client("textract", region_name="us-east-1", aws_access_key_id="x",
                              aws_secret_access_key="x", config=CLIENT_CONFIG,
                              endpoint_url=f"http://127.0.0.1:{server.server_address[1]}")
        with pytest.raises(OcrThrottledError, match=r"Rate exceeded \(after 1 SDK retry\)"):
            TextractReader(client).read(b"\x89PNG")
    finally:
        server.shutdown()
        server.server_close()
    assert _Throttling.requests == 2


def test_replayed_throttling_then_the_recording(replay: ReplayingTextract) -> None:
    """The replaying client queues service errors before its recordings: throttled twice, the
    third try reads the page."""
    replay.fail_next("ThrottlingException", times=2)
    reader = TextractReader(replay.client)
    for _ in range(2):
        with pytest.raises(OcrThrottledError):
            reader.read(input_bytes("single-page-1.png"))
    assert reader.read(input_bytes("single-page-1.png")).words == 51
    assert len(replay.calls) == 3
