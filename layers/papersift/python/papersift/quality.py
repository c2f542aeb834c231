"""The verdict on a page's text: can it be trusted, and if not, why.

Text that looks fine but is garbage is worse than no text, because it gets indexed and
trusted. Every signal found is named in ``TextVerdict.signals`` so the report can say why.

The PDF ladder calls :func:`assess_text` on every engine's output for every page, keeps the
highest ``score`` and climbs to the next rung only while ``suspect`` is true; so the score must
rank engines on the same page, and ``suspect`` must stay false on good text (a false alarm
costs a full ladder run). The common path is a handful of whole-text regex passes plus set
lookups on a bounded sample of words, well under a millisecond for a normal page.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress
from operator import not_

from papersift.lexicon import LANGUAGES, Lexicon, arabic_words, fold_accents, lexicon


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
    #: names of the signals found: "empty", "image_only", "glyph_garbage", "script_mix",
    #: "low_letter_ratio", "cipher", "spacing_damage", "low_confidence"
    signals: tuple[str, ...] = field(default_factory=tuple)
    #: 0..1, how sure we are of this verdict
    confidence: float = 1.0
    #: detected language (ISO 639-1) where there was enough text
    language: str | None = None
    #: one human-readable sentence
    reason: str = ""


# --- patterns (compiled once; all read-only) ---------------------------------------------

#: one match = one glyph the engine could not map: U+FFFD, private use, C0/C1 controls ...
_BAD_CHAR = re.compile(r"[\ufffd\ue000-\uf8ff\U000f0000-\U0010ffff\x00-\x08\x0e-\x1f\x7f-\x9f]")
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
#: the ASCII part of _BAD_CHAR, and what ``str.split()`` splits on within ASCII, as byte tables
_ASCII_BAD = bytes([*range(0x09), *range(0x0E, 0x20), 0x7F])
_ASCII_SPACE = b" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
#: keeps ASCII letters and blanks every other byte
_ASCII_LETTERS_ONLY = bytes(c if chr(c).isascii() and chr(c).isalpha() else 0x20 for c in range(256))
_DIGITS = b"0123456789"
_MOJIBAKE = re.compile(r"[ƒˆ‰‹›˜Ÿ™œšžŒŠŽ†‡‚„]")
_MOJIBAKE_CLUSTER = re.compile(r"[ƒˆ‰‹›˜Ÿ]{2,}")
_LETTER_RUN = re.compile(r"[^\W\d_]+")
_ASCII_LETTER_RUN = re.compile(r"[A-Za-z]+")
_LATIN_LETTER_RUN = re.compile(r"[A-Za-zªºÀ-ÖØ-öø-ɏḀ-ỿ]+")
#: a whitespace-delimited token that is a number, money or a percentage (tables are legit)
_NUMBER_TOKEN = re.compile(
    r"(?<!\S)[(\[+\-−±~<>]?(?:R\$|US\$|[$€£¥])?[(\[+\-−]?\d[\d.,:/\-\u2009'’]*(?:%|‰|x|º|ª)?[)\],;:.%]*(?!\S)"
)
#: a word hyphenated across a line break (pdfium marks its own hyphens with U+0002)
_LINE_BREAK_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\x02\xad]\r?\n\s*(?=[^\W\d_])")
#: dot leaders, rules and underlines: layout, not text
_LEADER = re.compile(r"([^\w\s])\1{2,}")
#: a lower->UPPER flip inside a word (the token is checked against the dictionary later)
_FLIP = re.compile(r"[a-zß-öø-ÿ][A-ZÀ-ÖØ-Þ]")
#: _FLIP's two classes as a byte table: its lower-case letters -> "a", upper-case -> "A", rest -> " "
_FLIP_CLASSES = bytes(
    ord("a") if re.fullmatch(r"[a-zß-öø-ÿ]", chr(c)) else ord("A") if re.fullmatch(r"[A-ZÀ-ÖØ-Þ]", chr(c)) else 32
    for c in range(256)
)
_FLIP_POINT = re.compile(r"(?<=[a-zß-öø-ÿ])(?=[A-ZÀ-ÖØ-Þ])")
#: CamelCase codes made of element-like chunks: ENiCrFe, ERNiCrMo, NiCr
_CHEMICAL = re.compile(r"(?:[A-Z][a-z]?)+\d*")
#: anything outside Latin letters, common punctuation and symbols: a cheap upper bound on
#: non-Latin letters that lets most pages skip the exact count
_BEYOND_LATIN = re.compile(
    r"[^\x00-\u024f\u1e00-\u1eff\u2000-\u206f\u20a0-\u20cf\u2100-\u22ff\u25a0-\u25ff\ufb00-\ufb06\s]"
)
_ARABIC_WORD = re.compile(r"[\u0621-\u064a\u0671-\u06d3]+")
#: what is neither a Latin letter (as _LATIN_LETTER_RUN counts them) nor a space
_NOT_LATIN_LETTER = re.compile(r"[^\sA-Za-zªºÀ-ÖØ-öø-ɏḀ-ỿ]")
_NON_LATIN_LETTER = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
_SCRIPTS: tuple[tuple[str, re.Pattern[str]], ...] = (
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

# --- tunables -----------------------------------------------------------------------------

#: language mask -> the bits set in it
_MASK_BITS = tuple(
    tuple(bit for bit in range(len(LANGUAGES)) if mask >> bit & 1) for mask in range(1 << len(LANGUAGES))
)
_SAMPLE_WORDS = 160  # dictionary checks look at most at this many words
_SAMPLE_BLOCKS = 4  # ... taken as this many contiguous blocks spread over the page
_MIN_WORDS_FOR_DICTIONARY = 15  # fewer checkable words: no dictionary verdict
_WINDOW = 40  # words per window for local (partial-page) cipher evidence
_GOOD_HIT_RATE = 0.8  # real prose in a known language is above this
_CIPHER_HIT_RATE = 0.35  # below this, the words are not words
_ARABIC_CIPHER_HIT_RATE = 0.55  # sound Arabic prose ~0.95; a wrong ToUnicode map (corpus) 0.36
# real languages, even ones we have no dictionary for, stay above these (Polish, the lowest
# tried: 0.82 and 0.60); 99% of random letter substitutions of pt/en/es/fr/de fall below one
_PLAUSIBLE_BIGRAMS = 0.75
_PLAUSIBLE_TRIGRAMS = 0.52
_MAX_SEGMENT_TOKENS = 12  # glued-word segmentation is tried on at most this many tokens
_MAX_SEGMENT_LETTERS = 48  # ... and on at most this many letters of each
_MAX_FLIP_TOKENS = 200  # distinct mid-word-capital tokens looked at


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


def assess_text(text: str, layout: PageLayout | None = None) -> TextVerdict:
    """Judge one page's text: score it, name what is wrong, and say how sure we are."""
    layout = layout or PageLayout()
    nonspace = nonspace_count(text)
    draws_something = _draws_something(layout)
    if nonspace < 3:
        if draws_something:
            return TextVerdict(score=0.0, suspect=True, corrupt=False, signals=("empty", "image_only"),
                               confidence=0.9, reason="No text layer on a page that draws images or glyphs.")
        return TextVerdict(score=0.0, suspect=False, corrupt=False, signals=("empty",), confidence=0.9,
                           reason="No text on the page, and nothing drawn that could hold text.")

    signals: list[str] = []
    reasons: list[str] = []
    score = 1.0
    confidence = 1.0
    suspect = corrupt = False

    # glyph garbage: one match stands for one glyph, whatever its spelling
    bad_glyphs, garbage_chars = _garbage(text)
    glyphs = nonspace - garbage_chars + bad_glyphs
    if layout.unmapped_glyphs > bad_glyphs:
        glyphs += layout.unmapped_glyphs - bad_glyphs
        bad_glyphs = layout.unmapped_glyphs
    garbage_ratio = bad_glyphs / max(glyphs, 1)
    if (bad_glyphs >= 3 and garbage_ratio >= 0.01) or garbage_ratio >= 0.1:
        signals.append("glyph_garbage")
        reasons.append(f"{garbage_ratio:.0%} of glyphs are unmapped ((cid:N), /gNN, U+FFFD, private use or controls)")
        suspect = garbage_ratio >= 0.03
        corrupt = garbage_ratio > 0.3
    score *= (1.0 - garbage_ratio) ** 2

    runs, letters, script = _letter_runs(_join_hyphenated(text), nonspace)
    mojibake = _mojibake(text, script)
    if mojibake:
        glyph_ratio = mojibake / max(glyphs, 1)
        if mojibake >= 3 and glyph_ratio >= 0.03:
            signals.append("glyph_garbage")
            reasons.append(f"{glyph_ratio:.0%} of glyphs decode to stray WinAnsi symbols (™›œŸ˜), as codes of a font "
                           "without ToUnicode do")
            suspect = True
            corrupt = corrupt or glyph_ratio > 0.3
            score *= (1.0 - glyph_ratio) ** 2
    if script == "mixed":
        signals.append("script_mix")
        reasons.append("letters jump between unrelated scripts, as decoded glyph codes do")
        suspect = corrupt = True
        score *= 0.3

    words = _judge_words(runs, lexicon()) if script == "latin" and letters >= 20 else None

    # letters vs other characters, with numbers and leaders set aside
    leader_chars = sum(len(m.group()) for m in _LEADER.finditer(text)) if _has_leaders(text) else 0
    number_chars = _number_chars(text, nonspace)
    judged = nonspace - garbage_chars - leader_chars - number_chars
    if number_chars > 0.3 * nonspace and letters < 0.4 * nonspace:
        signals.append("low_confidence")
        reasons.append("mostly numbers (a table?), so there are few words to judge")
        confidence *= 0.6
    letter_share = min(1.0, letters / judged) if judged >= 60 else 1.0
    if letter_share < 0.5:
        if words and words.checked >= _MIN_WORDS_FOR_DICTIONARY and words.hit_rate >= 0.6:
            # the letters that are there spell real words: markup, code or data, not decoding damage
            signals.append("low_confidence")
            reasons.append(f"only {letter_share:.0%} of the characters are letters, but they spell real words")
            confidence *= 0.6
        else:
            signals.append("low_letter_ratio")
            reasons.append(f"only {letter_share:.0%} of the non-numeric characters are letters")
            suspect = True
            corrupt = corrupt or letter_share < 0.3
            score *= (letter_share / 0.5) ** 2

    language = _script_language(text, script)
    if words:
        language = words.language
        score, confidence, suspect, corrupt = _apply_word_evidence(
            words, score, confidence, suspect, corrupt, signals, reasons)
    elif script == "arabic" and letters >= 100:
        score, confidence, suspect, corrupt = _apply_arabic_evidence(
            text, score, confidence, suspect, corrupt, signals, reasons)

    if letters < 200:
        confidence *= 0.5 + letters / 400
    if draws_something and nonspace < 200 and (layout.image_area_ratio >= 0.5 or layout.has_vector_glyphs):
        signals.append("image_only")
        reasons.append("little text on a page mostly drawn as images or outlined glyphs")
        suspect = True
        score *= 0.6

    if not signals:
        reasons.append("text layer looks sound" + (f" ({language})" if language else ""))
    return TextVerdict(
        score=round(max(0.0, min(1.0, score)), 4),
        suspect=suspect or corrupt,
        corrupt=corrupt,
        signals=tuple(dict.fromkeys(signals)),
        confidence=round(max(0.05, min(1.0, confidence)), 3),
        language=language,
        reason=_sentence(reasons),
    )


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of the text's language, by dictionary for Latin script, else by script."""
    runs, letters, script = _letter_runs(text, nonspace_count(text))
    if script != "latin":
        return _script_language(text, script)
    return _judge_words(runs, lexicon()).language if letters >= 20 else None


# --- helpers ------------------------------------------------------------------------------

def _draws_something(layout: PageLayout) -> bool:
    """Whether the page draws what could hold text: a logo alone is not worth OCR.

    An image count with no area means the engine did not measure the area: assume it matters.
    """
    if layout.has_vector_glyphs or layout.image_area_ratio >= 0.02:
        return True
    return layout.image_count > 0 and layout.image_area_ratio == 0.0


def _sentence(parts: Sequence[str]) -> str:
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "." if text else ""


def _garbage(text: str) -> tuple[int, int]:
    """(unmapped glyphs, characters they take): each ``(cid:12)`` or ``/143`` is one glyph."""
    bad = chars = 0
    if _may_have_bad_chars(text):
        bad = chars = len(_BAD_CHAR.findall(text))
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
        return sum(map(len, _MOJIBAKE_CLUSTER.findall(text)))
    return len(_MOJIBAKE.findall(text))


def _join_hyphenated(text: str) -> str:
    """``docu-\nmento`` -> ``documento``, so line-break hyphens don't read as split words."""
    if "-\n" in text or "-\r\n" in text or "\x02" in text or "\xad" in text:
        return _LINE_BREAK_HYPHEN.sub("", text)
    return text


def _has_leaders(text: str) -> bool:
    return "..." in text or "__" in text or "--" in text or "\u2026\u2026" in text


def _number_chars(text: str, nonspace: int) -> int:
    """Characters in number-shaped tokens; the exact token scan only runs on number-heavy pages."""
    encoded = text.encode("utf-8", errors="surrogatepass")  # ASCII digits stay single bytes
    digits = len(encoded) - len(encoded.translate(None, _DIGITS))
    if digits < 0.1 * nonspace:
        return digits
    return sum(map(len, _NUMBER_TOKEN.findall(text)))


def _script_language(text: str, script: str) -> str | None:
    if script == "cjk":
        return "ja" if _SCRIPTS[1][1].search(text) else "zh"
    return _SCRIPT_LANGUAGE.get(script)


def _letter_runs(text: str, nonspace: int) -> tuple[list[str], int, str]:
    """A bounded sample of the Latin words' letter runs, the count of all letters, and the
    script family.

    The runs are cut by blanking what is not a letter and splitting on spaces: on ASCII a
    byte-table pass, on Latin text a scan for the few non-letters, both far cheaper than
    collecting every run with a regex.
    """
    if text.isascii():
        runs = text.encode("ascii").translate(_ASCII_LETTERS_ONLY).decode("ascii").split()
        return _sample(runs), sum(map(len, runs)), "latin"
    if len(_BEYOND_LATIN.findall(text)) <= 0.05 * nonspace:
        runs = _NOT_LATIN_LETTER.sub(" ", text).split()
        return _sample(runs), sum(map(len, runs)), "latin"
    letters = sum(map(len, _LETTER_RUN.findall(text)))
    script = _dominant_script(text, letters)
    return (_sample(_LATIN_LETTER_RUN.findall(text)) if script == "latin" else []), letters, script


def _dominant_script(text: str, letters: int) -> str:
    """The page's script family; "mixed" for script chaos (decoded glyph codes)."""
    non_latin = len(_NON_LATIN_LETTER.findall(text))
    if non_latin <= 0.2 * letters:
        return "latin"
    counts = {name: len(pattern.findall(text)) for name, pattern in _SCRIPTS if name != "kana"}
    counts["latin"] = letters - non_latin
    unclassified = letters - sum(counts.values())
    # Korean mixes Hanja, Japanese mixes kana and kanji: those count as one family
    if counts["hangul"] and counts["cjk"]:
        counts["hangul"] += counts.pop("cjk")
    # a Han or kana character carries about a word: weigh it so English terms don't outvote it
    ranked = sorted(counts, key=lambda name: -counts[name] * (3 if name == "cjk" else 1))
    outside_two = sum(counts[name] for name in ranked[2:])
    if letters >= 40 and (outside_two > 0.15 * letters or unclassified > 0.3 * letters):
        return "mixed"
    return ranked[0]


def _sample(runs: Sequence[str]) -> list[str]:
    """A bounded sample in contiguous blocks, so neighbouring words stay neighbours."""
    if len(runs) <= _SAMPLE_WORDS:
        return list(runs)
    block = _SAMPLE_WORDS // _SAMPLE_BLOCKS
    stride = (len(runs) - block) // (_SAMPLE_BLOCKS - 1)
    out: list[str] = []
    for i in range(_SAMPLE_BLOCKS):
        out.extend(runs[i * stride : i * stride + block])
    return out


def _judge_words(original: Sequence[str], lex: Lexicon) -> _Words:
    """Dictionary, case and spacing evidence from a bounded sample of the page's letter runs."""
    sample = " ".join(original).lower().split(" ") if original else []
    known = lex.words
    in_dict = list(map(known.__contains__, sample))
    # words of 3+ letters: shorter ones hit the dictionary by chance (built from C-level passes:
    # a Python loop over the sample costs more than the lookups)
    lengths = list(map(len, sample))
    long_misses = [i for i in compress(range(len(sample)), map(not_, in_dict)) if lengths[i] > 2]
    checked = list(compress(in_dict, map((2).__lt__, lengths)))
    if any(lex.knows(sample[i]) for i in long_misses):
        checked = [hit or lex.knows(w) for w, hit in zip(sample, in_dict, strict=True) if len(w) > 2]
    n = len(checked)
    hits = sum(checked)
    hit_rate = hits / n if n else 1.0
    worst = hit_rate
    if n >= 2 * _WINDOW and hits < n:
        totals = [0, *accumulate(checked)]
        step = _WINDOW // 2
        worst = min(totals[i + _WINDOW] - totals[i] for i in range(0, n - _WINDOW + 1, step)) / _WINDOW

    bigram_plausibility = trigram_plausibility = 1.0
    if hit_rate < 0.6 or worst < _CIPHER_HIT_RATE:
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
        language=_language(sample, lex) if hit_rate >= 0.6 else None,
    )


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
        if len(tokens) >= _MAX_FLIP_TOKENS:
            break
    suspicious = benign = 0
    for token, count in tokens.items():
        parts = _FLIP_POINT.split(token)
        explained = all(len(p) <= 2 or p.isupper() or lex.knows(p.lower()) for p in parts)
        if not explained and _CHEMICAL.fullmatch(token):
            explained = sum(c.islower() for c in token) >= 0.25 * len(token)
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
    word = word[:_MAX_SEGMENT_LETTERS]
    n = len(word)
    best = [0] + [n + 1] * n
    for end in range(1, n + 1):
        for start in range(max(0, end - 20), end):
            if best[start] > n or best[start] + 1 >= best[end]:
                continue
            piece = word[start:end]
            if piece in lex.words if end - start > 1 else piece in lex.common_mask:
                best[end] = best[start] + 1
    reachable = [end for end in range(max(1, n - 6), n + 1) if best[end] <= n]
    return bool(reachable) and 2 <= best[reachable[-1]] <= reachable[-1] / 3


def _glued_share(sample: Sequence[str], in_dict: Sequence[bool], lex: Lexicon) -> float:
    """Share of letters in long tokens that are really several words run together."""
    long_ones = [w for w, hit in zip(sample, in_dict, strict=True) if not hit and len(w) >= 13]
    if not long_ones:
        return 0.0
    letters = sum(map(len, sample))
    long_letters = sum(map(len, long_ones))
    if long_letters < 0.15 * letters:
        return 0.0
    tried = long_ones[:_MAX_SEGMENT_TOKENS]
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


def _language(sample: Sequence[str], lex: Lexicon) -> str | None:
    """The language whose most frequent words cover most of the sample."""
    masks = Counter(map(lex.common_mask.get, sample))
    counts = [0] * len(LANGUAGES)
    for mask, n in masks.items():
        for bit in _MASK_BITS[mask] if mask else ():
            counts[bit] += n
    best = max(range(len(LANGUAGES)), key=counts.__getitem__)
    return LANGUAGES[best] if counts[best] >= max(3, 0.25 * len(sample)) else None
def arabic_word_share(text: str) -> tuple[float, int]:
    """Share of Arabic words (2+ letters, presentation forms folded) in the word list."""
    known = arabic_words()
    words = [w for w in _ARABIC_WORD.findall(unicodedata.normalize("NFKC", text)) if len(w) > 1]
    words = words[:_SAMPLE_WORDS]
    if not words:
        return 1.0, 0

    def is_word(word: str) -> bool:
        # clitics glue to the word: wa-/fa-/bi-/li-/ka- and the article al-
        for candidate in (word, word[1:] if word[0] in "وفبلك" else ""):
            if candidate in known or (candidate.startswith("ال") and candidate[2:] in known):
                return True
        return False

    return sum(map(is_word, words)) / len(words), len(words)


def _apply_arabic_evidence(
    text: str, score: float, confidence: float, suspect: bool, corrupt: bool,
    signals: list[str], reasons: list[str],
) -> tuple[float, float, bool, bool]:
    hit_rate, checked = arabic_word_share(text)
    if checked < _MIN_WORDS_FOR_DICTIONARY:
        return score, confidence * 0.7, suspect, corrupt
    if hit_rate < _ARABIC_CIPHER_HIT_RATE:
        signals.append("cipher")
        reasons.append(f"only {hit_rate:.0%} of the Arabic words are dictionary words: letters mapped to "
                       "the wrong Arabic letters (a wrong ToUnicode map)")
        suspect = True
        corrupt = corrupt or hit_rate < 0.2
    elif hit_rate < 0.7:
        signals.append("low_confidence")
        reasons.append("few Arabic dictionary words (dialect, names or technical terms?)")
        confidence *= 0.6
    return score * min(1.0, 0.3 + 0.7 * hit_rate / _GOOD_HIT_RATE), confidence, suspect, corrupt


def _apply_word_evidence(
    words: _Words, score: float, confidence: float, suspect: bool, corrupt: bool,
    signals: list[str], reasons: list[str],
) -> tuple[float, float, bool, bool]:
    glued = words.glued_share >= 0.35
    broken = words.broken_pairs >= 3 and words.broken_rate >= 0.05
    if glued or broken:
        # the words are right, the spaces are not: another engine may do better, OCR rarely
        signals.append("spacing_damage")
        reasons.append(
            f"words run together ({words.glued_share:.0%} of letters)" if glued
            else f"words split by stray spaces ({words.broken_pairs} fragments join into words)"
        )
        suspect = True
        score *= 1.0 - 0.5 * min(1.0, max(words.glued_share, 3 * words.broken_rate))
        confidence *= 0.8
    if words.checked < _MIN_WORDS_FOR_DICTIONARY and not glued:
        return score, confidence * 0.7, suspect, corrupt

    # glued words are no dictionary words: on a glued page only the case evidence counts
    implausible = not glued and (words.bigram_plausibility < _PLAUSIBLE_BIGRAMS
                                 or words.trigram_plausibility < _PLAUSIBLE_TRIGRAMS)
    flips = words.flip_rate >= 0.04 and words.suspicious_flips >= 3
    low_hits = words.hit_rate < _CIPHER_HIT_RATE and not glued
    strong_cipher = low_hits and (implausible or flips)
    case_cipher = words.flip_rate >= 0.08 and words.suspicious_flips >= 5
    local_cipher = (words.worst_window < 0.25 and (implausible or flips) and words.hit_rate < _GOOD_HIT_RATE
                    and not glued)
    if strong_cipher or case_cipher or local_cipher:
        signals.append("cipher")
        reasons.append(
            f"words keep their shape but only {words.hit_rate:.0%} are dictionary words"
            + (f", {words.suspicious_flips} with unexplained mid-word capitals" if words.suspicious_flips else "")
            + (" and letter pairs no known language uses" if implausible else "")
        )
        suspect = True
        corrupt = corrupt or strong_cipher or (
            case_cipher and (words.hit_rate < 0.45 or (words.flip_rate >= 0.1 and words.hit_rate < _GOOD_HIT_RATE)))
        score *= 0.5 if corrupt else 0.75
    elif glued:
        pass
    elif low_hits:
        signals.append("low_confidence")
        reasons.append("few dictionary words but letter pairs of a real language: a language we have no "
                       "dictionary for")
        confidence *= 0.4
    elif words.hit_rate < 0.6 or words.benign_flips + words.suspicious_flips >= 5:
        signals.append("low_confidence")
        reasons.append("few plain dictionary words: codes, names, CamelCase or a language we have no "
                       "dictionary for")
        confidence *= 0.6
    # dictionary plausibility: real prose ~1, unknown-language text a steady 0.85, cipher low
    if "cipher" in signals or (words.hit_rate >= _CIPHER_HIT_RATE and not glued):
        score *= min(1.0, 0.3 + 0.7 * words.hit_rate / _GOOD_HIT_RATE)
    elif not glued:
        score *= 0.85
    score *= 1.0 - min(0.5, 2 * words.flip_rate)

    if words.language is None:
        confidence *= 0.8
    return score, confidence, suspect, corrupt
