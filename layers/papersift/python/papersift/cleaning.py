"""Cleaned text for indexing and NLP: accents folded, noise and (optionally) stopwords removed.

Parity with GoblinTools ``TextCleaner.clean_text`` (0.13.4): dot leaders and ellipses
dropped, whitespace collapsed, accents folded with unidecode (or anyascii, whose ISC licence
a deployment without GPL code may need), stopword removal and lowercasing optional. Where we
differ, on purpose:

- accent folding transliterates Latin-script characters (and typographic punctuation)
  only, so Arabic, CJK or Cyrillic text stays as written instead of becoming romanised;
- noise removal keeps every Unicode letter, mark and digit (no ASCII-only character class)
  and drops symbols, private-use glyphs, control and zero-width characters and rules
  of repeated punctuation (``-----``, ``_____``);
- stopwords match case- and accent-insensitively (GoblinTools compares after folding the
  text but not the list, so ``não`` never matched), from the maintained ``stop-words``
  lists for each requested language;
- line breaks and form feeds (page separators) are kept; only runs of spaces collapse.

The extracted text itself is never changed: the pipeline writes this as an extra file.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import cache, lru_cache

from papersift.errors import SettingsError

#: ISO 639-1 code -> name used by the stop-words package
_STOPWORD_LANGUAGES = {
    "ar": "arabic",
    "bg": "bulgarian",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "fa": "persian",
    "fi": "finnish",
    "fr": "french",
    "he": "hebrew",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "it": "italian",
    "nl": "dutch",
    "no": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sk": "slovak",
    "sv": "swedish",
    "tr": "turkish",
    "uk": "ukrainian",
    "vi": "vietnamese",
}

#: Latin letters beyond ASCII, typographic punctuation, currency, letterlike symbols, ligatures
_LATIN_EXTENDED = re.compile(r"[\u0080-\u024f\u1e00-\u1eff\u2000-\u206f\u20a0-\u20cf\u2100-\u214f\ufb00-\ufb06]+")
_DOT_RUNS = re.compile(r"\.{2,}")
#: a rule drawn with one repeated punctuation or symbol character
_RULES = re.compile(r"([^\w\s])\1{2,}|_{3,}")
_SPACES = re.compile(r"[^\S\n\f]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_TOKEN_EDGES = re.compile(r"^[^\w]+|[^\w]+$")

#: Unicode categories dropped as noise: other symbols, modifier symbols, format,
#: private use, unassigned, surrogates; control characters other than whitespace
_NOISE_CATEGORIES = frozenset({"So", "Sk", "Cf", "Co", "Cn", "Cs"})
_KEEP_CONTROLS = frozenset("\n\t\f")


@cache
def transliteration(name: str = "unidecode") -> Callable[[str], str]:
    """The library's transliteration, imported only when asked for: choosing anyascii keeps the
    GPL Unidecode out of the process."""
    if name == "anyascii":
        from anyascii import anyascii

        return anyascii
    if name == "unidecode":
        from unidecode import unidecode

        return unidecode
    raise SettingsError(f"unknown transliterator {name!r}: unidecode or anyascii")


def fold_latin_accents(text: str, using: str = "unidecode") -> str:
    """'Ação, naïve, Straße' -> 'Acao, naive, Strasse'; other scripts untouched."""
    fold = transliteration(using)
    return _LATIN_EXTENDED.sub(lambda m: fold(m.group(0)), text)


def _fold_key(word: str, using: str = "unidecode") -> str:
    """Latin letters folded, other scripts kept as written, like the text: romanising them
    made Arabic and Japanese words match Latin stopwords ('بنــــاء', '号' were dropped)."""
    folded = word.casefold()
    return folded if folded.isascii() else fold_latin_accents(folded, using).casefold()


@lru_cache(maxsize=32)
def stopwords_for(languages: tuple[str, ...], using: str = "unidecode") -> frozenset[str]:
    """Stopwords of the languages, case- and accent-folded; entries with digits are left out."""
    from stop_words import get_stop_words

    words: set[str] = set()
    for code in languages:
        name = _STOPWORD_LANGUAGES.get(code.lower(), code.lower())
        try:
            entries = get_stop_words(name)
        except Exception as exc:  # stop_words raises its own StopWordError for unknown languages
            raise SettingsError(f"no stopword list for language {code!r}: {exc}") from exc
        words.update(_fold_key(w, using) for w in entries if w and not any(ch.isdigit() for ch in w))
    return frozenset(words)


def strip_noise(text: str) -> str:
    """Drop dot leaders, rules, symbols, controls and invisible characters; keep letters of any script."""
    text = _DOT_RUNS.sub("", text)
    text = _RULES.sub(" ", text)
    kept: list[str] = []
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cc" and ch not in _KEEP_CONTROLS:
            kept.append(" " if ch in "\r\v\x1c\x1d\x1e\x85" else "")
        elif category in _NOISE_CATEGORIES or ch == "\ufffd":
            kept.append(" " if category == "So" else "")
        else:
            kept.append(ch)
    return "".join(kept)


def drop_stopwords(text: str, languages: Sequence[str], using: str = "unidecode") -> str:
    """Words of the stopword lists removed, case- and accent-insensitively; line breaks and page
    separators kept (a page separator glued to a stopword, "out\f", went with it)."""
    stop = stopwords_for(tuple(languages), using)
    pages = []
    for page in text.split("\f"):
        lines = []
        for line in page.split("\n"):
            kept = []
            for token in line.split(" "):
                core = _TOKEN_EDGES.sub("", token)
                if token and (not core or _fold_key(core, using) not in stop):
                    kept.append(token)
            lines.append(" ".join(kept))
        pages.append("\n".join(lines))
    return "\f".join(pages)


def _normalise_space(text: str) -> str:
    pages = []
    for page in text.split("\f"):
        lines = [_SPACES.sub(" ", line).strip() for line in page.split("\n")]
        pages.append(_BLANK_LINES.sub("\n\n", "\n".join(lines)).strip("\n"))
    return "\f".join(pages)


def join_cleaned(parts: Iterable[str]) -> str:
    """Texts cleaned one by one, joined as ``clean_text`` would have cleaned them joined by a blank
    line (same options): a big archive is cleaned member by member, never whole."""
    return _normalise_space("\n\n".join(part for part in parts if part))


def clean_text(
    text: str,
    *,
    fold_accents: bool = True,
    remove_stopwords: bool = False,
    languages: Sequence[str] = ("pt", "en", "es"),
    remove_noise: bool = True,
    lowercase: bool = False,
    transliterator: str = "unidecode",
) -> str:
    """A cleaned copy of ``text`` (see the module docstring for what each option does)."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    if lowercase:
        text = text.lower()
    # GoblinTools drops dot leaders in every mode
    text = strip_noise(text) if remove_noise else _DOT_RUNS.sub("", text)
    text = _normalise_space(text)
    if remove_stopwords:
        text = drop_stopwords(text, languages, transliterator)
    if fold_accents:
        text = fold_latin_accents(text, transliterator)
    return _normalise_space(text)
