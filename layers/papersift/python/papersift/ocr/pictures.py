"""Preparing a page picture for OCR: what both engines (Tesseract, Textract) need before they read.

Pillow only, on purpose: numpy is not a dependency of the layer (nothing installed requires
it), and OpenCV or scikit-image would be a heavy addition to the OCR Lambda's image and cold
start for what a few C-level Pillow operations do here: everything below costs about 0.15 s of
CPU on a 300-dpi A4 page, most of it the skew search (45 rotations of an 800-px mask). The trick
that makes Pillow enough: ``image.resize((1, height), BOX)`` averages every row in C, so a
projection profile (how much ink each row holds) is one resize, not a Python loop over pixels.

Conventions: a picture is worked on as 8-bit grey (mode ``L``), dark ink on a light background;
angles are degrees turned *clockwise* (how :class:`~papersift.ocr.reading.OcrReading` records
``orientation`` and ``skew``), although Pillow's own ``rotate`` turns counter-clockwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import median

from PIL import Image, ImageFilter

#: a pixel is ink when it differs from the background level by more than this (0..255): far above
#: scanner noise and JPEG ringing on a blank sheet, well below print on grey paper
INK_CONTRAST = 80
#: deciding that a picture is blank, a pixel is a mark when it differs from the paper by more than
#: this: half INK_CONTRAST, so faint pencil and pale print count, JPEG noise on a white sheet not
BLANK_CONTRAST = 40
#: a picture with less marked area than this (square inches) is blank: a dust speck is ~0.0001, one
#: 10-pt letter ~0.002, a short word ~0.01 (at 300 dpi: 90 pixels)
BLANK_MARK_SQUARE_INCHES = 0.001
#: the background is dark (white text on black) when more than this share of the picture is dark
INVERTED_DARK_SHARE = 0.5
#: width of the working copy the skew and line-height estimates run on: lines of ordinary print
#: stay several pixels high, and every profile is one small resize
PROFILE_WIDTH = 800
#: small-angle skew searched for, either way; larger tilts are not skew but a photo's perspective
MAX_SKEW = 10.0
#: below this (degrees) a tilt is left alone: Tesseract's own line finder copes (the 8087 page
#: turned by 0.5: similarity 0.931 as it is, 0.928 straightened; by 5: 0.872 as it is, 0.935
#: straightened), and straightening a 300-dpi page costs 0.07 s plus, on some pages, a slower read
MIN_DESKEW = 1.0
#: a skew estimate counts only when its profile is this much sharper than the upright one
SKEW_GAIN = 1.05


@dataclass(frozen=True)
class TextLines:
    """What the projection profile says about the lines of text on a picture."""

    #: clockwise degrees that would straighten the lines (0.0 when none were found)
    skew: float
    #: median height in pixels of a line of text (ink rows, ascenders to descenders); None when no
    #: lines were found (blank page, a photo, a sideways page)
    line_height: float | None
    #: how many lines the profile separated
    lines: int


def grayscale(image: Image.Image) -> Image.Image:
    """The picture as 8-bit grey, as a viewer shows it: see :func:`as_displayed`."""
    return image if image.mode == "L" else as_displayed(image)


#: EXIF Orientation (tag 274) -> the transposition that shows the picture upright
_EXIF_UPRIGHT = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}
_EXIF_ORIENTATION = 274
_ALPHA_MODES = frozenset({"RGBA", "RGBa", "LA", "La", "PA"})
_WIDE_GREY_MODES = frozenset({"I;16", "I;16B", "I;16L", "I;16N", "I", "F"})


def as_displayed(image: Image.Image, *, colour: bool = False) -> Image.Image:
    """The picture as every viewer shows it, in the one mode the readers take: 8-bit grey
    (``L``), or ``RGB`` with ``colour``. The one place pictures are normalised, so every reader
    (Tesseract, Textract, a thumbnail) sees the same pixels:

    - EXIF orientation applied (a phone stores a portrait photo sideways with Orientation 6);
    - transparency laid on white (a PNG of black text on a fully transparent background has
      invisible pixels of any colour, often black: grey first would read it as all ink);
    - 16-bit and float grey scaled by their range (white stays white), CMYK, palette, bilevel
      and the rest converted."""
    orientation = _orientation(image)
    if image.mode in _ALPHA_MODES or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        shown = Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    elif image.mode in _WIDE_GREY_MODES:
        shown = _eight_bit_grey(image)
    elif image.mode == "CMYK":  # ink amounts: what they print is RGB
        shown = image.convert("RGB")
    elif image.mode == "LAB":  # Pillow converts LAB to nothing; its L channel is the lightness
        shown = image.getchannel("L")
    else:  # L, RGB, 1, P, YCbCr, HSV: Pillow converts them straight (1 and P to L in one pass)
        shown = image
    target = "RGB" if colour else "L"
    # a picture already in the target mode is copied all the same: the caller's may be a frame of
    # an open file (lazily decoded, seeked, closed after), which must not leave with the result
    shown = shown.convert(target) if shown.mode != target or shown is image else shown
    method = _EXIF_UPRIGHT.get(orientation)
    return shown.transpose(method) if method is not None else shown


def _orientation(image: Image.Image) -> int:
    try:
        return int(image.getexif().get(_EXIF_ORIENTATION, 1))
    except Exception:  # a damaged EXIF block: the picture is shown as stored, like viewers do
        return 1


def _eight_bit_grey(image: Image.Image) -> Image.Image:
    """16-bit, 32-bit and float grey as 8 bits, scaled by the range the values can take, so a
    blank page stays white: 0..65535 for 16 bits; for 32-bit integers and floats the smallest of
    0..1 (floats), 0..255 and 0..65535 that holds them, else their own extremes."""
    low, high = (float(edge) for edge in image.getextrema()[:2])  # type: ignore[arg-type]
    if image.mode.startswith("I;16"):
        low, high = 0.0, 65535.0
    elif low >= 0:
        ranges = (1.0, 255.0, 65535.0) if image.mode == "F" else (255.0, 65535.0)
        low, high = 0.0, next((top for top in ranges if high <= top), high)
    scale = 255.0 / (high - low) if high > low else 1.0
    return image.convert("F").point(lambda value: (value - low) * scale).convert("L")


def background_level(gray: Image.Image) -> int:
    """The grey level most of the picture has (its median): paper on a scan."""
    return _percentile(gray.histogram(), 0.5)


def is_inverted(gray: Image.Image) -> bool:
    """Whether the picture is light on dark (a negative, a JBIG2 page decoded with a wrong colour
    space): Tesseract reads dark on light, and its own per-line inversion costs a second pass over
    every line it is unsure of."""
    histogram = gray.histogram()
    dark = sum(histogram[:128])
    return dark > INVERTED_DARK_SHARE * max(sum(histogram), 1)


def ink_share(image: Image.Image) -> float:
    """Share (0..1) of the picture's pixels that stand out from its background: ink on paper, or
    light on a dark picture. A blank scan is near 0 even with speckle and JPEG noise; a page of
    print is a few percent; a photo or drawing with no words is more. Lets a verdict tell "blank
    page" from "a picture with no words" when OCR found no text."""
    gray = grayscale(image)
    histogram = gray.histogram()
    total = sum(histogram)
    if not total:
        return 0.0
    level = _percentile(histogram, 0.5)
    ink = sum(histogram[: max(level - INK_CONTRAST, 0)]) + sum(histogram[min(level + INK_CONTRAST + 1, 256):])
    return ink / total


def marked_square_inches(image: Image.Image, dpi: float) -> float:
    """The area, in square inches, of the picture's pixels that differ from its paper by more than
    BLANK_CONTRAST: every mark a reader could take for writing, faint pencil included."""
    histogram = grayscale(image).histogram()
    level = _percentile(histogram, 0.5)
    marks = sum(histogram[: max(level - BLANK_CONTRAST, 0)]) + sum(histogram[min(level + BLANK_CONTRAST + 1, 256):])
    return marks / max(dpi, 1.0) ** 2


def is_blank(image: Image.Image, dpi: float) -> bool:
    """Whether the picture holds no mark the size of a printed letter: a blank sheet, a white
    frame, dust. Judged on marked area at the picture's resolution, not on a share of it, so a
    poster with one line on it is not blank and a thumbnail with one letter is not either; a
    page it calls blank is not worth an OCR engine's call."""
    return marked_square_inches(image, dpi) < BLANK_MARK_SQUARE_INCHES


def tile_spans(gray: Image.Image, limit: int, search: int, *, across: bool) -> list[tuple[int, int]]:
    """Where to cut a picture longer than ``limit`` into tiles: (start, end) spans of its rows
    (``across``: tiles stacked top to bottom) or of its columns, each at most ``limit`` long, each
    ending at the emptiest row (column) of the last ``search`` before its limit: between two lines
    of print, rarely through one. One span when the picture is not longer than ``limit``."""
    length = gray.height if across else gray.width
    if length <= limit:
        return [(0, length)]
    # one averaged grey level a row (column): a single C-level resize, as for the profiles below
    line = gray.resize((1, gray.height) if across else (gray.width, 1), Image.Resampling.BOX).tobytes()
    paper = background_level(gray)
    spans: list[tuple[int, int]] = []
    start = 0
    while length - start > limit:
        window = range(start + max(limit - search, 1), start + limit)
        end = min(window, key=lambda row: (abs(line[row] - paper), -row))
        spans.append((start, end))
        start = end
    spans.append((start, length))
    return spans


def turned(image: Image.Image, degrees: int) -> Image.Image:
    """The picture turned clockwise by a multiple of 90 degrees (losslessly, by transposition)."""
    steps = (degrees // 90) % 4
    if degrees % 90:
        raise ValueError(f"not a quarter turn: {degrees}")
    # Pillow's ROTATE_n turns counter-clockwise
    transposition = {1: Image.Transpose.ROTATE_270, 2: Image.Transpose.ROTATE_180, 3: Image.Transpose.ROTATE_90}
    return image.transpose(transposition[steps]) if steps else image


def deskewed(image: Image.Image, degrees: float) -> Image.Image:
    """The picture turned clockwise by a small angle, grown to keep its corners, the new corners
    filled with its own background so they read as paper, not as ink."""
    if not degrees:
        return image
    gray = grayscale(image)
    return gray.rotate(-degrees, resample=Image.Resampling.BILINEAR, expand=True,
                       fillcolor=background_level(gray))


def scaled(image: Image.Image, factor: float) -> Image.Image:
    """The picture resized by ``factor``: down with a box filter (fast, and it averages rather
    than drops the thin strokes of print), up bicubically (smooth edges for the recogniser)."""
    if factor == 1.0:
        return image
    size = (max(round(image.width * factor), 1), max(round(image.height * factor), 1))
    resample = Image.Resampling.BOX if factor < 1.0 else Image.Resampling.BICUBIC
    return image.resize(size, resample)


def cropped(image: Image.Image, box: Sequence[float], *, margin: int = 0) -> Image.Image:
    """The part of the picture inside ``box`` (left, top, right, bottom in pixels), widened by
    ``margin`` pixels and clamped to the picture; fractional edges are rounded outwards so no ink
    on the border is cut. Raises ValueError when nothing of the box lies on the picture."""
    left, top, right, bottom = box
    edges = (max(math.floor(left) - margin, 0), max(math.floor(top) - margin, 0),
             min(math.ceil(right) + margin, image.width), min(math.ceil(bottom) + margin, image.height))
    if edges[0] >= edges[2] or edges[1] >= edges[3]:
        raise ValueError(f"the box {tuple(box)} lies outside the {image.width}x{image.height} picture")
    return image.crop(edges)


def text_lines(gray: Image.Image, *, max_skew: float = MAX_SKEW) -> TextLines:
    """Skew and line height of the print on an upright grey picture, from projection profiles
    of a small binarised copy: turned to the right angle, its rows of ink and gaps alternate most
    sharply (the sum of squared differences between neighbouring rows peaks)."""
    factor = min(PROFILE_WIDTH / gray.width, 1.0)
    small = scaled(gray, factor) if factor < 1.0 else gray
    ink = _ink_mask(small)
    if ink is None:
        return TextLines(skew=0.0, line_height=None, lines=0)
    upright = _sharpness(ink, 0.0)
    best_angle, best = 0.0, upright
    coarse = [step * 0.5 for step in range(-int(max_skew * 2), int(max_skew * 2) + 1)]
    for angle in coarse:
        score = _sharpness(ink, angle)
        if score > best:
            best_angle, best = angle, score
    for step in range(-4, 5):
        angle = best_angle + step * 0.1
        if step and abs(angle) <= max_skew:
            score = _sharpness(ink, angle)
            if score > best:
                best_angle, best = angle, score
    if best < upright * SKEW_GAIN:
        best_angle = 0.0
    heights = _line_runs(_rotated(ink, best_angle))
    line_height = _typical(heights) / factor if heights else None
    return TextLines(skew=round(best_angle, 2), line_height=line_height, lines=len(heights))


def lines_run_across(gray: Image.Image) -> bool:
    """Whether the print's lines run across the picture rather than up and down it: its rows of
    ink and gaps alternate more sharply than its columns do. False for a page lying on its side,
    vertical CJK, a blank picture: Tesseract reads some sideways pages surely as they come, yet
    only OSD says which way they lay."""
    factor = min(PROFILE_WIDTH / max(gray.width, gray.height), 1.0)
    ink = _ink_mask(scaled(gray, factor) if factor < 1.0 else gray)
    if ink is None:
        return False
    across = _sharpness(ink, 0.0) / ink.height
    down = _sharpness(ink.transpose(Image.Transpose.ROTATE_90), 0.0) / ink.width
    return across > down


def uneven_light(gray: Image.Image) -> int:
    """How unevenly the paper is lit (0..255): the grey levels between the median and the
    darkest tenth of the paper's local brightness. A flatbed scan or a rendered page is 0 to 3, a
    phone photo with vignetting 60: the kind of picture one global threshold cannot binarise."""
    factor = 128 / max(gray.width, gray.height)
    small = gray.resize((max(round(gray.width * factor), 1), max(round(gray.height * factor), 1)),
                        Image.Resampling.BOX)
    paper = small.filter(ImageFilter.MaxFilter(9)).histogram()  # the brightest nearby: paper, not ink
    return _percentile(paper, 0.5) - _percentile(paper, 0.1)


def ink_box(gray: Image.Image, *, margin: float = 0.02) -> tuple[int, int, int, int] | None:
    """The box (left, top, right, bottom) around the picture's ink, widened by ``margin`` of the
    picture's longer side; None without ink. Found on a box-filtered small copy, where a lone
    speck of dust averages away and print does not: a sparse page (three lines on a sheet) is
    then read from a fraction of its pixels."""
    factor = min(PROFILE_WIDTH / max(gray.width, gray.height), 1.0)
    ink = _ink_mask(scaled(gray, factor) if factor < 1.0 else gray)
    box = ink.getbbox() if ink is not None else None
    if box is None:
        return None
    pad = margin * max(gray.width, gray.height)
    left, top, right, bottom = (edge / factor for edge in box)
    return (max(math.floor(left - pad), 0), max(math.floor(top - pad), 0),
            min(math.ceil(right + pad), gray.width), min(math.ceil(bottom + pad), gray.height))


def text_size(gray: Image.Image) -> float | None:
    """Height in pixels of a line of print, whichever way the picture is turned: the smaller of
    the median ink runs along rows and along columns (across sideways lines the row runs are a
    line's whole length, and the other way round). None when there is no ink."""
    factor = min(PROFILE_WIDTH / max(gray.width, gray.height), 1.0)
    ink = _ink_mask(scaled(gray, factor) if factor < 1.0 else gray)
    if ink is None:
        return None
    runs = [_typical(heights) for heights in (_line_runs(ink), _line_runs(ink.transpose(Image.Transpose.ROTATE_90)))
            if heights]
    return min(runs) / factor if runs else None


# --- profiles ------------------------------------------------------------------------------------


def _percentile(histogram: list[int], share: float) -> int:
    target = share * sum(histogram)
    seen = 0
    for level, count in enumerate(histogram):
        seen += count
        if seen >= target:
            return level
    return len(histogram) - 1


def _typical(heights: list[int]) -> float:
    """The median line height, leaving out the slivers a strip cuts off a line (the end of a
    descender, a full stop, an accent above a capital) that would otherwise pull it down."""
    ordered = sorted(heights)
    tall = ordered[(3 * len(ordered)) // 4]
    return float(median(height for height in ordered if height >= 0.4 * tall))


def _ink_mask(gray: Image.Image) -> Image.Image | None:
    """Ink as 255 on 0 (what rotation fills with nothing and resizing sums); None without ink."""
    histogram = gray.histogram()
    level = _percentile(histogram, 0.5)
    if level >= 128:
        threshold = level - INK_CONTRAST
        mask = gray.point(lambda value: 255 if value < threshold else 0)
    else:
        threshold = level + INK_CONTRAST
        mask = gray.point(lambda value: 255 if value > threshold else 0)
    return mask if mask.getbbox() else None


def _rotated(mask: Image.Image, clockwise: float) -> Image.Image:
    return mask.rotate(-clockwise, resample=Image.Resampling.NEAREST, expand=False) if clockwise else mask


def _row_means(mask: Image.Image) -> list[int]:
    column = mask.resize((1, mask.height), Image.Resampling.BOX)
    return list(column.tobytes())  # mode L: one byte a row


def _sharpness(mask: Image.Image, clockwise: float) -> float:
    rows = _row_means(_rotated(mask, clockwise))
    return float(sum((b - a) * (b - a) for a, b in pairwise(rows)))


def _line_runs(mask: Image.Image, strips: int = 4) -> list[int]:
    """Heights of the runs of inked rows in vertical strips of the picture: columns of text whose
    lines do not align would merge into one tall run in a whole-width profile."""
    heights: list[int] = []
    width = mask.width // strips
    for index in range(strips):
        strip = mask.crop((index * width, 0, (index + 1) * width, mask.height))
        rows = _row_means(strip)
        peak = max(rows, default=0)
        if not peak:
            continue
        floor = max(peak * 0.05, 1)
        run = 0
        for value in [*rows, 0]:
            if value >= floor:
                run += 1
            elif run:
                if run >= 3:  # a dotted rule or a speck is no line of text
                    heights.append(run)
                run = 0
    return heights
