"""report.html as rendered from a report: escaping, the strip, folding, caps and the member tree."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from PIL import Image

from papersift.catalog import member_links_of, with_member_links
from papersift.report import ExtractionReport, MemberReport, PageReport
from papersift.report_page import (
    PageLimits,
    render_report_page,
    suspect_pages,
    thumbnail_from_image,
    thumbnail_pages,
)

HOSTILE = "<script>document.title='owned'</script><img src=x onerror=alert(1)>\"'&"


def page(number: int, status: str = "clean", engine: str = "pdfium", confidence: float = 0.98,
         reason: str = "Text layer looks sound (en).", signals: list[str] | None = None) -> PageReport:
    return PageReport(number=number, status=status, engine=engine, char_count=100, confidence=confidence,
                      reason=reason, signals=signals or [])


def report(pages: list[PageReport], **changes: object) -> ExtractionReport:
    values: dict[str, object] = dict(
        doc_id="d" + "0" * 40, source={"bucket": "b", "key": "incoming/tender.pdf", "name": "tender.pdf"},
        detected_type="pdf", mime_type="application/pdf", detected_by="magic", status="needs_review",
        reason="1 page(s) needs_ocr of 3", page_count=len(pages), pages=pages,
        created_at="2026-12-01T09:00:00+00:00", papersift_version="0.1.0")
    values.update(changes)
    return ExtractionReport(**values)  # type: ignore[arg-type]


class _Elements(HTMLParser):
    """Every start tag and its attributes, as a browser's tokenizer would see them."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]


def test_document_text_name_and_reasons_are_escaped_never_markup() -> None:
    hostile = report([page(1, "needs_ocr", reason=HOSTILE, signals=[HOSTILE])], reason=HOSTILE,
                     source={"bucket": "b", "key": "incoming/x.pdf", "name": HOSTILE + ".pdf"},
                     members=[MemberReport(path=f"a/{HOSTILE}.txt", status="clean", reason=HOSTILE, doc_id="d1")])
    html = render_report_page(hostile, {1: HOSTILE})
    elements = _Elements(html)
    assert not elements.find("script")
    assert [a for t, a in elements.tags if t == "img"] == []  # the hostile <img> is text, not an element
    assert not any(name.startswith("on") for _, attrs in elements.tags for name in attrs)
    assert html.count("&lt;script&gt;") >= 6  # title, name, reason, page reason, signals, text, member


def test_the_page_has_no_external_asset_and_forbids_scripts() -> None:
    html = render_report_page(report([page(1)]), {1: "see https://example.org/x.png"})
    elements = _Elements(html)
    assert not elements.find("link") and not elements.find("script")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    csp = elements.find("meta", **{"http-equiv": "Content-Security-Policy"})[0]["content"] or ""
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert elements.find("meta", name="viewport"), "readable on a phone needs the viewport meta"


def test_page_strip_has_one_segment_per_run_of_a_status_linking_to_the_page() -> None:
    pages = [page(1), page(2), page(3, "needs_ocr", confidence=0.0), page(4), page(5, "corrupt_unrecoverable")]
    elements = _Elements(render_report_page(report(pages)))
    segments = elements.find("a", **{"data-status": "clean"})
    assert [(s["data-first"], s["data-last"], s["style"]) for s in segments] == [("1", "2", "flex:2"),
                                                                                ("4", "4", "flex:1")]
    suspect = elements.find("a", **{"data-status": "needs_ocr"})[0]
    assert suspect["href"] == "#page-3", "a suspect page's segment opens its card"
    assert segments[0]["href"] == "#row-1"


def test_runs_of_plain_clean_pages_fold_into_one_row_and_suspects_keep_their_own() -> None:
    pages = [page(n) for n in range(1, 41)] + [page(41, "needs_ocr", confidence=0.1, reason="no text layer")]
    pages += [page(42, signals=["spacing_damage"])] + [page(n) for n in range(43, 46)]
    rows = _Elements(render_report_page(report(pages))).find("tr")
    row_ids = [r.get("id") for r in rows if r.get("id")]
    assert row_ids == ["row-1", "row-41", "row-42", "row-43"]


def test_suspect_pages_are_ranked_by_severity_then_confidence() -> None:
    pages = [page(1, "recovered", confidence=0.5), page(2, "needs_ocr", confidence=0.3), page(3),
             page(4, "failed", confidence=0.0), page(5, "needs_ocr", confidence=0.1), page(6, "skipped_limit")]
    ranked = suspect_pages(report(pages))
    assert [p.number for p in ranked] == [4, 5, 2, 1]
    assert thumbnail_pages(report(pages), PageLimits(max_thumbnails=2)) == [4, 5]


def test_suspect_card_shows_reason_text_and_thumbnail_beside_it() -> None:
    image = Image.new("L", (1240, 1754), 255)
    thumb = thumbnail_from_image(2, image)
    assert (thumb.width, thumb.mime) == (280, "image/jpeg") and thumb.height == 396
    html = render_report_page(report([page(1), page(2, "needs_ocr", reason="no text layer: a scan")]),
                              {1: "native", 2: "faint words"}, [thumb])
    card = html[html.index('id="page-2"'):]
    card = card[: card.index("</article>")]
    assert "no text layer: a scan" in card and "faint words" in card
    assert f'src="{thumb.data_uri}"' in card


def test_a_large_scanned_document_stays_a_few_hundred_kb() -> None:
    """5,000 suspect pages with long texts and a thumbnail offered for each: the caps hold the size."""
    count = 5000
    pages = [page(n, "needs_ocr", confidence=0.1 + (n % 7) / 10, reason=f"no text layer on page {n}: image only",
                  signals=["image_only"]) for n in range(1, count + 1)]
    texts = {n: "lorem ipsum dolor " * 400 for n in range(1, count + 1)}
    noisy = Image.effect_noise((1240, 1754), 60)
    thumbs = [thumbnail_from_image(n, noisy) for n in range(1, 40)]
    html = render_report_page(report(pages, page_count=count), texts, thumbs)
    elements = _Elements(html)
    assert len(html.encode("utf-8")) < 450_000
    assert 0 < len(elements.find("img")) <= PageLimits().max_thumbnails
    assert len(elements.find("article")) == PageLimits().max_suspect_cards
    assert "more row(s) are in report.json" in html and "more characters in text.txt" in html


def test_member_tree_nests_by_path_links_member_reports_and_keeps_statuses() -> None:
    members = [
        MemberReport(path="docs/a.pdf", status="clean", doc_id="dA", detected_type="pdf", page_count=2),
        MemberReport(path="docs/inner.zip", status="nested_archive_expanded"),
        MemberReport(path="docs/inner.zip/b.txt", status="needs_review", reason="1 page(s) needs_ocr", doc_id="dB"),
        MemberReport(path="../evil.txt", status="unsafe_path", reason="path escapes the archive"),
    ]
    archive = report([], detected_type="zip", members=members, page_count=3)
    html = render_report_page(archive, member_hrefs={"dB": "members/docs/inner.zip/b.txt/report.html"})
    elements = _Elements(html)
    assert [a["href"] for a in elements.find("a") if a.get("href", "").endswith("report.html")] == [
        "../dA/report.html", "members/docs/inner.zip/b.txt/report.html"]
    tree = html[html.index('id="member-tree"'):]
    assert tree.index("docs/") < tree.index("a.pdf") < tree.index("inner.zip") < tree.index("b.txt")
    assert tree.count('<ul class="tree">') == 3  # root, docs/, inner.zip/
    assert "unsafe_path" in tree and "path escapes the archive" in tree and "nested_archive_expanded" in tree
    assert tree.count("archive member") == 4  # every member says what held it, as attachments do


def test_member_links_are_rewritten_to_the_given_urls_and_nothing_else_changes() -> None:
    """The API presigns each member link of an archive's page: exactly the marked links change,
    a URL's query is escaped in the attribute, a member's name that imitates a link stays text."""
    members = [MemberReport(path="docs/a.pdf", status="clean", doc_id="dA"),
               MemberReport(path=f'<a data-member-doc="dA" href="x">{HOSTILE}.txt', status="clean",
                            reason='<a data-member-doc="dA" href="../dA/report.html">', doc_id="dB"),
               MemberReport(path="c.txt", status="clean", doc_id="dC")]
    html = render_report_page(report([page(1)], detected_type="zip", members=members),
                              {1: '<a data-member-doc="dA" href="../dA/report.html">'})
    assert sorted(member_links_of(html)) == ["dA", "dB", "dC"], "each member once, the look-alikes are text"
    signed = {"dA": "https://bucket.s3.amazonaws.com/results/dA/report.html?X-Amz-Signature=ab&X-Amz-Expires=900",
              "dB": "https://bucket.s3.amazonaws.com/results/dB/report.html?X-Amz-Signature=cd"}
    rewritten = with_member_links(html, signed)
    hrefs = {a["data-member-doc"]: a["href"] for a in _Elements(rewritten).find("a") if "data-member-doc" in a}
    assert hrefs == {**signed, "dC": "../dC/report.html"}, "an unlisted member keeps its relative link"
    assert "&amp;X-Amz-Expires=900" in rewritten
    changed = [line for line in rewritten.splitlines() if line not in html.splitlines()]
    assert len(changed) == 1 and "member-tree" in changed[0], "only the tree's links changed"
    assert rewritten.replace(signed["dA"].replace("&", "&amp;"), "").count("X-Amz") == 1  # dB's, once
    assert with_member_links(html, {}) == html


def test_member_tree_says_which_members_are_a_pdfs_or_an_emails_attachments() -> None:
    members = [MemberReport(path="attachments/a.pdf", status="clean", kind="pdf_attachment", doc_id="dA"),
               MemberReport(path="attachments/b.txt", status="clean", kind="email_attachment", doc_id="dB")]
    html = render_report_page(report([page(1)], members=members))
    tree = html[html.index('id="member-tree"'):]
    assert tree.index("attachments/") < tree.index("a.pdf") < tree.index("b.txt")
    assert "pdf attachment" in tree and "email attachment" in tree


def test_cost_is_shown_in_dollars_total_first_beside_all_textract() -> None:
    cost = {"pages_by_engine": {"pdfium": 3, "tesseract": 1}, "textract_pages": {},
            "usd": {"textract": 0.0, "lambda": 0.000509, "step_functions": 0.0002, "total": 0.000709},
            "usd_all_textract": 0.0015}
    html = render_report_page(report([page(1)], cost=cost))
    amounts = html[html.index('id="cost-dollars"'):html.index("</table>", html.index('id="cost-dollars"'))]
    rows = re.findall(r"<th>([^<]+)</th><td class=\"num\">([^<]+)</td>", amounts)
    assert rows == [("total", "$0.000709"), ("textract", "$0.00"), ("lambda", "$0.000509"),
                    ("step functions", "$0.0002"), ("every page by Textract would have cost", "$0.0015")]
    usage = html[html.index('id="cost-ledger"'):]
    for label, value in (("pages by engine / tesseract", "1"), ("pages by engine / pdfium", "3")):
        assert re.search(rf"<th>{label}</th><td class=\"num\">{re.escape(value)}</td>", usage), label
    assert "usd" not in usage[:usage.index("</table>")], "amounts are in the dollars table only"


def test_dollars_keep_cents_and_the_fractions_a_small_document_costs() -> None:
    from papersift.report_page import dollars

    assert [dollars(v) for v in (0, 0.5, 12.0, 1234.5678, 0.000509)] == [
        "$0.00", "$0.50", "$12.00", "$1,234.5678", "$0.000509"]
    assert dollars(0.0000004) == "< $0.000001", "one SQS request is not shown as nothing"


def test_a_trusted_documents_ocr_pages_are_not_called_pages_to_review() -> None:
    trusted = report([page(1), page(2, "ocr", engine="tesseract", reason="Read by OCR (eng), confidence 0.93.")],
                     status="clean", reason="2 pages")
    html = render_report_page(trusted, {2: "scanned words"})
    assert "Pages to review" not in html
    assert 'id="reread-pages"' in html and 'id="page-2"' in html
    mixed = render_report_page(report([page(1, "needs_ocr", reason="No text layer."), page(2, "recovered")]))
    assert mixed.index('id="suspect-pages"') < mixed.index('id="page-1"') < mixed.index('id="reread-pages"') \
        < mixed.index('id="page-2"')


def test_embedded_pictures_are_listed_with_their_status_and_the_ones_only_counted_are_said() -> None:
    from papersift.report import PictureRecord

    unit = page(1, "ocr", engine="ooxml:docx+tesseract", signals=["hybrid"])
    unit.pictures = [PictureRecord(name=f"word/media/{HOSTILE}.png", bytes=7922, width=1100, height=234,
                                   status="read", engine="tesseract", confidence=0.96, chars=72),
                     PictureRecord(name="word/media/image2.png", bytes=69, width=8, height=8, status="skipped_small")]
    unit.pictures_not_listed = {"skipped_small": 4999}
    html = render_report_page(report([unit], detected_type="docx"), {1: "text"})
    section = html[html.index('<section id="pictures">'):]
    section = section[: section.index("</section>")]
    assert "read 1" in section and "skipped_small 5000" in section, "listed and counted pictures, by status"
    assert section.count("<tr class=") == 2 and "4,999 more picture(s) are counted in report.json" in section
    assert not _Elements(section).find("script"), "a part name is text, never markup"
    assert '<section id="pictures">' not in render_report_page(report([page(1)]), {1: "text"})
