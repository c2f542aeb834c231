"""Scanned pages built in code: text drawn into a picture, optionally turned or skewed, and
wrapped in a PDF the way a scanner writes one (an image-only page). Small on purpose, so
the OCR unit tests stay fast: a few lines of large type on a narrow page."""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from pathlib import Path

import reportlab
from PIL import Image, ImageDraw, ImageFont

FONT = Path(reportlab.__file__).parent / "fonts" / "Vera.ttf"

LINES = (
    "The quick brown fox jumps over the lazy dog.",
    "Scanned pages need OCR to give their text.",
    "Every page says which engine read it.",
)


def text_image(lines: Sequence[str] = LINES, *, font_size: int = 36, width: int = 1100, margin: int = 60,
               rotate: int = 0, skew: float = 0.0, mode: str = "L") -> Image.Image:
    """Black text on white. ``rotate`` turns the whole picture by 90/180/270 degrees
    counter-clockwise (a page fed sideways); ``skew`` tilts it by a few degrees."""
    font = ImageFont.truetype(str(FONT), font_size)
    line_height = int(font_size * 1.6)
    height = 2 * margin + line_height * len(lines)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((margin, margin + index * line_height), line, font=font, fill=0)
    if skew:
        image = image.rotate(skew, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    if rotate:
        image = image.rotate(rotate, expand=True)
    return image.convert(mode)


def blank_image(width: int = 800, height: int = 600) -> Image.Image:
    return Image.new("L", (width, height), 255)


def image_bytes(image: Image.Image, fmt: str = "PNG", **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def scanned_pdf(images: Sequence[Image.Image], dpi: int = 200) -> bytes:
    """One image-only page per picture, sized so the picture is at ``dpi``."""
    out = io.BytesIO()
    first, *rest = [image.convert("L") for image in images]
    first.save(out, format="PDF", resolution=float(dpi), save_all=True, append_images=rest)
    return out.getvalue()


#: a German page read with eng+por+spa loses its umlauts and sharp s: the Latin re-read pins this
GERMAN_LINES = (
    "Die Größe der Schüler wächst über das Jahr.",
    "Müller fährt täglich mit dem Fahrrad zur Straße.",
    "Öffentliche Gebäude schließen um fünf Uhr.",
)
FRENCH_LINES = (
    "Le garçon a reçu une lettre très élégante.",
    "Où sont les élèves? Ils étudient à la bibliothèque.",
    "Après le déjeuner, nous irons voir la forêt.",
)


def drawing_image(width: int = 900, height: int = 600) -> Image.Image:
    """A picture with ink but no words: circles, boxes and a grey gradient, like a photo or a
    diagram without labels on a scanned page."""
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    for index in range(height // 3):
        shade = 255 - index * 200 // (height // 3)
        draw.line([(0, 2 * height // 3 + index), (width, 2 * height // 3 + index)], fill=shade)
    draw.ellipse((60, 40, 360, 340), outline=0, width=12)
    draw.rectangle((460, 60, 820, 300), fill=90)
    draw.polygon([(400, 380), (520, 120), (640, 380)], fill=20)
    return image


def shared_strip_tiff(pages: Sequence[Image.Image], frames: Sequence[int], dpi: int = 200) -> bytes:
    """A multi-page bilevel TIFF whose frame ``n`` shows ``pages[frames[n]]``: each distinct page's
    CCITT G4 strips are stored once and every frame is an IFD pointing at them, ~150 bytes a
    frame. What a scanner's driver writes for a stack of blank sheets, and what a hostile file
    does to claim thousands of pages in a few hundred KB. Built by hand: Pillow writes each frame
    anew (a minute for 2,000 letter pages)."""
    out = bytearray(b"II*\x00\x00\x00\x00\x00")
    resolution = len(out)
    out += struct.pack("<II", dpi, 1)
    # per distinct page: (width, height, rows per strip, strip count, offsets field, counts field)
    stored: list[tuple[int, int, int, int, int, int]] = []
    for page in pages:
        single = io.BytesIO()
        page.convert("1").save(single, format="TIFF", compression="group4")
        encoded = single.getvalue()
        with Image.open(io.BytesIO(encoded)) as parsed:
            offsets, counts = parsed.tag_v2[273], parsed.tag_v2[279]  # StripOffsets, StripByteCounts
            rows = int(parsed.tag_v2.get(278, page.height))
        starts = []
        for offset, count in zip(offsets, counts, strict=True):
            starts.append(len(out))
            out += encoded[offset:offset + count] + (b"\x00" if count % 2 else b"")
        if len(starts) == 1:  # one strip: the fields hold the values themselves
            stored.append((page.width, page.height, rows, 1, starts[0], counts[0]))
            continue
        offsets_at = len(out)
        out += struct.pack(f"<{len(starts)}I", *starts)
        counts_at = len(out)
        out += struct.pack(f"<{len(counts)}I", *counts)
        stored.append((page.width, page.height, rows, len(starts), offsets_at, counts_at))
    entries = 11
    struct.pack_into("<I", out, 4, len(out))
    for index, page_index in enumerate(frames):
        width, height, rows, strips, offsets_field, counts_field = stored[page_index]
        next_ifd = 0 if index == len(frames) - 1 else len(out) + 2 + 12 * entries + 4
        tags = [(256, 4, 1, width), (257, 4, 1, height), (258, 3, 1, 1), (259, 3, 1, 4),  # 1 bit, G4
                (262, 3, 1, 1), (273, 4, strips, offsets_field), (277, 3, 1, 1),  # BlackIsZero
                (278, 4, 1, rows), (279, 4, strips, counts_field), (282, 5, 1, resolution),
                (283, 5, 1, resolution)]
        out += struct.pack("<H", entries)
        for tag, kind, count, value in tags:
            out += struct.pack("<HHIHH", tag, kind, count, value, 0) if kind == 3 else \
                struct.pack("<HHII", tag, kind, count, value)
        out += struct.pack("<I", next_ifd)
    return bytes(out)


def transparent_text_png() -> bytes:
    """What a screenshot tool or a web export writes: black glyphs whose alpha is the ink, every
    other pixel fully transparent *black* (RGBA 0,0,0,0). Viewers show black on white."""
    ink = text_image()
    rgba = Image.new("RGBA", ink.size, (0, 0, 0, 0))
    rgba.putalpha(ink.point(lambda value: 255 - value))
    return image_bytes(rgba, "PNG")


def exif_turned_jpeg(orientation: int = 6) -> bytes:
    """How a phone stores a portrait photo: the sensor's pixels sideways and EXIF Orientation 6
    ("turn 90 degrees clockwise to show")."""
    stored = text_image().convert("RGB").transpose(Image.Transpose.ROTATE_90)  # what 6 turns back
    exif = Image.Exif()
    exif[274] = orientation
    return image_bytes(stored, "JPEG", quality=92, exif=exif.tobytes())
