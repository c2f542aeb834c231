"""The verdict on a page's text: can it be trusted, and if not, why.

Text that looks fine but is garbage is worse than no text, because it gets indexed and
trusted. Every signal found is named in ``TextVerdict.signals`` so the report can say why.

The PDF ladder calls :func:`assess_text` on every engine's output for every page, keeps the
highest ``score`` and climbs to the next rung only while ``suspect`` is true; so the score must
rank engines on the same page, and ``suspect`` must stay false on good text (a false alarm
costs a full ladder run). The common path is a handful of whole-text regex passes plus set
lookups on a bounded sample of words, well under a millisecond for a normal page.

How it is built: :func:`assess_text` first measures the page (:class:`_Page`: glyph counts,
letters, script, dictionary evidence), then runs each rule once over the measurements; a rule
adds what it finds to an :class:`_Evidence` (signal, reason, score and confidence factors,
suspect/corrupt). Every number a rule turns on is a field of :data:`THRESHOLDS`.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress
from operator import not_

from papersift.lexicon import LANGUAGES, Lexicon, arabic_words, fold_accents, lexicon
from papersift.plaintext import whitespace_pieces


@dataclass(frozen=True)
class PageLayout:
    """What the page draws, besides its text layer: lets "empty text" mean "scan"."""

    image_count: int = 0
    image_area_ratio: float = 0.0  # share of the page covered by images, 0..1
    has_vector_glyphs: bool = False  # paths that look like outlined text
    unmapped_glyphs: int = 0  # glyphs the engine could not map to Unicode, where exposed


#: the reason of a text layer in which no rule found anything wrong
SOUND_TEXT_LAYER = "text layer looks sound"
#: the same for an OCR reading: its page's text layer was missing or not trusted, so its reason
#: must not call the text layer sound
SOUND_READING = "its words read as real text"

#: signals of a sound text whose words vouch for little (numbers, markup, codes, a language we
#: have no dictionary for): the page stays trusted with less confidence, and a second reading
#: is welcome. Named by what was seen, never "low_confidence", which is a page status (OCR
#: could not read the page): a trusted page must not seem to carry it.
THIN_WORD_EVIDENCE = frozenset({"mostly_numbers", "few_letters", "few_dictionary_words", "unlisted_language"})


@dataclass(frozen=True)
class TextVerdict:
    #: 0..1, higher is better; comparable across engines for the same page
    score: float
    #: the text should not be trusted as is: try the next engine / OCR (spacing damage alone is
    #: not suspect: the words are right; the ladder still looks for better spacing)
    suspect: bool
    #: the text is broken beyond use (garbage, cipher); implies suspect
    corrupt: bool
    #: names of the signals found: "empty", "image_only", "glyph_garbage", "script_mix",
    #: "low_letter_ratio", "cipher", "spacing_damage", "implausible_script", THIN_WORD_EVIDENCE
    signals: tuple[str, ...] = field(default_factory=tuple)
    #: 0..1, how sure we are of this verdict
    confidence: float = 1.0
    #: detected language (ISO 639-1) where there was enough text
    language: str | None = None
    #: one human-readable sentence
    reason: str = ""
    #: the sampled words of 3+ letters no list knows, as drawn (empty when fewer than
    #: ``minority_gate_words``): where the PDF ladder looks for a minority font's wrong letters
    #: (:func:`implausible_words`), only on the pages that need it
    unknown_words: tuple[str, ...] = ()


@dataclass(frozen=True)
class Thresholds:
    """Every number the verdict turns on. Ratios are shares of the page's glyphs, letters or
    checked words; each was set on real pages (the corpus, bench-pdfs) and the tests' texts."""

    # -- how much text there must be ------------------------------------------------------------
    min_chars: int = 3  # fewer non-space characters: the page is empty
    short_page_letters: int = 200  # fewer letters: confidence shrinks with the count
    min_judged_chars: int = 60  # fewer non-numeric characters: no letter-share verdict
    min_letters_for_words: int = 20  # fewer letters: no dictionary verdict at all
    #: confidence of a page with no letters; it grows in a straight line to 1 at short_page_letters
    short_page_confidence: float = 0.5
    empty_confidence: float = 0.9  # how sure "empty" is (with or without something drawn)
    min_confidence: float = 0.05  # no verdict is less sure than this, however many factors shrank it
    # -- glyph garbage: (cid:N), /gNN, U+FFFD, private use, controls ----------------------------
    garbage_min_glyphs: int = 3  # ... this many and at least garbage_min_share, or ...
    garbage_min_share: float = 0.01
    garbage_alone_share: float = 0.1  # ... this share alone, names the signal
    garbage_suspect_share: float = 0.03
    garbage_corrupt_share: float = 0.3
    #: private-use glyphs up to this share among sound words are formulas (math fonts), not garbage
    math_symbol_share: float = 0.12
    math_symbol_confidence: float = 0.8
    # -- stray WinAnsi symbols (™›œŸ˜) that glyph codes of a font without ToUnicode decode to -----
    mojibake_min_glyphs: int = 3
    mojibake_min_share: float = 0.03
    mojibake_corrupt_share: float = 0.3
    script_mix_score: float = 0.3  # score factor when letters jump between scripts
    #: a script counts as "mixed" on pages of this many letters when the scripts beyond the two
    #: largest hold more than ``mixed_outside_two`` of them, or unclassified letters more than
    #: ``mixed_unclassified``; non-Latin letters below ``latin_non_latin`` keep a page Latin
    mixed_min_letters: int = 40
    mixed_outside_two: float = 0.15
    mixed_unclassified: float = 0.3
    latin_non_latin: float = 0.2
    latin_beyond_share: float = 0.05  # characters beyond Latin below this: the fast Latin path
    cjk_weight: int = 3  # a Han or kana character carries about a word
    # -- letters vs other characters ------------------------------------------------------------
    numeric_page_numbers: float = 0.3  # number characters above this share ...
    numeric_page_letters: float = 0.4  # ... and letters below this: a table, low confidence
    number_scan_digits: float = 0.1  # digits below this share: digits stand for number characters
    letter_share_suspect: float = 0.5
    letter_share_corrupt: float = 0.3
    #: below this hit rate few words are plain dictionary words: the letter statistics are consulted
    #: and no language is named; above it, few letters that spell words are markup or data, not damage
    real_words_hit_rate: float = 0.6
    low_confidence: float = 0.6  # confidence factor of a THIN_WORD_EVIDENCE signal
    # -- pages drawn as pictures -------------------------------------------------------------------
    image_only_chars: int = 200
    image_only_area: float = 0.5
    image_only_score: float = 0.6
    drawing_area: float = 0.02  # images covering less than this are a logo, not a page
    # -- dictionary evidence ------------------------------------------------------------------------
    sample_words: int = 160  # dictionary checks look at most at this many words ...
    sample_blocks: int = 4  # ... taken as this many contiguous blocks spread over the page
    min_words_for_dictionary: int = 15  # fewer checkable words: no dictionary verdict
    few_words_confidence: float = 0.7
    window: int = 40  # words per window for local (partial-page) cipher evidence
    good_hit_rate: float = 0.8  # real prose in a known language is above this
    cipher_hit_rate: float = 0.35  # below this, the words are not words
    local_cipher_window: float = 0.25  # a window below this hit rate holds a cipher
    # real languages, even ones we have no dictionary for, stay above these (Polish, the lowest
    # tried: 0.82 and 0.60); 99% of random letter substitutions of pt/en/es/fr/de fall below one
    plausible_bigrams: float = 0.75
    plausible_trigrams: float = 0.52
    no_dictionary_confidence: float = 0.4  # few hits, plausible letters: an unknown language
    unknown_language_score: float = 0.85
    unknown_language_confidence: float = 0.8
    language_min_words: int = 3  # a language is named when its common words cover this many ...
    language_min_share: float = 0.25  # ... and this share of the sample
    #: dictionary words and score: the factor is floor + (1 - floor) * hit rate / good_hit_rate, at
    #: most 1, so prose of a known language keeps its score and a page of no words keeps the floor
    dictionary_score_floor: float = 0.3
    cipher_score: float = 0.75  # score factor of a cipher that is suspect ...
    cipher_corrupt_score: float = 0.5  # ... and of one that is corrupt
    # -- mid-word capitals (IntROdUCtIOn) -----------------------------------------------------------
    max_flip_tokens: int = 200  # distinct mid-word-capital tokens looked at
    flip_rate: float = 0.04  # with ``flips`` tokens: evidence for a cipher when hits are low
    flips: int = 3
    case_cipher_rate: float = 0.08  # with ``case_cipher_flips`` tokens: a cipher by case alone
    case_cipher_flips: int = 5
    case_corrupt_hit_rate: float = 0.45
    case_corrupt_rate: float = 0.1
    camel_flips: int = 5  # this many explained flips: CamelCase codes, low confidence
    #: score factor 1 - min(flip_max_penalty, flip_score_weight * flip rate): unexplained
    #: mid-word capitals cost the score even below the cipher rates
    flip_score_weight: float = 2.0
    flip_max_penalty: float = 0.5
    chemical_lower_share: float = 0.25  # element-like codes (ENiCrFe) need this many lower-case letters
    # -- spacing ------------------------------------------------------------------------------------
    glued_share: float = 0.35  # letters in tokens that split into words: words run together
    glued_min_letters: int = 13  # tokens this long may be glued words ...
    glued_min_share: float = 0.15  # ... when they hold this share of the letters
    max_segment_tokens: int = 12  # glued-word segmentation is tried on at most this many tokens
    max_segment_letters: int = 48  # ... and on at most this many letters of each
    broken_pairs: int = 3  # fragments that join into words: words split by stray spaces
    broken_rate: float = 0.05
    spacing_confidence: float = 0.8
    #: score factor 1 - spacing_max_penalty * min(1, max(glued share, broken_rate_weight * broken
    #: rate)): a split fragment weighs more than a glued letter (it breaks two words, not one)
    spacing_max_penalty: float = 0.5
    broken_rate_weight: float = 3.0
    # -- Han, kana and Hangul outside the national character sets (a wrong CMap) ------------------
    implausible_min_chars: int = 2  # fewer implausible characters name no signal ...
    #: ... nor a share of the page's Han, kana and Hangul below this; a character only in JIS X 0212
    #: counts ``implausible_rare_weight`` (rare, but real: names, classical text)
    implausible_suspect_share: float = 0.1
    implausible_corrupt_share: float = 0.5
    implausible_rare_weight: float = 0.5
    #: on a page of another script (Latin with a line of CJK garbage) the East Asian characters
    #: are judged only when there are this many implausible ones and they make this share
    implausible_minority_chars: int = 3
    implausible_minority_share: float = 0.5
    # -- Arabic -----------------------------------------------------------------------------------
    arabic_min_letters: int = 100
    arabic_cipher_hit_rate: float = 0.55  # sound Arabic prose ~0.95; a wrong ToUnicode map (corpus) 0.36
    arabic_corrupt_hit_rate: float = 0.2
    arabic_low_hit_rate: float = 0.7
    # -- one font's words among a sound page's (the PDF ladder: formats/pdf.py) --------------------
    #: a missed word whose letter triples are below this share real ones is implausible
    implausible_word_trigrams: float = 0.5
    #: this many distinct implausible words in a sound page's sample, drawn with one font, have
    #: its words judged font by font (the PDF ladder)
    minority_gate_words: int = 3
    #: a font's words are garbage when it draws this many checked words, this many distinct misses,
    #: hits fewer than cipher_hit_rate of them, and its misses' letter pairs AND triples are below
    #: plausible_bigrams / plausible_trigrams (both: a font's few words are a small sample); on
    #: real pages the nearest sound font (chart labels 'iDP' x9) had 1 distinct miss
    minority_font_words: int = 6
    minority_font_misses: int = 5
    #: ... while the page's other fonts read as words: this many checked, good_hit_rate of them hits
    minority_rest_words: int = 15


THRESHOLDS = Thresholds()
_T = THRESHOLDS  # short name for the rules below


# --- patterns (compiled once; all read-only) ---------------------------------------------

#: one match = one glyph the engine could not map: U+FFFD, private use, C0/C1 controls ...
_BAD_CHAR = re.compile(r"[\ufffd\ue000-\uf8ff\U000f0000-\U0010ffff\x00-\x08\x0e-\x1f\x7f-\x9f]")
#: the private-use part of _BAD_CHAR: where math and symbol fonts' glyphs land
_PRIVATE_USE = re.compile(r"[\ue000-\uf8ff\U000f0000-\U0010ffff]")
#: ... pdfminer's ``(cid:12)`` ...
_CID = re.compile(r"\(cid:\d+\)")
#: ... and pypdf's codes and glyph names: ``/143``, ``/g12``, ``/uni0041``, ``/one.os`` (the
#: character before the slash is checked apart: a leading look-behind would slow the scan)
_SLASH_GLYPH = re.compile(
    r"/(?:(?:g|G|glyph|index|cid)\d+|uni[0-9A-Fa-f]{4,6}"
    r"|[a-z]+\.(?:os|sc|alt|oldstyle|lf|tf|sups|sinf|swash|ss\d\d)\b|\d{1,3}(?![\d/.,]))"
)
#: WinAnsi symbols that glyph codes decode to when a CJK or other non-Latin font has no
#: ToUnicode (pdfium on pm__kampo.pdf: '平成 ™— › ™œ 日'); on a Latin page only clusters count
_MOJIBAKE = re.compile(r"[ƒˆ‰‹›˜Ÿ™œšžŒŠŽ†‡‚„]")
_MOJIBAKE_CLUSTERED = "ƒˆ‰‹›˜Ÿ"
_MOJIBAKE_CLUSTER = re.compile(f"[{_MOJIBAKE_CLUSTERED}]{{2,}}")
_LETTER_RUN = re.compile(r"[^\W\d_]+")
#: the letters counted as Latin, as a character-class body
_LATIN_LETTERS = "A-Za-zªºÀ-ÖØ-öø-ɏḀ-ỿ"
_LATIN_LETTER_RUN = re.compile(f"[{_LATIN_LETTERS}]+")
#: a letter that is not Latin
_NON_LATIN_LETTER = re.compile(rf"[^\W\d_{_LATIN_LETTERS}]")
#: a whitespace-delimited token that is a number, money or a percentage (tables are legit)
_NUMBER_TOKEN = re.compile(
    r"(?<!\S)[(\[+\-−±~<>]?(?:R\$|US\$|[$€£¥])?[(\[+\-−]?\d[\d.,:/\-\u2009'’]*(?:%|‰|x|º|ª)?[)\],;:.%]*(?!\S)"
)
#: a digit, as _NUMBER_TOKEN's ``\d`` reads one
_DIGIT = re.compile(r"\d")
#: a word hyphenated across a line break (pdfium marks its own hyphens with U+0002)
_LINE_BREAK_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\x02\xad]\r?\n\s*(?=[^\W\d_])")
#: dot leaders, rules and underlines: layout, not text
_LEADER = re.compile(r"([^\w\s])\1{2,}")
#: rules, frames and printers' crop marks drawn with glyphs: box drawing, block elements and the
#: dingbat bars (a proof's part-title pages in bench-pdfs: '❚❘❙❚❘❙ ❚❘❙❚❘❙❚❘❙❚'), in runs of 3+
_MARK_RUN = re.compile(r"[\u2500-\u259f\u2758-\u275a]{3,}")
#: the first two bytes every _MARK_RUN character has in UTF-8 (U+2500-U+25BF: E2 94-96, U+2740-U+277F:
#: E2 9D): a byte search that rules most pages out is several times cheaper than the class scan
_MARK_BYTES = re.compile(rb"\xe2[\x94-\x96\x9d]")
#: a lower->UPPER flip inside a word (the token is checked against the dictionary later)
_FLIP_LOWER, _FLIP_UPPER = "a-zß-öø-ÿ", "A-ZÀ-ÖØ-Þ"
_FLIP = re.compile(f"[{_FLIP_LOWER}][{_FLIP_UPPER}]")
_FLIP_POINT = re.compile(f"(?<=[{_FLIP_LOWER}])(?=[{_FLIP_UPPER}])")
#: CamelCase codes made of element-like chunks: ENiCrFe, ERNiCrMo, NiCr
_CHEMICAL = re.compile(r"(?:[A-Z][a-z]?)+\d*")
#: anything outside Latin letters, common punctuation and symbols: a cheap upper bound on
#: non-Latin letters that lets most pages skip the exact count
_BEYOND_LATIN = re.compile(
    r"[^\x00-\u024f\u1e00-\u1eff\u2000-\u206f\u20a0-\u20cf\u2100-\u22ff\u25a0-\u25ff\ufb00-\ufb06\s]"
)
_ARABIC_WORD = re.compile(r"[\u0621-\u064a\u0671-\u06d3]+")


# Patterns only a page beyond Latin needs, compiled on its first need (~5 ms a process, a tenth of
# the core's import, that a process reading Latin text never spends), memoised: pure functions of
# constant patterns.
@functools.cache
def _east_asian() -> re.Pattern[str]:
    """A Han (Extension A and B.. included), kana or Hangul character: what the national sets judge."""
    return re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                      r"\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff]")


@functools.cache
def _scripts() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each script family the verdict names, and its characters."""
    return (
        ("cjk", re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")),
        ("kana", re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")),
        ("hangul", re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")),
        ("arabic", re.compile(r"[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")),
        ("cyrillic", re.compile(r"[\u0400-\u052f]")),
        ("greek", re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")),
        ("hebrew", re.compile(r"[\u0590-\u05ff]")),
        ("devanagari", re.compile(r"[\u0900-\u097f]")),
        ("thai", re.compile(r"[\u0e00-\u0e7f]")),
    )


_SCRIPT_LANGUAGE = {
    "hangul": "ko", "arabic": "ar", "cyrillic": "ru", "greek": "el",
    "hebrew": "he", "devanagari": "hi", "thai": "th",
}


# --- byte tables: fast paths for ASCII / Latin-1 text, each derived from the rule it speeds up ---


#: the ASCII part of _BAD_CHAR
_ASCII_BAD = bytes(c for c in range(128) if _BAD_CHAR.match(chr(c)))
#: what ``str.split()`` splits on within ASCII
_ASCII_SPACE = bytes(c for c in range(128) if chr(c).isspace())
#: keeps the letters of _LETTER_RUN (on ASCII: A-Z, a-z) and blanks every other byte
_ASCII_LETTERS_ONLY = bytes(c if c < 128 and _LETTER_RUN.fullmatch(chr(c)) else 0x20 for c in range(256))
#: the ASCII part of _DIGIT: counted to decide whether a page is worth the _NUMBER_TOKEN scan
_ASCII_DIGITS = bytes(c for c in range(128) if _DIGIT.match(chr(c)))
#: _FLIP's two classes over Latin-1: its lower-case letters -> "a", upper-case -> "A", rest -> " "
_FLIP_LOWER_CHAR, _FLIP_UPPER_CHAR = re.compile(f"[{_FLIP_LOWER}]"), re.compile(f"[{_FLIP_UPPER}]")
_FLIP_CLASSES = bytes(
    ord("a") if _FLIP_LOWER_CHAR.fullmatch(chr(c)) else ord("A") if _FLIP_UPPER_CHAR.fullmatch(chr(c)) else 32
    for c in range(256)
)

#: language mask -> the bits set in it
_MASK_BITS = tuple(
    tuple(bit for bit in range(len(LANGUAGES)) if mask >> bit & 1) for mask in range(1 << len(LANGUAGES))
)


# --- what a page is measured for -------------------------------------------------------------


@dataclass(frozen=True)
class _Words:
    """Dictionary evidence over the sampled Latin words."""

    checked: int = 0  # words of 3+ letters looked up
    hit_rate: float = 1.0
    worst_window: float = 1.0
    bigram_plausibility: float = 1.0  # share of the missed words' letter pairs real words use
    trigram_plausibility: float = 1.0  # ... and letter triples
    suspicious_flips: int = 0  # distinct tokens with unexplained mid-word lower->UPPER
    benign_flips: int = 0  # CamelCase that reads as words or codes (iPhone, ENiCrFe)
    flip_rate: float = 0.0
    glued_share: float = 0.0  # letters inside tokens that split into dictionary words
    broken_pairs: int = 0  # neighbouring fragments that join into a dictionary word
    broken_rate: float = 0.0
    language: str | None = None
    unknown_words: tuple[str, ...] = ()  # sampled words no list knows, as drawn


@dataclass(frozen=True)
class _Page:
    """The measurements every rule reads."""

    text: str
    layout: PageLayout
    nonspace: int
    bad_glyphs: int  # unmapped glyphs, by the text's spelling or the engine's count
    glyphs: int  # all glyphs, an unmapped one counted once however it is spelt
    garbage_chars: int  # characters the unmapped glyphs' spellings take
    private_use: int  # ... of the unmapped glyphs, private-use code points
    letters: int
    script: str  # "latin", a script family, or "mixed"
    mojibake: int
    leader_chars: int  # dot leaders, rules and marks: layout, not text
    number_chars: int
    words: _Words | None  # dictionary evidence (Latin pages with letters enough)
    #: Han, kana and Hangul characters of a page beyond Latin; of them, outside every common
    #: national set, and of those, only in JIS X 0212 (0 on a Latin page)
    east_asian: int = 0
    implausible: int = 0
    rare: int = 0

    @property
    def draws_something(self) -> bool:
        return _draws_something(self.layout)


@dataclass
class _Evidence:
    """The verdict under construction: each rule adds what it found."""

    score: float = 1.0
    confidence: float = 1.0
    suspect: bool = False
    corrupt: bool = False
    signals: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def found(self, signal: str, reason: str) -> None:
        self.signals.append(signal)
        self.reasons.append(reason)

    def verdict(self, language: str | None, sound: str, unknown_words: tuple[str, ...] = ()) -> TextVerdict:
        reasons = self.reasons or [sound + (f" ({language})" if language else "")]
        return TextVerdict(
            unknown_words=unknown_words,
            score=round(max(0.0, min(1.0, self.score)), 4),
            suspect=self.suspect or self.corrupt,
            corrupt=self.corrupt,
            signals=tuple(dict.fromkeys(self.signals)),
            confidence=round(max(_T.min_confidence, min(1.0, self.confidence)), 3),
            language=language,
            reason=_sentence(reasons),
        )


# --- the verdict ------------------------------------------------------------------------------


def assess_text(text: str, layout: PageLayout | None = None, nonspace: int | None = None, *,
                sound: str = SOUND_TEXT_LAYER) -> TextVerdict:
    """Judge one page's text: score it, name what is wrong, and say how sure we are.
    ``nonspace``: the text's ``nonspace_count``, when the caller has it already; ``sound``: the
    reason when nothing is wrong, naming where the text came from (an OCR reading is no text layer)."""
    layout = layout or PageLayout()
    nonspace = nonspace_count(text) if nonspace is None else nonspace
    if nonspace < _T.min_chars:
        return _empty_verdict(layout, nonspace)
    page = _measure(text, layout, nonspace)
    evidence = _Evidence()
    _judge_glyph_garbage(page, evidence)
    _judge_mojibake(page, evidence)
    _judge_script_mix(page, evidence)
    _judge_national_sets(page, evidence)
    _judge_numbers(page, evidence)
    _judge_letter_share(page, evidence)
    language = _script_language(text, page.script)
    if page.words:
        language = page.words.language
        _judge_words(page.words, evidence)
    elif page.script == "arabic" and page.letters >= _T.arabic_min_letters:
        _judge_arabic(text, evidence)
    _judge_length(page, evidence)
    _judge_picture(page, evidence)
    return evidence.verdict(language, sound, page.words.unknown_words if page.words else ())


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of the text's language, by dictionary for Latin script, else by script."""
    runs, letters, script, _ = _letter_runs(text, nonspace_count(text))
    if script != "latin":
        return _script_language(text, script)
    return _word_evidence(runs, lexicon()).language if letters >= _T.min_letters_for_words else None


def _empty_verdict(layout: PageLayout, nonspace: int) -> TextVerdict:
    """A page with fewer than ``min_chars`` characters; the reason says how many there are (one
    stray character is not "no text")."""
    found = "No text" if nonspace == 0 else f"Only {nonspace} character{'s' if nonspace > 1 else ''} of text"
    if _draws_something(layout):
        return TextVerdict(score=0.0, suspect=True, corrupt=False, signals=("empty", "image_only"),
                           confidence=_T.empty_confidence,
                           reason=f"{found} on a page that draws images or glyphs.")
    return TextVerdict(score=0.0, suspect=False, corrupt=False, signals=("empty",), confidence=_T.empty_confidence,
                       reason=f"{found} on the page, and no images or outlined glyphs that could hold more.")


def _measure(text: str, layout: PageLayout, nonspace: int) -> _Page:
    bad_glyphs, garbage_chars = _garbage(text)
    glyphs = nonspace - garbage_chars + bad_glyphs
    if layout.unmapped_glyphs > bad_glyphs:  # the engine counted glyphs it could not map
        glyphs += layout.unmapped_glyphs - bad_glyphs
        bad_glyphs = layout.unmapped_glyphs
    runs, letters, script, beyond_latin = _letter_runs(_join_hyphenated(text), nonspace)
    words = _word_evidence(runs, lexicon()) if script == "latin" and letters >= _T.min_letters_for_words else None
    east_asian, implausible, rare = _national_plausibility(text) if beyond_latin else (0, 0, 0)
    return _Page(
        text=text, layout=layout, nonspace=nonspace, bad_glyphs=bad_glyphs, glyphs=glyphs,
        garbage_chars=garbage_chars, private_use=_private_use(text) if bad_glyphs else 0,
        letters=letters, script=script, mojibake=_mojibake(text, script),
        leader_chars=_leader_chars(text),
        number_chars=_number_chars(text, nonspace), words=words,
        east_asian=east_asian, implausible=implausible, rare=rare,
    )


# --- the rules, in the order they apply --------------------------------------------------------


def _judge_glyph_garbage(page: _Page, evidence: _Evidence) -> None:
    share = page.bad_glyphs / max(page.glyphs, 1)
    words = page.words
    if (page.private_use == page.bad_glyphs and share <= _T.math_symbol_share and words is not None
            and words.checked >= _T.min_words_for_dictionary and words.hit_rate >= _T.good_hit_rate):
        # the only unmapped glyphs are private-use code points (what math and symbol fonts map
        # their glyphs to) among sound dictionary words: formulas, not a broken layer; OCR
        # would read them worse
        if share >= _T.garbage_suspect_share:
            evidence.found("math_symbols", f"{share:.0%} of glyphs are private-use symbols (math or symbol fonts) "
                           "among sound words")
            evidence.confidence *= _T.math_symbol_confidence
        evidence.score *= (1.0 - share) ** 2
        return
    if (page.bad_glyphs >= _T.garbage_min_glyphs and share >= _T.garbage_min_share) or share >= _T.garbage_alone_share:
        evidence.found("glyph_garbage",
                       f"{share:.0%} of glyphs are unmapped ((cid:N), /gNN, U+FFFD, private use or controls)")
        evidence.suspect = share >= _T.garbage_suspect_share
        evidence.corrupt = share > _T.garbage_corrupt_share
    evidence.score *= (1.0 - share) ** 2


def _judge_mojibake(page: _Page, evidence: _Evidence) -> None:
    if not page.mojibake:
        return
    share = page.mojibake / max(page.glyphs, 1)
    if page.mojibake >= _T.mojibake_min_glyphs and share >= _T.mojibake_min_share:
        evidence.found("glyph_garbage", f"{share:.0%} of glyphs decode to stray WinAnsi symbols (™›œŸ˜), as codes "
                       "of a font without ToUnicode do")
        evidence.suspect = True
        evidence.corrupt = evidence.corrupt or share > _T.mojibake_corrupt_share
        evidence.score *= (1.0 - share) ** 2


def _judge_script_mix(page: _Page, evidence: _Evidence) -> None:
    if page.script == "mixed":
        evidence.found("script_mix", "letters jump between unrelated scripts, as decoded glyph codes do")
        evidence.suspect = evidence.corrupt = True
        evidence.score *= _T.script_mix_score


def _judge_national_sets(page: _Page, evidence: _Evidence) -> None:
    """A CJK or Hangul page whose characters fall outside every common national set: what the
    codes of a wrong CMap or ToUnicode map land on (rare Extension A Han, Hangul for Cyrillic),
    as suspicious as a ``(cid:N)``. Real text keeps to those sets almost entirely."""
    if not page.implausible:
        return
    weighted = page.implausible - (1.0 - _T.implausible_rare_weight) * page.rare
    share = weighted / max(page.east_asian, 1)
    # as glyph garbage does, the share of the page's glyphs costs the score, also below the
    # signal's bar: of two readings of a page the more plausible one scores higher
    evidence.score *= (1.0 - min(1.0, weighted / max(page.glyphs, 1))) ** 2
    dominant = page.script in ("cjk", "hangul")
    if page.implausible < (_T.implausible_min_chars if dominant else _T.implausible_minority_chars):
        return
    if share < (_T.implausible_suspect_share if dominant else _T.implausible_minority_share):
        return
    rare = f" ({page.rare} only in JIS X 0212)" if page.rare else ""
    evidence.found("implausible_script", f"{page.implausible} of the {page.east_asian} Han, kana and Hangul characters "
                   f"are in none of GB2312, Big5, JIS X 0208 and KS X 1001{rare}, as the codes of a wrong CMap land")
    evidence.suspect = True
    evidence.corrupt = evidence.corrupt or share >= _T.implausible_corrupt_share


def _judge_numbers(page: _Page, evidence: _Evidence) -> None:
    if page.number_chars > _T.numeric_page_numbers * page.nonspace and (
            page.letters < _T.numeric_page_letters * page.nonspace):
        evidence.found("mostly_numbers", "mostly numbers (a table?), so there are few words to judge")
        evidence.confidence *= _T.low_confidence


def _judge_letter_share(page: _Page, evidence: _Evidence) -> None:
    """Letters vs other characters, with garbage, leaders and numbers set aside."""
    judged = page.nonspace - page.garbage_chars - page.leader_chars - page.number_chars
    share = min(1.0, page.letters / judged) if judged >= _T.min_judged_chars else 1.0
    if share >= _T.letter_share_suspect:
        return
    words = page.words
    if words and words.checked >= _T.min_words_for_dictionary and words.hit_rate >= _T.real_words_hit_rate:
        # the letters that are there spell real words: markup, code or data, not decoding damage
        evidence.found("few_letters", f"only {share:.0%} of the characters are letters, but they spell real words")
        evidence.confidence *= _T.low_confidence
        return
    evidence.found("low_letter_ratio", f"only {share:.0%} of the non-numeric characters are letters")
    evidence.suspect = True
    evidence.corrupt = evidence.corrupt or share < _T.letter_share_corrupt
    evidence.score *= (share / _T.letter_share_suspect) ** 2


def _judge_words(words: _Words, evidence: _Evidence) -> None:
    glued = words.glued_share >= _T.glued_share
    broken = words.broken_pairs >= _T.broken_pairs and words.broken_rate >= _T.broken_rate
    if glued or broken:
        # the words are right, the spaces are not (formula spacing, tight kerning): the text is
        # not suspect, since OCR would read it no better, but another engine may space it better
        # (the ladder climbs on the signal) and the lower score lets that engine win
        evidence.found(
            "spacing_damage",
            f"words run together ({words.glued_share:.0%} of letters)" if glued
            else f"words split by stray spaces ({words.broken_pairs} fragments join into words)",
        )
        evidence.score *= 1.0 - _T.spacing_max_penalty * min(
            1.0, max(words.glued_share, _T.broken_rate_weight * words.broken_rate))
        evidence.confidence *= _T.spacing_confidence
    if words.checked < _T.min_words_for_dictionary and not glued:
        evidence.confidence *= _T.few_words_confidence
        return

    # glued words are no dictionary words: on a glued page only the case evidence counts
    implausible = not glued and (words.bigram_plausibility < _T.plausible_bigrams
                                 or words.trigram_plausibility < _T.plausible_trigrams)
    flips = words.flip_rate >= _T.flip_rate and words.suspicious_flips >= _T.flips
    low_hits = words.hit_rate < _T.cipher_hit_rate and not glued
    strong_cipher = low_hits and (implausible or flips)
    case_cipher = words.flip_rate >= _T.case_cipher_rate and words.suspicious_flips >= _T.case_cipher_flips
    local_cipher = (words.worst_window < _T.local_cipher_window and (implausible or flips)
                    and words.hit_rate < _T.good_hit_rate and not glued)
    cipher = strong_cipher or case_cipher or local_cipher
    if cipher:
        evidence.found(
            "cipher",
            f"words keep their shape but only {words.hit_rate:.0%} are dictionary words"
            + (f", {words.suspicious_flips} with unexplained mid-word capitals" if words.suspicious_flips else "")
            + (" and letter pairs no known language uses" if implausible else ""),
        )
        evidence.suspect = True
        evidence.corrupt = evidence.corrupt or strong_cipher or (case_cipher and (
            words.hit_rate < _T.case_corrupt_hit_rate
            or (words.flip_rate >= _T.case_corrupt_rate and words.hit_rate < _T.good_hit_rate)))
        evidence.score *= _T.cipher_corrupt_score if evidence.corrupt else _T.cipher_score
    elif glued:
        pass
    elif low_hits:
        evidence.found("unlisted_language", "few dictionary words but letter pairs of a real language: a language we "
                       "have no dictionary for")
        evidence.confidence *= _T.no_dictionary_confidence
    elif words.hit_rate < _T.real_words_hit_rate or words.benign_flips + words.suspicious_flips >= _T.camel_flips:
        evidence.found("few_dictionary_words", "few plain dictionary words: codes, names, CamelCase or a "
                       "language we have no dictionary for")
        evidence.confidence *= _T.low_confidence
    # dictionary plausibility: real prose ~1, unknown-language text a steady 0.85, cipher low
    if cipher or (words.hit_rate >= _T.cipher_hit_rate and not glued):
        evidence.score *= _dictionary_score(words.hit_rate)
    elif not glued:
        evidence.score *= _T.unknown_language_score
    evidence.score *= 1.0 - min(_T.flip_max_penalty, _T.flip_score_weight * words.flip_rate)
    if words.language is None:
        evidence.confidence *= _T.unknown_language_confidence


def _judge_arabic(text: str, evidence: _Evidence) -> None:
    hit_rate, checked = arabic_word_share(text)
    if checked < _T.min_words_for_dictionary:
        evidence.confidence *= _T.few_words_confidence
        return
    if hit_rate < _T.arabic_cipher_hit_rate:
        evidence.found("cipher", f"only {hit_rate:.0%} of the Arabic words are dictionary words: letters mapped to "
                       "the wrong Arabic letters (a wrong ToUnicode map)")
        evidence.suspect = True
        evidence.corrupt = evidence.corrupt or hit_rate < _T.arabic_corrupt_hit_rate
    elif hit_rate < _T.arabic_low_hit_rate:
        evidence.found("few_dictionary_words", "few Arabic dictionary words (dialect, names or technical terms?)")
        evidence.confidence *= _T.low_confidence
    evidence.score *= _dictionary_score(hit_rate)


def _dictionary_score(hit_rate: float) -> float:
    """The score factor of a page whose checked words hit the dictionary at ``hit_rate`` (Latin
    or Arabic): 1 for prose of a known language, down to the floor for no words at all."""
    floor = _T.dictionary_score_floor
    return min(1.0, floor + (1.0 - floor) * hit_rate / _T.good_hit_rate)


def _judge_length(page: _Page, evidence: _Evidence) -> None:
    if page.letters < _T.short_page_letters:
        floor = _T.short_page_confidence
        evidence.confidence *= floor + (1.0 - floor) * page.letters / _T.short_page_letters


def _judge_picture(page: _Page, evidence: _Evidence) -> None:
    layout = page.layout
    if page.draws_something and page.nonspace < _T.image_only_chars and (
            layout.image_area_ratio >= _T.image_only_area or layout.has_vector_glyphs):
        evidence.found("image_only", "little text on a page mostly drawn as images or outlined glyphs")
        evidence.suspect = True
        evidence.score *= _T.image_only_score


# --- measurements ---------------------------------------------------------------------------


def _draws_something(layout: PageLayout) -> bool:
    """Whether the page draws what could hold text: a logo alone is not worth OCR.

    An image count with no area means the engine did not measure the area: assume it matters.
    """
    if layout.has_vector_glyphs or layout.image_area_ratio >= _T.drawing_area:
        return True
    return layout.image_count > 0 and layout.image_area_ratio == 0.0


@functools.cache
def national_charsets() -> tuple[frozenset[str], frozenset[str]]:
    """(common, rare): the characters of the national sets East Asian text is written in, GB2312,
    Big5, JIS X 0208 (with the Windows code page 932 extensions: 髙, 﨑, ①), KS X 1001 and JIS
    X 0201's half-width kana; and those only JIS X 0212 adds. Decoded from Python's codecs on first
    need (tens of milliseconds, CJK pages only) and memoised: a pure function of the codecs, not
    mutable state."""
    high = bytes(range(0xA1, 0xFF))
    common: set[str] = set(map(chr, range(0xFF61, 0xFFA0)))
    for codec, leads, trails in (
        ("gb2312", high, high), ("euc_kr", high, high), ("euc_jp", high, high),
        ("big5", bytes(range(0x81, 0xFF)), bytes(range(0x40, 0x7F)) + high),
        ("cp932", bytes([*range(0x81, 0xA0), *range(0xE0, 0xF0)]), bytes([*range(0x40, 0x7F), *range(0x80, 0xFD)])),
    ):
        common |= _decoded(codec, leads, trails)
    rare = _decoded("euc_jp", high, high, prefix=b"\x8f") - common
    return frozenset(common), frozenset(rare)


def _decoded(codec: str, leads: bytes, trails: bytes, prefix: bytes = b"") -> set[str]:
    """The characters ``codec`` decodes ``prefix + lead + trail`` to, every lead with every trail.
    One decode of all the codes, each followed by a space (where every one of these codecs starts
    afresh): a decode per code costs several times more."""
    width, count = len(prefix) + 3, len(trails)
    row = bytearray(width * count)
    for offset, byte in enumerate(prefix):
        row[offset::width] = bytes([byte]) * count
    row[width - 2::width] = trails
    row[width - 1::width] = b" " * count
    rows = []
    for lead in leads:
        row[width - 3::width] = bytes([lead]) * count
        rows.append(bytes(row))
    return {code for code in b"".join(rows).decode(codec, errors="replace").split(" ")
            if len(code) == 1 and code != "\ufffd"}


def _national_plausibility(text: str) -> tuple[int, int, int]:
    """(Han, kana and Hangul characters, of them outside every common national set, of those only
    in JIS X 0212)."""
    found = outside = rare_only = 0
    east_asian = _east_asian()
    common, rare = national_charsets() if east_asian.search(text) else (frozenset(), frozenset())
    for piece in whitespace_pieces(text) if common else ():
        chars = east_asian.findall(piece)
        beyond = [ch for ch in chars if ch not in common]
        found += len(chars)
        outside += len(beyond)
        rare_only += sum(map(rare.__contains__, beyond))
    return found, outside, rare_only


def _sentence(parts: Sequence[str]) -> str:
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "." if text else ""


def _garbage(text: str) -> tuple[int, int]:
    """(unmapped glyphs, characters they take): each ``(cid:12)`` or ``/143`` is one glyph."""
    bad = chars = 0
    if _may_have_bad_chars(text):
        bad = chars = _count(_BAD_CHAR, text)
        if "\x02" in text:  # pdfium's mark for a hyphen it generated at a line break: not garbage
            bad = chars = bad - len(_LINE_BREAK_HYPHEN.findall(text))
    if "(cid:" in text:
        found = _CID.findall(text)
        bad += len(found)
        chars += sum(map(len, found))
    if "/" in text:
        previous_end = -1
        for match in _SLASH_GLYPH.finditer(text):
            before = text[match.start() - 1] if match.start() else " "
            if match.start() == previous_end or not (before.isalnum() or before in "/.:,_"):
                bad += 1
                chars += len(match.group())
                previous_end = match.end()
    return bad, chars


def _private_use(text: str) -> int:
    return 0 if text.isascii() else _count(_PRIVATE_USE, text)


def character_agreement(first: str, second: str) -> float:
    """How far two readings of a page hold the same characters, order and spacing aside (two
    engines, or a text layer and OCR of the rendered page): reading order differs between readers,
    wrong characters do not hide."""
    a = Counter("".join(unicodedata.normalize("NFKC", first).split()))
    b = Counter("".join(unicodedata.normalize("NFKC", second).split()))
    total = max(sum(a.values()), sum(b.values()))
    return sum((a & b).values()) / total if total else 1.0


def nonspace_count(text: str) -> int:
    """``sum(map(len, text.split()))``, without building the words on ASCII text."""
    if text.isascii():
        return len(text.encode("ascii").translate(None, _ASCII_SPACE))
    return sum(map(len, text.split()))


def _may_have_bad_chars(text: str) -> bool:
    if text.isascii():  # a byte-table pass is many times faster than the regex scan
        encoded = text.encode("ascii")
        return len(encoded.translate(None, _ASCII_BAD)) != len(encoded)
    return _BAD_CHAR.search(text) is not None


def _mojibake(text: str, script: str) -> int:
    """Glyphs decoded to stray WinAnsi symbols; only clusters count on a Latin page (™, š, œ are real there)."""
    if text.isascii():
        return 0
    if script == "latin":
        # a search per symbol rules most pages out ten times faster than the cluster scan
        clustered = any(symbol in text for symbol in _MOJIBAKE_CLUSTERED)
        return _chars(_MOJIBAKE_CLUSTER, text) if clustered else 0
    return _count(_MOJIBAKE, text)


def _join_hyphenated(text: str) -> str:
    """``docu-\nmento`` -> ``documento``, so line-break hyphens don't read as split words."""
    if "-\n" in text or "-\r\n" in text or "\x02" in text or "\xad" in text:
        return _LINE_BREAK_HYPHEN.sub("", text)
    return text


def _leader_chars(text: str) -> int:
    leaders = 0
    if "..." in text or "__" in text or "--" in text or "\u2026\u2026" in text:
        leaders = sum(len(m.group()) for m in _LEADER.finditer(text))
    if not text.isascii() and _MARK_BYTES.search(text.encode("utf-8", errors="surrogatepass")):
        leaders += sum(len(m.group()) for m in _MARK_RUN.finditer(text))
    return leaders


def _number_chars(text: str, nonspace: int) -> int:
    """Characters in number-shaped tokens; the exact token scan only runs on number-heavy pages."""
    encoded = text.encode("utf-8", errors="surrogatepass")  # ASCII digits stay single bytes
    digits = len(encoded) - len(encoded.translate(None, _ASCII_DIGITS))
    if digits < _T.number_scan_digits * nonspace:
        return digits
    return _chars(_NUMBER_TOKEN, text)  # its look-arounds stop at whitespace: a piece's edge is one


def _script_language(text: str, script: str) -> str | None:
    if script == "cjk":
        return "ja" if _scripts()[1][1].search(text) else "zh"
    return _SCRIPT_LANGUAGE.get(script)


def _letter_runs(text: str, nonspace: int) -> tuple[list[str], int, str, bool]:
    """A bounded sample of the Latin words' letter runs, the count of all letters, the script
    family, and whether the page holds more than a few characters beyond Latin (only those pages
    are worth a look at their Han, kana and Hangul).

    On ASCII the runs are cut by a byte-table pass that blanks what is not a letter, then split
    on spaces: far cheaper than a regex. On other Latin text the regex collecting the runs is
    cheaper (by a sixth) than blanking the non-letters with one and splitting.
    """
    if text.isascii():
        return (*_sampled_runs(text, _ascii_runs), "latin", False)
    if _count(_BEYOND_LATIN, text) <= _T.latin_beyond_share * nonspace:
        return (*_sampled_runs(text, _LATIN_LETTER_RUN.findall), "latin", False)
    letters = _chars(_LETTER_RUN, text)
    script = _dominant_script(text, letters)
    return (_sampled_runs(text, _LATIN_LETTER_RUN.findall)[0] if script == "latin" else []), letters, script, True


def _ascii_runs(text: str) -> list[str]:
    return text.encode("ascii").translate(_ASCII_LETTERS_ONLY).decode("ascii").split()


def _sampled_runs(text: str, runs_of: Callable[[str], list[str]]) -> tuple[list[str], int]:
    """(``_sample(runs_of(text))``, the letters in all the runs), a long text read in whitespace
    pieces (a run never crosses whitespace): its runs are counted piece by piece, then the
    sampled ones taken from the pieces that hold them, so the runs of a 100 MB text (17 million
    strings) are never all in memory."""
    pieces = whitespace_pieces(text)
    first = next(pieces)
    if len(first) == len(text):
        runs = runs_of(text)
        return _sample(runs), sum(map(len, runs))
    counts: list[int] = []
    letters = 0
    for piece in itertools.chain((first,), pieces):
        runs = runs_of(piece)
        counts.append(len(runs))
        letters += sum(map(len, runs))
    wanted = _sample_ranges(sum(counts))
    sample: list[str] = []
    offset = 0
    for piece, count in zip(whitespace_pieces(text), counts, strict=True):
        overlaps = [(max(a, offset) - offset, min(b, offset + count) - offset) for a, b in wanted
                    if a < offset + count and b > offset]
        if overlaps:
            runs = runs_of(piece)
            for a, b in overlaps:
                sample.extend(runs[a:b])
        offset += count
    return sample, letters


def _count(pattern: re.Pattern[str], text: str) -> int:
    """``len(pattern.findall(text))`` piece by piece, for a pattern that never matches whitespace
    nor looks past it."""
    return sum(len(pattern.findall(piece)) for piece in whitespace_pieces(text))


def _chars(pattern: re.Pattern[str], text: str) -> int:
    """``sum(map(len, pattern.findall(text)))`` piece by piece (the same patterns as _count)."""
    return sum(sum(map(len, pattern.findall(piece))) for piece in whitespace_pieces(text))


def _dominant_script(text: str, letters: int) -> str:
    """The page's script family; "mixed" for script chaos (decoded glyph codes)."""
    non_latin = _count(_NON_LATIN_LETTER, text)
    if non_latin <= _T.latin_non_latin * letters:
        return "latin"
    counts = {name: _count(pattern, text) for name, pattern in _scripts() if name != "kana"}
    counts["latin"] = letters - non_latin
    unclassified = letters - sum(counts.values())
    # Korean mixes Hanja, Japanese mixes kana and kanji: those count as one family
    if counts["hangul"] and counts["cjk"]:
        counts["hangul"] += counts.pop("cjk")
    # a Han or kana character carries about a word: weigh it so English terms don't outvote it
    ranked = sorted(counts, key=lambda name: -counts[name] * (_T.cjk_weight if name == "cjk" else 1))
    outside_two = sum(counts[name] for name in ranked[2:])
    if letters >= _T.mixed_min_letters and (
            outside_two > _T.mixed_outside_two * letters or unclassified > _T.mixed_unclassified * letters):
        return "mixed"
    return ranked[0]


def _sample(runs: Sequence[str]) -> list[str]:
    """A bounded sample in contiguous blocks, so neighbouring words stay neighbours."""
    out: list[str] = []
    for start, end in _sample_ranges(len(runs)):
        out.extend(runs[start:end])
    return out


def _sample_ranges(count: int) -> list[tuple[int, int]]:
    """The index ranges _sample takes of ``count`` runs, in order and apart."""
    if count <= _T.sample_words:
        return [(0, count)]
    block = _T.sample_words // _T.sample_blocks
    stride = (count - block) // (_T.sample_blocks - 1)
    return [(i * stride, i * stride + block) for i in range(_T.sample_blocks)]


def _word_evidence(original: Sequence[str], lex: Lexicon) -> _Words:
    """Dictionary, case and spacing evidence from a bounded sample of the page's letter runs."""
    sample = " ".join(original).lower().split(" ") if original else []
    known = lex.words
    # a common word is in the trie (the lists are built that way): most of a page's words are
    # common, and a dict lookup costs a tenth of the trie's
    masks = list(map(lex.common_mask.get, sample))
    in_dict = [mask is not None or word in known for word, mask in zip(sample, masks, strict=True)]
    # words of 3+ letters: shorter ones hit the dictionary by chance (built from C-level passes:
    # a Python loop over the sample costs more than the lookups)
    lengths = list(map(len, sample))
    long_misses = [i for i in compress(range(len(sample)), map(not_, in_dict)) if lengths[i] > 2]
    checked = list(compress(in_dict, map((2).__lt__, lengths)))
    unknown = [i for i in long_misses if not lex.knows(sample[i])]
    if len(unknown) < len(long_misses):
        checked = [hit or lex.knows(w) for w, hit in zip(sample, in_dict, strict=True) if len(w) > 2]
    n = len(checked)
    hits = sum(checked)
    hit_rate = hits / n if n else 1.0
    worst = hit_rate
    window = _T.window
    if n >= 2 * window and hits < n:
        totals = [0, *accumulate(checked)]
        worst = min(totals[i + window] - totals[i] for i in range(0, n - window + 1, window // 2)) / window

    bigram_plausibility = trigram_plausibility = 1.0
    if hit_rate < _T.real_words_hit_rate or worst < _T.cipher_hit_rate:
        missed = [f"^{fold_accents(w)}$" for w, hit in zip(sample, in_dict, strict=True) if not hit and len(w) > 2]
        pairs = [w[i : i + 2] for w in missed for i in range(1, len(w) - 2)]
        triples = [w[i : i + 3] for w in missed for i in range(len(w) - 2)]
        if pairs:
            bigram_plausibility = sum(map(lex.bigrams.__contains__, pairs)) / len(pairs)
            trigram_plausibility = sum(map(lex.trigrams.__contains__, triples)) / len(triples)

    suspicious, benign = _case_flips(" ".join(original), lex)
    broken = _broken_pairs(sample, in_dict, lex) if hits < len(sample) and not all(in_dict) else 0
    return _Words(
        checked=n, hit_rate=hit_rate, worst_window=worst,
        bigram_plausibility=bigram_plausibility, trigram_plausibility=trigram_plausibility,
        suspicious_flips=suspicious, benign_flips=benign, flip_rate=suspicious / max(len(sample), 1),
        glued_share=_glued_share(sample, in_dict, lex) if long_misses else 0.0,
        broken_pairs=broken, broken_rate=broken / max(len(sample), 1),
        language=_language(masks) if hit_rate >= _T.real_words_hit_rate else None,
        unknown_words=tuple(original[i] for i in unknown) if len(unknown) >= _T.minority_gate_words else (),
    )


def implausible_words(words: Sequence[str], lex: Lexicon | None = None) -> tuple[str, ...]:
    """The distinct ``words`` with fewer than ``implausible_word_trigrams`` of their letter triples
    (word edges marked) among those real words use; acronyms (up to 4 capitals: LLC, DMCA) aside:
    on a sound page, what a minority font with a wrong map leaves."""
    found: dict[str, None] = {}
    trigrams = (lex or lexicon()).trigrams
    for word in words:
        if word in found or (len(word) <= 4 and word.isupper()):
            continue
        edged = f"^{fold_accents(word.lower())}$"
        triples = len(edged) - 2
        if sum(edged[i : i + 3] in trigrams for i in range(triples)) < _T.implausible_word_trigrams * triples:
            found[word] = None
    return tuple(found)


def _case_flips(text: str, lex: Lexicon) -> tuple[int, int]:
    """Distinct tokens with a mid-word lower->UPPER flip: (unexplained, explained).

    Explained flips read as words glued CamelCase-style (PowerPoint, McDonald, iPhone) or as
    element-like codes (ENiCrFe); a token repeated verbatim is vocabulary, not a cipher.
    """
    if not _may_flip(text):
        return 0, 0
    tokens: Counter[str] = Counter()
    last_end = -1
    for match in _FLIP.finditer(text):
        if match.start() < last_end:
            continue  # a second flip in the same token
        start, end = match.start(), match.end()
        while start > 0 and text[start - 1].isalpha():
            start -= 1
        while end < len(text) and text[end].isalpha():
            end += 1
        last_end = end
        tokens[text[start:end]] += 1
        if len(tokens) >= _T.max_flip_tokens:
            break
    suspicious = benign = 0
    for token, count in tokens.items():
        parts = _FLIP_POINT.split(token)
        explained = all(len(p) <= 2 or p.isupper() or lex.knows(p.lower()) for p in parts)
        if not explained and _CHEMICAL.fullmatch(token):
            explained = sum(c.islower() for c in token) >= _T.chemical_lower_share * len(token)
        if explained or count > 1:
            benign += 1
        else:
            suspicious += 1
    return suspicious, benign


def _may_flip(text: str) -> bool:
    """Whether _FLIP can match, by a byte-table pass over the Latin-1 letters it names."""
    encoded = text.encode("latin-1", errors="replace")  # what is beyond Latin-1 is no _FLIP letter
    return b"aA" in encoded.translate(_FLIP_CLASSES)


def _segments(word: str, lex: Lexicon) -> bool:
    """Whether ``word`` (its first 48 letters) reads as dictionary words run together.

    Pieces are 2+ letter dictionary words, or one-letter words common in some language
    (``a``, ``e``, ``y``); the split must average 3+ letters a piece, or anything would pass.
    """
    word = word[: _T.max_segment_letters]
    n = len(word)
    best = [0] + [n + 1] * n  # best[i]: fewest pieces that spell word[:i]
    for start in range(n):  # every piece ending at start is known by now
        if best[start] > n:
            continue
        # the trie lists the words that start here in one call, not one lookup per length
        lengths = [len(piece) for piece in lex.words.prefixes(word[start : start + 20]) if len(piece) > 1]
        if word[start] in lex.common_mask:
            lengths.append(1)
        for length in lengths:
            best[start + length] = min(best[start + length], best[start] + 1)
    reachable = [end for end in range(max(1, n - 6), n + 1) if best[end] <= n]
    return bool(reachable) and 2 <= best[reachable[-1]] <= reachable[-1] / 3


def _glued_share(sample: Sequence[str], in_dict: Sequence[bool], lex: Lexicon) -> float:
    """Share of letters in long tokens that are really several words run together."""
    long_ones = [w for w in compress(sample, map(not_, in_dict)) if len(w) >= _T.glued_min_letters]
    if not long_ones:
        return 0.0
    letters = sum(map(len, sample))
    long_letters = sum(map(len, long_ones))
    if long_letters < _T.glued_min_share * letters:
        return 0.0
    tried = long_ones[: _T.max_segment_tokens]
    glued = sum(len(w) for w in tried if _segments(w, lex))
    return glued / sum(map(len, tried)) * long_letters / letters


def _broken_pairs(sample: Sequence[str], in_dict: Sequence[bool], lex: Lexicon) -> int:
    """Neighbouring fragments, at least one not a word, that join into a word: ``arbei terinnen``."""
    known = lex.words
    joined: set[int] = set()  # index of the first fragment of each join found
    for i in compress(range(len(sample)), map(not_, in_dict)):
        for first in (i - 1, i):
            if first < 0 or first + 1 >= len(sample) or first in joined:
                continue
            a, b = sample[first], sample[first + 1]
            if len(a) + len(b) >= 5 and a + b in known:
                joined.add(first)
                continue
            c = sample[first + 2] if first + 2 < len(sample) else ""
            if c and len(a) + len(b) + len(c) >= 7 and a + b + c in known:
                joined.add(first)
    return len(joined)


def _language(masks: Sequence[int | None]) -> str | None:
    """The language whose most frequent words cover most of the sample (``masks``: each sampled
    word's ``Lexicon.common_mask``, None for a word common in none)."""
    counts = [0] * len(LANGUAGES)
    for mask, n in Counter(masks).items():
        for bit in _MASK_BITS[mask] if mask else ():
            counts[bit] += n
    best = max(range(len(LANGUAGES)), key=counts.__getitem__)
    enough = counts[best] >= max(_T.language_min_words, _T.language_min_share * len(masks))
    return LANGUAGES[best] if enough else None


def arabic_word_share(text: str) -> tuple[float, int]:
    """Share of Arabic words (2+ letters, presentation forms folded) in the word list."""
    known = arabic_words()
    words = [w for w in _ARABIC_WORD.findall(unicodedata.normalize("NFKC", text)) if len(w) > 1]
    words = words[: _T.sample_words]
    if not words:
        return 1.0, 0

    def is_word(word: str) -> bool:
        # clitics glue to the word: wa-/fa-/bi-/li-/ka- and the article al-
        for candidate in (word, word[1:] if word[0] in "وفبلك" else ""):
            if candidate in known or (candidate.startswith("ال") and candidate[2:] in known):
                return True
        return False

    return sum(map(is_word, words)) / len(words), len(words)


#: a token made only of the codes a subsetter gives a font's first glyphs (0x21 '!' .. 0x3F '?'),
#: punctuation and figures, one of them a mark prose does not use, whitespace around it
_LOW_CODES = re.compile(r"(?<!\S)[\x21-\x3f]*[!#$&*+<=>?][\x21-\x3f]*(?!\S)")
#: ... those marks, looked for first (str.__contains__: a page of prose holds none)
_CODE_MARKS = "!#$&*+<=>?"
#: a number, a date, an amount, a range, a reference: figures with their marks
_FIGURES = re.compile(r"[(\[]?[-+]?[$]?\d[\d.,:/\-]*%?[)\].,;:?!]*")


def glyph_code_tokens(text: str) -> list[str]:
    """The whitespace-separated tokens of ``text`` that read as a font's glyph codes, not words: at
    least three characters, all between '!' and '?', two kinds of mark at least and one of them
    a mark prose does not use ('"7+%-', '!"#', '%3*('), and not a number written with its marks
    ('$70,000.'). Code and markup match as well ('-->', '::='): the caller asks the fonts before
    it doubts them."""
    found: list[str] = []
    if not any(mark in text for mark in _CODE_MARKS):
        return found
    for match in _LOW_CODES.finditer(text):
        token = match.group()
        if len(token) < 3 or _FIGURES.fullmatch(token):
            continue
        if len({char for char in token if not char.isdigit()}) >= 2:
            found.append(token)
    return found


@dataclass(frozen=True)
class FontWords:
    """The dictionary and letter evidence on the words one font draws on a page."""

    font: str
    checked: int  # words of 3+ letters looked up
    hits: int  # ... that are dictionary words
    bigram_plausibility: float  # share of the missed words' letter pairs real words use
    trigram_plausibility: float  # ... and letter triples
    misses: tuple[str, ...]  # the distinct missed words, as drawn, longest first

    @property
    def hit_rate(self) -> float:
        return self.hits / self.checked if self.checked else 1.0


def font_words(texts: Sequence[tuple[str, str]], lex: Lexicon | None = None) -> list[FontWords]:
    """Per font, the evidence the page verdict reads for wrong letters (dictionary hits, letter-pair
    and triple plausibility of the misses), over the words of ``texts`` (font, text) pairs, each
    pair one text object's: a font's words are judged apart from the rest of the page's. Words
    with a capital inside (CrcByteByByte, MulByXpowD, iPhone) are codes or names, not judged: a
    wrong map keeps the drawn words' case."""
    lex = lex or lexicon()
    runs: dict[str, list[str]] = {}
    for font, text in texts:
        runs.setdefault(font, []).extend(w for w in _LATIN_LETTER_RUN.findall(text) if not _FLIP.search(w))
    found = []
    for font, words in runs.items():
        long_ones = [w for w in words if len(w) > 2]
        lowered = [w.lower() for w in long_ones]
        known = [w in lex.common_mask or lex.knows(w) for w in lowered]
        missed = [f"^{fold_accents(w)}$" for w, hit in zip(lowered, known, strict=True) if not hit]
        pairs = [w[i : i + 2] for w in missed for i in range(1, len(w) - 2)]
        triples = [w[i : i + 3] for w in missed for i in range(len(w) - 2)]
        bigrams = sum(map(lex.bigrams.__contains__, pairs)) / len(pairs) if pairs else 1.0
        trigrams = sum(map(lex.trigrams.__contains__, triples)) / len(triples) if triples else 1.0
        distinct = dict.fromkeys(w for w, hit in zip(long_ones, known, strict=True) if not hit)
        found.append(FontWords(font, len(known), sum(known), bigrams, trigrams,
                               tuple(sorted(distinct, key=len, reverse=True))))
    return found


def minority_font_garbage(texts: Sequence[tuple[str, str]], lex: Lexicon | None = None) -> FontWords | None:
    """The font of ``texts`` ((font, text) pairs) whose words are not words (mostly unknown, and
    their letters implausible: a wrong ToUnicode map's shifted or permuted letters) while the
    other fonts' words read as words; None when there is none. The caller leaves out fonts whose
    glyphs are no letters (math, symbols)."""
    fonts = font_words(texts, lex)
    checked, hits = sum(f.checked for f in fonts), sum(f.hits for f in fonts)
    worst = None
    for found in fonts:
        rest = checked - found.checked
        if (found.checked >= _T.minority_font_words and len(found.misses) >= _T.minority_font_misses
                and found.hit_rate < _T.cipher_hit_rate
                and found.bigram_plausibility < _T.plausible_bigrams
                and found.trigram_plausibility < _T.plausible_trigrams
                and rest >= _T.minority_rest_words and hits - found.hits >= _T.good_hit_rate * rest
                and (worst is None or found.checked > worst.checked)):
            worst = found
    return worst
