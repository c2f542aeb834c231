"""Pictures as people see them (issue 18): every picture document is decoded by
``rendering.render_picture_frames`` into the pixels a viewer shows, whatever mode, orientation
or transparency the file stores them in, before any reader (Tesseract, Textract, a thumbnail)
looks at them. Fixtures are built in code: the text of ``scan_factory`` drawn into the mode the
case needs, then saved the way a real file stores it."""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image, ImageChops
from scan_factory import LINES, exif_turned_jpeg, image_bytes, text_image, transparent_text_png

from papersift.errors import UnsupportedFormatError
from papersift.ocr import pictures, tesseract
from papersift.rendering import render_picture_frames
from papersift.sniff import sniff

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")


def _frame(data: bytes, *, colour: bool = False) -> Image.Image:
    return next(render_picture_frames(data, [1], grayscale=not colour)).image


def test_black_text_on_a_fully_transparent_png_is_drawn_black_on_white() -> None:
    frame = _frame(transparent_text_png())
    assert frame.mode == "L"
    assert pictures.background_level(frame) == 255  # the transparent field is white paper
    assert 0.01 < pictures.ink_share(frame) < 0.2  # the glyphs, not the whole picture, are ink


def test_a_transparent_png_is_white_in_colour_too() -> None:
    frame = _frame(transparent_text_png(), colour=True)
    assert frame.mode == "RGB"
    assert frame.getpixel((2, 2)) == (255, 255, 255)


def test_a_jpeg_with_exif_orientation_6_is_turned_upright_first() -> None:
    frame = _frame(exif_turned_jpeg())
    upright = text_image()
    assert frame.size == upright.size  # stored sideways (height x width), drawn upright
    assert pictures.lines_run_across(frame)


def _mean_difference(a: Image.Image, b: Image.Image) -> float:
    histogram = ImageChops.difference(a.convert("L"), b.convert("L")).histogram()
    return sum(level * count for level, count in enumerate(histogram)) / max(sum(histogram), 1)


@pytest.mark.parametrize(("orientation", "stored_as"), [
    (2, Image.Transpose.FLIP_LEFT_RIGHT), (3, Image.Transpose.ROTATE_180), (4, Image.Transpose.FLIP_TOP_BOTTOM),
    (5, Image.Transpose.TRANSPOSE), (6, Image.Transpose.ROTATE_90), (7, Image.Transpose.TRANSVERSE),
    (8, Image.Transpose.ROTATE_270)])
def test_every_exif_orientation_is_undone(orientation: int, stored_as: Image.Transpose) -> None:
    upright = text_image().convert("RGB")
    exif = Image.Exif()
    exif[274] = orientation
    frame = _frame(image_bytes(upright.transpose(stored_as), "JPEG", quality=92, exif=exif.tobytes()))
    assert frame.size == upright.size
    assert _mean_difference(frame, upright) < 3  # the same pixels, up to JPEG's noise


def _sixteen_bit_grey(blank: bool = False) -> bytes:
    page = Image.new("L", (600, 200), 255) if blank else text_image(width=600, font_size=30, lines=LINES[:1])
    wide = page.point(lambda value: value * 257, mode="I").convert("I;16")
    return image_bytes(wide, "PNG")


def test_a_16_bit_grey_png_keeps_black_ink_on_white_paper() -> None:
    data = _sixteen_bit_grey()
    assert Image.open(io.BytesIO(data)).mode.startswith("I")
    frame = _frame(data)
    assert pictures.background_level(frame) == 255
    assert frame.getextrema()[0] < 40


def test_a_blank_16_bit_page_stays_white_not_black() -> None:
    frame = _frame(_sixteen_bit_grey(blank=True))
    assert frame.getextrema() == (255, 255)


@pytest.mark.parametrize(("mode", "fmt"), [("CMYK", "JPEG"), ("CMYK", "TIFF"), ("P", "PNG"), ("P", "GIF"),
                                           ("LA", "PNG"), ("1", "TIFF"), ("RGB", "BMP"), ("RGBA", "WEBP")])
def test_every_stored_mode_is_drawn_as_the_same_black_on_white(mode: str, fmt: str) -> None:
    page = text_image(width=700, font_size=30, lines=LINES[:2])
    stored = page.convert("RGB").convert(mode) if mode != "1" else page.convert("1")
    frame = _frame(image_bytes(stored, fmt))
    assert frame.mode == "L"
    assert pictures.background_level(frame) >= 245
    assert abs(pictures.ink_share(frame) - pictures.ink_share(page)) < 0.02


def test_a_palette_png_with_a_transparent_index_is_laid_on_white() -> None:
    page = text_image(width=700, font_size=30, lines=LINES[:1])
    palette = page.convert("P")
    white = palette.getpixel((1, 1))
    palette.info["transparency"] = white
    # the transparent entry made black in the palette: only transparency keeps it white
    entries = palette.getpalette() or []
    entries[3 * white: 3 * white + 3] = [0, 0, 0]
    palette.putpalette(entries)
    frame = _frame(image_bytes(palette, "PNG", transparency=white))
    assert pictures.background_level(frame) == 255


@needs_tesseract
def test_the_words_of_a_transparent_png_are_read() -> None:
    reading = tesseract.read_image(_frame(transparent_text_png()), ("eng",))
    assert "quick brown fox" in reading.text


@needs_tesseract
def test_a_sideways_stored_phone_jpeg_is_read_upright() -> None:
    reading = tesseract.read_image(_frame(exif_turned_jpeg()), ("eng",))
    assert "quick brown fox" in reading.text
    assert reading.orientation == 0  # upright before Tesseract saw it: no turn of its own


def heic_bytes(picture: Image.Image) -> bytes:
    """A HEIC file, encoded by pillow-heif without registering it with Pillow, so that what
    decodes it in the test is papersift's own plugin (pi-heif, decode-only)."""
    pillow_heif = pytest.importorskip("pillow_heif")
    out = io.BytesIO()
    pillow_heif.from_pillow(picture).save(out, quality=90)
    return out.getvalue()


def test_avif_and_heic_are_typed_by_their_ftyp_brands_and_decoded() -> None:
    page = text_image(width=700, font_size=30, lines=LINES[:1]).convert("RGB")
    avif = image_bytes(page, "AVIF")
    assert sniff(avif, "x.bin").kind == "avif"
    assert pictures.ink_share(_frame(avif)) > 0.01
    heic = heic_bytes(page)
    assert sniff(heic, "x.bin").kind == "heic"
    assert pictures.ink_share(_frame(heic)) > 0.01


def test_a_heic_without_its_plugin_is_unsupported_naming_the_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    from papersift import rendering

    heic = heic_bytes(text_image().convert("RGB"))
    monkeypatch.setattr(rendering, "_heif_opener", lambda: False)
    with pytest.raises(UnsupportedFormatError, match="pi-heif"):
        rendering.picture_frame_count(heic)


def test_an_mp4_is_no_picture() -> None:
    mp4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 64
    assert sniff(mp4, "clip.mp4").kind not in ("avif", "heic")


def test_a_frame_already_in_grey_is_its_own_picture_not_the_open_files() -> None:
    """The drawn frame crosses a process boundary (the OCR step draws in a worker): it must not be
    the open file's lazily decoded frame, which cannot travel and is closed after drawing."""
    import pickle

    frames = [text_image(width=300, font_size=20, lines=LINES[:1])] * 3
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    page = next(render_picture_frames(out.getvalue(), [2]))
    assert type(page.image) is Image.Image
    assert pickle.loads(pickle.dumps(page.image)).tobytes() == frames[1].tobytes()


def test_bytes_no_decoder_recognises_get_the_same_reason_every_run() -> None:
    """Pillow's own message names its stream object's address, which made report.json differ
    between two runs over the same files."""
    from papersift.errors import CorruptInputError
    from papersift.rendering import picture_size

    reasons = set()
    for _ in range(3):
        with pytest.raises(CorruptInputError) as raised:
            picture_size(b"\x01\x00\x00\x00 an EMF record" * 8)
        reasons.add(str(raised.value))
    assert len(reasons) == 1 and "0x" not in reasons.pop()
