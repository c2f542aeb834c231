"""OCR of one page: the mode's engines in order, the verdict on what they read, and the page that
results. The engines are stand-ins here (what each would read is given), so every routing case
runs in milliseconds; the real engines have tests of their own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from PIL import Image
from scan_factory import blank_image, drawing_image, text_image

from papersift.content import PageContent
from papersift.errors import OcrRejectedError, OcrThrottledError, OcrUnavailableError
from papersift.ocr import pictures
from papersift.ocr.pages import OcrEngines, OcrTask, Original, judge_reading, read_page
from papersift.ocr.reading import TESSERACT, TEXTRACT, OcrReading
from papersift.ocr.routing import PICTURES, RENDERING_CHECK, WHOLE_PAGE, engine_order
from papersift.rendering import RenderedPage
from papersift.report import EngineAttempt, PageReport

GOOD = "The quick brown fox jumps over the lazy dog.\nScanned pages need OCR to give their text."
GARBLED = "Tne qu1ck hrown f0x jnmps ovcr tbe 1azy d0g."
LANGUAGES = ("eng", "por", "spa")


def reading(engine: str, text: str = GOOD, confidence: float | None = 0.93, words: int | None = None,
            api: str | None = None) -> OcrReading:
    return OcrReading(engine=engine, text=text, confidence=confidence,
                      words=len(text.split()) if words is None else words, seconds=0.01, api=api)


@dataclass
class FakeEngine:
    """Answers with the given reading (or raises the given error); counts its calls."""

    answer: OcrReading | Exception
    calls: list[tuple[int, int]] = field(default_factory=list)

    def tesseract(self, image: Image.Image, languages: Sequence[str]) -> OcrReading:
        return self._answer(image)

    def textract(self, picture: RenderedPage, original: Original | None, tables: bool) -> OcrReading:
        return self._answer(picture.image)

    def _answer(self, image: Image.Image) -> OcrReading:
        self.calls.append(image.size)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def engines(tesseract: FakeEngine | None = None, textract: FakeEngine | None = None) -> OcrEngines:
    return OcrEngines(tesseract=tesseract.tesseract if tesseract else None,
                      textract=textract.textract if textract else None)


def task(image: Image.Image | None = None, layer: PageContent | None = None, scope: str = WHOLE_PAGE,
         regions: tuple[tuple[float, float, float, float], ...] = ()) -> OcrTask:
    picture = RenderedPage(number=3, image=image if image is not None else text_image(), dpi=300.0,
                           renderer="pdfium", capped=False)
    return OcrTask(number=3, picture=picture, original=None, text_layer=layer, scope=scope, regions=regions,
                   reason="the text layer cannot be used")


def layer_page(status: str, text: str = "") -> PageContent:
    report = PageReport(number=3, status=status, engine="pdfium", char_count=len(text), confidence=0.5,
                        reason="Little text on a page mostly drawn as images", signals=["image_only"],
                        attempts=[EngineAttempt(engine="pdfium", chars=len(text), score=0.2, seconds=0.001)])
    return PageContent(number=3, text=text, report=report)


def test_local_first_keeps_a_trusted_tesseract_reading_and_never_calls_textract() -> None:
    tesseract, textract = FakeEngine(reading(TESSERACT)), FakeEngine(reading(TEXTRACT))
    page = read_page(task(layer=layer_page("needs_ocr")), engine_order("local-first"), engines(tesseract, textract),
                     languages=LANGUAGES)
    assert (page.report.status, page.report.engine, page.text) == ("ocr", "tesseract", GOOD)
    assert textract.calls == []
    assert [a.engine for a in page.report.attempts] == ["pdfium", "tesseract"]
    assert page.report.ocr is not None and page.report.ocr.confidence == 0.93


def test_local_first_sends_a_page_tesseract_cannot_read_with_confidence_to_textract() -> None:
    tesseract = FakeEngine(reading(TESSERACT, GARBLED, confidence=0.41))
    textract = FakeEngine(reading(TEXTRACT, confidence=0.99, api="DetectDocumentText"))
    page = read_page(task(), engine_order("local-first"), engines(tesseract, textract), languages=LANGUAGES)
    assert (page.report.status, page.report.engine, page.text) == ("ocr", "textract", GOOD)
    assert [a.engine for a in page.report.attempts] == ["tesseract", "textract:DetectDocumentText"]
    assert "low_ocr_confidence" in page.report.attempts[0].signals


def test_local_only_never_calls_textract_and_says_a_doubtful_reading_needs_review() -> None:
    tesseract, textract = FakeEngine(reading(TESSERACT, GARBLED, confidence=0.41)), FakeEngine(reading(TEXTRACT))
    page = read_page(task(), engine_order("local-only"), engines(tesseract, textract), languages=LANGUAGES)
    assert textract.calls == []
    assert page.report.status == "low_confidence"
    assert page.text == GARBLED  # the reading is kept, not trusted
    assert "low confidence (0.41" in page.report.reason


def test_textract_first_falls_back_to_tesseract_when_no_textract_client_exists_with_a_warning() -> None:
    tesseract = FakeEngine(reading(TESSERACT))
    page = read_page(task(), engine_order("textract-first"), engines(tesseract, None), languages=LANGUAGES)
    assert (page.report.status, page.report.engine) == ("ocr", "tesseract")
    assert page.report.errors == []  # a warning, not an error of the page
    assert page.report.ocr is not None
    assert any("textract not used: no Textract client is configured" in n for n in page.report.ocr.notes)


def test_textract_first_falls_back_to_tesseract_when_textract_cannot_be_reached() -> None:
    textract = FakeEngine(OcrUnavailableError("Textract cannot be used: NoCredentialsError"))
    tesseract = FakeEngine(reading(TESSERACT))
    page = read_page(task(), engine_order("textract-first"), engines(tesseract, textract), languages=LANGUAGES)
    assert (page.report.status, page.report.engine) == ("ocr", "tesseract")


def test_textract_refusing_for_load_is_raised_for_the_workflow_to_retry() -> None:
    textract, tesseract = FakeEngine(OcrThrottledError("ThrottlingException")), FakeEngine(reading(TESSERACT))
    with pytest.raises(OcrThrottledError):
        read_page(task(), engine_order("textract-first"), engines(tesseract, textract), languages=LANGUAGES)
    assert tesseract.calls == []


def test_past_the_retries_a_throttled_page_is_read_without_textract() -> None:
    textract, tesseract = FakeEngine(OcrThrottledError("ThrottlingException")), FakeEngine(reading(TESSERACT))
    page = read_page(task(), engine_order("textract-first"), engines(tesseract, textract), languages=LANGUAGES,
                     skip_textract="Textract refused for load past the retries")
    assert textract.calls == [] and page.report.engine == "tesseract"
    assert page.report.ocr is not None and "Textract not used" in page.report.ocr.notes[0]


def test_past_the_retries_with_textract_alone_the_page_still_needs_ocr_and_keeps_its_text_layer() -> None:
    textract = FakeEngine(OcrThrottledError("ThrottlingException"))
    layer = layer_page("needs_ocr", "Page 3")
    page = read_page(task(layer=layer), engine_order("textract-only"), engines(None, textract), languages=LANGUAGES,
                     skip_textract="Textract refused for load past the retries (ThrottlingException)")
    assert page.report.status == "needs_ocr"
    assert "refused for load past the retries" in page.report.reason
    assert page.text == "Page 3"


def test_a_page_textract_rejects_fails_with_the_services_reason() -> None:
    textract = FakeEngine(OcrRejectedError("UnsupportedDocumentException: Request has unsupported document format"))
    page = read_page(task(), engine_order("textract-only"), engines(None, textract), languages=LANGUAGES)
    assert page.report.status == "failed"
    assert "unsupported document format" in page.report.reason
    assert [e.code for e in page.report.errors] == ["ocr_rejected"]


def test_a_blank_page_is_said_to_be_blank_and_is_not_a_problem() -> None:
    tesseract = FakeEngine(reading(TESSERACT, "", confidence=None, words=0))
    page = read_page(task(image=blank_image()), engine_order("local-only"), engines(tesseract), languages=LANGUAGES)
    assert page.report.status == "ocr" and page.text == ""
    assert "blank_page" in page.report.signals and page.report.reason.startswith("blank page")


@pytest.mark.parametrize("mode", ["local-first", "textract-first", "textract-only"])
def test_a_blank_page_costs_no_engine_call(mode: str) -> None:
    """A blank sheet in a scanned stack (and dust on it, and JPEG noise) is recorded blank_page
    without Tesseract's 0.25 s or a Textract bill."""
    sheet = blank_image(2550, 3300)
    for speck in ((400, 500), (2000, 3000), (1200, 40)):  # three specks of dust, 3 px each
        sheet.paste(0, (*speck, speck[0] + 3, speck[1] + 3))
    noisy = Image.effect_noise(sheet.size, 6).point(lambda value: min(255, value + 112))  # paper at 240 +- 6
    sheet = Image.composite(sheet, noisy, sheet.point(lambda value: 255 if value < 128 else 0))
    tesseract, textract = FakeEngine(reading(TESSERACT, GOOD)), FakeEngine(reading(TEXTRACT, GOOD))
    page = read_page(task(image=sheet), engine_order(mode), engines(tesseract, textract), languages=LANGUAGES)
    assert "blank_page" in page.report.signals and page.text == ""
    assert tesseract.calls == [] and textract.calls == []


def test_one_short_word_on_a_page_is_not_blank_and_is_read() -> None:
    """The blank test is on marked area at the page's resolution: one 10-pt word on a letter sheet
    at 300 dpi (0.01 square inches) is read, though it is 0.01% of the page."""
    sheet = blank_image(2550, 3300)
    sheet.paste(text_image(["Yes"], font_size=42, margin=4), (1200, 1600))
    assert pictures.ink_share(sheet) < 0.002  # what judge_reading calls blank after a reading
    tesseract = FakeEngine(reading(TESSERACT, "Yes", confidence=0.9, words=1))
    page = read_page(task(image=sheet), engine_order("local-only"), engines(tesseract), languages=LANGUAGES)
    assert len(tesseract.calls) == 1 and "blank_page" not in page.report.signals


def test_faint_pencil_is_not_blank() -> None:
    sheet = blank_image(1700, 2200)
    writing = text_image(["a faint note in pencil"], font_size=30).point(lambda value: 190 if value < 128 else 255)
    sheet.paste(writing, (100, 100))
    assert not pictures.is_blank(sheet, 200)


def test_a_picture_without_words_is_never_taken_for_a_page_without_text() -> None:
    tesseract = FakeEngine(reading(TESSERACT, "", confidence=None, words=0))
    page = read_page(task(image=drawing_image()), engine_order("local-only"), engines(tesseract),
                     languages=LANGUAGES)
    assert page.report.status == "low_confidence"
    assert "no text found" in page.report.reason and "no_words" in page.report.signals


MISREAD = ("ane rnen went ta tbe stare ta hny sarne hread and rnilk fram tbe farrner wba lived nearhy "
           "wben tbe snn was np")


def test_ocr_text_gets_the_verdict_of_any_text_layer() -> None:
    """The text itself is judged too: misread words at middling confidence are not trusted,
    though each engine gave them a passing mean confidence."""
    verdict = judge_reading(reading(TESSERACT, MISREAD, confidence=0.8), 0.05)
    assert verdict.suspect and "few dictionary words" in verdict.reason
    assert not judge_reading(reading(TESSERACT, GOOD, confidence=0.8), 0.05).suspect


def test_the_pictures_of_a_sound_page_add_their_text_after_the_native_text() -> None:
    native = layer_page("clean", "Annex A follows.")
    native.report.signals = []
    tesseract = FakeEngine(reading(TESSERACT, "Hey Norconex, this is a test."))
    page = read_page(task(layer=native, scope=PICTURES, regions=((0.1, 0.1, 0.6, 0.3),)),
                     engine_order("local-first"), engines(tesseract), languages=LANGUAGES)
    assert page.text == "Annex A follows.\n\nHey Norconex, this is a test."
    assert (page.report.status, page.report.engine) == ("ocr", "pdfium+tesseract")
    assert "hybrid" in page.report.signals and "text layer kept" in page.report.reason
    assert page.report.ocr is not None and page.report.ocr.regions == 1
    width, height = tesseract.calls[0]
    assert width < 1100 * 0.6 and height < 300  # the region was cut out, not the whole page read


def test_a_picture_in_which_tesseract_finds_no_word_is_not_sent_to_textract() -> None:
    """A chart or a photo on a native page costs no Textract call."""
    native = layer_page("clean", "A native page with a photograph.")
    tesseract = FakeEngine(reading(TESSERACT, "", confidence=None, words=0))
    textract = FakeEngine(reading(TEXTRACT))
    page = read_page(task(layer=native, scope=PICTURES, regions=((0.0, 0.0, 1.0, 1.0),)),
                     engine_order("local-first"), engines(tesseract, textract), languages=LANGUAGES)
    assert textract.calls == []
    assert (page.report.status, page.text) == ("clean", native.text)


def test_a_sound_invisible_layer_stands_when_ocr_reads_no_better() -> None:
    layer = layer_page("clean", GOOD)
    tesseract = FakeEngine(reading(TESSERACT, GOOD, confidence=0.8))
    page = read_page(task(layer=layer), engine_order("local-only"), engines(tesseract), languages=LANGUAGES)
    assert (page.report.status, page.text) == ("clean", GOOD)
    assert "OCR read no better" in page.report.reason


def uncertain_layer(text: str, engine: str = "pdfium") -> PageContent:
    """A text layer whose fonts no map ties to Unicode: sound words, untrusted, sent to be checked."""
    report = PageReport(number=3, status="needs_ocr", engine=engine, char_count=len(text), confidence=0.5,
                        reason="no map in the file ties the page's characters to Unicode; OCR needed",
                        signals=["unverified_font"],
                        attempts=[EngineAttempt(engine="pdfium", chars=len(text), score=1.0, seconds=0.001)])
    return PageContent(number=3, text=text, report=report, ocr_scope=RENDERING_CHECK)


def test_a_rendering_check_that_reads_the_same_text_keeps_the_layer_trusted() -> None:
    layer = uncertain_layer(GOOD)
    misread = GOOD.replace("quick", "qu1ck")  # OCR at low resolution gets a letter wrong
    tesseract = FakeEngine(reading(TESSERACT, misread))
    page = read_page(task(layer=layer, scope=RENDERING_CHECK), engine_order("local-first"), engines(tesseract),
                     languages=LANGUAGES)
    assert (page.report.status, page.report.engine, page.text) == ("clean", "pdfium", GOOD)
    assert "verified_by_rendering" in page.report.signals
    assert 0.95 < (page.report.rendering_agreement or 0) < 1
    assert "verified by the rendered page" in page.report.reason
    assert [a.engine for a in page.report.attempts] == ["pdfium", "tesseract"]


def test_a_rendering_check_that_reads_other_characters_takes_the_ocr_text() -> None:
    layer = uncertain_layer('"7+%- 8+-47 +\'')
    tesseract = FakeEngine(reading(TESSERACT, GOOD))
    page = read_page(task(layer=layer, scope=RENDERING_CHECK), engine_order("local-first"), engines(tesseract),
                     languages=LANGUAGES)
    assert (page.report.status, page.report.engine, page.text) == ("ocr", "tesseract", GOOD)
    assert "rendering_disagrees" in page.report.signals and page.report.rendering_agreement == 0.0


def test_a_layer_another_engine_recovered_is_recovered_once_verified() -> None:
    layer = uncertain_layer(GOOD, engine="pdftotext")
    page = read_page(task(layer=layer, scope=RENDERING_CHECK), engine_order("local-only"),
                     engines(FakeEngine(reading(TESSERACT, GOOD))), languages=LANGUAGES)
    assert (page.report.status, page.report.engine) == ("recovered", "pdftotext")
