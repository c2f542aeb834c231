"""PDF pages: the text layer through a recovery ladder of engines, each page with its verdict.

pdfium reads almost every native page correctly and fast, so a clean page costs one
pdfium call and one verdict. Only a suspect page (empty where it draws something,
glyph garbage, a cipher, damaged spacing) climbs the ladder pypdf -> pdfminer ->
pdftotext, and the text with the best verdict wins: good text is never replaced by
worse text, and partly readable text is kept rather than thrown away.
"""

from __future__ import annotations

import bisect
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from papersift.content import FormField, PageContent, Table, form_fields_text, new_fields
from papersift.ocr.routing import INVISIBLE_LAYER_SHARE, ocr_need
from papersift.pdf_engines import (
    LayoutProbe,
    PdfHandle,
    count_unmapped,
    normalise_text,
    strip_controls,
)
from papersift.pdf_fonts import (
    CODE_NUMBERED,
    PREDEFINED_CMAP,
    FontEvidence,
    FontUse,
    MathGlyphs,
    is_math_font,
    is_monospace_font,
    is_symbol_font,
)
from papersift.quality import (
    THIN_WORD_EVIDENCE,
    THRESHOLDS,
    PageLayout,
    TextVerdict,
    arabic_word_share,
    assess_text,
    character_agreement,
    glyph_code_tokens,
    implausible_words,
    minority_font_garbage,
    nonspace_count,
)
from papersift.report import EngineAttempt, ErrorRecord, PageFont, PageReport, PageStatus
from papersift.settings import OCR_OFF, Settings
from papersift.structure import MAX_OUTLINE_ENTRIES, OutlineEntry, hyphen_breaks

__all__ = ["extract_pages", "page_count", "page_count_and_outline"]


def page_count(data: bytes, settings: Settings) -> int:
    """Number of pages; raises EncryptedInputError, CorruptInputError or EmptyInputError."""
    with PdfHandle(data, settings.passwords) as handle:
        return handle.page_count


def page_count_and_outline(data: bytes, settings: Settings) -> tuple[int, list[OutlineEntry], int]:
    """Number of pages, the outline, and the pages of a page tree pdfium found sound (0: not
    sound, each batch checks it again), from the one opening the plan makes anyway (pdfium reads
    an outline in well under a millisecond; pypdf takes tens)."""
    with PdfHandle(data, settings.passwords) as handle:
        return handle.page_count, handle.outline(MAX_OUTLINE_ENTRIES), handle.page_count if handle.tree_sound else 0


def extract_pages(data: bytes, settings: Settings, first: int, last: int, structure: bool = True
                  ) -> list[PageContent]:
    """Pages first..last (1-based, inclusive), opening the document once for the batch.
    ``structure``: see ``PdfPages``."""
    if first < 1 or last < first:
        raise ValueError(f"bad page range {first}..{last}")
    with PdfPages(data, settings, structure=structure) as document:
        return [document.page(number) for number in range(first, min(last, document.count) + 1)]


class PdfPages:
    """One PDF opened for a batch of pages: each page with its verdict, and, for a page OCR should
    read, the page as a PDF of its own (what OCR draws, and what Textract is sent)."""

    def __init__(self, data: bytes, settings: Settings, without_pdfium: str = "", sound_tree_pages: int = 0,
                 structure: bool = True) -> None:
        """``structure``: False leaves out what pdfium is asked only for document.md's structure
        (the lines' heights, boxes and weight, the tagged headings): the side of bench/structure.py
        that measures extraction without it; the pipeline always asks."""
        self.data, self.settings, self.structure = data, settings, structure
        self.handle = PdfHandle(data, settings.passwords, without_pdfium, sound_tree_pages)
        #: each font's entry in the page reports, built once for the batch (the pages share it)
        self._page_fonts: dict[FontUse, PageFont] = {}

    @property
    def count(self) -> int:
        return self.handle.page_count

    def page(self, number: int) -> PageContent:
        if number > self.settings.max_pages:
            return _skipped(number, self.settings.max_pages)
        return _extract_page(self.handle, number, self.settings, self._page_fonts, self.structure)

    def ocr_input(self, number: int) -> bytes | None:
        """The page as a one-page PDF: the file itself when it is one unencrypted page (sent as it
        is), else cut by pdfium; None when pdfium cannot cut it (OCR then draws it from the file)."""
        if self.count == 1 and not self.handle.encrypted:
            return self.data
        return self.handle.cut_pages([number]).get(number)

    def close(self) -> None:
        self.handle.close()

    def __enter__(self) -> PdfPages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- one page ---------------------------------------------------------------------------


@dataclass
class _Candidate:
    engine: str
    text: str
    verdict: TextVerdict
    rung: int
    #: count_unmapped(text), when taken: 0 means no control codes to strip from the text
    unmapped: int | None = None
    #: the words pdfium joined over a hyphen at the end of a line (its U+FFFE mark, dropped from
    #: the text): (before, after) pairs for document.md's hyphenation repair (papersift.structure)
    hyphen_breaks: tuple[tuple[str, str], ...] = ()


@dataclass
class _PageWork:
    layout: PageLayout = field(default_factory=PageLayout)
    text_objects: int | None = None
    attempts: list[EngineAttempt] = field(default_factory=list)
    errors: list[ErrorRecord] = field(default_factory=list)
    best: _Candidate | None = None
    #: non-space characters in pdfium's text: what a later engine's text must account for
    page_glyphs: int = 0
    page_unmapped: int = 0  # ... of which raw glyph codes (pdfium found no Unicode for them)
    #: pdfium's characters fell outside the national sets: a second reading must account for them
    page_implausible: bool = False
    fonts: FontEvidence | None = None
    #: why candidates were turned down, for the page's reason
    notes: list[str] = field(default_factory=list)
    #: tokens of the page's text that read as a font's glyph codes, drawn where a font no map in
    #: the file ties to Unicode draws: the rendering check must read them (PageContent.unverified_text)
    unverified_text: list[str] = field(default_factory=list)


def _better(new: _Candidate, old: _Candidate | None) -> bool:
    """Trust beats suspicion, then a strictly higher score wins; ties keep the earlier engine.
    An empty text never displaces words: partly readable text is worth more than nothing."""
    if old is None:
        return True
    new_empty, old_empty = not new.text.strip(), not old.text.strip()
    if new_empty != old_empty:
        return old_empty
    if new.verdict.suspect != old.verdict.suspect:
        return not new.verdict.suspect
    return new.verdict.score > old.verdict.score


#: a page whose images cover this share of it, with no text, is a scan: only OCR can read it
SCAN_IMAGE_AREA = 0.5
#: the signals of a picture page whose little text is sound
_PICTURE_SIGNALS = frozenset({"image_only", "empty", *THIN_WORD_EVIDENCE})


def _wants_next_rung(work: _PageWork) -> bool:
    best = work.best
    if best is None:
        return True
    if "spacing_damage" in best.verdict.signals:
        return True
    if not best.verdict.suspect:
        return False
    # no text on a page that is a picture (no text objects, or a full-page image: a scan,
    # perhaps with an empty invisible layer): no other engine can find a text layer
    picture_only = work.text_objects == 0 or work.layout.image_area_ratio >= SCAN_IMAGE_AREA
    if set(best.verdict.signals) <= _PICTURE_SIGNALS:
        # a few sound words on a picture (a caption, a page number): the rest is in the picture,
        # which every text engine reads the same way
        return False
    return bool(best.text.strip()) or not picture_only


def _extract_page(handle: PdfHandle, number: int, settings: Settings,
                  page_fonts: dict[FontUse, PageFont] | None = None, structure: bool = True) -> PageContent:
    started = time.perf_counter()
    work = _PageWork()
    ladder = list(handle.engines)
    rung = 0
    while ladder:
        engine = ladder.pop(0)
        if rung > 0 and not _wants_next_rung(work):
            break
        _try_engine(handle, engine, number, rung, work)
        if engine == "pdfium":
            ladder = _consult_fonts(handle, number, work, ladder)
        rung += 1
    _fix_reading_order(handle, number, work)
    status, reason = _status(handle, work, settings)
    best = work.best
    text = _final_text(best) if best is not None and status != PageStatus.FAILED else ""
    tables: list[Table] = []
    if settings.extract_tables and status in (PageStatus.CLEAN, PageStatus.RECOVERED) and text:
        try:
            tables = find_tables(handle.plumber.pages[number - 1])
        except Exception as exc:
            work.errors.append(ErrorRecord.from_exception(exc, engine="pdfplumber-tables", page=number))
    fields = _form_fields(handle, number, text, work)
    if fields:
        text = f"{text}\n\n{form_fields_text(fields)}" if text else form_fields_text(fields)
    verdict = best.verdict if best is not None else None
    report = PageReport(
        number=number,
        status=status,
        engine=best.engine if best is not None and status != PageStatus.FAILED else None,
        char_count=len(text),
        confidence=verdict.confidence if verdict is not None else 0.0,
        reason=reason,
        seconds=round(time.perf_counter() - started, 6),
        signals=list(verdict.signals) if verdict is not None else ["engine_failed"],
        language=verdict.language if verdict is not None else None,
        attempts=work.attempts,
        errors=work.errors,
        tables=len(tables),
        form_fields=len(fields),
        fonts=work.fonts.summary() if work.fonts is not None else [],
        font_summary=_font_summary(handle, number, {} if page_fonts is None else page_fonts),
    )
    page = PageContent(number=number, text=text, report=report, tables=tables, form_fields=fields,
                       unverified_text=list(work.unverified_text))
    if best is not None and text and best.hyphen_breaks:
        page.hyphen_breaks = [list(pair) for pair in best.hyphen_breaks]
    if structure and best is not None and text and best.engine == "pdfium":
        # a document with an outline takes its headings from it (a tagged one's too: the tool that
        # tagged its headings made the outline of them): its tags, its lines' heights and their
        # weight go unasked; the lines' boxes are asked always (the blocks' bbox)
        outlined = handle.has_outline
        if not outlined and handle.tagged:
            page.tag_headings = handle.tag_headings(number)
        lines = page.body_lines()
        bold = None if outlined else [False] * len(lines)
        heights, boxes = handle.line_geometry(number, lines, heights=not outlined, bold=bold)
        if any(heights):
            page.line_heights = heights
            page.bold_lines = [index for index, marked in enumerate(bold or []) if marked]
        if any(boxes):
            page.line_boxes = boxes
    glyph_regions: tuple[tuple[float, float, float, float], ...] = ()
    if work.page_unmapped and status in (PageStatus.CLEAN, PageStatus.RECOVERED) and best is not None \
            and best.engine == "pdfium":
        glyph_regions = handle.unmapped_regions(number)
        report.signals.append(UNMAPPED_GLYPHS)
        report.reason = f"{report.reason.rstrip('.')}; {work.page_unmapped} glyph(s) drawn with no Unicode map " \
                        f"are not in its text ({_unmapped_outcome(glyph_regions, settings)})."
    if settings.ocr_mode != OCR_OFF:
        _mark_ocr_need(handle, page, verdict.score if verdict is not None else 0.0, glyph_regions)
    return page


def _unmapped_outcome(regions: tuple[tuple[float, float, float, float], ...], settings: Settings) -> str:
    if not regions:
        return "each stands alone between spaces: a symbol, no word"
    return "OCR is off" if settings.ocr_mode == OCR_OFF else f"OCR reads the {len(regions)} region(s) they are drawn in"


def _font_summary(handle: PdfHandle, number: int, page_fonts: dict[FontUse, PageFont]) -> list[PageFont]:
    """The page report's fonts: an entry is built once a batch for each font and sampled count."""
    summary = []
    for use in handle.font_uses(number):
        if use not in page_fonts:
            page_fonts[use] = _page_font(use)
        summary.append(page_fonts[use])
    return summary


def _page_font(use: FontUse) -> PageFont:
    """The page report's entry for a font the page uses (pdf_fonts.FontUse), built without
    validation: every value is of the engines' making, and a page draws with several fonts."""
    program, dictionary = use.program, use.dictionary
    facts: dict[str, Any] = {} if dictionary is None else {
        "subset": dictionary.subset or program.subset, "subtype": dictionary.subtype, "encoding": dictionary.encoding,
        "cmap": dictionary.cmap, "to_unicode": dictionary.to_unicode, "vertical": dictionary.vertical,
        "type3": dictionary.subtype == "Type3" or program.type3}
    return PageFont.model_construct(**{
        "name": program.name, "subset": program.subset, "embedded": program.embedded, "type3": program.type3,
        "symbolic": program.symbolic, "math": program.math, "sampled_chars": use.sampled_chars,
        "unmapped_chars": use.unmapped_chars, **facts})


def _form_fields(handle: PdfHandle, number: int, text: str, work: _PageWork) -> list[FormField]:
    """The page's filled form fields and annotation texts the text does not hold already: they
    come after it (see pdf_forms). A damaged annotation costs its values, never the page."""
    try:
        return new_fields(handle.form_fields(number), text)
    except Exception as exc:
        work.errors.append(ErrorRecord.from_exception(exc, engine="pdfium-forms", page=number))
        return []


def _mark_ocr_need(handle: PdfHandle, page: PageContent, score: float,
                   glyph_regions: tuple[tuple[float, float, float, float], ...] = ()) -> None:
    """Say on the page what OCR should read of it (routing.ocr_need decides); the pictures of a
    sound page are probed only here, when OCR is on."""
    status = page.report.status
    pictures = handle.pictures(page.number) if status in (PageStatus.CLEAN, PageStatus.RECOVERED) else None
    need = ocr_need(status, score, regions=pictures.regions if pictures else (), glyph_regions=glyph_regions,
                    image_area_ratio=pictures.image_area_ratio if pictures else 0.0,
                    invisible_share=pictures.invisible_share if pictures else 0.0,
                    signals=page.report.signals, has_text=bool(page.text.strip()))
    if pictures is not None and pictures.invisible_share >= INVISIBLE_LAYER_SHARE:
        page.report.signals.append("invisible_text_layer")
    if need is not None:
        page.ocr_scope, page.ocr_reason = need.scope, need.reason
        page.ocr_regions = [list(box) for box in need.regions]


def _final_text(best: _Candidate) -> str:
    """Candidates are already normalised: only dropping control codes can leave work to redo."""
    if best.unmapped == 0:  # no control codes: nothing to strip
        return best.text
    stripped = strip_controls(best.text)
    return best.text if stripped is best.text else normalise_text(stripped)


def _try_engine(handle: PdfHandle, engine: str, number: int, rung: int, work: _PageWork) -> None:
    candidate = _attempt(handle, engine, number, rung, work)
    if candidate is not None:
        _offer(candidate, work)


def _attempt(handle: PdfHandle, engine: str, number: int, rung: int, work: _PageWork) -> _Candidate | None:
    """One engine's text of the page with its verdict, recorded as an attempt."""
    started = time.perf_counter()
    try:
        raw, probe = handle.text(engine, number)
    except Exception as exc:
        record = ErrorRecord.from_exception(exc, engine=engine, page=number)
        work.errors.append(record)
        work.attempts.append(
            EngineAttempt(engine=engine, chars=0, score=0.0, seconds=_since(started), error=record.reason)
        )
        return None
    if probe is not None:
        _apply_probe(work, probe)
    text = normalise_text(raw)
    unmapped = count_unmapped(text)
    layout = work.layout if not unmapped else _with_unmapped(work.layout, unmapped)
    glyphs = nonspace_count(text)
    verdict = _guard_unmapped(assess_text(text, layout, glyphs), text, unmapped)
    if engine == "pdfium" and probe is not None and probe.beyond_page_box:
        verdict = replace(verdict, signals=(*verdict.signals, "text_beyond_page_box"),
                          reason=f"{verdict.reason.rstrip('.')}; {probe.beyond_page_box} characters lie beyond the "
                                 "page's crop box, on lines it cuts through, and are read with it.")
    if probe is not None and probe.math_glyphs is not None:
        verdict = _with_math_glyphs(verdict, probe.math_glyphs)
    if engine == "pdfium":
        work.page_glyphs, work.page_unmapped = glyphs, unmapped
        work.page_implausible = "implausible_script" in verdict.signals
        if not text.strip() and work.text_objects:
            # the page draws text that pdfium could not read (a font it cannot load): not an
            # empty page, and another engine may read it
            verdict = replace(verdict, suspect=True, signals=(*verdict.signals, "unread_text"),
                              reason=f"pdfium read no text from the page's {work.text_objects} text objects")
    work.attempts.append(
        EngineAttempt(
            engine=engine,
            chars=len(text),
            score=verdict.score,
            seconds=_since(started),
            signals=list(verdict.signals),
        )
    )
    breaks = hyphen_breaks(raw) if engine == "pdfium" and ("\x02" in raw or "\ufffe" in raw) else ()
    return _Candidate(engine=engine, text=text, verdict=verdict, rung=rung, unmapped=unmapped, hyphen_breaks=breaks)


#: a later engine's text replaces pdfium's only when it holds at least this share of the
#: non-space characters pdfium found: pdfminer drops the glyphs it cannot decode, and what is
#: left (a running footer, in bench-pdfs' htmldoc file) reads as clean text
MIN_GLYPH_COVERAGE = 0.75
#: ... and this share where pdfium's characters were implausible for their script (a wrong CMap):
#: those are glyphs the page draws, and an engine that drops them (pdftotext keeping only the
#: commas of a line of Extension B Han) has not read them, however clean the rest reads
SCRIPT_COVERAGE = 0.95


def _offer(candidate: _Candidate, work: _PageWork) -> None:
    glyphs = nonspace_count(candidate.text) if candidate.engine != "pdfium" else work.page_glyphs
    coverage = SCRIPT_COVERAGE if work.page_implausible else MIN_GLYPH_COVERAGE
    if glyphs < coverage * work.page_glyphs:
        if not candidate.verdict.suspect:
            work.notes.append(f"{candidate.engine} read only {glyphs} of the {work.page_glyphs} characters on the page")
            work.attempts[-1].signals.append("partial_coverage")
        return
    if _better(candidate, work.best):
        work.best = candidate


# -- font evidence ------------------------------------------------------------------------

#: doubtful fonts count when they draw at least this share of the page's glyphs ...
DOUBTFUL_FONT_SHARE = 0.3
#: ... and fonts no text engine can decode end the ladder when they draw this share
UNDECODABLE_FONT_SHARE = 0.5
#: a page with at most this many characters is judged by its fonts too: a few glyphs say too
#: little for any dictionary (five punctuation marks from a font without a Unicode map)
SHORT_PAGE_GLYPHS = 40
#: scripts the verdict names by script alone, no dictionary checking their words
_SCRIPT_ONLY_LANGUAGES = frozenset({"ja", "zh", "ko", "ru", "el", "he", "hi", "th"})
#: languages the verdict names for Han text: where a byte-swapped map's Latin lands (U+4D00 for 'M')
_HAN_LANGUAGES = frozenset({"zh", "ja", "ko"})
#: the engines that decode CMaps themselves, asked first where pdfium's script is implausible
_CMAP_READERS = ("pdfminer", "pdftotext")
#: ... poppler first where the page's fonts carry their own ToUnicode maps for this share of its
#: glyphs (and none goes through a predefined CMap): pdfminer's edge is the CJK collections' CMaps,
#: which a ToUnicode map overrides in every engine, and one pdftotext process costs a fraction of
#: pdfminer interpreting the page in Python (pj__issue20232: 14 ms against 70-150 ms)
OWN_MAP_SHARE = 0.5
#: the signal of a sound page that draws a few glyphs pdfium found no Unicode for (not a math
#: font's): its text leaves them out, and OCR reads the regions they are drawn in (routing.GLYPHS)
UNMAPPED_GLYPHS = "unmapped_glyphs"
#: the signal of text from fonts no map ties to Unicode, which the words could not vouch for: the
#: rendered page judges it (routing.ocr_need sends it to be checked)
UNVERIFIED_FONT = "unverified_font"
#: characters whose fonts are looked up on a page the words cannot vouch for (a sample: the cost
#: stays the same on a long page of a table)
FONT_SAMPLES = 48
#: two engines read the same characters when this share of them agrees (as multisets)
CHARACTER_AGREEMENT = 0.9


def _consult_fonts(handle: PdfHandle, number: int, work: _PageWork, ladder: list[str]) -> list[str]:
    """After pdfium: where its text is suspect, or sound but unchecked by any dictionary (CJK,
    Cyrillic, Greek, very short pages), ask the page's fonts how far their glyphs map to
    Unicode, and pick the rest of the ladder from the answer."""
    best = work.best
    if best is None or best.engine != "pdfium" or not (best.text.strip() or "unread_text" in best.verdict.signals):
        return ladder
    suspect = best.verdict.suspect
    if suspect and set(best.verdict.signals) <= _PICTURE_SIGNALS:
        return ladder  # a few sound words on a picture: the fonts have nothing to add
    if "implausible_script" in best.verdict.signals or best.verdict.language in _HAN_LANGUAGES:
        swapped = _offer_byte_swapped(work, best)
        if swapped is not None and work.best is swapped:
            return ladder if swapped.verdict.suspect else []  # read the right way round
    if "implausible_script" in best.verdict.signals:
        # a wrong CMap or ToUnicode map: the second opinions are the engines that decode CMaps
        # their own way (pdfminer with the CJK collections' CMaps, poppler), before pypdf, whose
        # reading of such fonts is mojibake; the first sound one ends the ladder
        ladder = [*(e for e in _CMAP_READERS if e in ladder), *(e for e in ladder if e not in _CMAP_READERS)]
    script_only = best.verdict.language in _SCRIPT_ONLY_LANGUAGES
    short = work.page_glyphs <= SHORT_PAGE_GLYPHS
    # few dictionary words (codes, names, a table of numbers): the words vouch for little
    unvouched = short or not THIN_WORD_EVIDENCE.isdisjoint(best.verdict.signals)
    if not (suspect or script_only or unvouched):
        if best.verdict.unknown_words and _minority_font(handle, number, work):
            return []  # every engine reads the font through the same map
        return _vouch_for_codes(handle, number, work, ladder)
    # first what costs nothing: the glyphs pdfium wrote as raw codes (suspect pages), or that it
    # found no Unicode for (a short page: a handful of characters to ask about)
    unmapped_share = work.page_unmapped / max(work.page_glyphs, 1)
    # a page of a few symbols and no letter or digit says nothing a dictionary could check
    few_symbols = short and not suspect and not any(ch.isalnum() for ch in best.text)
    if few_symbols:
        # pdfium alone: the characters it found no Unicode for, and those drawn by TrueType
        # programs without a cmap (whose codes it reads as if they were ASCII)
        work.fonts = handle.font_evidence(number, dictionaries=False)
        if work.fonts is not None:
            unmapped_share = max(work.fonts.unmapped_share, work.fonts.undecodable_share)
    if unmapped_share >= UNDECODABLE_FONT_SHARE and (suspect or few_symbols):
        # no engine maps these glyphs to characters: pdfium's text of them is a guess, and the
        # other engines' texts are worse guesses or drop them; only OCR can read the page
        work.best = _distrusted(best, "unmapped_font", f"{unmapped_share:.0%} of the page's {work.page_glyphs} "
                                "glyphs come from fonts with no Unicode map")
        return []
    if not (suspect or script_only):
        return _vouch_by_fonts(handle, number, work, ladder)
    fonts = work.fonts = handle.font_evidence(number, dictionaries=True)
    if "implausible_script" in best.verdict.signals and fonts is not None and PREDEFINED_CMAP not in fonts.kinds \
            and fonts.to_unicode_share >= OWN_MAP_SHARE:
        # a wrong ToUnicode map (or codes it leaves out): pdftotext first, and pdfminer still asked
        # when poppler does not read the page soundly
        ladder = [*(e for e in ("pdftotext", "pdfminer") if e in ladder),
                  *(e for e in ladder if e not in _CMAP_READERS)]
    if fonts is not None and fonts.vertical_share >= UNDECODABLE_FONT_SHARE and "pdfminer" in ladder:
        return _read_in_columns(handle, number, work, ladder)
    if fonts is None or fonts.doubtful_share < DOUBTFUL_FONT_SHARE:
        return ladder
    if fonts.undecodable_share >= UNDECODABLE_FONT_SHARE:
        work.best = _distrusted(best, "unmapped_font", f"the fonts map glyphs to no Unicode: {fonts.describe()}")
        return []
    # pdfminer carries the CJK collections' CMaps, which pdfium may lack
    decoder = "pdfminer" if PREDEFINED_CMAP in fonts.kinds and "pdfminer" in ladder else ladder[0] if ladder else ""
    ordered = [decoder, *(e for e in ladder if e != decoder)] if decoder else ladder
    if suspect or not decoder:
        return ordered
    # sound but unchecked text from doubtful fonts stands only if the engine that can decode
    # them reads the same characters
    other = _attempt(handle, decoder, number, 1, work)
    if other is None or character_agreement(best.text, other.text) >= CHARACTER_AGREEMENT:
        return []
    work.best = _distrusted(best, "engines_disagree", f"{decoder} reads other characters from fonts with "
                            f"doubtful Unicode maps ({fonts.describe()})")
    _offer(other, work)
    return ordered[1:]


#: a text whose characters are this share of U+XX00 with XX printable ASCII came through a ToUnicode
#: map written in the wrong byte order ('䴀甀氀' for 'Mul'): no script has text of that shape
BYTE_SWAPPED_SHARE = 0.9


def _offer_byte_swapped(work: _PageWork, best: _Candidate) -> _Candidate | None:
    """Offer pdfium's text with each character's two bytes swapped back, when nearly every
    character has the shape a byte-swapped UTF-16 map gives ASCII (U+4D00 for 'M', U+2000 for a
    space): the same glyphs, read as the map meant them, judged like any other reading (a
    recovery). Real Han text is never of that shape: 1 character in 256 at most is U+XX00."""
    text = best.text
    glyphs = [code for code in map(ord, text) if code > 32]
    swapped_shape = sum(1 for code in glyphs if code & 0xFF == 0 and 0x20 <= code >> 8 < 0x7F)
    if len(glyphs) < 4 or swapped_shape < BYTE_SWAPPED_SHARE * len(glyphs):
        return None
    fixed = "".join(chr(ord(ch) >> 8) if ord(ch) & 0xFF == 0 and 0x20 <= ord(ch) >> 8 < 0x7F else ch for ch in text)
    fixed = normalise_text(fixed)
    verdict = assess_text(fixed, work.layout)
    verdict = replace(verdict, signals=(*verdict.signals, "byte_swapped_map"),
                      reason=f"{verdict.reason.rstrip('.')}; the page's ToUnicode map is in the wrong byte order, "
                             "and its characters are read swapped back.")
    work.attempts.append(EngineAttempt(engine="pdfium", chars=len(fixed), score=verdict.score, seconds=0.0,
                                       signals=list(verdict.signals)))
    candidate = _Candidate(engine="pdfium", text=fixed, verdict=verdict, rung=1, unmapped=count_unmapped(fixed))
    if _better(candidate, work.best):
        work.best = candidate
    return candidate


def _vouch_by_fonts(handle: PdfHandle, number: int, work: _PageWork, ladder: list[str]) -> list[str]:
    """Sound text whose words vouch for little (a short page, few dictionary words) stands on its
    fonts: text drawn mostly with fonts whose codes nothing in the file maps to Unicode (no
    ToUnicode, the codes going through the program's own encoding) is a guess every engine makes
    alike ('"7+%-' for 'Phone'), and is not trusted until the rendered page confirms it. pdfium's
    findings come first (a sample of the characters: they cost ~2 ms); only a page drawn mostly
    with embedded TrueType programs, the fonts whose codes may go through the program's own cmap,
    has its font dictionaries read (opening pypdf for the batch)."""
    best = work.best
    assert best is not None
    fonts = work.fonts or handle.font_evidence(number, dictionaries=False, sample=FONT_SAMPLES)
    # a long page of few dictionary words is read on pdfium's findings alone: opening pypdf can
    # cost a fifth of a second (a page tree in object streams), and wrong codes over a long page
    # read as the glyph soup the words do catch
    if fonts is not None and fonts.truetype_share >= UNDECODABLE_FONT_SHARE and work.page_glyphs <= SHORT_PAGE_GLYPHS:
        fonts = handle.font_evidence(number, dictionaries=True, sample=FONT_SAMPLES)
    work.fonts = fonts
    if fonts is None or fonts.unverified_share < UNDECODABLE_FONT_SHARE:
        return ladder
    work.best = _distrusted(best, UNVERIFIED_FONT, f"no map in the file ties the page's characters to Unicode "
                            f"({fonts.describe()}) and its few words cannot vouch for them")
    return []


#: the signal of a sound page one font of which draws words that are not words (a wrong ToUnicode
#: map's letters): the rendered page judges it (routing.UNCERTAIN_SIGNALS)
MINORITY_FONT_GARBAGE = "minority_font_garbage"
#: the font's words the rendering check must read (PageContent.unverified_text)
MINORITY_FONT_TOKENS = 5
#: a font drawing this share of the page's sampled characters (FONT_SAMPLES) is its body: a body
#: font's wrong letters pull the page's own rates down, which the page verdict judges
BODY_FONT_SHARE = 0.6


def _minority_font(handle: PdfHandle, number: int, work: _PageWork) -> bool:
    """A sound page whose sample holds distinct implausible words (quality.implausible_words of
    the verdict's unknown_words), ``minority_gate_words`` of them drawn by one font, has its words
    judged font by font (math, symbol and code fonts left out): one font whose words are
    not words while the rest of the page reads as words is a font whose map gives the wrong
    letters, which no page-wide rate sees (~5-20% of the words). Its words are not trusted until
    the rendered page reads them."""
    best = work.best
    assert best is not None
    # first what costs a text search each: the fonts that draw the implausible words; only when
    # enough of them are one font's, and it is not the page's body font (48 characters sampled),
    # are the page's text objects read (a few ms on a long page)
    implausible = implausible_words(best.verdict.unknown_words)
    if len(implausible) < THRESHOLDS.minority_gate_words:
        return False
    drawn = Counter(font for font in handle.token_fonts(number, implausible).values()
                    if not (is_math_font(font) or is_symbol_font(font) or is_monospace_font(font)))
    if not drawn:
        return False
    font, count = drawn.most_common(1)[0]
    if count < THRESHOLDS.minority_gate_words or handle.font_shares(number, FONT_SAMPLES).get(font, 0.0) \
            >= BODY_FONT_SHARE:
        return False
    # code fonts left out as well: registers and identifiers (eax, vgdb, iropt) are no words, and
    # their letters no language's
    texts = [(font, text) for font, text, monospaced in handle.font_texts(number)
             if not (monospaced or is_math_font(font) or is_symbol_font(font))]
    found = minority_font_garbage(texts)
    if found is None:
        return False
    work.unverified_text = list(found.misses[:MINORITY_FONT_TOKENS])
    shown = ", ".join(f"'{token}'" for token in found.misses[:3])
    work.best = _distrusted(best, MINORITY_FONT_GARBAGE, f"the words drawn with {found.font} are not words "
                            f"({found.checked - found.hits} of {found.checked} unknown, letters no language uses: "
                            f"{shown}) while the rest of the page reads as words: its Unicode map gives wrong letters")
    return True


#: the tokens of a page looked at a page at most (a page of code can hold thousands)
MAX_CODE_TOKENS = 20


def _vouch_for_codes(handle: PdfHandle, number: int, work: _PageWork, ladder: list[str]) -> list[str]:
    """Sound text whose words vouch for it may still hold a few words drawn by a font that maps
    its glyphs to nothing: a subsetter numbers the glyphs from 0x21, and every engine reads such a
    word as punctuation and figures ('"7+%-' for 'Phone', beside a page of good prose). Only such
    tokens (``glyph_code_tokens``) make the page's fonts be asked, all of them; a token drawn by a
    font whose codes are its program's own numbering (pdf_fonts.CODE_NUMBERED) is not trusted until
    the rendered page reads it (ocr.pages: the rendering check must find each)."""
    best = work.best
    assert best is not None
    tokens = glyph_code_tokens(best.text)[:MAX_CODE_TOKENS]
    if not tokens:
        return ladder
    fonts = handle.font_evidence(number, dictionaries=True)
    numbered = {name for name, kind in fonts.doubts if kind in CODE_NUMBERED} if fonts is not None else set()
    if not numbered:
        return ladder
    drawn = handle.token_fonts(number, tokens)
    doubted = [token for token in tokens if drawn.get(token) in numbered]
    if not doubted:
        return ladder
    work.fonts = fonts
    work.unverified_text = doubted
    shown = ", ".join(f"'{token}'" for token in doubted[:3])
    kinds = dict(fonts.doubts) if fonts is not None else {}
    by = ", ".join(sorted({f"{drawn[token]} ({kinds[drawn[token]]})" for token in doubted}))
    work.best = _distrusted(best, UNVERIFIED_FONT, f"{shown} may be glyph codes, not characters: drawn with "
                            f"{by}, whose codes nothing in the file maps to Unicode")
    return []


def _read_in_columns(handle: PdfHandle, number: int, work: _PageWork, ladder: list[str]) -> list[str]:
    """Vertical writing reads by columns from right to left; pdfium and pypdf keep the content
    stream's order, which may run left to right, and pdfminer and pdftotext lay the columns out,
    each right on some files and wrong on others. So the page's own geometry judges: of the
    readings that hold the same characters as pdfium's, the one whose order follows the columns
    (pdfium's character boxes, right to left, top to bottom) wins (a reading-order fix: the page
    stays clean). pdftotext is asked only when neither pdfium nor pdfminer is in order already.
    When pdfium read nothing, or its text is suspect, pdfminer's reading is offered as any rung's."""
    best = work.best
    assert best is not None
    if not best.text.strip() or best.verdict.suspect:
        other = _attempt(handle, "pdfminer", number, 1, work)
        rest = [e for e in ladder if e != "pdfminer"]
        if other is None or other.verdict.suspect:
            return rest
        if best.text.strip() and character_agreement(best.text, other.text) >= CHARACTER_AGREEMENT:
            verdict = replace(other.verdict, signals=(*other.verdict.signals, "column_order"))
            work.best = replace(other, verdict=verdict, rung=best.rung)
            return []
        _offer(other, work)
        return rest
    ranks = handle.column_ranks(number)
    readings = [(_column_order(best.text, ranks), best)]
    for engine in ("pdfminer", "pdftotext"):
        if engine not in ladder or max(order for order, _ in readings) >= IN_COLUMN_ORDER:
            continue
        other = _attempt(handle, engine, number, 1, work)
        if other is not None and not other.verdict.suspect and (
                character_agreement(best.text, other.text) >= CHARACTER_AGREEMENT):
            readings.append((_column_order(other.text, ranks), other))
    _, chosen = max(readings, key=lambda reading: reading[0])  # ties keep the earlier engine
    if chosen is not best:
        verdict = replace(chosen.verdict, signals=(*chosen.verdict.signals, "column_order"))
        work.best = replace(chosen, verdict=verdict, rung=best.rung)
    return []


#: a reading whose consecutive characters follow the page's columns this often is in order
IN_COLUMN_ORDER = 0.98


def _column_order(text: str, ranks: dict[str, list[int]]) -> float:
    """Share of a text's consecutive characters that move forward in vertical reading order
    (``ranks``: each character's places in it). A repeated character takes its next place after
    the previous character's, as a reader's eye would; characters the page does not hold are
    skipped."""
    left = {char: list(places) for char, places in ranks.items()}
    previous, forward, pairs = -1, 0, 0
    for char in "".join(text.split()):
        places = left.get(char)
        if not places:
            continue
        index = bisect.bisect_right(places, previous)
        place = places.pop(index if index < len(places) else 0)
        if previous >= 0:
            pairs += 1
            forward += place > previous
        previous = place
    return forward / pairs if pairs else 0.0


def _distrusted(candidate: _Candidate, signal: str, reason: str) -> _Candidate:
    verdict = candidate.verdict
    signals = verdict.signals if signal in verdict.signals else (*verdict.signals, signal)
    # what the verdict found stays in the reason, unless it found nothing wrong
    found = "" if not verdict.suspect and verdict.signals == () else f" {verdict.reason}"
    distrust = replace(verdict, suspect=True, signals=signals, confidence=min(verdict.confidence, 0.5),
                       reason=f"{reason}.{found}")
    return replace(candidate, verdict=distrust)


# -- reading order ------------------------------------------------------------------------
#
# Content-stream order is not reading order in two common cases that no verdict can see,
# because every word is right: right-to-left script that the PDF stores in visual order
# (pdfium then returns each Arabic word reversed), and tables stored column by column.
# Both are checked only on trusted pdfium text of the right shape, so clean Latin prose
# never pays for them.

_NUMBER = re.compile(r"[-+(]?\d[\d.,]*%?\)?x?")


def _fix_reading_order(handle: PdfHandle, number: int, work: _PageWork) -> None:
    best = work.best
    if best is None or best.engine != "pdfium" or best.verdict.suspect or not best.text.strip():
        return
    # the verdict already knows the page's language: prose in a dictionary language (the
    # common case) costs nothing here
    if best.verdict.language == "ar":
        _prefer_logical_rtl(handle, number, work, best)
    elif best.verdict.language is None and _is_numeric_grid(best.text):
        _prefer_visual_rows(handle, number, work, best)


#: share of Arabic dictionary words above which pdfium's Arabic is taken as in logical order
RTL_WORDS_FINE = 0.8


def _prefer_logical_rtl(handle: PdfHandle, number: int, work: _PageWork, best: _Candidate) -> None:
    """Take pypdf's text when more of its Arabic words are words: pdfium's come out reversed.
    Arabic that already reads as words (most of it) is left alone without asking pypdf."""
    pdfium_share, _ = arabic_word_share(best.text)
    if pdfium_share >= RTL_WORDS_FINE:
        return
    text = _reorder_attempt(handle, number, work, "pypdf", lambda: handle.text("pypdf", number)[0])
    if text is None:
        return
    verdict = assess_text(text, work.layout)
    share, checked = arabic_word_share(text)
    if checked and share > pdfium_share and not verdict.suspect:
        signals = (*verdict.signals, "rtl_visual_order")
        work.best = _Candidate("pypdf", text, replace(verdict, signals=signals), best.rung)


def _reorder_attempt(handle: PdfHandle, number: int, work: _PageWork, engine: str,
                     read: Callable[[], str]) -> str | None:
    started = time.perf_counter()
    try:
        text = normalise_text(read())
    except Exception as exc:
        record = ErrorRecord.from_exception(exc, engine=engine, page=number)
        work.errors.append(record)
        work.attempts.append(EngineAttempt(engine=engine, chars=0, score=0.0, seconds=_since(started),
                                           error=record.reason))
        return None
    work.attempts.append(EngineAttempt(engine=engine, chars=len(text), score=0.0, seconds=_since(started),
                                       signals=["reading_order_check"]))
    return text


def _is_numeric_grid(text: str) -> bool:
    tokens = text.split()
    numbers = sum(bool(_NUMBER.fullmatch(t)) for t in tokens)
    return len(tokens) >= 12 and numbers / len(tokens) > 0.7


def _prefer_visual_rows(handle: PdfHandle, number: int, work: _PageWork, best: _Candidate) -> None:
    """A grid of numbers reads by rows: take the text regrouped by rows from pdfium's
    character boxes when it holds exactly the same tokens as pdfium's text (only their
    order differs)."""
    text = _reorder_attempt(handle, number, work, "pdfium-rows", lambda: handle.row_text(number))
    if text is None or Counter(text.split()) != Counter(best.text.split()) or text.split() == best.text.split():
        return
    verdict = assess_text(text, work.layout)
    work.best = _Candidate("pdfium-rows", text, replace(verdict, signals=(*verdict.signals, "row_order")),
                           best.rung)


#: share of visible characters that are unmapped glyph codes above which text is not trusted
UNMAPPED_SUSPECT = 0.1
UNMAPPED_CORRUPT = 0.3


def _guard_unmapped(verdict: TextVerdict, text: str, unmapped: int) -> TextVerdict:
    """pdfium writes glyphs it cannot map as raw control codes, which look like text to a
    generic detector; this engine-specific fact makes such a text suspect whatever it says."""
    if not unmapped:
        return verdict
    visible = len("".join(text.split())) or 1
    share = min(unmapped / visible, 1.0)
    if share <= UNMAPPED_SUSPECT or (verdict.suspect and verdict.score <= 1 - share):
        return verdict
    signals = verdict.signals if "unmapped_glyphs" in verdict.signals else (*verdict.signals, "unmapped_glyphs")
    return replace(
        verdict,
        score=min(verdict.score, max(0.0, 1 - 2 * share)),
        suspect=True,
        corrupt=verdict.corrupt or share > UNMAPPED_CORRUPT,
        signals=signals,
        reason=f"{share:.0%} of characters are glyph codes with no Unicode mapping",
    )


def _with_math_glyphs(verdict: TextVerdict, math: MathGlyphs) -> TextVerdict:
    """The verdict on a text whose raw codes of TeX math fonts were read as symbols: it says so
    (signal ``math_glyphs``), so a reader sees why formulas' delimiters are no glyph garbage."""
    return replace(verdict, signals=(*verdict.signals, "math_glyphs"),
                   reason=f"{verdict.reason.rstrip('.')}; {math.describe()}.")


def _apply_probe(work: _PageWork, probe: LayoutProbe) -> None:
    work.layout = probe.layout
    work.text_objects = probe.text_objects


def _with_unmapped(layout: PageLayout, unmapped: int) -> PageLayout:
    return PageLayout(
        image_count=layout.image_count,
        image_area_ratio=layout.image_area_ratio,
        has_vector_glyphs=layout.has_vector_glyphs,
        unmapped_glyphs=unmapped,
    )


def _status(handle: PdfHandle, work: _PageWork, settings: Settings) -> tuple[PageStatus, str]:
    best = work.best
    if best is None:
        engines = ", ".join(a.engine for a in work.attempts)
        return PageStatus.FAILED, f"every engine failed on this page ({engines})"
    verdict = best.verdict
    why = verdict.reason.rstrip(".") or "no trustworthy text layer"
    if not verdict.suspect:
        if best.rung == 0 and not handle.open_note:
            return PageStatus.CLEAN, verdict.reason
        how = f"{handle.open_note}; " if handle.open_note else ""
        return PageStatus.RECOVERED, f"{how}{best.engine} recovered the text: {verdict.reason}"
    if work.notes or handle.open_note:
        why = "; ".join([why, *work.notes, *filter(None, [handle.open_note])])
    draws = work.layout.image_count > 0 or work.layout.has_vector_glyphs
    if not best.text.strip() or draws or "unmapped_font" in verdict.signals or UNVERIFIED_FONT in verdict.signals \
            or MINORITY_FONT_GARBAGE in verdict.signals:
        return PageStatus.NEEDS_OCR, f"{why}; OCR needed (ocr_mode={settings.ocr_mode})"
    if verdict.corrupt:
        tried = ", ".join(a.engine for a in work.attempts)
        return PageStatus.CORRUPT_UNRECOVERABLE, f"{why}; no engine did better ({tried})"
    return PageStatus.NEEDS_OCR, f"{why}; the text layer is doubtful, OCR may do better"


def _skipped(number: int, max_pages: int) -> PageContent:
    report = PageReport.without_text(number, PageStatus.SKIPPED_LIMIT, f"beyond max_pages={max_pages}",
                                     signals=["max_pages"])
    return PageContent(number=number, text="", report=report)


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 6)


# -- tables -----------------------------------------------------------------------------

#: how far above a table (in points) a short line counts as its title
TITLE_GAP = 24.0


def find_tables(page: Any) -> list[Table]:
    """Tables on one pdfplumber page, with text boxes dropped and split rows repaired."""
    try:
        found = page.find_tables()
        tables: list[Table] = []
        for found_table in found:
            rows = clean_table_rows(found_table.extract())
            if rows is None:
                continue
            rows, header_rows = collapse_split_header(rows)
            rows = merge_continuation_rows(rows, header_rows)
            title = _title_above(page, found_table.bbox)
            tables.append(Table(rows=rows, index=len(tables), header_rows=header_rows, title=title,
                                bbox=_page_fractions(page, found_table.bbox)))
        return tables
    finally:
        page.close()


def _page_fractions(page: Any, bbox: tuple[float, float, float, float]) -> list[float] | None:
    """A pdfplumber box (x0, top, x1, bottom) as fractions of its page from the top left; None on a
    turned page (pdfplumber's boxes are the page's unturned, the lines' as displayed)."""
    if int(page.page_obj.attrs.get("Rotate", 0) or 0) % 360:
        return None
    x0, top, x1, bottom = page.bbox
    width, height = max(x1 - x0, 1e-6), max(bottom - top, 1e-6)
    return [round(min(max(value, 0.0), 1.0), 4) for value in
            ((bbox[0] - x0) / width, (bbox[1] - top) / height, (bbox[2] - x0) / width, (bbox[3] - top) / height)]


def clean_table_rows(raw: list[list[str | None]]) -> list[list[str]] | None:
    """Normalise cells and drop empty rows/columns; None when what is left is not a table."""
    rows = [[" ".join((cell or "").split()) for cell in row] for row in raw]
    rows = [row for row in rows if any(row)]
    if not rows:
        return None
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    keep = [c for c in range(width) if any(row[c] for row in rows)]
    rows = [[row[c] for c in keep] for row in rows]
    # one column or one row is a framed text box, not a table
    if len(keep) < 2 or len(rows) < 2:
        return None
    return rows


def _looks_numeric(cell: str) -> bool:
    stripped = cell.replace(",", "").replace(".", "").replace("%", "").replace("-", "").replace(" ", "")
    return bool(stripped) and stripped.isdigit()


def collapse_split_header(rows: list[list[str]]) -> tuple[list[list[str]], int]:
    """Join a header split over two rows, where the second row only fills the first's blanks."""
    if len(rows) < 3:
        return rows, 1
    top, second = rows[0], rows[1]
    if not all(top) or not all(second):
        complementary = all(not (a and b) for a, b in zip(top, second, strict=True))
        fills_blanks = complementary and any(not a for a in top) and any(second)
        if fills_blanks and not any(_looks_numeric(c) for c in second):
            merged = [a or b for a, b in zip(top, second, strict=True)]
            return [merged, *rows[2:]], 1
    return rows, 1


def merge_continuation_rows(rows: list[list[str]], header_rows: int) -> list[list[str]]:
    """A body row with an empty first cell continues the row above (a wrapped cell)."""
    out = [list(row) for row in rows[:header_rows]]
    for row in rows[header_rows:]:
        previous = out[-1] if len(out) > header_rows else None
        if previous is not None and not row[0] and previous[0]:
            for i, cell in enumerate(row):
                if cell:
                    previous[i] = f"{previous[i]} {cell}".strip()
            continue
        out.append(list(row))
    return out


def _title_above(page: Any, bbox: tuple[float, float, float, float]) -> str:
    """The nearest short line just above the table (touching it counts) that starts left of its
    right edge: captions are often left-aligned over a centred table."""
    _, top, x1, _ = bbox
    words = [w for w in page.extract_words() if -3 <= top - w["bottom"] <= TITLE_GAP]
    if not words:
        return ""
    line_bottom = max(w["bottom"] for w in words)
    line = sorted((w for w in words if abs(w["bottom"] - line_bottom) < 2), key=lambda w: w["x0"])
    if line[0]["x0"] >= x1:
        return ""
    title = " ".join(w["text"] for w in line)
    return title if len(title) <= 120 else ""
