"""report.html: one self-contained page a person reads to see why a document got its verdict.

A strip of the pages coloured by verdict, a row per page (runs of unremarkable pages folded
into one row), a card per suspect page with its thumbnail beside its extracted text, the cost
ledger, and for archives the member tree. Everything the page needs is inside it (styles
inline, thumbnails as data URIs, no script at all) so it opens from S3, a mail attachment or a
laptop folder alike. A document's text is data, never markup: Jinja2 escapes every value
(autoescape), and the page's Content-Security-Policy forbids scripts should anything slip by.

Size is bounded for large documents: thumbnails only for suspect pages, most severe first,
under a count and a byte budget; suspect text cut to a few thousand characters; the page
table and member tree capped, with the number left out said on the page.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template

from papersift.layout import MEMBER_LINK_ATTRIBUTE, REPORT_PAGE_FILE
from papersift.report import ExtractionReport, MemberReport, PageReport, PageStatus

if TYPE_CHECKING:
    from PIL.Image import Image

#: page statuses whose text cannot be used as is, most severe first (the order ranks thumbnails)
REVIEW_PAGE_STATUSES: tuple[str, ...] = (
    PageStatus.FAILED,
    PageStatus.CORRUPT_UNRECOVERABLE,
    PageStatus.TRUNCATED,
    PageStatus.NEEDS_OCR,
    PageStatus.LOW_CONFIDENCE,
)
#: page statuses worth a card beside their picture: those to review, then the pages whose
#: trusted text came from OCR or a later engine rather than the text layer
SUSPECT_PAGE_STATUSES: tuple[str, ...] = (*REVIEW_PAGE_STATUSES, PageStatus.OCR, PageStatus.RECOVERED)
#: an A4 or letter page is ~600 px wide at this resolution, drawn without pdfium's image smoothing
#: and then scaled to the thumbnail's width by Pillow: as sharp as a smoothed drawing at 36 dpi, and
#: 4-8x faster on a page holding a large picture (a scan, a cover: 70 ms a page smoothed)
THUMBNAIL_DPI = 72


@dataclass(frozen=True)
class PageLimits:
    """What keeps the page at a few hundred KB however large the document is."""

    max_thumbnails: int = 16
    thumbnail_bytes_budget: int = 200_000
    thumbnail_width: int = 280
    #: a thumbnail is at most this many widths tall: a receipt roll or a 1 x 2,000,000 px strip is
    #: shown shrunk to fit, never as a JPEG taller than libjpeg's 65,500 px
    thumbnail_max_aspect: int = 4
    thumbnail_jpeg_quality: int = 55
    max_suspect_cards: int = 40
    text_chars_per_card: int = 2_500
    preview_chars: int = 3_000
    max_page_rows: int = 600
    max_members: int = 1_000
    max_picture_rows: int = 200


@dataclass(frozen=True)
class Thumbnail:
    """A small picture of one page, as it will be embedded (a data URI)."""

    page: int
    data: bytes
    mime: str
    width: int
    height: int

    @property
    def data_uri(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def thumbnail_from_image(page: int, image: Image, limits: PageLimits = PageLimits()) -> Thumbnail:
    """Grayscale JPEG at ``limits.thumbnail_width``: a scan's page is ~8-15 KB like this."""
    small = image.convert("L")
    box = (limits.thumbnail_width, limits.thumbnail_width * limits.thumbnail_max_aspect)
    factor = min(box[0] / small.width, box[1] / small.height)
    if factor < 1.0:
        small = small.resize((max(1, round(small.width * factor)), max(1, round(small.height * factor))))
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=limits.thumbnail_jpeg_quality, optimize=True)
    return Thumbnail(page=page, data=out.getvalue(), mime="image/jpeg", width=small.width, height=small.height)


def suspect_pages(report: ExtractionReport) -> list[PageReport]:
    """Pages that need a look, most severe first; within a status, the least confident first."""
    rank = {status: index for index, status in enumerate(SUSPECT_PAGE_STATUSES)}
    suspects = [p for p in report.pages if p.status in rank]
    return sorted(suspects, key=lambda p: (rank[p.status], p.confidence, p.number))


def thumbnail_pages(report: ExtractionReport, limits: PageLimits = PageLimits()) -> list[int]:
    """The page numbers worth rendering a thumbnail for (the caller renders, the page embeds)."""
    return [p.number for p in suspect_pages(report)[: limits.max_thumbnails]]


def pdf_thumbnails(report: ExtractionReport, data: bytes, passwords: tuple[str, ...] = (),
                   limits: PageLimits = PageLimits()) -> list[Thumbnail]:
    """Thumbnails of a PDF's most severe suspect pages (rendering raises what rendering raises)."""
    from papersift.rendering import render_pages

    rendered = render_pages(data, thumbnail_pages(report, limits), dpi=THUMBNAIL_DPI, passwords=passwords,
                            smooth_images=False)
    return [thumbnail_from_image(page.number, page.image, limits) for page in rendered]


def picture_thumbnails(report: ExtractionReport, data: bytes, limits: PageLimits = PageLimits()) -> list[Thumbnail]:
    """Thumbnails of a picture document's most severe suspect frames."""
    from papersift.rendering import render_picture_frames

    # a thumbnail is ~300 px wide: decode no more than a few times that
    frames = render_picture_frames(data, thumbnail_pages(report, limits), max_pixels=16 * limits.thumbnail_width ** 2)
    return [thumbnail_from_image(frame.number, frame.image, limits) for frame in frames]


def member_report_href(doc_id: str) -> str:
    """Where a member's report.html sits relative to its archive's, in the results layout."""
    return f"../{doc_id}/{REPORT_PAGE_FILE}"


# -- the view model the template reads ---------------------------------------------------------


@dataclass(frozen=True)
class _Segment:
    status: str
    first: int
    last: int
    href: str

    @property
    def pages(self) -> int:
        return self.last - self.first + 1

    @property
    def label(self) -> str:
        span = f"page {self.first}" if self.first == self.last else f"pages {self.first}-{self.last}"
        return f"{span}: {self.status}"


@dataclass(frozen=True)
class _Row:
    first: int
    last: int
    status: str
    engine: str
    confidence: str
    chars: int
    signals: str
    reason: str
    card: bool


@dataclass(frozen=True)
class _Card:
    page: PageReport
    text: str
    omitted_chars: int
    thumbnail: Thumbnail | None


@dataclass(frozen=True)
class _MemberNode:
    name: str
    member: MemberReport | None
    href: str | None
    children: list[_MemberNode]


def _confidence_span(pages: Sequence[PageReport]) -> str:
    low, high = min(p.confidence for p in pages), max(p.confidence for p in pages)
    return f"{low:.2f}" if round(low, 2) == round(high, 2) else f"{low:.2f}-{high:.2f}"


def _page_rows(pages: Sequence[PageReport], cards: set[int]) -> list[_Row]:
    """One row per page, except runs of clean pages read by one engine with no signal: one row."""
    rows: list[_Row] = []

    def plain(page: PageReport) -> tuple[str, str] | None:
        if page.status == PageStatus.CLEAN and not page.signals and not page.errors:
            return (page.status, page.engine or "")
        return None

    index = 0
    while index < len(pages):
        page = pages[index]
        key = plain(page)
        end = index + 1
        if key is not None:
            while end < len(pages) and plain(pages[end]) == key and pages[end].number == pages[end - 1].number + 1:
                end += 1
        run = pages[index:end]
        rows.append(_Row(
            first=run[0].number,
            last=run[-1].number,
            status=page.status,
            engine=page.engine or "-",
            confidence=_confidence_span(run),
            chars=sum(p.char_count for p in run),
            signals=", ".join(page.signals),
            reason=page.reason if len(run) == 1 else f"{len(run)} pages with a trusted text layer",
            card=len(run) == 1 and page.number in cards,
        ))
        index = end
    return rows


def _strip(pages: Sequence[PageReport], cards: set[int]) -> list[_Segment]:
    segments: list[_Segment] = []
    for status, group in groupby(pages, key=lambda p: p.status):
        run = list(group)
        first = run[0].number
        href = f"#page-{first}" if first in cards else f"#row-{first}"
        segments.append(_Segment(status=status, first=first, last=run[-1].number, href=href))
    return segments


def _cut(text: str, limit: int) -> tuple[str, int]:
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def _member_tree(members: Iterable[MemberReport], href_of: Mapping[str, str]) -> list[_MemberNode]:
    """Members by their path inside the archive, as a tree (nested archives are folders)."""
    root: dict[str, Any] = {}
    for member in members:
        node = root
        parts = [p for p in member.path.split("/") if p]
        if not parts or member.path.startswith("/") or any(p in (".", "..") for p in parts):
            parts = [member.path or "?"]  # an unsafe path is shown as it was, not as folders
        for part in parts[:-1]:
            node = node.setdefault(part, {}).setdefault("", {})
        node.setdefault(parts[-1], {})["member"] = member

    def build(level: dict[str, Any]) -> list[_MemberNode]:
        nodes = []
        for name in sorted(level):
            entry = level[name]
            member: MemberReport | None = entry.get("member")
            href = None
            if member is not None and member.doc_id:
                href = href_of.get(member.doc_id, member_report_href(member.doc_id))
            nodes.append(_MemberNode(name=name, member=member, href=href, children=build(entry.get("", {}))))
        return nodes

    return build(root)


def dollars(amount: float) -> str:
    """US dollars as a person reads them: cents at least, and the fractions of a cent a
    one-page document costs (``$0.000509``) rather than ``$0.00``."""
    if amount == 0:
        return "$0.00"
    if amount < 0.0000005:  # a few SQS or DynamoDB requests: not nothing, and not a rounded $0.00
        return "< $0.000001"
    text = f"{amount:,.6f}".rstrip("0")
    whole, _, fraction = text.partition(".")
    return f"${whole}.{fraction.ljust(2, '0')}"


@dataclass(frozen=True)
class _Cost:
    """The ledger as the page shows it: dollars (total first), the all-Textract comparison, then
    what was used."""

    dollars: list[tuple[str, str]]
    all_textract: str | None
    usage: list[tuple[str, str]]


def _cost(cost: Mapping[str, Any]) -> _Cost | None:
    if not cost:
        return None
    usd = dict(cost.get("usd") or {})
    total = usd.pop("total", sum(v for v in usd.values() if isinstance(v, int | float)))
    amounts = [("total", dollars(total))] + [(name.replace("_", " "), dollars(value)) for name, value in usd.items()]
    comparison = cost.get("usd_all_textract")
    usage = {key: value for key, value in cost.items() if key not in ("usd", "usd_all_textract")}
    return _Cost(dollars=amounts, all_textract=None if comparison is None else dollars(comparison),
                 usage=_usage_rows(usage))


def _usage_rows(usage: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """What the document used, flattened to (label, value) rows, whatever its nesting."""
    rows: list[tuple[str, str]] = []
    for key, value in usage.items():
        label = f"{prefix}{key}".replace("_", " ")
        if isinstance(value, Mapping):
            rows.extend(_usage_rows(value, prefix=f"{prefix}{key} / "))
        elif isinstance(value, float):
            rows.append((label, f"{value:,.6f}".rstrip("0").rstrip(".") if value else "0"))
        else:
            rows.append((label, f"{value:,}" if isinstance(value, int) else str(value)))
    return rows


@lru_cache(maxsize=1)
def compiled_template() -> Template:
    """The compiled template, once per process: compiling it took ~70 ms, more than extracting a
    small document (a 2,000-member archive spent 6 of its 7 minutes here). A read-only cache."""
    environment = Environment(loader=PackageLoader("papersift", "templates"), autoescape=True,
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return environment.get_template("report.html.j2")


def render_report_page(
    report: ExtractionReport,
    page_texts: Mapping[int, str] | None = None,
    thumbnails: Iterable[Thumbnail] = (),
    *,
    member_hrefs: Mapping[str, str] | None = None,
    limits: PageLimits = PageLimits(),
) -> str:
    """The whole report.html for one document.

    ``page_texts`` maps page numbers to their extracted text (a preview of the start, and the
    text of each suspect page, are shown);
    ``thumbnails`` come from :func:`thumbnail_from_image` for :func:`thumbnail_pages`;
    ``member_hrefs`` overrides where a member's report is linked (doc_id -> href).
    """
    texts = page_texts or {}
    pictures: dict[int, Thumbnail] = {}
    budget = limits.thumbnail_bytes_budget
    for thumb in thumbnails:
        if len(pictures) < limits.max_thumbnails and len(thumb.data) <= budget:
            pictures[thumb.page] = thumb
            budget -= len(thumb.data)
    suspects = suspect_pages(report)
    shown = suspects[: limits.max_suspect_cards]
    cards = []
    for page in sorted(shown, key=lambda p: p.number):
        text, omitted = _cut(texts.get(page.number, ""), limits.text_chars_per_card)
        cards.append(_Card(page=page, text=text, omitted_chars=omitted, thumbnail=pictures.get(page.number)))
    card_numbers = {c.page.number for c in cards}
    pages = sorted(report.pages, key=lambda p: p.number)
    rows = _page_rows(pages, card_numbers)
    preview, preview_left_out = _cut("\n\n".join(texts[n] for n in sorted(texts) if texts[n].strip()),
                                     limits.preview_chars)
    members = report.members[: limits.max_members]
    embedded = [(page.number, picture) for page in pages for picture in page.pictures]
    not_listed = sum(sum(page.pictures_not_listed.values()) for page in pages)
    return compiled_template().render(
        report=report,
        counts=_status_counts(pages),
        strip=_strip(pages, card_numbers),
        rows=rows[: limits.max_page_rows],
        rows_left_out=len(rows) - min(len(rows), limits.max_page_rows),
        review_cards=[c for c in cards if c.page.status in REVIEW_PAGE_STATUSES],
        reread_cards=[c for c in cards if c.page.status not in REVIEW_PAGE_STATUSES],
        preview=preview,
        preview_left_out=preview_left_out,
        suspects_left_out=len(suspects) - len(shown),
        members=_member_tree(members, member_hrefs or {}),
        member_link_attribute=MEMBER_LINK_ATTRIBUTE,
        members_left_out=len(report.members) - len(members),
        cost=_cost(report.cost),
        engines=sorted(report.engines.items()),
        pictures=embedded[: limits.max_picture_rows],
        pictures_left_out=len(embedded) - min(len(embedded), limits.max_picture_rows) + not_listed,
        picture_counts=_picture_counts(pages),
    )


def _picture_counts(pages: Sequence[PageReport]) -> list[tuple[str, int]]:
    """Embedded pictures by status, listed or only counted (read first)."""
    counts: dict[str, int] = {}
    for page in pages:
        for picture in page.pictures:
            counts[picture.status] = counts.get(picture.status, 0) + 1
        for status, count in page.pictures_not_listed.items():
            counts[status] = counts.get(status, 0) + count
    return sorted(counts.items(), key=lambda item: (item[0] != "read", item[0]))


def _status_counts(pages: Sequence[PageReport]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for page in pages:
        counts[page.status] = counts.get(page.status, 0) + 1
    order = [str(s) for s in PageStatus]
    return sorted(counts.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order))
