"""The verdict on a page's text: can it be trusted, and if not, why.

Text that looks fine but is garbage is worse than no text, because it gets indexed and
trusted. Every signal found is named in ``TextVerdict.signals`` so the report can say why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageLayout:
    """What the page draws, besides its text layer: lets "empty text" mean "scan"."""

    image_count: int = 0
    image_area_ratio: float = 0.0  # share of the page covered by images, 0..1
    has_vector_glyphs: bool = False  # paths that look like outlined text
    unmapped_glyphs: int = 0  # glyphs the engine could not map to Unicode, where exposed


@dataclass(frozen=True)
class TextVerdict:
    #: 0..1, higher is better; comparable across engines for the same page
    score: float
    #: the text should not be trusted as is: try the next engine / OCR
    suspect: bool
    #: the text is broken beyond use (garbage, cipher); implies suspect
    corrupt: bool
    #: names of the signals found, e.g. "empty", "cid_garbage", "replacement_chars",
    #: "private_use", "low_letter_ratio", "cipher", "spacing_damage", "image_only"
    signals: tuple[str, ...] = field(default_factory=tuple)
    #: 0..1, how sure we are of this verdict
    confidence: float = 1.0
    #: detected language (ISO 639-1) where there was enough text
    language: str | None = None
    #: one human-readable sentence
    reason: str = ""


_CID = re.compile(r"\(cid:\d+\)|/g\d+|(?<![\w/])/\d{2,3}\b")


def assess_text(text: str, layout: PageLayout | None = None) -> TextVerdict:
    """Judge one page's text. Baseline rules; the full detector replaces the internals."""
    layout = layout or PageLayout()
    stripped = "".join(text.split())
    if len(stripped) < 3:
        signals = ("empty", "image_only") if layout.image_count else ("empty",)
        reason = "no text layer on a page that draws images" if layout.image_count else "no text on the page"
        return TextVerdict(score=0.0, suspect=bool(layout.image_count or layout.has_vector_glyphs),
                           corrupt=False, signals=signals, reason=reason)
    bad = stripped.count("\ufffd") + sum(len(m) for m in _CID.findall(text))
    bad += sum(1 for ch in stripped if 0xE000 <= ord(ch) <= 0xF8FF)
    ratio = bad / len(stripped)
    if ratio > 0.1:
        return TextVerdict(score=max(0.0, 1 - 2 * ratio), suspect=True, corrupt=ratio > 0.3,
                           signals=("glyph_garbage",), reason=f"{ratio:.0%} of characters are unmapped glyphs")
    return TextVerdict(score=1.0 - ratio, suspect=False, corrupt=False, reason="text layer looks sound")
