"""Scanned pages built in code: text drawn into a picture, optionally turned or skewed, and
wrapped in a PDF the way a scanner writes one (an image-only page). Small on purpose, so
the OCR unit tests stay fast: a few lines of large type on a narrow page."""

from __future__ import annotations

import io
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
