"""OCR of one page: the engines in the mode's order, the verdict on what they read, and the page
that results, merged with what the text layer gave.

A page is read whole (its text layer is missing or broken, or it is a picture) or, for a page
whose text layer is sound, only its pictures (a scanned annex, a screenshot): the native text is
kept and what OCR reads in the pictures is added after it. Either way the page's report keeps
every attempt, the text layer's and OCR's, and says which engine produced the text and why it
can or cannot be trusted.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from PIL import Image, ImageOps

from papersift.content import PageContent, form_fields_text, new_fields
from papersift.errors import OcrThrottledError, OcrUnavailableError, PapersiftError
from papersift.ocr import pictures
from papersift.ocr.blocks import paragraph_blocks
from papersift.ocr.reading import TESSERACT, TEXTRACT, OcrReading
from papersift.ocr.routing import (
    GLYPHS,
    REGION_SCOPES,
    RENDERING_CHECK,
    UNCERTAIN_SIGNALS,
    WHOLE_PAGE,
    EngineOrder,
)
from papersift.quality import SOUND_READING, THIN_WORD_EVIDENCE, TextVerdict, assess_text, character_agreement
from papersift.rendering import RenderedPage
from papersift.report import EngineAttempt, ErrorRecord, OcrDetails, PageReport, PageStatus, PictureRecord

#: mean word confidence below which an OCR reading is not trusted (Tesseract's on clean scans is
#: 0.85-0.95, on noisy real-world scans 0.6-0.8; Textract's is 0.95+ on what it reads well)
TRUSTED_CONFIDENCE = 0.7
#: OCR text with few dictionary words is trusted only above this word confidence: misreads of a
#: known language look like "a language we have no dictionary for" to the text verdict, and come
#: with middling confidence; code or names read well come with high confidence
FEW_WORDS_CONFIDENCE = 0.85
#: a picture with less ink than this (share of dark pixels) is a blank page
BLANK_INK_SHARE = 0.002
#: a picture region must give at least this many words to add its text to a sound page
MIN_PICTURE_WORDS = 3
#: ... and a region of glyphs without Unicode (routing.GLYPHS) one: a word is what it leaves out
MIN_GLYPH_WORDS = 1
#: an OCR reading replaces a text layer only when it scores at least this much higher
REPLACE_MARGIN = 0.05
#: an uncertain text layer stands when OCR of the rendered page reads this share of its characters
#: the same (quality.character_agreement): Tesseract misreads a few percent of clean print at low
#: resolution, a layer of wrong characters agrees on few of them
VERIFIED_AGREEMENT = 0.85
#: the signals of a rendering check (routing.RENDERING_CHECK): the text layer kept, or OCR's taken
VERIFIED_BY_RENDERING = "verified_by_rendering"
RENDERING_DISAGREES = "rendering_disagrees"

#: reads one picture with the given Tesseract languages
PictureReader = Callable[[Image.Image, Sequence[str]], OcrReading]
#: reads one page with Textract: its original bytes when there are some Textract can take (see
#: ``OcrTask.original``), else the picture; with tables (AnalyzeDocument) when they were asked for
PageReader = Callable[[RenderedPage, "Original | None", bool], OcrReading]


@dataclass(frozen=True)
class Original:
    """The page as the file has it, for Textract to read at its own resolution: a one-page PDF
    (cut from the document, or the document itself when it has one page), or a single-frame picture
    file. ``format`` is pdf, png, jpeg or tiff."""

    data: bytes
    format: str


@dataclass(frozen=True)
class OcrEngines:
    """The engines a deployment has: Tesseract (None when its binary is missing) and Textract
    (None when no client is configured, e.g. a local run)."""

    tesseract: PictureReader | None
    textract: PageReader | None
    #: why Textract is missing, for the page's report ("no Textract client is configured")
    textract_missing: str = "no Textract client is configured"


@dataclass(frozen=True)
class OcrTask:
    """One page to read."""

    number: int
    picture: RenderedPage
    #: the page as the file has it, when there is such a thing (Textract reads it as is)
    original: Original | None
    #: the text layer's page (None for a picture document)
    text_layer: PageContent | None
    #: "page", "pictures" or "glyphs" (routing.WHOLE_PAGE / PICTURES / GLYPHS); the last two read ``regions``
    scope: str
    regions: tuple[tuple[float, float, float, float], ...] = ()
    #: why the text layer sent the page to OCR
    reason: str = ""
    #: for "pictures" of an office file's (e-book's, HTML page's) unit: its embedded pictures, drawn,
    #: each numbered by its place (1-based) in the unit's report ``pictures``
    embedded: tuple[RenderedPage, ...] = ()


@dataclass(frozen=True)
class _Judged:
    reading: OcrReading
    verdict: TextVerdict

    @property
    def trusted(self) -> bool:
        return not self.verdict.suspect


def judge_reading(reading: OcrReading, ink: float) -> TextVerdict:
    """OCR text gets the verdict any text layer gets, and the engine's word confidence on top:
    low confidence is not trusted, and a reading with no text is never taken for sound text
    unless the picture is blank."""
    text = reading.text
    if not text.strip():
        if ink < BLANK_INK_SHARE:
            return TextVerdict(score=1.0, suspect=False, corrupt=False, signals=("empty", "blank_page"),
                               reason=f"blank page: {ink:.2%} of the picture is ink")
        return TextVerdict(score=0.0, suspect=True, corrupt=False, signals=("empty", "no_words"), confidence=0.5,
                           reason=f"no text found: {ink:.1%} of the picture is ink but {reading.engine} recognised "
                                  f"no word (a picture without words, or text it cannot read)")
    verdict = assess_text(text, sound=SOUND_READING)
    confidence = reading.confidence
    if confidence is None:
        return verdict
    if confidence < TRUSTED_CONFIDENCE:
        return replace(verdict, suspect=True, score=min(verdict.score, confidence), confidence=confidence,
                       signals=(*verdict.signals, "low_ocr_confidence"),
                       reason=f"{reading.engine} read it with low confidence ({confidence:.2f} mean word "
                              f"confidence, {TRUSTED_CONFIDENCE} needed); {verdict.reason}")
    if not THIN_WORD_EVIDENCE.isdisjoint(verdict.signals) and confidence < FEW_WORDS_CONFIDENCE:
        return replace(verdict, suspect=True, score=min(verdict.score, confidence), confidence=confidence,
                       signals=(*verdict.signals, "low_ocr_confidence"),
                       reason=f"few dictionary words, read with {confidence:.2f} mean word confidence "
                              f"({FEW_WORDS_CONFIDENCE} needed for such text): misreads are likely")
    return replace(verdict, score=min(verdict.score, confidence), confidence=min(verdict.confidence, confidence))


def read_page(task: OcrTask, order: EngineOrder, engines: OcrEngines, *, languages: Sequence[str],
              tables: bool = False, skip_textract: str = "") -> PageContent:
    """Read one page with the engines of ``order``: the first trusted reading ends it; an engine
    that fails or cannot be used hands the page to the next; a reading that is not trusted does
    too when the mode says so (local-first). ``skip_textract`` names why Textract is out for this
    page (throttled past the workflow's retries). Raises OcrThrottledError when Textract refuses
    for load, so the workflow retries the page with backoff (engines that read before it are
    the caller's to remember: see ``OcrEngines``)."""
    if skip_textract:
        order = order.without(TEXTRACT)
    if task.scope == GLYPHS and TESSERACT in order.engines:
        order = order.without(TEXTRACT)  # a few glyphs of a sound page are not worth a Textract page
    if task.scope in REGION_SCOPES:
        return _read_pictures(task, order, engines, languages, skip_textract)
    reader = functools.partial(_read, engines=engines, languages=languages, tables=tables)
    started = time.perf_counter()
    if task.scope == WHOLE_PAGE and pictures.is_blank(task.picture.image, task.picture.dpi):
        marked = pictures.marked_square_inches(task.picture.image, task.picture.dpi)
        return blank_page(task.number, marked, task.text_layer, seconds=_since(started))
    ink = pictures.ink_share(task.picture.image)
    attempts: list[EngineAttempt] = []
    errors: list[ErrorRecord] = []
    notes: list[str] = [f"Textract not used: {skip_textract}"] if skip_textract else []
    readings: list[_Judged] = []
    for engine in order.engines:
        try:
            reading = reader(engine, task.picture, task.original)
        except OcrThrottledError:
            raise  # the workflow retries the page with backoff; past its retries, without Textract
        except OcrUnavailableError as exc:  # a warning, not an error of the page: the next engine reads it
            _note_once(notes, f"{engine} not used: {exc}")
            continue
        except PapersiftError as exc:
            errors.append(ErrorRecord.from_exception(exc, engine=engine, page=task.number))
            attempts.append(EngineAttempt(engine=engine, chars=0, score=0.0, seconds=0.0, error=str(exc)))
            continue
        judged = _Judged(reading, judge_reading(reading, ink))
        readings.append(judged)
        attempts.append(_attempt(judged))
        if judged.trusted or not order.past_untrusted:
            break
    if task.scope == RENDERING_CHECK:
        return _checked(task, readings, attempts, errors, notes, started)
    return _whole_page(task, readings, attempts, errors, notes, started)


def blank_page(number: int, marked: float, layer: PageContent | None = None, *, seconds: float = 0.0) -> PageContent:
    """A page or frame with no mark the size of a letter (``marked`` square inches of marks):
    recorded ``blank_page`` without an OCR engine's call, its text layer's attempts and form
    field values kept."""
    base = layer.report if layer is not None else None
    fields = list(layer.form_fields) if layer is not None else []
    text = form_fields_text(fields) if fields else ""
    reason = (f"blank page: {marked:.4f} square inches marked, less than a printed letter "
              f"({pictures.BLANK_MARK_SQUARE_INCHES}); no OCR engine was called")
    report = PageReport(number=number, status=str(PageStatus.OCR), engine=None, char_count=len(text),
                        confidence=1.0, reason=reason, seconds=round((base.seconds if base else 0.0) + seconds, 4),
                        signals=["empty", "blank_page"], attempts=list(base.attempts) if base else [],
                        errors=list(base.errors) if base else [], form_fields=len(fields))
    return PageContent(number=number, text=text, report=report, label=layer.label if layer is not None else "",
                       form_fields=fields)


def _checked(task: OcrTask, readings: list[_Judged], attempts: list[EngineAttempt], errors: list[ErrorRecord],
             notes: list[str], started: float) -> PageContent:
    """An uncertain text layer judged by OCR of the rendered page: the layer's text stands, trusted,
    when OCR reads the same characters (``VERIFIED_AGREEMENT``: two readers that share no way of
    going wrong agree); otherwise OCR's reading is the page's, as for a broken layer. Either way
    the page says how far the two agreed."""
    layer = task.text_layer
    best = _best(readings)
    if layer is None or best is None:
        return _whole_page(task, readings, attempts, errors, notes, started)
    agreement = round(character_agreement(layer.text, best.reading.text), 3)
    base = layer.report
    for attempt in attempts:
        attempt.signals.append(f"rendering check at {task.picture.dpi:.0f} dpi")
    # a few doubted tokens on a long page barely move the agreement: each must be read as well
    if agreement < VERIFIED_AGREEMENT or unread_tokens(layer.unverified_text, best.reading.text):
        page = _whole_page(task, readings, attempts, errors, notes, started)
        report = page.report.replace(rendering_agreement=agreement,
                                     signals=[*page.report.signals, RENDERING_DISAGREES],
                                     reason=f"{page.report.reason}; "
                                            f"{disagreement(layer.unverified_text, best.reading.text, agreement)}")
        return replace(page, report=report)
    # the status the layer would have had, had its words been able to vouch for it
    first_engine = base.attempts[0].engine if base.attempts else base.engine
    status = PageStatus.CLEAN if base.engine == first_engine else PageStatus.RECOVERED
    uncertain = ", ".join(sorted(UNCERTAIN_SIGNALS.intersection(base.signals))) or "an uncertain text layer"
    engine = _engine_name(best.reading)
    report = base.replace(
        status=str(status), attempts=[*base.attempts, *attempts], errors=[*base.errors, *errors],
        signals=[*base.signals, VERIFIED_BY_RENDERING], rendering_agreement=agreement,
        confidence=max(base.confidence, min(best.verdict.confidence, agreement)),
        reason=f"verified by the rendered page: {engine} read the same text ({agreement:.0%} of the characters "
               f"agree at {task.picture.dpi:.0f} dpi) where the text layer alone was uncertain ({uncertain}); "
               "the text layer stands",
        seconds=round(base.seconds + _since(started), 4), ocr=_details(best.reading, task, notes))
    return replace(layer, report=report, ocr_scope="", ocr_reason="", ocr_regions=[])


def unread_tokens(doubted: Sequence[str], text: str) -> list[str]:
    """The text layer's doubted tokens (``PageContent.unverified_text``) an OCR reading does not hold."""
    read = "".join(text.split())
    return [token for token in doubted if token not in read]


def disagreement(doubted: Sequence[str], text: str, agreement: float) -> str:
    """How a rendering check's reading ``text`` disagreed with the text layer, for the page's reason."""
    unread = unread_tokens(doubted, text)
    shown = f", which does not show {', '.join(repr(token) for token in unread[:3])}" if unread else ""
    return f"the text layer read otherwise ({agreement:.0%} of its characters agree with the rendered page{shown})"


def _note_once(notes: list[str], note: str) -> None:
    if note not in notes:
        notes.append(note)


def _read(engine: str, picture: RenderedPage, original: Original | None, *, engines: OcrEngines,
          languages: Sequence[str], tables: bool = False) -> OcrReading:
    if engine == TESSERACT:
        if engines.tesseract is None:
            raise OcrUnavailableError("Tesseract is not installed here")
        return engines.tesseract(picture.image, languages)
    if engines.textract is None:
        raise OcrUnavailableError(engines.textract_missing)
    return engines.textract(picture, original, tables)


def _attempt(judged: _Judged) -> EngineAttempt:
    reading = judged.reading
    return EngineAttempt(engine=_engine_name(reading), chars=len(reading.text), score=round(judged.verdict.score, 4),
                         seconds=round(reading.seconds, 4), signals=list(judged.verdict.signals))


def _engine_name(reading: OcrReading) -> str:
    return reading.engine if reading.api is None else f"{reading.engine}:{reading.api}"


def _best(readings: list[_Judged]) -> _Judged | None:
    """Trust beats doubt, then the higher score; ties keep the earlier engine."""
    best: _Judged | None = None
    for judged in readings:
        if best is None or (judged.trusted, judged.verdict.score) > (best.trusted, best.verdict.score):
            best = judged
    return best


def _whole_page(task: OcrTask, readings: list[_Judged], attempts: list[EngineAttempt], errors: list[ErrorRecord],
                notes: list[str], started: float) -> PageContent:
    layer = task.text_layer
    base = layer.report if layer is not None else None
    best = _best(readings)
    all_attempts = [*(base.attempts if base else []), *attempts]
    all_errors = [*(base.errors if base else []), *errors]
    if best is None:
        return _unread(task, all_attempts, all_errors, notes, started)
    verdict = best.verdict
    if layer is not None and base is not None and _layer_stands(layer, best):
        # the text layer reads better than OCR did (an invisible layer of fair quality): keep it
        report = base.replace(attempts=all_attempts, errors=all_errors,
                         reason=f"{base.reason}; OCR read no better ({_engine_name(best.reading)} scored "
                                f"{verdict.score:.2f})", seconds=round(base.seconds + _since(started), 4),
                         ocr=_details(best.reading, task, notes))
        return replace(layer, report=report, ocr_scope="", ocr_reason="", ocr_regions=[])
    if best.trusted:
        status = PageStatus.OCR
        reason = f"{_engine_name(best.reading)} read the page: {verdict.reason}"
    else:
        status = PageStatus.LOW_CONFIDENCE
        reason = f"OCR could not read the page with confidence: {verdict.reason}"
    if task.reason:
        reason = f"{reason} (sent to OCR: {task.reason})"
    text = best.reading.text
    # the file's form field values stand beside OCR's reading of them: what OCR missed is added
    fields = new_fields(layer.form_fields, text) if layer is not None else []
    if fields:
        text = f"{text}\n\n{form_fields_text(fields)}" if text.strip() else form_fields_text(fields)
    report = PageReport(
        number=task.number, status=str(status), engine=best.reading.engine, char_count=len(text),
        confidence=round(verdict.confidence if best.reading.confidence is None
                         else min(verdict.confidence, best.reading.confidence), 3),
        reason=reason, seconds=round((base.seconds if base else 0.0) + _since(started), 4),
        signals=[*verdict.signals, *(s for s in (base.signals if base else []) if s not in verdict.signals)],
        language=verdict.language, attempts=all_attempts, errors=all_errors, tables=len(best.reading.tables),
        form_fields=len(fields), ocr=_details(best.reading, task, notes), fonts=list(base.fonts) if base else [],
    )
    page = PageContent(number=task.number, text=text, report=report, tables=list(best.reading.tables),
                       label=layer.label if layer is not None else "", form_fields=fields)
    if best.reading.boxes:
        page.blocks = paragraph_blocks(best.reading, page.body_lines())
    return page


def _layer_stands(layer: PageContent, best: _Judged) -> bool:
    """A sound text layer (an earlier OCR's invisible layer of doubtful quality, sent to be read
    again) is replaced only by a trusted reading that scores clearly higher; a layer that was
    missing or broken always gives way."""
    if layer.report.status not in (PageStatus.CLEAN, PageStatus.RECOVERED) or not layer.text.strip():
        return False
    return not (best.trusted and best.verdict.score >= assess_text(layer.text).score + REPLACE_MARGIN)


def _unread(task: OcrTask, attempts: list[EngineAttempt], errors: list[ErrorRecord], notes: list[str],
            started: float) -> PageContent:
    """No engine produced a reading: the page fails when an engine tried and failed on it, and
    still needs OCR when none could be used; the text layer's text, if any, is kept either way."""
    layer = task.text_layer
    why = "; ".join([*(f"{e.engine}: {e.reason}" for e in errors), *notes]) or "no OCR engine is available"
    if errors:  # an engine tried and failed (or the service rejected the page)
        status, reason = PageStatus.FAILED, f"OCR failed on the page: {why}"
    else:
        status, reason = PageStatus.NEEDS_OCR, f"OCR needed but not done: {why}"
    text = layer.text if layer is not None else ""
    report = PageReport(number=task.number, status=str(status), engine=layer.report.engine if layer else None,
                        char_count=len(text), confidence=0.0, reason=reason,
                        seconds=round((layer.report.seconds if layer else 0.0) + _since(started), 4),
                        signals=list(layer.report.signals if layer else ["image_only"]), attempts=attempts,
                        errors=errors, language=layer.report.language if layer else None,
                        form_fields=layer.report.form_fields if layer else 0)
    return PageContent(number=task.number, text=text, report=report, label=layer.label if layer is not None else "",
                       form_fields=list(layer.form_fields) if layer is not None else [])


def _pictures_of(task: OcrTask) -> list[RenderedPage]:
    """What a picture-scope task reads: a unit's embedded pictures, or the regions of its page."""
    if task.embedded:
        return list(task.embedded)
    width, height = task.picture.image.size
    crops = [pictures.cropped(task.picture.image, (x0 * width, y0 * height, x1 * width, y1 * height), margin=8)
             for x0, y0, x1, y1 in task.regions]
    if task.scope == GLYPHS:
        # a word cut close (its neighbours a space away): Tesseract finds a line on white paper only
        crops = [ImageOps.expand(crop, border=max(GLYPH_BORDER, crop.height // 2), fill=_white(crop)) for crop in crops]
    return [replace(task.picture, image=crop) for crop in crops]


#: white pixels laid around a region of glyphs before OCR reads it, at least
GLYPH_BORDER = 24


def _white(image: Image.Image) -> int | tuple[int, ...]:
    return 255 if image.mode in ("L", "1") else (255,) * len(image.getbands())


def _read_pictures(task: OcrTask, order: EngineOrder, engines: OcrEngines, languages: Sequence[str],
                   skip_textract: str) -> PageContent:
    """The pictures of a sound page (or unit): each is read like a page of its own (a throttled
    Textract leaves that picture to the next engine or unread); text from pictures read with
    confidence is added after the native text. The native text is never replaced. A unit's
    embedded pictures get their report records filled in (read, no_text, failed)."""
    layer = task.text_layer
    assert layer is not None, "a page whose pictures are read has a text layer"
    started = time.perf_counter()
    texts: list[str] = []
    attempts: list[EngineAttempt] = []
    errors: list[ErrorRecord] = []
    used: list[OcrReading] = []
    doubtful: list[OcrReading] = []
    notes: list[str] = [f"Textract not used: {skip_textract}"] if skip_textract else []
    records = list(layer.report.pictures)
    regions = _pictures_of(task)
    glyphs = task.scope == GLYPHS
    least_words, what = (MIN_GLYPH_WORDS, "region(s) of glyphs without Unicode") if glyphs else (
        MIN_PICTURE_WORDS, "picture(s)")
    for index, region in enumerate(regions, start=1):
        ink = pictures.ink_share(region.image)
        best: _Judged | None = None
        taken = False
        for engine in order.engines:
            try:
                reading = _read(engine, region, None, engines=engines, languages=languages)
            except OcrThrottledError:
                raise
            except OcrUnavailableError as exc:
                _note_once(notes, f"{engine} not used: {exc}")
                continue
            except PapersiftError as exc:
                errors.append(ErrorRecord.from_exception(exc, engine=engine, page=task.number))
                continue
            judged = _Judged(reading, judge_reading(reading, ink))
            attempt = _attempt(judged)
            attempt.signals.append(f"picture {index} of {len(regions)}")
            attempts.append(attempt)
            best = judged
            if judged.trusted and reading.words >= least_words:
                texts.append(reading.text)
                used.append(reading)
                taken = True
                break
            # a picture in which an engine found no word at all is a photo or a chart: it is not
            # sent on to another engine (Textract would bill for it)
            if not order.past_untrusted or reading.words == 0:
                break
        if best is not None and best.reading.words and not taken:
            doubtful.append(best.reading)
        if task.embedded:
            records[region.number - 1] = _picture_record(records[region.number - 1], best, taken, errors)
    report = layer.report.replace(pictures=records)
    seconds = round(report.seconds + _since(started), 4)
    all_attempts, all_errors = [*report.attempts, *attempts], [*report.errors, *errors]
    if not texts and doubtful and task.embedded and not layer.text.strip():
        # a unit whose only content is pictures of text read without confidence: like a scanned
        # page read so, its text is given for review, never taken for an empty unit
        text = "\n\n".join(r.text for r in doubtful)
        kept = report.replace(
            status=str(PageStatus.LOW_CONFIDENCE), engine="+".join([report.engine or "text-layer",
                                                                    *sorted({r.engine for r in doubtful})]),
            char_count=len(text), confidence=round(min((r.confidence for r in doubtful if r.confidence is not None),
                                                       default=0.0), 3),
            seconds=seconds, attempts=all_attempts, errors=all_errors,
            reason=f"the unit holds no text but {len(regions)} picture(s), and OCR could not read them with "
                   f"confidence", signals=[*(s for s in report.signals if s != "empty"), "hybrid"],
            ocr=_details(doubtful[0], task, notes))
        # OCR's text in place of the layer's: the layer's hyphen breaks and line geometry go with it
        return replace(layer, text=text, report=kept, ocr_scope="", ocr_reason="", ocr_regions=[], embedded=[],
                       hyphen_breaks=[], line_heights=[], line_boxes=[])
    if not texts:
        notes.append(f"no text read with confidence in {len(regions)} {what}")
        details = _details(used[0], task, notes) if used else None
        kept = report.replace(attempts=all_attempts, errors=all_errors, seconds=seconds, ocr=details)
        return replace(layer, report=kept, ocr_scope="", ocr_reason="", ocr_regions=[], embedded=[])
    engines_used = sorted({r.engine for r in used})
    text = "\n\n".join([layer.text, *texts]) if layer.text.strip() else "\n\n".join(texts)
    # where the pictures' text starts among the page's lines (a glyph region's is the page's own words)
    from_line = None if glyphs else (layer.text.count("\n") + 2 if layer.text.strip() else 0)
    confidence = min([report.confidence, *(r.confidence for r in used if r.confidence is not None)])
    where = "in the unit" if task.embedded else "on the page"
    merged = report.replace(
        status=str(PageStatus.OCR), engine="+".join([report.engine or "text-layer", *engines_used]),
        char_count=len(text), confidence=round(confidence, 3), seconds=seconds,
        reason=f"text layer kept ({report.reason.rstrip('.')}); {'+'.join(engines_used)} read "
               f"{len(texts)} of {len(regions)} {what} {where} and their text follows it",
        signals=[*(s for s in report.signals if s != "empty"), "hybrid"], attempts=all_attempts, errors=all_errors,
        ocr=_details(used[0], task, notes, regions=len(texts)),
    )
    return replace(layer, text=text, report=merged, ocr_scope="", ocr_reason="", ocr_regions=[], embedded=[],
                   picture_text_from=from_line)


def _picture_record(record: PictureRecord, best: _Judged | None, used: bool, errors: list[ErrorRecord]
                    ) -> PictureRecord:
    """An embedded picture's record once OCR has read it: read (its text follows the unit's),
    no_text (nothing trusted in it), failed (no engine could read it)."""
    if best is None:
        why = errors[-1].reason if errors else "no OCR engine could read it"
        return record.replace(status="failed", reason=why)
    reading = best.reading
    confidence = None if reading.confidence is None else round(reading.confidence, 3)
    if used:
        return record.replace(status="read", engine=_engine_name(reading), confidence=confidence,
                              chars=len(reading.text), reason="")
    return record.replace(status="no_text", engine=_engine_name(reading), confidence=confidence,
                          chars=len(reading.text), reason=best.verdict.reason)


def _details(reading: OcrReading, task: OcrTask, notes: list[str], regions: int = 0) -> OcrDetails:
    return OcrDetails(engine=reading.engine, api=reading.api, model=reading.language, script=reading.script,
                      orientation=reading.orientation, skew=round(reading.skew, 2),
                      confidence=None if reading.confidence is None else round(reading.confidence, 3),
                      words=reading.words, dpi=round(task.picture.dpi, 1), renderer=task.picture.renderer,
                      regions=regions, notes=[*notes, *reading.notes])


def _since(started: float) -> float:
    return time.perf_counter() - started
