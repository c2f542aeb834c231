"""Which OCR engine reads a page, in which order: the OCR mode's one decision.

``local-first``: Tesseract, in the account's own Lambda; Textract only for a page whose
Tesseract reading is not trusted (or when Tesseract cannot run). ``textract-first``: Textract;
Tesseract when Textract fails on the page, is throttled past the workflow's retries or cannot
be used (no client, no credentials). ``local-only``: Tesseract, and no page ever leaves the
account's Lambdas. ``textract-only``: Textract alone. ``off``: no OCR; pages that need it say so.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from papersift.errors import SettingsError
from papersift.ocr.reading import TESSERACT, TEXTRACT
from papersift.settings import OCR_LOCAL_FIRST as LOCAL_FIRST
from papersift.settings import OCR_LOCAL_ONLY as LOCAL_ONLY
from papersift.settings import OCR_OFF as OFF
from papersift.settings import OCR_TEXTRACT_FIRST as TEXTRACT_FIRST
from papersift.settings import OCR_TEXTRACT_ONLY as TEXTRACT_ONLY


@dataclass(frozen=True)
class EngineOrder:
    """The engines a page may be read with, first to last."""

    engines: tuple[str, ...]
    #: go on to the next engine when a reading is not trusted (not only when an engine fails)
    past_untrusted: bool

    def without(self, engine: str) -> EngineOrder:
        """The same order with one engine taken out (Textract after throttling past the retries)."""
        return EngineOrder(tuple(e for e in self.engines if e != engine), self.past_untrusted)


_ORDERS: dict[str, EngineOrder] = {
    OFF: EngineOrder((), past_untrusted=False),
    LOCAL_FIRST: EngineOrder((TESSERACT, TEXTRACT), past_untrusted=True),
    TEXTRACT_FIRST: EngineOrder((TEXTRACT, TESSERACT), past_untrusted=False),
    LOCAL_ONLY: EngineOrder((TESSERACT,), past_untrusted=False),
    TEXTRACT_ONLY: EngineOrder((TEXTRACT,), past_untrusted=False),
}


def engine_order(mode: str) -> EngineOrder:
    try:
        return _ORDERS[mode]
    except KeyError:
        raise SettingsError(f"unknown OCR mode {mode!r}; known: {', '.join(_ORDERS)}") from None


def uses_textract(mode: str) -> bool:
    """The mode may send pages to Textract (the stack grants the OCR function Textract then)."""
    return TEXTRACT in engine_order(mode).engines


# -- which pages OCR reads --------------------------------------------------------------------

#: OCR reads the whole page
WHOLE_PAGE = "page"
#: OCR reads the pictures of a page whose text layer is sound (a scanned annex, a screenshot)
PICTURES = "pictures"
#: OCR reads the regions of a sound page where it draws glyphs without Unicode (a checkbox, a
#: word in a font with no map): text read there with confidence follows the page's text; capped
#: with the rendering checks (Settings.max_rendering_checks)
GLYPHS = "glyphs"
#: OCR reads the whole page at low resolution to judge an uncertain text layer: the text that agrees
#: with what is drawn is kept (ocr.pages), at most Settings.max_rendering_checks pages a document
RENDERING_CHECK = "check"
#: what OCR reads as regions of the page (``OcrNeed.regions``), each like a picture of its own
REGION_SCOPES = frozenset({PICTURES, GLYPHS})
#: what OCR reads of a page only within the document's Settings.max_rendering_checks
CAPPED_SCOPES = frozenset({RENDERING_CHECK, GLYPHS})
#: what leaves a text layer uncertain, not broken: its characters may be right, and only the rendered
#: page can say (fonts no map in the file ties to Unicode, characters implausible for their script,
#: engines that read other characters from the same fonts, one font's words that are not words)
UNCERTAIN_SIGNALS = frozenset({"unverified_font", "implausible_script", "engines_disagree", "minority_font_garbage"})

#: page statuses whose text layer cannot be used: OCR reads the whole page
_UNUSABLE_LAYER = frozenset({"needs_ocr", "corrupt_unrecoverable", "failed"})
#: a page whose text objects are mostly invisible (render mode 3) over pictures covering most of it
#: carries an earlier OCR's layer over a scan ...
INVISIBLE_LAYER_SHARE = 0.5
SCANNED_AREA = 0.5
#: ... which is read again when its verdict scores below this (a sound layer is kept as it is)
INVISIBLE_LAYER_MIN_SCORE = 0.95


@dataclass(frozen=True)
class OcrNeed:
    """What OCR should read of one page, and why (for the page's report)."""

    scope: str
    reason: str
    #: for PICTURES: the pictures' boxes as fractions of the page (x0, y0, x1, y1 from the top left)
    regions: tuple[tuple[float, float, float, float], ...] = ()


def ocr_need(status: str, score: float, *, regions: tuple[tuple[float, float, float, float], ...] = (),
             glyph_regions: tuple[tuple[float, float, float, float], ...] = (),
             image_area_ratio: float = 0.0, invisible_share: float = 0.0,
             signals: Collection[str] = (), has_text: bool = False, embedded: int = 0) -> OcrNeed | None:
    """The one decision of which pages OCR reads: pages whose text layer is missing or broken;
    pages whose text layer is uncertain (``signals``), to be checked against the rendered page;
    pages whose text is an earlier OCR's invisible layer of doubtful quality; and the pictures
    of a sound page that has no text over them (``regions`` of a PDF page; ``embedded``: pictures
    of an office file's, e-book's or HTML page's unit, which have no text over them by nature), and
    the regions where a sound page draws glyphs its text layer has no Unicode for (``glyph_regions``,
    read with its pictures where it has any). A sound native page without either never."""
    if status == "needs_ocr" and has_text and not UNCERTAIN_SIGNALS.isdisjoint(signals):
        return OcrNeed(RENDERING_CHECK, "the text layer is uncertain: the rendered page judges it")
    if status in _UNUSABLE_LAYER:
        return OcrNeed(WHOLE_PAGE, "the text layer cannot be used")
    if status not in ("clean", "recovered"):
        return None
    if invisible_share >= INVISIBLE_LAYER_SHARE and image_area_ratio >= SCANNED_AREA:
        if score < INVISIBLE_LAYER_MIN_SCORE:
            return OcrNeed(WHOLE_PAGE, f"the text is an invisible OCR layer over a scan, of doubtful quality "
                                       f"(score {score:.2f})")
        return None
    if regions:
        return OcrNeed(PICTURES, f"{len(regions)} picture(s) with no text layer over them may hold text",
                       regions + glyph_regions)
    if glyph_regions:
        return OcrNeed(GLYPHS, f"{len(glyph_regions)} region(s) draw glyphs with no Unicode map: OCR reads "
                               "what they draw", glyph_regions)
    if embedded:
        return OcrNeed(PICTURES, f"{embedded} embedded picture(s) may hold text")
    return None
