"""Amazon Textract as an OCR engine: one page per synchronous call, through a client the caller
passes in.

What is sent is built here too, so it is always within the service's synchronous limits: a
one-page PDF cut from the original (the page's own image, never re-rendered, so Textract
reads the scan at its native resolution) or, when that cannot be made or is too large, a
picture the caller rendered (PNG, JPEG when PNG is too big). Which one a page gets is the
caller's decision.

Responses are parsed here, by a small parser over the Block graph rather than
amazon-textract-textractor 1.10 or amazon-textract-response-parser (trp) 1.0.3, measured on the
recorded responses in ../shared/textract: trp leaves a merged cell's text out of the rows it
spans and knows no table titles nor LAYOUT blocks; textractor adds ~16 MB to the image beyond
what it has (rapidfuzz 12 MB, xlsxwriter, tabulate, marshmallow, trp, textract-caller) and 41 ms
of import after boto3 and Pillow, needs pandas to give a table as Markdown, leaves merged cells
empty in its text, and puts blank lines between every two lines of a response without LAYOUT
(every DetectDocumentText answer). This parser is the standard library only: 4 ms of import,
0.3 ms for the four-table paystub (textractor 12 ms, trp 1 ms).

Pure like the rest of the core: the client is injected and no environment is read. Building
the client's botocore ``Config`` is fine here (:data:`CLIENT_CONFIG`); creating the client is the
handler's job.
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    CapacityNotAvailableError,
    ClientError,
    ConnectTimeoutError,
    CredentialRetrievalError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
)

from papersift import ledger
from papersift.content import Table
from papersift.errors import (
    PROVISIONED_THROUGHPUT_EXCEEDED,
    THROTTLING_EXCEPTION,
    OcrRejectedError,
    OcrThrottledError,
    OcrUnavailableError,
    PapersiftError,
)
from papersift.ocr.reading import TEXTRACT, Box, OcrReading
from papersift.structure import FOOTER, HEADER, HEADING, PAGE_NUMBER, PARAGRAPH
from papersift.structure import LINES as LINES_ROLE

if TYPE_CHECKING:
    from mypy_boto3_textract.client import TextractClient
    from PIL import Image
    from pypdf import PageObject

#: the Textract operations a page can be read with (OcrReading.api), named as the ledger prices them
DETECT_DOCUMENT_TEXT, ANALYZE_DOCUMENT = ledger.DETECT_DOCUMENT_TEXT, ledger.ANALYZE_DOCUMENT
#: the structure role of each LAYOUT block's lines; a heading as ``heading:LEVEL``; a list, a
#: table's or a figure's text, key-values: ``lines``, kept as they are
LAYOUT_ROLES = {
    "LAYOUT_TITLE": f"{HEADING}:1", "LAYOUT_SECTION_HEADER": f"{HEADING}:2", "LAYOUT_TEXT": PARAGRAPH,
    "LAYOUT_LIST": LINES_ROLE, "LAYOUT_HEADER": HEADER, "LAYOUT_FOOTER": FOOTER,
    "LAYOUT_PAGE_NUMBER": PAGE_NUMBER, "LAYOUT_TABLE": LINES_ROLE, "LAYOUT_FIGURE": LINES_ROLE,
    "LAYOUT_KEY_VALUE": LINES_ROLE,
}

# Textract's fixed limits for synchronous operations ("Set Quotas in Amazon Textract",
# docs.aws.amazon.com/textract/latest/dg/limits-document.html):
#: "JPEG, PNG, PDF, and TIFF files have a limit of 10 MB in memory" (and one page for a PDF).
#: The page does not say whether a MB is 10^6 or 2^20 bytes: 10^6, so a document under it is
#: under either.
MAX_DOCUMENT_BYTES = 10_000_000
#: "images with a resolution less than or equal to 10000 pixels on all sides"
MAX_IMAGE_SIDE = 10_000
#: "The maximum height and width is 40 inches": 2,880 points. The page's current text says
#: "40 inches and 9000 points", its earlier text "40 inches and 2880 points"; 40 inches is the
#: figure both give, and 2,880 points is that length.
MAX_PDF_PAGE_POINTS = 40 * 72

#: For the client the OCR handler creates: SDK retries low (one retry inside the Lambda, in
#: standard mode, which also retries the throttling codes), so a throttled page comes back
#: quickly as OcrThrottledError and Step Functions retries it with backoff and full jitter
#: instead of the Lambda sleeping through its timeout. Connect fails fast (an endpoint that is
#: not there is "unavailable", not slow); the read timeout leaves AnalyzeDocument time for a
#: dense page, well inside the function's timeout.
CLIENT_CONFIG = Config(
    retries={"total_max_attempts": 2, "mode": "standard"},
    connect_timeout=5,
    read_timeout=60,
    tcp_keepalive=True,
)

# Why each service error lands where it does:
#: Load, not the page: the same page succeeds later, so the workflow retries the page with
#: backoff and jitter (ThrottlingException: the service's own transient load;
#: ProvisionedThroughputExceeded: the account's transactions-per-second quota; LimitExceeded:
#: the account's concurrency quota). botocore's standard retry gives up with the last of these
#: codes once its attempts (or its retry quota) are spent, so retry-exhausted throttling lands
#: here too.
TEXTRACT_RETRY_CODES = frozenset(
    {THROTTLING_EXCEPTION, PROVISIONED_THROUGHPUT_EXCEEDED, "LimitExceededException"}
)
#: The page itself: the service read the request and refused this document, and sending it
#: again cannot change the answer, so the page ends failed with the service's message.
#: (InvalidS3Object cannot come from a Bytes request; it is here for completeness.)
REJECTION_CODES = frozenset(
    {
        "InvalidParameterException",
        "UnsupportedDocumentException",
        "BadDocumentException",
        "DocumentTooLargeException",
        "InvalidS3ObjectException",
    }
)
#: The deployment, not the page: every page would fail alike (no permission, keys the service
#: does not know or that expired), so the router falls back to Tesseract and says why.
UNAVAILABLE_CODES = frozenset(
    {
        "AccessDeniedException",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "ExpiredTokenException",
        "MissingAuthenticationTokenException",
    }
)
#: botocore's own failures before any answer from the service: no credentials, no region, no
#: route to the endpoint. Textract cannot be used from here at all: fall back to Tesseract.
UNAVAILABLE_ERRORS: tuple[type[BotoCoreError], ...] = (
    NoCredentialsError,
    PartialCredentialsError,
    CredentialRetrievalError,
    NoRegionError,
    EndpointConnectionError,
    ConnectTimeoutError,
)


def ocr_error(exc: BaseException) -> PapersiftError | None:
    """The papersift error a botocore failure of a Textract call stands for; None when it is none
    of the three (an internal server error, a read timeout, ...): the caller lets it propagate and
    the workflow records it."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        message = str(error.get("Message", "")) or str(exc)
        metadata = exc.response.get("ResponseMetadata", {})
        status = metadata.get("HTTPStatusCode")
        if code in TEXTRACT_RETRY_CODES or (status == 429 and code not in REJECTION_CODES):
            retries = int(metadata.get("RetryAttempts", 0) or 0)
            after = f" (after {retries} SDK {'retry' if retries == 1 else 'retries'})" if retries else ""
            return OcrThrottledError(f"Textract throttled the request: {code or 'HTTP 429'}: {message}{after}")
        if code in REJECTION_CODES:
            return OcrRejectedError(f"Textract refused the page: {code}: {message}")
        if code in UNAVAILABLE_CODES:
            return OcrUnavailableError(f"Textract cannot be used: {code}: {message}")
        return None
    if isinstance(exc, CapacityNotAvailableError):
        # adaptive retry mode's client-side rate limiter has no capacity left: throttling,
        # decided before the request was sent
        return OcrThrottledError(f"Textract throttled the request: {exc}")
    if isinstance(exc, UNAVAILABLE_ERRORS):
        return OcrUnavailableError(f"Textract cannot be used: {type(exc).__name__}: {exc}")
    return None


@dataclass(frozen=True)
class PageDocument:
    """The bytes sent to Textract for one page, within the synchronous limits, and how they were
    made (for the page's report)."""

    data: bytes
    #: "pdf", "png" or "jpeg"
    format: str
    notes: tuple[str, ...] = ()


def one_page_pdf(data: bytes, page_number: int, passwords: tuple[str, ...] = ()) -> PageDocument | None:
    """Page ``page_number`` (1-based) of a PDF as a PDF of its own, unencrypted (Textract refuses
    password-protected PDFs), its images as they are in the original.

    None when no such PDF within Textract's synchronous limits can be made: pypdf cannot read
    the file or no password opens it for pypdf, the page is over 40 inches on a side, or the cut
    is over 10 MB. The caller then sends a picture (:func:`page_picture`).
    """
    from pypdf import PdfWriter

    from papersift.pdf_engines import _open_pypdf, password_candidates

    if page_number < 1:
        raise ValueError(f"page numbers start at 1, not {page_number}")
    try:
        reader, password = _open_pypdf(data, password_candidates(passwords))
        count = len(reader.pages)
    except Exception:  # pypdf fails in many ways on a damaged file; each means: send a picture
        return None
    if page_number > count:
        raise ValueError(f"page {page_number} asked of a PDF of {count} pages")
    try:
        page = reader.pages[page_number - 1]
        unit = float(page.get("/UserUnit", 1) or 1)
        width, height = float(page.cropbox.width) * unit, float(page.cropbox.height) * unit
        if max(abs(width), abs(height)) > MAX_PDF_PAGE_POINTS:
            return None
        _drop_references_to_other_pages(page)
        writer = PdfWriter()
        writer.add_page(page)
        out = io.BytesIO()
        writer.write(out)
    except Exception:  # as above: a page pypdf cannot copy is sent as a picture
        return None
    cut = out.getvalue()
    if len(cut) > MAX_DOCUMENT_BYTES:
        return None
    notes = [f"page {page_number} of {count} cut as a one-page PDF ({len(cut):,} bytes)"]
    if reader.is_encrypted:
        notes.append("decrypted" + (" with a supplied password" if password else ""))
    return PageDocument(cut, "pdf", tuple(notes))


def _drop_references_to_other_pages(page: PageObject) -> None:
    """Links and pop-ups draw nothing: dropped. Other annotations keep their appearance but lose
    /P and /Parent, which point at other pages and at the form's field tree: cloning them would
    carry every page of the original into the cut."""
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject

    annotations = page.get("/Annots")
    if annotations is None:
        return
    kept = ArrayObject()
    for reference in annotations.get_object():
        annotation = reference.get_object()
        if annotation.get("/Subtype") in ("/Link", "/Popup"):
            continue
        kept.append(DictionaryObject({k: v for k, v in annotation.items() if k not in ("/P", "/Parent")}))
    page[NameObject("/Annots")] = kept


def page_picture(image: Image.Image, *, max_bytes: int = MAX_DOCUMENT_BYTES,
                 max_side: int = MAX_IMAGE_SIDE) -> PageDocument:
    """A rendered page as a picture within Textract's limits: PNG when it fits (lossless, and
    small for the grayscale text pages the renderer makes), else JPEG at falling quality, else
    scaled down until it fits. Scaled first when a side is over ``max_side`` pixels."""
    notes: list[str] = []
    picture = _flatten(image)
    if max(picture.size) > max_side:
        picture = _scaled(picture, max_side / max(picture.size))
        notes.append(f"scaled from {image.width}x{image.height} to {picture.width}x{picture.height} px "
                     f"(Textract reads at most {max_side:,} px a side)")
    png = _encode(picture, "PNG")
    if len(png) <= max_bytes:
        return PageDocument(png, "png", tuple(notes))
    notes.append(f"PNG of {len(png):,} bytes is over {max_bytes:,}: sent as JPEG")
    rgb_or_gray = picture if picture.mode in ("L", "RGB") else picture.convert("L" if picture.mode == "1" else "RGB")
    while True:
        for quality in (90, 80, 70, 60):
            jpeg = _encode(rgb_or_gray, "JPEG", quality=quality)
            if len(jpeg) <= max_bytes:
                size = f"{rgb_or_gray.width}x{rgb_or_gray.height} px"
                notes.append(f"JPEG quality {quality}, {size}, {len(jpeg):,} bytes")
                return PageDocument(jpeg, "jpeg", tuple(notes))
        if max(rgb_or_gray.size) <= 16:
            raise ValueError(f"no picture of the page fits in {max_bytes:,} bytes")
        # still too big at quality 60: shrink the area by what the bytes must shrink by, with margin
        factor = min(0.9, math.sqrt(max_bytes / len(jpeg)) * 0.95)
        rgb_or_gray = _scaled(rgb_or_gray, factor)
        notes.append(f"scaled to {rgb_or_gray.width}x{rgb_or_gray.height} px to fit {max_bytes:,} bytes")


def _flatten(image: Image.Image) -> Image.Image:
    """A mode both PNG and the service read as the page looks: transparency on white (a
    transparent background would otherwise read as black), palettes and CMYK as RGB, 16-bit and
    float gray scaled to 8-bit gray."""
    from PIL import Image

    if image.mode in ("1", "L", "RGB"):
        return image
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if image.mode.startswith("I") or image.mode == "F":
        # Pillow's own conversion clips at 255: a 16-bit scan would turn white
        wide = image.convert("F")
        high = float(wide.getextrema()[1])  # type: ignore[arg-type]
        if high > 255:
            wide = wide.point(lambda value: value * (255.0 / high))
        return wide.convert("L")
    return image.convert("RGB")


def _scaled(image: Image.Image, factor: float) -> Image.Image:
    from PIL import Image

    size = (max(1, math.floor(image.width * factor)), max(1, math.floor(image.height * factor)))
    source = image.convert("L") if image.mode == "1" else image  # scale gray, not dithered bits
    return source.resize(size, Image.Resampling.LANCZOS)


def _encode(image: Image.Image, fmt: str, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


class TextractReader:
    """Reads one page per call with the client it is given; None as the client (none configured,
    e.g. a local run) makes every read OcrUnavailableError, so the router falls back."""

    def __init__(self, client: TextractClient | None) -> None:
        self._client = client

    def read(self, document: PageDocument | bytes, *, tables: bool = False, layout: bool = False) -> OcrReading:
        """DetectDocumentText, or AnalyzeDocument with TABLES only when tables are asked for
        (it costs ten times as much per page) and LAYOUT only when ``layout`` (Settings.textract_layout:
        alone 2.7 times as much; the ledger names each call by ``ledger.textract_api``). Raises
        OcrThrottledError, OcrRejectedError or OcrUnavailableError as :func:`ocr_error` decides;
        other failures propagate."""
        if self._client is None:
            raise OcrUnavailableError("no Textract client is configured")
        data = document.data if isinstance(document, PageDocument) else document
        if len(data) > MAX_DOCUMENT_BYTES:
            # what the service would answer (DocumentTooLargeException), without sending 10 MB
            raise OcrRejectedError(f"the page is {len(data):,} bytes, over Textract's synchronous limit "
                                   f"of {MAX_DOCUMENT_BYTES:,}")
        started = time.perf_counter()
        try:
            api = ledger.textract_api(tables, layout)
            features: list[Literal["TABLES", "LAYOUT"]] = []
            if tables:
                features.append("TABLES")
            if layout:
                features.append("LAYOUT")
            if features:
                response: Mapping[str, Any] = self._client.analyze_document(
                    Document={"Bytes": data}, FeatureTypes=features
                )
            else:
                response = self._client.detect_document_text(Document={"Bytes": data})
        except (ClientError, BotoCoreError) as exc:
            mapped = ocr_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        reading = reading_from_response(response, api=api)
        notes = (*document.notes, *reading.notes) if isinstance(document, PageDocument) else reading.notes
        return replace(reading, seconds=time.perf_counter() - started, notes=notes)


def reading_from_response(response: Mapping[str, Any], *, api: str, page: int = 1,
                          seconds: float = 0.0) -> OcrReading:
    """One page of a Textract response as an OcrReading. ``page`` picks the page of a multi-page
    (asynchronous) response; a synchronous response is one page."""
    parsed = _PageBlocks(response.get("Blocks", ()), page)
    text, layout, boxes, roles = parsed.layout()
    confidences = [float(word.get("Confidence", 0.0)) / 100.0 for word in parsed.words]
    tables = parsed.tables()
    notes: list[str] = []
    if layout:
        notes.append("reading order from the response's LAYOUT blocks")
    merged = sum(1 for table in parsed.table_blocks if _ids(table, "MERGED_CELL"))
    if merged:
        notes.append(f"{merged} table(s) with merged cells: their text is repeated in every row and column they span")
    return OcrReading(
        engine=TEXTRACT,
        text=text,
        confidence=sum(confidences) / len(confidences) if confidences else None,
        words=len(parsed.words),
        seconds=seconds,
        api=api,
        tables=tuple(tables),
        notes=tuple(notes),
        boxes=boxes,
        roles=roles,
    )


def _box(blocks: Iterable[Mapping[str, Any]]) -> Box:
    """The box around the blocks' BoundingBoxes (fractions of the page: x0, y0, x1, y1)."""
    found = [b.get("Geometry", {}).get("BoundingBox") for b in blocks]
    boxes = [(float(g["Left"]), float(g["Top"]), float(g["Left"]) + float(g["Width"]),
              float(g["Top"]) + float(g["Height"])) for g in found if g]
    if not boxes:
        return (0.0, 0.0, 1.0, 1.0)
    return (round(min(b[0] for b in boxes), 4), round(min(b[1] for b in boxes), 4),
            round(max(b[2] for b in boxes), 4), round(max(b[3] for b in boxes), 4))


def _ids(block: Mapping[str, Any], kind: str = "CHILD") -> list[str]:
    return [i for rel in block.get("Relationships", ()) if rel.get("Type") == kind for i in rel.get("Ids", ())]


@dataclass
class _PageBlocks:
    """The blocks of one page, indexed by Id."""

    blocks: Iterable[Mapping[str, Any]]
    page: int
    by_id: dict[str, Mapping[str, Any]] = field(init=False)
    order: list[Mapping[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        # synchronous responses carry no Page: they are page 1
        self.order = [b for b in self.blocks if int(b.get("Page", 1)) == self.page]
        self.by_id = {str(b["Id"]): b for b in self.order if "Id" in b}

    def of_type(self, kind: str) -> list[Mapping[str, Any]]:
        return [b for b in self.order if b.get("BlockType") == kind]

    @property
    def words(self) -> list[Mapping[str, Any]]:
        return self.of_type("WORD")

    @property
    def table_blocks(self) -> list[Mapping[str, Any]]:
        return self.of_type("TABLE")

    def layout(self) -> tuple[str, bool, tuple[Box, ...], tuple[str, ...]]:
        """The page's lines in reading order, whether LAYOUT blocks gave it, and per block of lines
        its box (fractions of the page) and role (``LAYOUT_ROLES``).

        LINE blocks come in the service's reading order (columns read down, not top to bottom
        across). When the response has LAYOUT blocks (AnalyzeDocument with LAYOUT), they are its
        paragraphs, headers, lists and tables in reading order: each becomes a block of lines,
        blocks separated by an empty line; lines no layout block holds follow as a last block
        (role ``lines``). Without LAYOUT blocks the page is one block of lines with no box.
        """
        lines = self.of_type("LINE")
        layouts = self._top_layouts()
        if not layouts:
            return "\n".join(str(line.get("Text", "")) for line in lines), False, (), ()
        seen: set[str] = set()
        blocks: list[list[str]] = []
        boxes: list[Box] = []
        roles: list[str] = []
        for layout in layouts:
            held = self._layout_lines(layout, seen)
            if held:
                blocks.append([str(line.get("Text", "")) for line in held])
                boxes.append(_box([layout, *held]))
                roles.append(LAYOUT_ROLES.get(str(layout.get("BlockType")), LINES_ROLE))
        rest = [line for line in lines if line.get("Id") not in seen]
        if rest:
            blocks.append([str(line.get("Text", "")) for line in rest])
            boxes.append(_box(rest))
            roles.append(LINES_ROLE)
        return "\n\n".join("\n".join(block) for block in blocks), True, tuple(boxes), tuple(roles)

    def _top_layouts(self) -> list[Mapping[str, Any]]:
        """LAYOUT_* blocks not inside another one (a list's items are inside the list), in the
        order the PAGE block names them, which is the layout's reading order."""
        layouts = [b for b in self.order if self._is_layout(b)]
        if not layouts:
            return []
        nested = {i for b in layouts for i in _ids(b) if self._is_layout(self.by_id.get(i, {}))}
        pages = self.of_type("PAGE")
        named = [self.by_id[i] for p in pages for i in _ids(p) if i in self.by_id]
        ordered = [b for b in named if self._is_layout(b)] or layouts
        return [b for b in ordered if b.get("Id") not in nested]

    @staticmethod
    def _is_layout(block: Mapping[str, Any]) -> bool:
        return str(block.get("BlockType", "")).startswith("LAYOUT_")

    def _layout_lines(self, layout: Mapping[str, Any], seen: set[str]) -> list[Mapping[str, Any]]:
        out: list[Mapping[str, Any]] = []
        for child_id in _ids(layout):
            child = self.by_id.get(child_id)
            if child is None or child_id in seen:
                continue
            kind = str(child.get("BlockType", ""))
            if kind == "LINE":
                seen.add(child_id)
                out.append(child)
            elif kind.startswith("LAYOUT_"):
                out.extend(self._layout_lines(child, seen))
        return out

    def words_text(self, block: Mapping[str, Any]) -> str:
        return " ".join(
            str(self.by_id[i].get("Text", ""))
            for i in _ids(block)
            if i in self.by_id and self.by_id[i].get("BlockType") == "WORD"
        )

    def tables(self) -> list[Table]:
        return [self._table(block, index) for index, block in enumerate(self.table_blocks)]

    def _table(self, table: Mapping[str, Any], index: int) -> Table:
        """A TABLE block as rows of cell text. A merged cell's text (the words of the cells it
        joins, in row order) is repeated in every position it spans: Markdown has no spans, and
        a row read alone must still say what it belongs to. Leading rows of column headers are
        the header rows; a TABLE_TITLE is the title."""
        cells = [self.by_id[i] for i in _ids(table) if self.by_id.get(i, {}).get("BlockType") == "CELL"]
        if not cells:
            return Table(rows=[], index=index, header_rows=0, title=self._title(table))
        rows = max(int(c.get("RowIndex", 1)) + int(c.get("RowSpan", 1)) - 1 for c in cells)
        columns = max(int(c.get("ColumnIndex", 1)) + int(c.get("ColumnSpan", 1)) - 1 for c in cells)
        grid = [[""] * columns for _ in range(rows)]
        headers: set[int] = set()
        for cell in cells:
            self._fill(grid, cell, self.words_text(cell))
            if "COLUMN_HEADER" in cell.get("EntityTypes", ()):
                headers.add(int(cell.get("RowIndex", 1)) - 1)
        for merged_id in _ids(table, "MERGED_CELL"):
            merged = self.by_id.get(merged_id)
            if merged is None:
                continue
            parts = sorted(
                (self.by_id[i] for i in _ids(merged) if i in self.by_id),
                key=lambda c: (int(c.get("RowIndex", 0)), int(c.get("ColumnIndex", 0))),
            )
            text = " ".join(t for t in (self.words_text(p) for p in parts) if t)
            self._fill(grid, merged, text)
        header_rows = 0
        while header_rows in headers:
            header_rows += 1
        return Table(rows=grid, index=index, header_rows=header_rows, title=self._title(table))

    @staticmethod
    def _fill(grid: list[list[str]], cell: Mapping[str, Any], text: str) -> None:
        top, left = int(cell.get("RowIndex", 1)) - 1, int(cell.get("ColumnIndex", 1)) - 1
        for row in range(top, min(len(grid), top + int(cell.get("RowSpan", 1)))):
            for column in range(left, min(len(grid[row]), left + int(cell.get("ColumnSpan", 1)))):
                grid[row][column] = text

    def _title(self, table: Mapping[str, Any]) -> str:
        titles = [self.by_id[i] for i in _ids(table, "TABLE_TITLE") if i in self.by_id]
        return " ".join(t for t in (self.words_text(title) for title in titles) if t)

