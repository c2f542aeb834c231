"""Which engines read a page in each OCR mode, and which pages OCR reads at all."""

from __future__ import annotations

import pytest

from papersift.errors import SettingsError
from papersift.ocr.routing import (
    PICTURES,
    RENDERING_CHECK,
    WHOLE_PAGE,
    EngineOrder,
    engine_order,
    ocr_need,
    uses_textract,
)
from papersift.settings import OCR_MODES


@pytest.mark.parametrize(("mode", "engines", "past_untrusted"), [
    ("local-first", ("tesseract", "textract"), True),
    ("textract-first", ("textract", "tesseract"), False),
    ("local-only", ("tesseract",), False),
    ("textract-only", ("textract",), False),
    ("off", (), False),
])
def test_each_mode_orders_its_engines(mode: str, engines: tuple[str, ...], past_untrusted: bool) -> None:
    assert engine_order(mode) == EngineOrder(engines, past_untrusted)


def test_every_mode_of_the_settings_has_an_order_and_no_other() -> None:
    for mode in OCR_MODES:
        engine_order(mode)
    with pytest.raises(SettingsError, match="unknown OCR mode"):
        engine_order("always")


def test_local_only_never_lets_a_page_leave_the_account() -> None:
    assert not uses_textract("local-only") and not uses_textract("off")
    assert uses_textract("local-first") and uses_textract("textract-first")


def test_taking_textract_out_keeps_the_rest_of_the_order() -> None:
    assert engine_order("textract-first").without("textract") == EngineOrder(("tesseract",), False)


@pytest.mark.parametrize("status", ["needs_ocr", "corrupt_unrecoverable", "failed"])
def test_a_page_whose_text_layer_cannot_be_used_is_read_whole(status: str) -> None:
    need = ocr_need(status, 0.2)
    assert need is not None and need.scope == WHOLE_PAGE


def test_a_sound_native_page_without_pictures_is_never_sent_to_ocr() -> None:
    assert ocr_need("clean", 1.0) is None
    assert ocr_need("recovered", 0.9, image_area_ratio=0.02) is None


def test_the_pictures_of_a_sound_page_are_read_when_no_text_lies_over_them() -> None:
    boxes = ((0.1, 0.2, 0.9, 0.5),)
    need = ocr_need("clean", 1.0, regions=boxes, image_area_ratio=0.24)
    assert need is not None and need.scope == PICTURES and need.regions == boxes


def test_an_invisible_ocr_layer_is_read_again_only_when_its_quality_is_doubtful() -> None:
    scan = {"image_area_ratio": 1.0, "invisible_share": 1.0}
    assert ocr_need("clean", 0.99, **scan) is None  # a sound earlier OCR is kept as it is
    doubtful = ocr_need("clean", 0.8, **scan)
    assert doubtful is not None and doubtful.scope == WHOLE_PAGE and "invisible OCR layer" in doubtful.reason
    # invisible text over a small picture is not an OCR layer over a scan
    assert ocr_need("clean", 0.8, image_area_ratio=0.1, invisible_share=1.0) is None


@pytest.mark.parametrize("signal", ["unverified_font", "implausible_script", "engines_disagree",
                                    "minority_font_garbage"])
def test_an_uncertain_text_layer_is_checked_against_the_rendered_page(signal: str) -> None:
    need = ocr_need("needs_ocr", 0.4, signals=["few_dictionary_words", signal], has_text=True)
    assert need is not None and need.scope == RENDERING_CHECK


def test_a_broken_or_empty_layer_is_read_whole_not_checked() -> None:
    assert ocr_need("needs_ocr", 0.1, signals=["glyph_garbage", "unmapped_font"], has_text=True).scope == WHOLE_PAGE
    assert ocr_need("needs_ocr", 0.0, signals=["unverified_font"], has_text=False).scope == WHOLE_PAGE
