"""Tesseract: one page picture in, one :class:`~papersift.ocr.reading.OcrReading` out.

Through pytesseract and the ``tesseract`` binary on PATH (the container image's, or the
system's). The steps, each there because a real scan needed it:

1. grey; light-on-dark pictures inverted (a JBIG2 page decoded with a wrong colour space); a
   sparse page cut to the box around its ink (three lines on an A4 scan: 1.9 s -> 0.7 s);
2. orientation and script by Tesseract's OSD, on a copy scaled so its print has the size OSD
   classifies well (on a fixed-size thumbnail it turned the 8087 magazine page upside down), and
   on a dense page first on its middle band (see OSD_BAND); a picture with too few characters
   gets a second, lower-bar try, then is read upright, and says so;
3. the picture turned upright, its small skew measured from projection profiles and undone
   from 1 degree up (pictures.MIN_DESKEW);
4. rescaled only when its print is far from the size Tesseract reads best (a phone photo's
   tiny text is enlarged; huge type is shrunk); a 300-dpi page is read at its own size (0.7x
   saves 20% of the time and loses 0.004 of similarity on 8087); unevenly lit pictures (photos)
   binarised with local thresholds, bilevel ones handed over bilevel;
5. the model chosen, not guessed: a picture whose lines run across is read first as it came with
   the first configured (Latin) model; that reading is kept when it is sure, or when OSD then
   finds the picture upright and Latin. Otherwise the script OSD named picks among the
   *installed* models (Arabic -> ara, Japanese -> jpn and jpn_vert, the better kept ...); Latin,
   or a script with no model here, is read with the configured languages. A Latin page whose
   text reads as another installed language (German read as English loses its umlauts) is read
   again with that language and the better reading kept.

One recognition per page on the common path (an upright Latin page in the first configured
language): the second reads happen only when the first says they can help. Every decision lands in
``notes``. Pure: no environment read, no global state beyond the cached list of installed models.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import pytesseract
from PIL import Image, ImageOps

from papersift.errors import EngineError, LimitExceededError, OcrUnavailableError
from papersift.ocr import pictures
from papersift.ocr.reading import TESSERACT, Box, OcrReading
from papersift.quality import detect_language
from papersift.tempfolders import temp_prefix

#: Tesseract 5 refuses a picture longer than this on a side ("Image too large": its coordinates are
#: 16-bit); a longer one (a receipt roll, a full-length screenshot of a web page) is read in tiles
MAX_SIDE = 32_767
#: a tile ends at the emptiest row among the last this many before MAX_SIDE: a gap between lines
TILE_CUT_SEARCH = 2_000
#: a picture longer than MAX_SIDE and narrower than this cannot hold a line of text in any tile
MIN_TILED_SIDE = 16
#: a page's budget, shared by its tesseract calls; a dense 300-dpi page takes 3 to 7 s with three models
DEFAULT_TIMEOUT_SECONDS = 120.0
#: LSTM only (the installed "fast" models have no legacy engine); fully automatic page
#: segmentation without OSD (OSD runs once, separately): columns are read one after the other
RECOGNITION_CONFIG = "--oem 1 --psm 3"
#: pictures whose paper is lit this unevenly (pictures.uneven_light) are binarised with Sauvola's
#: local thresholds instead of Tesseract's one global Otsu threshold: the phone photo of a screen
#: (vignetting, 61) loses its left column with Otsu at every scale and is read whole with Sauvola;
#: scans and rendered pages (0 to 3) keep Otsu, which is 0.1-0.2 s faster on a 300-dpi page
UNEVEN_LIGHT = 20
SAUVOLA = "-c thresholding_method=2"
#: line height (ink rows of one line of text, in pixels) that the copy given to OSD is scaled to
OSD_LINE_HEIGHT = 30.0
OSD_SCALE_RANGE = (0.25, 3.0)
#: a dense picture (more pixels than OSD_BAND_ABOVE) is first classified from its middle band
#: (OSD_BAND of its longer side): 0.55-0.6 s of CPU instead of 0.8-0.9 s on the corpus's 300-dpi
#: pages, at the same orientation confidence (8087: 25.4 against 24.6). A band that proposes a turn
#: less surely than OSD_SURE, or upright less surely than OSD_SURE_UPRIGHT, is followed by OSD on
#: the whole picture. Upright needs less: nearly every page is, and reading a page as it came is
#: what happens without OSD, while a wrong turn makes garbage (a noisy RVL-CDIP form: band 2.6)
OSD_BAND_ABOVE = 3_000_000
OSD_BAND = 0.4
OSD_SURE = 5.0
OSD_SURE_UPRIGHT = 2.5
#: the band classifies up to 5x this many characters (Tesseract's default bar is 50): 0.5 s
#: instead of 0.65 s, every corpus page turned 90/180/270 still named right (confidence 4.4-17.6)
OSD_BAND_CHARACTERS = 30
#: Tesseract's default bar is 50 characters; a page with fewer gets a second try with this one
OSD_FEW_CHARACTERS = 10
#: a turn OSD proposes below this confidence is not made (a photo of a screen read as upside down
#: scored 0.2; the sparse rotated pages of the corpus score 2.4 and up)
MIN_ORIENTATION_CONFIDENCE = 1.5
#: a non-Latin script OSD names below this confidence is checked against the configured
#: languages (noisy Latin scans are named Cyrillic at 0.5 to 2.8; Arabic pages score 10 and up)
SURE_SCRIPT_CONFIDENCE = 8.0
#: print whose lines are smaller than this is enlarged to READ_LINE_HEIGHT, larger than
#: DOWNSCALE_ABOVE shrunk to it; in between it is read as it is (Tesseract's sweet spot is a
#: capital letter of about 30 px, a line of about 40)
READ_LINE_HEIGHT = 32.0
UPSCALE_BELOW = 22.0
DOWNSCALE_ABOVE = 90.0
MAX_UPSCALE = 4.0
#: a picture is shrunk only when this many line runs (over the profile's four strips) agree on
#: the size of its print, and never below MIN_DOWNSCALE (a drawing's shapes gave 8 runs 312 px
#: high: shrunk, Tesseract read "Op" in them; small print may sit beside large type)
MIN_LINES_TO_SHRINK = 12
MIN_DOWNSCALE = 0.4
#: a picture is cut to the box around its ink when that box covers less than this share of it
CROP_BELOW = 0.8
#: OSD's copy never has more pixels than this (an A4 page at 300 dpi has 8.7 M; a 40 MP poster is
#: shrunk), and is not enlarged by less than OSD_MIN_UPSCALE (a 300-dpi page is classified as well
#: at its own size, and twice as fast as at 1.2x)
OSD_MAX_PIXELS = 12_000_000
OSD_MIN_UPSCALE = 1.5
#: what an enlargement may grow a picture to (the renderer's cap)
MAX_READ_PIXELS = 40_000_000

#: an upright reading with the first configured language this sure (mean word confidence, words)
#: needs neither OSD nor the other configured languages: nearly every page comes upright, in its
#: corpus's main language, and OSD (0.6 s of CPU a page) and reading with three models at once
#: (1.6x the time of one) were 55% of a page's OCR time (docs/benchmarks.md section 4). A turned
#: page whose lines run up and down (sideways, vertical CJK) is not read this way; an upside-down
#: page, another script or a noisy scan reads unsure and takes OSD (whose upright Latin verdict
#: keeps this reading)
SURE_UPRIGHT_CONFIDENCE = 0.85
SURE_UPRIGHT_WORDS = 8

#: script (as OSD names it) -> the models that read it, most common first
SCRIPT_MODELS: dict[str, tuple[str, ...]] = {
    "Arabic": ("ara", "fas", "urd", "script/Arabic"),
    "Han": ("chi_sim", "chi_tra", "jpn", "script/HanS", "script/HanT"),
    "Japanese": ("jpn", "script/Japanese"),
    "Korean": ("kor", "script/Hangul"),
    "Hangul": ("kor", "script/Hangul"),
    "Cyrillic": ("rus", "ukr", "bul", "srp", "script/Cyrillic"),
    "Greek": ("ell", "script/Greek"),
    "Hebrew": ("heb", "script/Hebrew"),
    "Devanagari": ("hin", "mar", "nep", "script/Devanagari"),
    "Thai": ("tha", "script/Thai"),
    "Bengali": ("ben", "script/Bengali"),
    "Tamil": ("tam", "script/Tamil"),
    "Telugu": ("tel", "script/Telugu"),
    "Kannada": ("kan", "script/Kannada"),
    "Malayalam": ("mal", "script/Malayalam"),
    "Gujarati": ("guj", "script/Gujarati"),
    "Gurmukhi": ("pan", "script/Gurmukhi"),
    "Armenian": ("hye", "script/Armenian"),
    "Georgian": ("kat", "script/Georgian"),
    "Ethiopic": ("amh", "script/Ethiopic"),
    "Fraktur": ("frk", "script/Fraktur"),
}
#: models of vertical writing: read beside their horizontal model, the better reading kept
VERTICAL_MODELS = {"jpn": "jpn_vert", "chi_sim": "chi_sim_vert", "chi_tra": "chi_tra_vert", "kor": "kor_vert"}
#: ISO 639-1 (what ``quality.detect_language`` names) -> Tesseract model, for the Latin re-read
LATIN_MODELS = {"en": "eng", "pt": "por", "es": "spa", "fr": "fra", "de": "deu", "it": "ita", "nl": "nld"}

_TOO_FEW_CHARACTERS = "Too few characters"
_MISSING_MODEL = re.compile(r"Failed loading language|Error opening data file|Could not initialize", re.IGNORECASE)
# CJK ideographs, kana, and their punctuation and full-width forms: words of these are not spaced
_UNSPACED = re.compile(r"[\u2e80-\u2fdf\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


@dataclass(frozen=True)
class Orientation:
    """What OSD said about a picture, or why it said nothing."""

    #: clockwise degrees that turn the picture upright (0 when OSD failed or was not sure)
    rotate: int = 0
    confidence: float = 0.0
    script: str | None = None
    script_confidence: float = 0.0
    note: str | None = None


@dataclass(frozen=True)
class _Deadline:
    """The page's time budget: every tesseract call is bounded by what is left of it."""

    ends: float
    budget: float

    def left(self) -> float:
        return self.ends - time.perf_counter()


@dataclass(frozen=True)
class _Read:
    """One recognition of the prepared picture with one model set."""

    language: str
    text: str
    confidence: float | None
    words: int
    #: per paragraph of ``text`` (runs of lines between blank lines), the box around its words as
    #: fractions of the picture read (x0, y0, x1, y1 from the top left)
    boxes: tuple[Box, ...] = ()


@cache
def installed_languages() -> frozenset[str]:
    """The models the tesseract binary can load (``--list-langs``), asked once per process."""
    try:
        return frozenset(pytesseract.get_languages(config=""))
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrUnavailableError("the tesseract binary is not installed or not on PATH") from exc


def read_image(image: Image.Image, languages: Sequence[str], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
               installed: frozenset[str] | None = None, detect_orientation: bool = True) -> OcrReading:
    """Read one page picture with Tesseract; see the module's docstring for the steps.

    ``languages`` are the configured Tesseract models for Latin print (``("eng", "por", "spa")``);
    ``installed`` the models the binary has (asked once when None); ``timeout_seconds`` is the page's
    budget: each tesseract call is bounded by what is left of it, and a comparison read that finds
    none left is skipped (noted) rather than failing a page already read. ``detect_orientation=False``
    skips OSD for a caller that knows the picture is upright. Raises OcrUnavailableError when the
    binary or every configured model is missing, EngineError when tesseract fails or runs out of
    time on this picture.
    """
    if max(image.size) > MAX_SIDE:
        return _read_in_tiles(image, languages, timeout_seconds=timeout_seconds, installed=installed,
                              detect_orientation=detect_orientation)
    started = time.perf_counter()
    deadline = _Deadline(started + timeout_seconds, timeout_seconds)
    models = installed if installed is not None else installed_languages()
    notes: list[str] = []
    configured = _configured(languages, models, notes)
    gray = pictures.grayscale(image)
    if pictures.is_inverted(gray):
        gray = ImageOps.invert(gray)
        notes.append("light text on a dark background: inverted before reading")
    whole = gray
    box = pictures.ink_box(gray)
    crop = (0.0, 0.0, 1.0, 1.0)
    if box is not None and (box[2] - box[0]) * (box[3] - box[1]) < CROP_BELOW * gray.width * gray.height:
        gray = gray.crop(box)  # a sparse page: layout analysis and OSD then see only the print
        crop = (box[0] / whole.width, box[1] / whole.height, box[2] / whole.width, box[3] / whole.height)
    with tempfile.TemporaryDirectory(prefix=temp_prefix("ocr")) as workdir:
        files = _Files(Path(workdir))
        first = None
        if detect_orientation and pictures.lines_run_across(gray):
            first = _read_as_it_came(gray, files, configured, deadline)
        if first is not None and first.sure:
            best = first.kept(f"read as it came with {first.read.language}: sure ({first.summary}), no orientation "
                              "detection needed", models, deadline, notes)
            return _reading(best, whole, notes, started, orientation=Orientation(script="Latin"), skew=first.skew,
                            crop=crop)
        if first is not None:
            notes.append(f"read as it came with {first.read.language}: unsure ({first.summary}): orientation and "
                         "script detected")
        orientation = Orientation(note="OSD skipped: the caller says the picture is upright")
        if detect_orientation and "osd" in models:
            orientation = _orientation(gray, files, deadline)
        elif detect_orientation:
            orientation = Orientation(note="orientation not detected: the osd model is not installed")
        if orientation.note:
            notes.append(orientation.note)
        candidates = _candidates(orientation, configured, models, notes)
        if first is not None and not orientation.rotate and candidates == [configured]:
            # the reading as it came is the upright Latin one. Read again with all the configured
            # languages at once, the RVL-CDIP forms' handwriting came out as Spanish-looking words
            # ("Caballa", "lalala") that raised their confidence 0.03-0.09, two across the trust
            # line, for 2.2 s a page (docs/benchmarks.md section 4); a page in another configured
            # language is re-read in it alone by _latin_reread
            best = first.kept(f"upright, Latin: kept the reading with {first.read.language}", models, deadline, notes)
            return _reading(best, whole, notes, started, orientation=orientation, skew=first.skew, crop=crop)
        path, skew, config = _prepared(pictures.turned(gray, orientation.rotate), files, notes)
        reads = [_recognise(path, candidates[0], config, deadline)]
        for language in candidates[1:]:
            try:
                reads.append(_recognise(path, language, config, deadline))
            except EngineError as exc:
                notes.append(f"not compared with {language}: {exc}")
        best = _best(reads, notes)
        if best.language == configured:
            best = _latin_reread(best, path, configured, models, config, deadline, notes)
    return _reading(best, whole, notes, started, orientation=orientation, skew=skew, crop=crop)


def _read_in_tiles(image: Image.Image, languages: Sequence[str], *, timeout_seconds: float,
                   installed: frozenset[str] | None, detect_orientation: bool) -> OcrReading:
    """A picture longer than Tesseract takes, read in tiles of at most MAX_SIDE a side, each cut
    at the emptiest row (or column) near the limit so that no line of print is cut through, in
    reading order (rows of tiles top to bottom). Raises LimitExceededError for a picture too
    narrow for any tile of it to hold a line of text (1 x 2,000,000 px)."""
    started = time.perf_counter()
    gray = pictures.grayscale(image)
    width, height = gray.size
    if min(width, height) < MIN_TILED_SIDE:
        raise LimitExceededError(
            f"the picture is {width:,} x {height:,} px: longer than Tesseract's {MAX_SIDE:,} px a side, and "
            f"{min(width, height)} px across, too narrow for any tile of it to hold a line of text")
    boxes = [(left, top, right, bottom)
             for top, bottom in pictures.tile_spans(gray, MAX_SIDE, TILE_CUT_SEARCH, across=True)
             for left, right in pictures.tile_spans(gray, MAX_SIDE, TILE_CUT_SEARCH, across=False)]
    readings: list[OcrReading] = []
    notes = [f"{width:,} x {height:,} px, longer than Tesseract's {MAX_SIDE:,} px a side: read in {len(boxes)} "
             "tiles cut at their emptiest rows"]
    failures: list[EngineError] = []
    for index, box in enumerate(boxes, start=1):
        left = timeout_seconds - (time.perf_counter() - started)
        if left <= 0:
            notes.append(f"no time left of the page's {timeout_seconds:g} s for tiles {index} to {len(boxes)}")
            break
        try:
            reading = read_image(gray.crop(box), languages, timeout_seconds=left, installed=installed,
                                 detect_orientation=detect_orientation)
        except EngineError as exc:
            failures.append(exc)
            notes.append(f"tile {index}: {exc}")
            continue
        readings.append(reading)
        notes.extend(f"tile {index}: {note}" for note in reading.notes[:3])
    if not readings:
        raise failures[0] if failures else EngineError(f"no tile of the {width} x {height} px picture was read")
    words = sum(reading.words for reading in readings)
    scored = [reading for reading in readings if reading.confidence is not None and reading.words]
    confidence = sum((r.confidence or 0.0) * r.words for r in scored) / words if scored and words else None
    main = max(readings, key=lambda reading: reading.words)
    return OcrReading(
        engine=TESSERACT, text="\n\n".join(r.text for r in readings if r.text.strip()), confidence=confidence,
        words=words, seconds=round(time.perf_counter() - started, 3), language=main.language, script=main.script,
        orientation=main.orientation, skew=main.skew, notes=tuple(notes),
    )


def _reading(best: _Read, whole: Image.Image, notes: list[str], started: float, *, orientation: Orientation,
             skew: float, crop: Box) -> OcrReading:
    if not best.words:
        notes.append(f"no words found; ink covers {pictures.ink_share(whole):.1%} of the picture")
    return OcrReading(
        engine=TESSERACT, text=best.text, confidence=best.confidence, words=best.words,
        seconds=round(time.perf_counter() - started, 3), language=best.language, script=orientation.script,
        orientation=orientation.rotate, skew=skew, notes=tuple(notes),
        boxes=tuple(on_page(b, orientation.rotate, crop) for b in best.boxes),
    )


@dataclass(frozen=True)
class _AsItCame:
    """The picture read as it came, straightened, with the first configured (Latin) model."""

    read: _Read
    path: Path
    skew: float
    config: str
    notes: tuple[str, ...]

    @property
    def sure(self) -> bool:
        return (self.read.confidence or 0.0) >= SURE_UPRIGHT_CONFIDENCE and self.read.words >= SURE_UPRIGHT_WORDS

    @property
    def summary(self) -> str:
        return f"confidence {_confidence(self.read)}, {self.read.words} words"

    def kept(self, why: str, models: frozenset[str], deadline: _Deadline, notes: list[str]) -> _Read:
        """This reading as the page's, or its re-read in the language its text is in."""
        notes.extend(self.notes)
        notes.append(why)
        return _latin_reread(self.read, self.path, self.read.language, models, self.config, deadline, notes)


def _read_as_it_came(gray: Image.Image, files: _Files, configured: str, deadline: _Deadline) -> _AsItCame | None:
    """The first reading of a picture whose lines run across; None when the first configured
    model is not a Latin one (OSD's script detection then picks its companions)."""
    primary = configured.split("+")[0]
    if primary not in LATIN_MODELS.values():
        return None
    notes: list[str] = []
    path, skew, config = _prepared(gray, files, notes)
    return _AsItCame(_recognise(path, primary, config, deadline), path, skew, config, tuple(notes))


# --- languages ---------------------------------------------------------------------------------


def _configured(languages: Sequence[str], models: frozenset[str], notes: list[str]) -> str:
    """The configured models that are installed, as tesseract's ``-l`` value."""
    present = [language for language in languages if language in models]
    missing = [language for language in languages if language not in models]
    if not present:
        raise OcrUnavailableError(f"no configured Tesseract model is installed: {', '.join(languages) or 'none'} "
                                  f"(installed: {', '.join(sorted(models)) or 'none'})")
    if missing:
        notes.append(f"configured models not installed, read without them: {', '.join(missing)}")
    return "+".join(present)


def choose_models(script: str | None, configured: str, models: frozenset[str]) -> tuple[list[str], str | None]:
    """The model sets to read a picture of ``script`` with (each read, the best kept), and a note
    when the script's own model is missing. Latin, an unknown script or one without an installed
    model: the configured languages."""
    if script in (None, "Latin", "Common"):
        return [configured], None
    known = SCRIPT_MODELS.get(script, ())
    wanted = [model for model in configured.split("+") if model in known] or [m for m in known if m in models][:1]
    if not wanted:
        names = ", ".join(model for model in known if "/" not in model) or "none known"
        return [configured], f"OSD names the {script} script but no model for it is installed ({names}): " \
                             f"read with {configured}"
    candidates = ["+".join(wanted)]
    vertical = [VERTICAL_MODELS[m] for m in wanted if m in VERTICAL_MODELS and VERTICAL_MODELS[m] in models]
    if vertical:
        candidates.append("+".join(vertical))
    return candidates, None


def _candidates(orientation: Orientation, configured: str, models: frozenset[str], notes: list[str]) -> list[str]:
    candidates, note = choose_models(orientation.script, configured, models)
    if note:
        notes.append(f"{note} (script confidence {orientation.script_confidence:.1f})")
    if candidates != [configured] and orientation.script_confidence < SURE_SCRIPT_CONFIDENCE:
        notes.append(f"OSD names the {orientation.script} script with confidence "
                     f"{orientation.script_confidence:.1f}: also read with {configured}")
        candidates.append(configured)
    return candidates


def _best(reads: list[_Read], notes: list[str]) -> _Read:
    best = max(reads, key=lambda read: read.confidence or 0.0)
    if len(reads) > 1:
        compared = ", ".join(f"{read.language} {_confidence(read)} ({read.words} words)" for read in reads)
        notes.append(f"read with {compared}: kept {best.language}")
    return best


def _latin_reread(first: _Read, path: Path, configured: str, models: frozenset[str], config: str,
                  deadline: _Deadline, notes: list[str]) -> _Read:
    """Read again with the language the text is in, when that model is installed and was not
    among the configured ones; keep the better reading."""
    language = detect_language(first.text) if first.text else None
    model = LATIN_MODELS.get(language or "")
    if model is None or model in configured.split("+"):
        return first
    if model not in models:
        notes.append(f"the text reads as {language}, whose model {model} is not installed: kept {configured}")
        return first
    try:
        second = _recognise(path, model, config, deadline)
    except EngineError as exc:
        notes.append(f"the text reads as {language}, not re-read with {model}: {exc}")
        return first
    kept = second if (second.confidence or 0.0) > (first.confidence or 0.0) else first
    notes.append(f"the text reads as {language}: re-read with {model}, confidence {_confidence(second)} "
                 f"({second.words} words) against {_confidence(first)} ({first.words} words) with {configured}; "
                 f"kept {kept.language}")
    return kept


def _confidence(read: _Read) -> str:
    return "none" if read.confidence is None else f"{read.confidence:.2f}"


# --- the picture -------------------------------------------------------------------------------


class _Files:
    """Pictures handed to tesseract as uncompressed PGM files: writing (and tesseract reading)
    a PNG of a 300-dpi page costs 0.1 to 0.3 s, a PGM a few milliseconds."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0

    def write(self, image: Image.Image) -> Path:
        self.count += 1
        histogram = image.histogram()
        if histogram[0] + histogram[255] == image.width * image.height:
            # a bilevel picture (a fax, a 1-bit TIFF) stays bilevel: Tesseract then skips its own
            # thresholding, 0.2 s of a 300-dpi page
            path = self.directory / f"page-{self.count}.pbm"
            image.convert("1", dither=Image.Dither.NONE).save(path, format="PPM")
        else:
            path = self.directory / f"page-{self.count}.pgm"
            image.save(path, format="PPM")
        return path


def _orientation(gray: Image.Image, files: _Files, deadline: _Deadline) -> Orientation:
    """OSD on a copy whose print is scaled to OSD_LINE_HEIGHT: on its middle band first when it
    is dense, on the whole copy when the band is unsure, and once more with a lower bar when the
    picture holds too few characters for Tesseract's default."""
    height = pictures.text_size(gray)
    if height is None:
        return Orientation(note="orientation not detected (no print found on the picture): read upright")
    low, high = OSD_SCALE_RANGE
    factor = min(max(OSD_LINE_HEIGHT / height, low), high)
    if 1.0 < factor < OSD_MIN_UPSCALE:
        factor = 1.0
    factor = min(factor, (OSD_MAX_PIXELS / max(gray.width * gray.height, 1)) ** 0.5, MAX_SIDE / max(gray.size))
    copy = pictures.scaled(gray, factor) if abs(factor - 1.0) > 0.1 else gray
    if copy.width * copy.height > OSD_BAND_ABOVE:
        band = _osd(files.write(_middle_band(copy)), f"-c min_characters_to_try={OSD_BAND_CHARACTERS}", deadline)
        if isinstance(band, Orientation) and band.confidence >= (OSD_SURE_UPRIGHT if not band.rotate else OSD_SURE):
            return _checked(band)
    path = files.write(copy)
    found = _osd(path, "", deadline)
    if isinstance(found, str) and _TOO_FEW_CHARACTERS in found:
        found = _osd(path, f"-c min_characters_to_try={OSD_FEW_CHARACTERS}", deadline)
    if isinstance(found, str):
        reason = "too few characters for OSD" if found == _TOO_FEW_CHARACTERS else found
        return Orientation(note=f"orientation not detected ({reason}): read upright")
    return _checked(found)


def _checked(found: Orientation) -> Orientation:
    if found.rotate and found.confidence < MIN_ORIENTATION_CONFIDENCE:
        note = (f"OSD proposes a turn of {found.rotate} degrees with confidence {found.confidence:.1f}: "
                "too weak, read upright")
        return replace(found, rotate=0, note=note)
    return found


def _middle_band(picture: Image.Image) -> Image.Image:
    """The middle OSD_BAND of a picture across its longer side: whole characters (OSD classifies
    characters one by one, so lines cut short do not matter) with the layout work of a fraction."""
    width, height = picture.size
    if height >= width:
        return picture.crop((0, round(height * (1 - OSD_BAND) / 2), width, round(height * (1 + OSD_BAND) / 2)))
    return picture.crop((round(width * (1 - OSD_BAND) / 2), 0, round(width * (1 + OSD_BAND) / 2), height))


def parse_osd(output: str) -> Orientation | None:
    """Tesseract's OSD report ("Rotate: 180", "Orientation confidence: 11.0", "Script: Latin",
    "Script confidence: 5.8", one per line) as an Orientation; None when it lacks the turn."""
    fields = dict(line.split(": ", 1) for line in output.splitlines() if ": " in line)
    try:
        rotate = int(fields["Rotate"]) % 360
        confidence = float(fields.get("Orientation confidence", "0"))
        script_confidence = float(fields.get("Script confidence", "0"))
    except (KeyError, ValueError):
        return None
    if rotate % 90:
        return None
    script = fields.get("Script", "").strip() or None
    return Orientation(rotate=rotate, confidence=confidence, script=script, script_confidence=script_confidence)


def _osd(path: Path, config: str, deadline: _Deadline) -> Orientation | str:
    """OSD's answer, or why there is none (a string)."""
    if deadline.left() <= 0:
        return f"no time left of the page's {deadline.budget:g} s"
    try:
        output = pytesseract.image_to_osd(str(path), config=config, timeout=deadline.left())
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrUnavailableError("the tesseract binary is not installed or not on PATH") from exc
    except pytesseract.TesseractError as exc:
        message = str(exc.message)
        if _MISSING_MODEL.search(message):
            return "the osd model could not be loaded"
        return _TOO_FEW_CHARACTERS if _TOO_FEW_CHARACTERS in message else f"OSD failed ({message[-120:]})"
    except RuntimeError as exc:  # pytesseract's timeout
        return f"OSD {exc}"
    return parse_osd(str(output)) or "OSD gave no answer"


def _prepared(upright: Image.Image, files: _Files, notes: list[str]) -> tuple[Path, float, str]:
    """The picture straightened and written for tesseract: its file, the skew undone and the
    recognition settings (Sauvola's thresholds for an unevenly lit one)."""
    prepared, skew = _straightened(upright, notes)
    config = RECOGNITION_CONFIG
    if pictures.uneven_light(prepared) >= UNEVEN_LIGHT:
        config = f"{config} {SAUVOLA}"
        notes.append("unevenly lit (a photo?): binarised with local (Sauvola) thresholds")
    return files.write(prepared), skew, config


def _straightened(upright: Image.Image, notes: list[str]) -> tuple[Image.Image, float]:
    """Deskewed and rescaled for recognition; returns the picture and the skew undone."""
    lines = pictures.text_lines(upright)
    skew = lines.skew if abs(lines.skew) >= pictures.MIN_DESKEW else 0.0
    picture = pictures.deskewed(upright, skew) if skew else upright
    height = lines.line_height
    if height is None:
        return picture, skew
    factor = 1.0
    if height < UPSCALE_BELOW:
        budget = (MAX_READ_PIXELS / max(picture.width * picture.height, 1)) ** 0.5
        factor = min(READ_LINE_HEIGHT / height, MAX_UPSCALE, max(budget, 1.0))
    elif height > DOWNSCALE_ABOVE and lines.lines >= MIN_LINES_TO_SHRINK:
        factor = max(READ_LINE_HEIGHT / height, MIN_DOWNSCALE)
    # never past what Tesseract takes: a tile of a long picture is as long as it may be already
    factor = min(factor, MAX_SIDE / max(picture.size))
    if abs(factor - 1.0) > 0.1 or max(picture.size) > MAX_SIDE:
        notes.append(f"lines of print {height:.0f} px high: read at {factor:.2f}x")
        picture = pictures.scaled(picture, factor)
    return picture, skew


# --- recognition -------------------------------------------------------------------------------


def _recognise(path: Path, language: str, config: str, deadline: _Deadline) -> _Read:
    if deadline.left() <= 0:
        raise EngineError(f"no time left of the page's {deadline.budget:g} s to read with {language}")
    try:
        tsv = pytesseract.image_to_data(str(path), lang=language, config=config,
                                        output_type=pytesseract.Output.BYTES, timeout=deadline.left())
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrUnavailableError("the tesseract binary is not installed or not on PATH") from exc
    except pytesseract.TesseractError as exc:
        message = str(exc.message)
        if _MISSING_MODEL.search(message):
            raise OcrUnavailableError(f"tesseract could not load the model {language}: {message[-200:]}") from exc
        raise EngineError(f"tesseract failed reading with {language}: {message[-200:]}") from exc
    except RuntimeError as exc:  # pytesseract raises a bare RuntimeError on its timeout
        raise EngineError(f"tesseract did not finish reading with {language} within the page's "
                          f"{deadline.budget:g} s") from exc
    return _parse_tsv(bytes(tsv).decode("utf-8", errors="replace"), language)


def _parse_tsv(tsv: str, language: str) -> _Read:
    """Lines in reading order joined by newlines; paragraphs and blocks (columns) separated by an
    empty line; mean confidence over the words Tesseract scored; each paragraph's box around its
    words, as fractions of the picture (the TSV's level-1 row gives its size)."""
    lines: dict[tuple[int, int, int], list[str]] = {}
    spans: dict[tuple[int, int], list[int]] = {}
    size = (0, 0)
    confidences: list[float] = []
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t", 11)
        if len(cells) < 12:
            continue
        if cells[0] == "1":
            size = (int(cells[8]), int(cells[9]))
        if cells[0] != "5":
            continue
        word = cells[11].strip()
        confidence = float(cells[10])
        if not word or confidence < 0:
            continue
        key = (int(cells[2]), int(cells[3]), int(cells[4]))  # block, paragraph, line
        lines.setdefault(key, []).append(word)
        confidences.append(confidence)
        left, top, width, height = int(cells[6]), int(cells[7]), int(cells[8]), int(cells[9])
        span = spans.get(key[:2])
        if span is None:
            spans[key[:2]] = [left, top, left + width, top + height]
        else:
            span[:] = [min(span[0], left), min(span[1], top), max(span[2], left + width), max(span[3], top + height)]
    text = _layout(lines)
    mean = round(sum(confidences) / len(confidences) / 100.0, 4) if confidences else None
    boxes: tuple[Box, ...] = ()
    if size[0] > 0 and size[1] > 0:
        boxes = tuple((x0 / size[0], y0 / size[1], x1 / size[0], y1 / size[1]) for x0, y0, x1, y1 in spans.values())
    return _Read(language=language, text=text, confidence=mean, words=len(confidences), boxes=boxes)


def _layout(lines: dict[tuple[int, int, int], list[str]]) -> str:
    out: list[str] = []
    previous: tuple[int, int] | None = None
    for key, words in lines.items():
        if previous is not None and key[:2] != previous:
            out.append("")
        out.append(_join_words(words))
        previous = key[:2]
    return "\n".join(out)


def on_page(box: Box, rotate: int, crop: Box = (0.0, 0.0, 1.0, 1.0)) -> Box:
    """A box on the picture read (turned ``rotate`` degrees clockwise from the page, cut to ``crop``,
    fractions of the page) as fractions of the page. Deskewing and rescaling keep fractions (within
    the skew's degree or two)."""
    x0, y0, x1, y1 = box
    for _ in range((rotate // 90) % 4):  # undo one clockwise quarter turn: (x, y) -> (y, 1 - x)
        x0, y0, x1, y1 = y0, 1.0 - x1, y1, 1.0 - x0
    left, top, right, bottom = crop
    width, height = right - left, bottom - top
    return (round(left + x0 * width, 4), round(top + y0 * height, 4),
            round(left + x1 * width, 4), round(top + y1 * height, 4))


def _join_words(words: list[str]) -> str:
    """Words of a line joined by spaces, except between CJK words (Tesseract cuts Japanese and
    Chinese lines into "words" that the script writes without spaces)."""
    joined = words[0]
    for word in words[1:]:
        glue = "" if _UNSPACED.match(joined[-1]) and _UNSPACED.match(word[0]) else " "
        joined += glue + word
    return joined
